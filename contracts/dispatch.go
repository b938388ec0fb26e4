package contracts

import (
	"encoding/json"
	"slices"
	"strings"
)

// Operation is one operation of the praxec surface.
type Operation string

// The praxec operations.
const (
	OpHome                 Operation = "home"
	OpSearch               Operation = "search"
	OpLexiconSearch        Operation = "lexicon_search"
	OpDescribe             Operation = "describe"
	OpLexiconLookup        Operation = "lexicon_lookup"
	OpGet                  Operation = "get"
	OpExplain              Operation = "explain"
	OpStart                Operation = "start"
	OpSubmit               Operation = "submit"
	OpDefine               Operation = "define"
	OpCancelPendingSubject Operation = "cancel_pending_subject"
)

// LexiconPrefix is the subject namespace that switches describe to a lexicon
// lookup.
const LexiconPrefix = "lexicon:"

// LexiconKind is the search kind that switches search to a lexicon search.
const LexiconKind = "lexicon"

// DispatchRow is one row of a praxec dispatch table: the operation selected
// when exactly Keys are present (plus any of Optional), the modifiers it
// accepts, and the scope it requires. Presence decides, never a zero value:
// "query": "" and "expectedVersion": 0 are present.
type DispatchRow struct {
	Tool      string    `json:"tool"`
	Operation Operation `json:"operation"`
	Keys      []string  `json:"keys"`
	Optional  []string  `json:"optional,omitempty"`
	Modifiers []string  `json:"modifiers,omitempty"`
	Scope     Scope     `json:"scope"`
}

func (r DispatchRow) clone() DispatchRow {
	r.Keys = slices.Clone(r.Keys)
	r.Optional = slices.Clone(r.Optional)
	r.Modifiers = slices.Clone(r.Modifiers)
	return r
}

// modifiers lists, per tool, the keys that never select a row.
var modifiers = map[string][]string{
	ToolPraxecQuery:   {"kind", "limit"},
	ToolPraxecCommand: {"input", "runId", "arguments", "summary", "traceId", "idempotencyKey"},
}

// declaredKeys holds, per praxec tool, the properties its input schema
// declares.
var declaredKeys = func() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, name := range []string{ToolPraxecQuery, ToolPraxecCommand} {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(catalogue[catalogueIndex[name]].InputSchema, &s); err != nil {
			panic("contracts: " + name + " input schema: " + err.Error())
		}
		out[name] = map[string]bool{}
		for k := range s.Properties {
			out[name][k] = true
		}
	}
	return out
}()

var dispatchTable = []DispatchRow{
	{Tool: ToolPraxecQuery, Operation: OpHome, Keys: []string{}, Scope: ScopeCapabilitiesRead},
	{Tool: ToolPraxecQuery, Operation: OpSearch, Keys: []string{"query"}, Modifiers: []string{"kind", "limit"}, Scope: ScopeCapabilitiesRead},
	{Tool: ToolPraxecQuery, Operation: OpDescribe, Keys: []string{"subject"}, Optional: []string{"workflowId"}, Scope: ScopeCapabilitiesRead},
	{Tool: ToolPraxecQuery, Operation: OpGet, Keys: []string{"workflowId"}, Scope: ScopeMissionsRead},
	{Tool: ToolPraxecQuery, Operation: OpExplain, Keys: []string{"workflowId", "transition"}, Scope: ScopeMissionsRead},
	{Tool: ToolPraxecCommand, Operation: OpStart, Keys: []string{"definitionId"}, Modifiers: []string{"input", "runId", "traceId", "idempotencyKey"}, Scope: ScopeMissionsWrite},
	{Tool: ToolPraxecCommand, Operation: OpSubmit, Keys: []string{"workflowId", "expectedVersion", "transition"}, Modifiers: []string{"arguments", "summary", "traceId", "runId", "idempotencyKey"}, Scope: ScopeMissionsWrite},
	{Tool: ToolPraxecCommand, Operation: OpDefine, Keys: []string{"subject", "definition"}, Modifiers: []string{"traceId", "runId", "idempotencyKey"}, Scope: ScopeLexiconWrite},
	{Tool: ToolPraxecCommand, Operation: OpCancelPendingSubject, Keys: []string{"intent", "unknown_subject"}, Modifiers: []string{"traceId", "runId", "idempotencyKey"}, Scope: ScopeMissionsWrite},
}

// DispatchTable returns a copy of the dispatch rows of tool (praxec.query or
// praxec.command), in table order; nil for any other tool.
func DispatchTable(tool string) []DispatchRow {
	var out []DispatchRow
	for _, r := range dispatchTable {
		if r.Tool == tool {
			out = append(out, r.clone())
		}
	}
	return out
}

// Dispatch is the result of classifying praxec arguments.
type Dispatch struct {
	// Row is the matched dispatch row.
	Row DispatchRow
	// Operation refines Row.Operation by value where the seed does: a search
	// with kind "lexicon" is a lexicon search, a describe of a "lexicon:"
	// subject a lexicon lookup.
	Operation Operation
}

