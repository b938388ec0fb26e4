package scripts

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/parser"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// Limits bound one run of a script.
type Limits struct {
	// Cost is the budget of CEL's runtime cost: every step costs at least
	// 1, and string, byte and list traversals and copies cost in
	// proportion to their size, so the budget bounds the work and the
	// memory of a run.
	Cost uint64
	// Timeout bounds the run's time (the executor's, see
	// config.ScriptTimeout).
	Timeout time.Duration
	// OutputValues and OutputBytes bound the output: how many JSON values
	// it holds, and the length of its strings and keys together.
	OutputValues int
	OutputBytes  int
}

// DefaultLimits are the limits of a script executor's run; its timeoutMs
// replaces Timeout.
var DefaultLimits = Limits{Cost: 1_000_000, Timeout: config.DefaultScriptTimeout,
	OutputValues: config.DefaultMaxElements, OutputBytes: 1 << 20}

// The variables a script sees.
var variables = []string{"arguments", "context", "input"}

// orderedFn is the function the comprehension macros walk their range
// through: a map becomes the list of its sorted keys, so that every
// comprehension visits a map in one order. Its name is not an identifier,
// so a script cannot call it.
const orderedFn = "@ordered"

// env is the CEL environment every script compiles in.
var env = sync.OnceValues(func() (*cel.Env, error) {
	opts := []cel.EnvOption{
		cel.ClearMacros(),
		cel.Macros(orderedMacros()...),
		cel.CrossTypeNumericComparisons(true),
		cel.ParserExpressionSizeLimit(MaxFileSize),
		cel.ParserRecursionLimit(100),
		cel.Function(orderedFn, cel.Overload("praxa_ordered_dyn", []*cel.Type{cel.DynType}, cel.DynType,
			cel.UnaryBinding(ordered))),
		cel.Function("sum", cel.Overload("praxa_sum_list", []*cel.Type{cel.ListType(cel.DynType)}, cel.DynType,
			cel.UnaryBinding(sum))),
	}
	for _, v := range variables {
		opts = append(opts, cel.Variable(v, cel.MapType(cel.StringType, cel.DynType)))
	}
	return cel.NewEnv(opts...)
})

// orderedMacros are CEL's comprehension macros (has aside) with their
// range walked through orderedFn.
func orderedMacros() []parser.Macro {
	wrap := func(make parser.MacroExpander) parser.MacroExpander {
		return func(eh parser.ExprHelper, target ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
			return make(eh, eh.NewCall(orderedFn, target), args)
		}
	}
	return []parser.Macro{
		parser.HasMacro,
		parser.NewReceiverMacro("all", 2, wrap(parser.MakeAll)),
		parser.NewReceiverMacro("exists", 2, wrap(parser.MakeExists)),
		parser.NewReceiverMacro("exists_one", 2, wrap(parser.MakeExistsOne)),
		parser.NewReceiverMacro("existsOne", 2, wrap(parser.MakeExistsOne)),
		parser.NewReceiverMacro("map", 2, wrap(parser.MakeMap)),
		parser.NewReceiverMacro("map", 3, wrap(parser.MakeMap)),
		parser.NewReceiverMacro("filter", 2, wrap(parser.MakeFilter)),
	}
}

// ordered returns a map's keys in order (ints, then uints, then strings,
// then bools, each sorted), and any other value as it is.
func ordered(v ref.Val) ref.Val {
	m, ok := v.(traits.Mapper)
	if !ok {
		return v
	}
	var keys []ref.Val
	it := m.Iterator()
	for it.HasNext() == types.True {
		keys = append(keys, it.Next())
	}
	slices.SortFunc(keys, compareKeys)
	return types.NewRefValList(types.DefaultTypeAdapter, keys)
}