// Classify maps the arguments of a praxec tool call, a decoded JSON object, to
// its operation. Only which of the tool's declared fields are present decides
// the row; modifiers never do, and undeclared keys are left to the schema
// check that follows. Arguments that match no row answer AMBIGUOUS_INTENT with the
// seed's example links; a modifier the matched operation does not take
// answers INVALID_PARAMS naming it.
func Classify(tool string, args map[string]any) (Dispatch, error) {
	mods, ok := modifiers[tool]
	if !ok {
		return Dispatch{}, Errorf(CodeInvalidParams, "%s has no dispatch table", tool)
	}
	declared := declaredKeys[tool]
	var keys, present []string
	for k := range args {
		if !declared[k] {
			// Not a field of the tool: the schema check that follows
			// classification names it; it must not make the call ambiguous.
			continue
		}
		if slices.Contains(mods, k) {
			present = append(present, k)
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Sort(present)
	for _, r := range dispatchTable {
		if r.Tool != tool || !matches(r, keys) {
			continue
		}
		for _, m := range present {
			if !slices.Contains(r.Modifiers, m) {
				return Dispatch{}, &Error{
					Code:    CodeInvalidParams,
					Message: tool + " " + string(r.Operation) + " does not take " + m,
					Hint:    "Leave " + m + " out, or follow a link from the previous answer.",
					Fields:  []FieldError{{Pointer: "/" + escapePointer(m), Detail: "is not used by " + string(r.Operation)}},
					Links:   unusedModifierLinks(tool, r, m, args),
				}
			}
		}
		return Dispatch{Row: r.clone(), Operation: refine(r.Operation, args)}, nil
	}
	return Dispatch{}, AmbiguousIntent(tool)
}

// unusedModifierLinks are the next moves of a call whose row r does not
// take the modifier m: the same call without the modifiers r does not take
// (and without the keys the tool does not declare, which its schema
// refuses), and where m is a search modifier sent to home, the search it
// asks for.
func unusedModifierLinks(tool string, r DispatchRow, m string, args map[string]any) []Link {
	retry := map[string]any{}
	for k, v := range args {
		if declaredKeys[tool][k] && (!slices.Contains(modifiers[tool], k) || slices.Contains(r.Modifiers, k)) {
			retry[k] = v
		}
	}
	links := []Link{{Rel: string(r.Operation), Title: "The same call without " + m, Method: tool, Args: retry}}
	if tool == ToolPraxecQuery && r.Operation == OpHome {
		search := map[string]any{"query": ""}
		if k, ok := args["kind"].(string); ok {
			search["kind"] = k
		}
		if l, ok := args["limit"].(float64); ok && l >= 1 && l == float64(int64(l)) {
			search["limit"] = l
		}
		links = append(links, Link{Rel: "search", Title: "Search everything", Method: ToolPraxecQuery, Args: search})
	}
	return links
}

func matches(r DispatchRow, keys []string) bool {
	for _, k := range r.Keys {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	for _, k := range keys {
		if !slices.Contains(r.Keys, k) && !slices.Contains(r.Optional, k) {
			return false
		}
	}
	return true
}

func refine(op Operation, args map[string]any) Operation {
	switch op {
	case OpSearch:
		if k, _ := args["kind"].(string); k == LexiconKind {
			return OpLexiconSearch
		}
	case OpDescribe:
		if s, _ := args["subject"].(string); strings.HasPrefix(s, LexiconPrefix) {
			return OpLexiconLookup
		}
	}
	return op
}

func escapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// AmbiguousIntent returns the AMBIGUOUS_INTENT error of tool with the
// example links of seeds/000: one per command shape for praxec.command, home
// and search for praxec.query.
func AmbiguousIntent(tool string) *Error {
	if tool == ToolPraxecCommand {
		return &Error{
			Code:    CodeAmbiguousIntent,
			Message: "praxec.command args do not match a known dispatch shape",
			Hint:    "Send exactly one shape: start (definitionId), submit (workflowId + expectedVersion + transition) or define (subject lexicon:TERM + definition).",
			Links: []Link{
				{Rel: "start_example", Method: ToolPraxecCommand, Args: map[string]any{"definitionId": "<your-workflow>"}},
				{Rel: "submit_example", Method: ToolPraxecCommand, Args: map[string]any{"workflowId": "<id>", "expectedVersion": 0, "transition": "<name>"}},
				{Rel: "define_example", Method: ToolPraxecCommand, Args: map[string]any{"subject": "lexicon:<term>", "definition": map[string]any{"definition_short": "..."}}},
			},
		}
	}
	return &Error{
		Code:    CodeAmbiguousIntent,
		Message: "praxec.query args do not match a known dispatch shape",
		Hint:    "Send nothing for home, query to search, subject to describe, workflowId to get, workflowId + transition to explain.",
		Links: []Link{
			{Rel: "home", Method: ToolPraxecQuery, Args: map[string]any{}},
			{Rel: "search", Method: ToolPraxecQuery, Args: map[string]any{"query": ""}},
		},
	}
}