// compareKeys orders map keys: by type, then by value.
func compareKeys(a, b ref.Val) int {
	rank := func(v ref.Val) int {
		switch v.(type) {
		case types.Int:
			return 0
		case types.Uint:
			return 1
		case types.String:
			return 2
		}
		return 3
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	switch a := a.(type) {
	case types.Int:
		return cmpOrdered(int64(a), int64(b.(types.Int)))
	case types.Uint:
		return cmpOrdered(uint64(a), uint64(b.(types.Uint)))
	case types.String:
		return strings.Compare(string(a), string(b.(types.String)))
	case types.Bool:
		return cmpOrdered(btoi(bool(a)), btoi(bool(b.(types.Bool))))
	}
	return 0
}

func cmpOrdered[T int64 | uint64 | int](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sum adds a list of numbers: an int when every one is an int (an
// overflow is an error), else a double.
func sum(v ref.Val) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.NewErr("sum: %s is not a list", v.Type().TypeName())
	}
	var i int64
	var f float64
	double := false
	it := l.Iterator()
	for it.HasNext() == types.True {
		switch x := it.Next().(type) {
		case types.Int:
			n := int64(x)
			if !double && (n > 0 && i > math.MaxInt64-n || n < 0 && i < math.MinInt64-n) {
				return types.NewErr("sum: integer overflow")
			}
			i += n
			f += float64(n)
		case types.Double:
			double = true
			f += float64(x)
		default:
			return types.NewErr("sum: %s is not a number", x.Type().TypeName())
		}
	}
	if double {
		return types.Double(f)
	}
	return types.Int(i)
}

// costEstimator charges every call by the size of the values it reads and
// builds. CEL's own charges go by the overload the checker resolved; a
// script's variables are maps of dyn values, whose calls dispatch at run
// time under a generic overload that CEL charges 1, so the charges here
// go by the values instead: a string or byte operation costs a tenth of
// the bytes it reads and writes (CEL's string traversal factor), a list
// concatenation a tenth of the elements of its result, a membership test
// the size of the collection, a regular expression match the product of
// the text and the pattern, orderedFn the keys it sorts and sum the
// numbers it adds.
type costEstimator struct{}

// CallCost implements interpreter.ActualCostEstimator.
func (costEstimator) CallCost(function, _ string, args []ref.Val, result ref.Val) *uint64 {
	var n float64
	switch function {
	case orderedFn, "@in", "sum":
		if len(args) > 0 {
			n = float64(size(args[len(args)-1]))
		}
	case "matches":
		if len(args) == 2 {
			n = (1 + float64(size(args[0]))*common.StringTraversalCostFactor) * float64(size(args[1])) * common.RegexStringLengthCostFactor
		}
	case "contains":
		if len(args) == 2 {
			n = float64(size(args[0])) * common.StringTraversalCostFactor * (1 + float64(size(args[1]))*common.StringTraversalCostFactor)
		}
	default:
		var bytes uint64
		for _, a := range args {
			bytes += textSize(a)
		}
		bytes += textSize(result)
		if _, list := result.(traits.Lister); list && function == "_+_" {
			bytes += size(result)
		}
		n = float64(bytes) * common.StringTraversalCostFactor
	}
	c := 1 + uint64(math.Ceil(n))
	return &c
}

// textSize is the length in bytes of a string or bytes value, else 0.
func textSize(v ref.Val) uint64 {
	switch v := v.(type) {
	case types.String:
		return uint64(len(v))
	case types.Bytes:
		return uint64(len(v))
	}
	return 0
}

// size is the length of a string or bytes value in bytes, or the size of
// a list or map; 1 for anything else.
func size(v ref.Val) uint64 {
	if n := textSize(v); n > 0 {
		return n
	}
	if s, ok := v.(traits.Sizer); ok {
		if _, text := v.(types.String); !text {
			if sz, ok := s.Size().(types.Int); ok && sz > 0 {
				return uint64(sz)
			}
		}
	}
	return 1
}

// tzOverload matches the overloads that read the system's time-zone
// database.
func tzOverload(id string) bool { return strings.HasSuffix(id, "_with_tz") }

// compile compiles a script's source; problems locate what is wrong in
// file.
func compile(id, file, src string) (*Script, []config.Problem) {
	s := &Script{ID: id, Source: src, File: file}
	if !idRE.MatchString(id) {
		return nil, []config.Problem{{Message: fmt.Sprintf("%q is not a valid script id (the file's path below scripts.dir, / written as .): use 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit", id)}}
	}
	e, err := env()
	if err != nil {
		return nil, []config.Problem{{Message: "the script environment: " + err.Error()}}
	}
	checked, iss := e.Compile(src)
	if iss.Err() != nil {
		var problems []config.Problem
		for _, ce := range iss.Errors() {
			p := config.Problem{Message: strings.TrimSuffix(ce.Message, " (in container '')")}
			if loc := ce.Location; loc != nil && loc.Line() > 0 {
				p.Line, p.Column = loc.Line(), loc.Column()+1
			}
			problems = append(problems, p)
		}
		return nil, problems
	}
	native := checked.NativeRep()
	var problems []config.Problem
	for exprID, r := range native.ReferenceMap() {
		if slices.ContainsFunc(r.OverloadIDs, tzOverload) {
			loc := native.SourceInfo().GetStartLocation(exprID)
			problems = append(problems, config.Problem{Line: loc.Line(), Column: loc.Column() + 1,
				Message: "a time zone reads the system's time-zone database, which a script may not: work in UTC (no time-zone argument)"})
		}
	}
	if len(problems) > 0 {
		slices.SortFunc(problems, func(a, b config.Problem) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
		})
		return nil, problems
	}
	s.ast = checked
	prog, err := program(checked, DefaultLimits)
	if err != nil {
		return nil, []config.Problem{{Message: err.Error()}}
	}
	s.prog = prog
	describe(s)
	return s, nil
}

// program plans a checked script under lim's cost budget.
func program(checked *cel.Ast, lim Limits) (cel.Program, error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	return e.Program(checked, cel.CostLimit(lim.Cost), cel.CostTracking(costEstimator{}), cel.InterruptCheckFrequency(64))
}

// Error is a run that failed: Reason says which limit it exceeded, or
// that the script failed.
type Error struct {
	Script string
	Reason string
	Err    error
}

// The reasons of an Error.
const (
	ReasonFailed  = "failed"
	ReasonCost    = "cost"
	ReasonTimeout = "timeout"
	ReasonOutput  = "output"
)

func (e *Error) Error() string { return "script " + e.Script + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Run evaluates the script over scope's arguments, context and input
// under lim and returns its value, the output. A run that exceeds a limit
// or fails returns an *Error and no output.
func (s *Script) Run(ctx context.Context, scope workflow.Scope, lim Limits) (map[string]any, error) {
	prog := s.prog
	if lim.Cost != DefaultLimits.Cost {
		var err error
		if prog, err = program(s.ast, lim); err != nil {
			return nil, &Error{Script: s.ID, Reason: ReasonFailed, Err: err}
		}
	}
	vars := map[string]any{}
	for _, v := range []struct {
		name string
		m    map[string]any
	}{{"arguments", scope.Arguments}, {"context", scope.Context}, {"input", scope.Input}} {
		val, err := toCEL(v.m)
		if err != nil {
			return nil, &Error{Script: s.ID, Reason: ReasonFailed, Err: fmt.Errorf("$.%s: %w", v.name, err)}
		}
		vars[v.name] = val
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	type result struct {
		val ref.Val
		err error
	}
	// The evaluation runs on its own goroutine so that the deadline ends
	// the run even inside one long step (CEL checks for interruption
	// between comprehension steps only): the goroutine then finishes on
	// its own, bounded by the cost budget, and its value is dropped.
	done := make(chan result, 1)
	go func() {
		val, _, err := prog.ContextEval(ctx, vars)
		done <- result{val, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		r.err = ctx.Err()
	}
	if r.err != nil {
		return nil, s.runError(ctx, r.err, lim)
	}
	out, err := toJSON(r.val, &budget{values: lim.OutputValues, bytes: lim.OutputBytes})
	if err != nil {
		reason := ReasonFailed
		if errors.Is(err, errOutputTooLarge) {
			reason = ReasonOutput
		}
		return nil, &Error{Script: s.ID, Reason: reason, Err: err}
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, &Error{Script: s.ID, Reason: ReasonFailed, Err: fmt.Errorf("its value is %s, not a map: a script's value is the move's output, a JSON object", jsonKind(out))}
	}
	return m, nil
}

// runError classifies the error of an evaluation.
func (s *Script) runError(ctx context.Context, err error, lim Limits) *Error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "actual cost limit exceeded"):
		return &Error{Script: s.ID, Reason: ReasonCost, Err: fmt.Errorf("exceeded its cost budget of %d (steps, and the size of what it builds)", lim.Cost)}
	case ctx.Err() != nil || strings.Contains(msg, "operation interrupted"):
		return &Error{Script: s.ID, Reason: ReasonTimeout, Err: fmt.Errorf("ran longer than its time limit of %s", lim.Timeout)}
	}
	return &Error{Script: s.ID, Reason: ReasonFailed, Err: err}
}

// Run runs the script x names, under DefaultLimits with x's time limit
// (config.ScriptTimeout): it is the runner of script executors
// (workflow.Runner). A failure is a contract error that changes nothing:
// the move does not happen, and no run records it.
func (c *Catalog) Run(ctx context.Context, x config.Executor, scope workflow.Scope) (map[string]any, error) {
	s, ok := c.Lookup(x.Script)
	if !ok {
		return nil, &contracts.Error{Code: contracts.CodeUpstreamFailed,
			Message: fmt.Sprintf("there is no script %q on this gateway: the move did not happen", x.Script),
			Hint:    "The configuration names a script its scripts directory does not hold; tell the operator."}
	}
	lim := DefaultLimits
	lim.Timeout = config.ScriptTimeout(x)
	out, err := s.Run(ctx, scope, lim)
	if err == nil {
		return out, nil
	}
	hint := "The script failed on these arguments; nothing changed. Read the script (describe it) and call again with arguments it accepts."
	var se *Error
	if errors.As(err, &se) && se.Reason != ReasonFailed {
		hint = "The script exceeded a limit of the gateway's sandbox; nothing changed. Call again with smaller arguments, or ask the operator to simplify the script."
	}
	return nil, &contracts.Error{Code: contracts.CodeUpstreamFailed, Message: err.Error() + "; the move did not happen", Hint: hint,
		Links: []contracts.Link{{Rel: "describe", Title: "Read the script", Method: contracts.ToolPraxecQuery, Args: map[string]any{"subject": s.ID}}},
		Cause: err}
}

// maxSafeInt is the largest whole number a JSON double holds exactly.
const maxSafeInt = 1 << 53

// toCEL converts a JSON value (as the gateway decodes it: json.Number or
// float64 numbers) to a CEL value.
func toCEL(v any) (ref.Val, error) {
	switch v := v.(type) {
	case nil:
		return types.NullValue, nil
	case bool:
		return types.Bool(v), nil
	case string:
		return types.String(v), nil
	case json.Number:
		if i, err := v.Int64(); err == nil && i >= -maxSafeInt && i <= maxSafeInt {
			return types.Int(i), nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("the number %s: %w", v, err)
		}
		return number(f), nil
	case float64:
		return number(v), nil
	case int:
		return types.Int(v), nil
	case int64:
		return types.Int(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return types.Uint(v), nil
		}
		return types.Int(v), nil
	case map[string]any:
		entries := make(map[ref.Val]ref.Val, len(v))
		for k, x := range v {
			cv, err := toCEL(x)
			if err != nil {
				return nil, err
			}
			entries[types.String(k)] = cv
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, entries), nil
	case []any:
		elems := make([]ref.Val, len(v))
		for i, x := range v {
			cv, err := toCEL(x)
			if err != nil {
				return nil, err
			}
			elems[i] = cv
		}
		return types.NewRefValList(types.DefaultTypeAdapter, elems), nil
	}
	return nil, fmt.Errorf("a value of type %T is not JSON", v)
}

// number is a whole double within ±2^53 as an int, else the double.
func number(f float64) ref.Val {
	if f == math.Trunc(f) && f >= -maxSafeInt && f <= maxSafeInt {
		return types.Int(int64(f))
	}
	return types.Double(f)
}

// errOutputTooLarge marks an output over its budget.
var errOutputTooLarge = errors.New("its value is larger than a script's output may be")

// budget is what is left of the output's limits.
type budget struct{ values, bytes int }

func (b *budget) take(values, bytes int) error {
	b.values -= values
	b.bytes -= bytes
	if b.values < 0 || b.bytes < 0 {
		return errOutputTooLarge
	}
	return nil
}

// toJSON converts a script's value to JSON (numbers as json.Number, as
// the gateway decodes them), within b. Timestamps and durations become
// their protobuf JSON strings; bytes, types and other values are refused.
func toJSON(v ref.Val, b *budget) (any, error) {
	if err := b.take(1, 0); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(v), nil
	case types.Int:
		return json.Number(strconv.FormatInt(int64(v), 10)), nil
	case types.Uint:
		return json.Number(strconv.FormatUint(uint64(v), 10)), nil
	case types.Double:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("its value holds %v, which is not a JSON number", f)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case types.String:
		return string(v), b.take(0, len(v))
	case types.Timestamp:
		s := v.Time.UTC().Format(time.RFC3339Nano)
		return s, b.take(0, len(s))
	case types.Duration:
		s := strconv.FormatFloat(v.Duration.Seconds(), 'f', -1, 64) + "s"
		return s, b.take(0, len(s))
	case *types.Err:
		return nil, v
	case traits.Mapper:
		out := map[string]any{}
		it := v.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("its value has a map key %v of type %s: JSON object keys are strings", k, k.Type().TypeName())
			}
			if err := b.take(0, len(ks)); err != nil {
				return nil, err
			}
			x, err := toJSON(v.Get(k), b)
			if err != nil {
				return nil, err
			}
			out[string(ks)] = x
		}
		return out, nil
	case traits.Lister:
		n, _ := v.Size().(types.Int)
		if int64(n) > int64(b.values) {
			return nil, errOutputTooLarge
		}
		out := make([]any, 0, int(n))
		it := v.Iterator()
		for it.HasNext() == types.True {
			x, err := toJSON(it.Next(), b)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("its value holds a %s, which has no JSON form", v.Type().TypeName())
}

// jsonKind names the JSON type of v.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	}
	return "not an object"
}
