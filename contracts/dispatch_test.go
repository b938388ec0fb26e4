package contracts_test

import (
	"encoding/json"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/internal/golden"
)

func TestClassify(t *testing.T) {
	const (
		q = contracts.ToolPraxecQuery
		c = contracts.ToolPraxecCommand
	)
	tests := []struct {
		name  string
		tool  string
		args  string
		op    contracts.Operation // the refined operation
		row   contracts.Operation // the table row
		scope contracts.Scope
	}{
		// praxec.query: the rows of DESIGN.md and the seed's own calls.
		{"home", q, `{}`, contracts.OpHome, contracts.OpHome, "capabilities:read"},
		{"search", q, `{"query":"deploy"}`, contracts.OpSearch, contracts.OpSearch, "capabilities:read"},
		{"search empty query is present", q, `{"query":""}`, contracts.OpSearch, contracts.OpSearch, "capabilities:read"},
		{"search seed list_workflows", q, `{"query":"","kind":"workflow"}`, contracts.OpSearch, contracts.OpSearch, "capabilities:read"},
		{"search seed request", q, `{"query":"deploy","kind":"workflow","limit":5}`, contracts.OpSearch, contracts.OpSearch, "capabilities:read"},
		{"search null query is present", q, `{"query":null}`, contracts.OpSearch, contracts.OpSearch, "capabilities:read"},
		{"lexicon search", q, `{"query":"evidence","kind":"lexicon"}`, contracts.OpLexiconSearch, contracts.OpSearch, "capabilities:read"},
		{"kind Lexicon is not lexicon", q, `{"query":"evidence","kind":"Lexicon"}`, contracts.OpSearch, contracts.OpSearch, "capabilities:read"},
		{"kind not a string", q, `{"query":"evidence","kind":7}`, contracts.OpSearch, contracts.OpSearch, "capabilities:read"},
		{"describe", q, `{"subject":"github.list_issues"}`, contracts.OpDescribe, contracts.OpDescribe, "capabilities:read"},
		{"describe in a workflow", q, `{"subject":"github.list_issues","workflowId":"wf_1"}`, contracts.OpDescribe, contracts.OpDescribe, "capabilities:read"},
		{"lexicon lookup", q, `{"subject":"lexicon:evidence-pack"}`, contracts.OpLexiconLookup, contracts.OpDescribe, "capabilities:read"},
		{"lexicon lookup in a workflow", q, `{"subject":"lexicon:evidence-pack","workflowId":"wf_1"}`, contracts.OpLexiconLookup, contracts.OpDescribe, "capabilities:read"},
		{"LEXICON: prefix is not lexicon", q, `{"subject":"LEXICON:evidence-pack"}`, contracts.OpDescribe, contracts.OpDescribe, "capabilities:read"},
		{"get", q, `{"workflowId":"wf_a1b2c3d4e5f6"}`, contracts.OpGet, contracts.OpGet, "missions:read"},
		{"explain", q, `{"workflowId":"wf_a1b2c3d4e5f6","transition":"deploy"}`, contracts.OpExplain, contracts.OpExplain, "missions:read"},

		// praxec.command
		{"start", c, `{"definitionId":"deploy_pipeline"}`, contracts.OpStart, contracts.OpStart, "missions:write"},
		{"start seed request", c, `{"definitionId":"deploy_pipeline","input":{"service":"payments","environment":"staging"}}`, contracts.OpStart, contracts.OpStart, "missions:write"},
		{"start with modifiers", c, `{"definitionId":"d","input":{},"runId":"r"}`, contracts.OpStart, contracts.OpStart, "missions:write"},
		{"start with trace", c, `{"definitionId":"d","traceId":"t"}`, contracts.OpStart, contracts.OpStart, "missions:write"},
		{"start proxy describe link", c, `{"definitionId":"proxy_default","input":{"capability":"github.list_issues"}}`, contracts.OpStart, contracts.OpStart, "missions:write"},
		{"submit", c, `{"workflowId":"wf_1","expectedVersion":0,"transition":"deploy"}`, contracts.OpSubmit, contracts.OpSubmit, "missions:write"},
		{"submit seed request", c, `{"workflowId":"wf_a1b2c3d4e5f6","expectedVersion":4,"transition":"deploy","arguments":{"confirm":true}}`, contracts.OpSubmit, contracts.OpSubmit, "missions:write"},
		{"submit with modifiers", c, `{"workflowId":"w","expectedVersion":1,"transition":"t","arguments":{},"summary":"s","traceId":"t","runId":"r"}`, contracts.OpSubmit, contracts.OpSubmit, "missions:write"},
		{"define", c, `{"subject":"lexicon:evidence-pack","definition":{"definition_short":"x"}}`, contracts.OpDefine, contracts.OpDefine, "lexicon:write"},
		{"define seed link_as_alias", c, `{"subject":"lexicon:evidence-pack","definition":{"aliases_add":["evidence-foo"]}}`, contracts.OpDefine, contracts.OpDefine, "lexicon:write"},
		{"cancel pending subject", c, `{"intent":"cancel_pending_subject","unknown_subject":"evidence-foo"}`, contracts.OpCancelPendingSubject, contracts.OpCancelPendingSubject, "missions:write"},
		{"cancel pending subject traced", c, `{"intent":"cancel_pending_subject","unknown_subject":"x","traceId":"t","runId":"r"}`, contracts.OpCancelPendingSubject, contracts.OpCancelPendingSubject, "missions:write"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.name, func(t *testing.T) {
			args := decodeArgs(t, tt.args).(map[string]any)
			d, err := contracts.Classify(tt.tool, args)
			if err != nil {
				t.Fatalf("Classify: %v", err)
			}
			if d.Operation != tt.op || d.Row.Operation != tt.row || d.Row.Scope != tt.scope || d.Row.Tool != tt.tool {
				t.Errorf("got %s (row %s of %s, scope %s), want %s (row %s, scope %s)",
					d.Operation, d.Row.Operation, d.Row.Tool, d.Row.Scope, tt.op, tt.row, tt.scope)
			}
			for _, k := range d.Row.Keys {
				if _, ok := args[k]; !ok {
					t.Errorf("row key %q is not among the arguments", k)
				}
			}
		})
	}
}

// TestClassifyIgnoresUndeclaredKeys: a key the tool's schema does not
// declare never decides the row; the schema check that follows names it.
func TestClassifyIgnoresUndeclaredKeys(t *testing.T) {
	tests := []struct {
		tool, args string
		want       contracts.Operation
	}{
		{contracts.ToolPraxecCommand, `{"definitionId":"d","zzz":1}`, contracts.OpStart},
		{contracts.ToolPraxecQuery, `{"definitionId":"d"}`, contracts.OpHome},
		{contracts.ToolPraxecQuery, `{"workflowId":"w","expectedVersion":3}`, contracts.OpGet},
	}
	for _, tt := range tests {
		args := decodeArgs(t, tt.args).(map[string]any)
		d, err := contracts.Classify(tt.tool, args)
		if err != nil || d.Operation != tt.want {
			t.Errorf("Classify(%s, %s) = %v, %v; want %s", tt.tool, tt.args, d.Operation, err, tt.want)
		}
		if err := contracts.ValidateInput(tt.tool, args); err == nil {
			t.Errorf("ValidateInput(%s, %s) accepted an undeclared key", tt.tool, tt.args)
		}
	}
}

func TestClassifyAmbiguousIntent(t *testing.T) {
	const commandLinks = `[
		{"rel":"start_example","method":"praxec.command","args":{"definitionId":"<your-workflow>"}},
		{"rel":"submit_example","method":"praxec.command","args":{"workflowId":"<id>","expectedVersion":0,"transition":"<name>"}},
		{"rel":"define_example","method":"praxec.command","args":{"subject":"lexicon:<term>","definition":{"definition_short":"..."}}}
	]`
	const queryLinks = `[
		{"rel":"home","method":"praxec.query","args":{}},
		{"rel":"search","method":"praxec.query","args":{"query":""}}
	]`
	tests := []struct {
		name, tool, args string
		message, links   string
	}{
		{"start and submit keys", contracts.ToolPraxecCommand, `{"definitionId":"d","workflowId":"w"}`, "praxec.command args do not match a known dispatch shape", commandLinks},
		{"empty command", contracts.ToolPraxecCommand, `{}`, "praxec.command args do not match a known dispatch shape", commandLinks},
		{"only modifiers", contracts.ToolPraxecCommand, `{"input":{},"runId":"r"}`, "praxec.command args do not match a known dispatch shape", commandLinks},
		{"partial submit", contracts.ToolPraxecCommand, `{"workflowId":"w","transition":"t"}`, "praxec.command args do not match a known dispatch shape", commandLinks},
		{"subject without definition", contracts.ToolPraxecCommand, `{"subject":"lexicon:x"}`, "praxec.command args do not match a known dispatch shape", commandLinks},
		{"intent alone", contracts.ToolPraxecCommand, `{"intent":"cancel_pending_subject"}`, "praxec.command args do not match a known dispatch shape", commandLinks},
		{"define plus start", contracts.ToolPraxecCommand, `{"subject":"lexicon:x","definition":{},"definitionId":"d"}`, "praxec.command args do not match a known dispatch shape", commandLinks},
		{"query and subject", contracts.ToolPraxecQuery, `{"query":"","subject":"x"}`, "praxec.query args do not match a known dispatch shape", queryLinks},
		{"transition alone", contracts.ToolPraxecQuery, `{"transition":"deploy"}`, "praxec.query args do not match a known dispatch shape", queryLinks},
		{"query and workflow", contracts.ToolPraxecQuery, `{"query":"x","workflowId":"w"}`, "praxec.query args do not match a known dispatch shape", queryLinks},
		{"subject and transition", contracts.ToolPraxecQuery, `{"subject":"x","transition":"t"}`, "praxec.query args do not match a known dispatch shape", queryLinks},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.name, func(t *testing.T) {
			_, err := contracts.Classify(tt.tool, decodeArgs(t, tt.args).(map[string]any))
			var ce *contracts.Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *contracts.Error", err)
			}
			if ce.Code != contracts.CodeAmbiguousIntent || ce.Status() != 400 {
				t.Fatalf("code %s (status %d), want AMBIGUOUS_INTENT (400)", ce.Code, ce.Status())
			}
			if ce.Message != tt.message {
				t.Errorf("message %q, want %q", ce.Message, tt.message)
			}
			if ce.Hint == "" {
				t.Error("no hint")
			}
			got, _ := json.Marshal(ce.Envelope().Links)
			if !jsonEqual(t, got, []byte(tt.links)) {
				t.Errorf("links %s\nwant  %s", got, compact(t, tt.links))
			}
		})
	}
}

// Every example link of AMBIGUOUS_INTENT is itself a call that classifies to
// the operation its rel names.
func TestAmbiguousIntentLinksClassify(t *testing.T) {
	want := map[string]contracts.Operation{
		"start_example": contracts.OpStart, "submit_example": contracts.OpSubmit, "define_example": contracts.OpDefine,
		"home": contracts.OpHome, "search": contracts.OpSearch,
	}
	for _, tool := range []string{contracts.ToolPraxecQuery, contracts.ToolPraxecCommand} {
		for _, l := range contracts.AmbiguousIntent(tool).Links {
			if l.Method != tool {
				t.Errorf("%s link %s calls %s", tool, l.Rel, l.Method)
			}
			d, err := contracts.Classify(l.Method, l.Args)
			if err != nil {
				t.Errorf("%s link %s does not classify: %v", tool, l.Rel, err)
				continue
			}
			if d.Operation != want[l.Rel] {
				t.Errorf("%s link %s classifies as %s, want %s", tool, l.Rel, d.Operation, want[l.Rel])
			}
		}
	}
}

func TestClassifyRefusesForeignModifiers(t *testing.T) {
	tests := []struct {
		tool, args, pointer string
	}{
		{contracts.ToolPraxecCommand, `{"definitionId":"d","arguments":{}}`, "/arguments"},
		{contracts.ToolPraxecCommand, `{"definitionId":"d","summary":"s"}`, "/summary"},
		{contracts.ToolPraxecCommand, `{"workflowId":"w","expectedVersion":0,"transition":"t","input":{}}`, "/input"},
		{contracts.ToolPraxecCommand, `{"subject":"lexicon:x","definition":{},"input":{}}`, "/input"},
		{contracts.ToolPraxecCommand, `{"intent":"cancel_pending_subject","unknown_subject":"x","arguments":{}}`, "/arguments"},
		// The first foreign modifier in sorted order is reported, whatever
		// the map order.
		{contracts.ToolPraxecCommand, `{"definitionId":"d","summary":"s","arguments":{}}`, "/arguments"},
		{contracts.ToolPraxecQuery, `{"kind":"workflow"}`, "/kind"},
		{contracts.ToolPraxecQuery, `{"limit":5}`, "/limit"},
		{contracts.ToolPraxecQuery, `{"subject":"x","limit":5}`, "/limit"},
		{contracts.ToolPraxecQuery, `{"workflowId":"w","kind":"workflow"}`, "/kind"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			args := decodeArgs(t, tt.args).(map[string]any)
			for range 20 { // map order varies between runs
				_, err := contracts.Classify(tt.tool, args)
				ce := contracts.AsError(err)
				if ce.Code != contracts.CodeInvalidParams {
					t.Fatalf("err = %v, want INVALID_PARAMS", err)
				}
				if len(ce.Fields) != 1 || ce.Fields[0].Pointer != tt.pointer {
					t.Fatalf("fields %v, want one at %s", ce.Fields, tt.pointer)
				}
			}
		})
	}
}

func TestClassifyUnknownTool(t *testing.T) {
	for _, tool := range []string{contracts.ToolGetMission, "PRAXEC.QUERY", ""} {
		_, err := contracts.Classify(tool, map[string]any{})
		if ce := contracts.AsError(err); ce.Code != contracts.CodeInvalidParams {
			t.Errorf("Classify(%q) = %v, want INVALID_PARAMS", tool, err)
		}
		if rows := contracts.DispatchTable(tool); rows != nil {
			t.Errorf("DispatchTable(%q) = %v, want nil", tool, rows)
		}
	}
	if _, err := contracts.Classify(contracts.ToolPraxecQuery, nil); err != nil {
		t.Errorf("nil arguments are the home call: %v", err)
	}
}

// wantScopes is the scope column of the DESIGN.md dispatch table.
var wantScopes = map[contracts.Operation]contracts.Scope{
	contracts.OpHome: "capabilities:read", contracts.OpSearch: "capabilities:read", contracts.OpDescribe: "capabilities:read",
	contracts.OpGet: "missions:read", contracts.OpExplain: "missions:read",
	contracts.OpStart: "missions:write", contracts.OpSubmit: "missions:write", contracts.OpDefine: "lexicon:write",
	contracts.OpCancelPendingSubject: "missions:write",
}

func TestDispatchTable(t *testing.T) {
	wantOps := map[string][]contracts.Operation{
		contracts.ToolPraxecQuery:   {contracts.OpHome, contracts.OpSearch, contracts.OpDescribe, contracts.OpGet, contracts.OpExplain},
		contracts.ToolPraxecCommand: {contracts.OpStart, contracts.OpSubmit, contracts.OpDefine, contracts.OpCancelPendingSubject},
	}
	wantKeys := map[contracts.Operation][]string{
		contracts.OpHome: nil, contracts.OpSearch: {"query"}, contracts.OpDescribe: {"subject"},
		contracts.OpGet: {"workflowId"}, contracts.OpExplain: {"transition", "workflowId"},
		contracts.OpStart: {"definitionId"}, contracts.OpSubmit: {"expectedVersion", "transition", "workflowId"},
		contracts.OpDefine: {"definition", "subject"}, contracts.OpCancelPendingSubject: {"intent", "unknown_subject"},
	}
	for tool, ops := range wantOps {
		rows := contracts.DispatchTable(tool)
		tl, _ := contracts.Lookup(tool)
		props, _ := properties(t, tl.InputSchema)
		var got []contracts.Operation
		used := map[string]bool{}
		for _, r := range rows {
			got = append(got, r.Operation)
			if r.Tool != tool {
				t.Errorf("row %s belongs to %s", r.Operation, r.Tool)
			}
			if r.Scope != wantScopes[r.Operation] {
				t.Errorf("%s %s: scope %s, want %s", tool, r.Operation, r.Scope, wantScopes[r.Operation])
			}
			if !r.Scope.Known() {
				t.Errorf("%s %s: scope %s is not registered", tool, r.Operation, r.Scope)
			}
			if keys := slices.Sorted(slices.Values(r.Keys)); !slices.Equal(keys, wantKeys[r.Operation]) {
				t.Errorf("%s %s: keys %v, want %v", tool, r.Operation, keys, wantKeys[r.Operation])
			}
			for _, k := range slices.Concat(r.Keys, r.Optional, r.Modifiers) {
				used[k] = true
				if _, ok := props[k]; !ok {
					t.Errorf("%s %s names %q, which the input schema does not declare", tool, r.Operation, k)
				}
			}
		}
		if !slices.Equal(got, ops) {
			t.Errorf("%s rows %v, want %v", tool, got, ops)
		}
		// Every field of the schema does something in some row.
		for p := range props {
			if !used[p] {
				t.Errorf("%s: field %q selects no row and modifies none", tool, p)
			}
		}
		// The tool-level scope is the home/start row's.
		if tl.RequiredScope != rows[0].Scope {
			t.Errorf("%s: requiredScope %s, want the %s row's %s", tool, tl.RequiredScope, rows[0].Operation, rows[0].Scope)
		}
	}
	// Row selection never depends on the DESIGN.md modifiers.
	for _, r := range slices.Concat(contracts.DispatchTable(contracts.ToolPraxecQuery), contracts.DispatchTable(contracts.ToolPraxecCommand)) {
		for _, m := range []string{"kind", "limit", "input", "runId", "arguments", "summary", "traceId"} {
			if slices.Contains(r.Keys, m) || slices.Contains(r.Optional, m) {
				t.Errorf("%s %s selects on modifier %q", r.Tool, r.Operation, m)
			}
		}
	}
}

// oracle classifies independently of the package: the rows whose keys are
// all present and which admit every other present selecting key. A key
// the tool's schema does not declare selects nothing: the schema check
// after classification names it (DESIGN.md: "keys the schema does not
// declare are left to the schema check").
func oracle(tool string, args map[string]any) []contracts.DispatchRow {
	declared := schemaProperties(tool)
	// A tool's modifiers are those of DESIGN.md, whether or not a row takes
	// them; they never select a row.
	mods := map[string]bool{}
	for _, m := range map[string][]string{
		contracts.ToolPraxecQuery:   {"kind", "limit"},
		contracts.ToolPraxecCommand: {"input", "runId", "arguments", "summary", "traceId", "idempotencyKey"},
	}[tool] {
		mods[m] = true
	}
	var out []contracts.DispatchRow
rows:
	for _, r := range contracts.DispatchTable(tool) {
		for _, k := range r.Keys {
			if _, ok := args[k]; !ok {
				continue rows
			}
		}
		for k := range args {
			if declared[k] && !mods[k] && !slices.Contains(r.Keys, k) && !slices.Contains(r.Optional, k) {
				continue rows
			}
		}
		out = append(out, r)
	}
	return out
}

// schemaProperties is the set of properties tool's input schema declares.
func schemaProperties(tool string) map[string]bool {
	tl, _ := contracts.Lookup(tool)
	var s struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
		panic(err)
	}
	out := map[string]bool{}
	for k := range s.Properties {
		out[k] = true
	}
	return out
}

// fuzzValues are the values a fuzzed argument may take.
var fuzzValues = []any{nil, "", "x", "lexicon:", "lexicon:evidence-pack", "lexicon", 0.0, -1.0, 4.0, true, false,
	map[string]any{}, map[string]any{"a": 1.0}, []any{}, []any{"lexicon"}}

// FuzzClassify builds argument maps from a fuzzed subset of each praxec
// tool's schema properties plus junk keys, and holds the classifier to its
// rules: no panic, one row whose keys are present or a contract error,
// and the same answer whatever the map's iteration order.
func FuzzClassify(f *testing.F) {
	f.Add(false, uint64(0), uint64(0), "")
	f.Add(false, uint64(1), uint64(0), "")
	f.Add(true, uint64(0b1_0000_0001), uint64(7), "")
	f.Add(true, uint64(0b11100), uint64(42), "zzz")
	f.Add(false, uint64(0b110), uint64(3), "lexicon:evidence")
	f.Add(true, uint64(1<<13-1), uint64(99), "~/")
	schemaKeys := map[string][]string{}
	for _, tool := range []string{contracts.ToolPraxecQuery, contracts.ToolPraxecCommand} {
		tl, _ := contracts.Lookup(tool)
		var s map[string]any
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
			f.Fatal(err)
		}
		schemaKeys[tool] = slices.Sorted(maps.Keys(s["properties"].(map[string]any)))
	}
	f.Fuzz(func(t *testing.T, command bool, mask, valueSeed uint64, junk string) {
		tool := contracts.ToolPraxecQuery
		if command {
			tool = contracts.ToolPraxecCommand
		}
		keys := slices.Clone(schemaKeys[tool])
		keys = append(keys, "zzz", "Query", "definitionid", "idempotencyKey", "")
		if junk != "" {
			keys = append(keys, junk)
		}
		rng := rand.New(rand.NewPCG(valueSeed, mask))
		args := map[string]any{}
		for i, k := range keys {
			if mask&(1<<(i%64)) != 0 {
				args[k] = fuzzValues[rng.IntN(len(fuzzValues))]
			}
		}
		// A copy with a different insertion history, to vary map order.
		reordered := make(map[string]any, len(args))
		for _, k := range slices.Backward(slices.Sorted(maps.Keys(args))) {
			reordered[k] = args[k]
		}

		d1, err1 := contracts.Classify(tool, args)
		d2, err2 := contracts.Classify(tool, reordered)
		want := oracle(tool, args)

		if err1 == nil {
			if len(want) != 1 || want[0].Operation != d1.Row.Operation {
				t.Fatalf("%v: classified as %s, oracle rows %v", args, d1.Row.Operation, want)
			}
			for _, k := range d1.Row.Keys {
				if _, ok := args[k]; !ok {
					t.Fatalf("%v: row %s key %q is absent", args, d1.Row.Operation, k)
				}
			}
			declared := schemaProperties(tool)
			for k := range args {
				if declared[k] && !slices.Contains(d1.Row.Keys, k) && !slices.Contains(d1.Row.Optional, k) && !slices.Contains(d1.Row.Modifiers, k) {
					t.Fatalf("%v: row %s accepted %q it does not take", args, d1.Row.Operation, k)
				}
			}
			if d1.Row.Scope != wantScopes[d1.Row.Operation] {
				t.Fatalf("%v: scope %s", args, d1.Row.Scope)
			}
		} else {
			var ce *contracts.Error
			if !errors.As(err1, &ce) {
				t.Fatalf("%v: error %T %v is not a *contracts.Error", args, err1, err1)
			}
			switch ce.Code {
			case contracts.CodeAmbiguousIntent:
				if len(want) != 0 {
					t.Fatalf("%v: AMBIGUOUS_INTENT but oracle matched %v", args, want)
				}
				if len(ce.Links) == 0 {
					t.Fatalf("%v: AMBIGUOUS_INTENT without links", args)
				}
			case contracts.CodeInvalidParams:
				if len(want) != 1 {
					t.Fatalf("%v: INVALID_PARAMS but oracle matched %v", args, want)
				}
				if len(ce.Fields) != 1 || !strings.HasPrefix(ce.Fields[0].Pointer, "/") {
					t.Fatalf("%v: INVALID_PARAMS fields %v", args, ce.Fields)
				}
				// The next move: the same call without the modifier, which
				// the classifier takes.
				if len(ce.Links) == 0 || ce.Links[0].Method != tool {
					t.Fatalf("%v: INVALID_PARAMS links %v", args, ce.Links)
				}
				if _, err := contracts.Classify(tool, ce.Links[0].Args); err != nil {
					t.Fatalf("%v: the retry link %v is refused: %v", args, ce.Links[0].Args, err)
				}
			default:
				t.Fatalf("%v: unexpected code %s", args, ce.Code)
			}
		}

		// Independent of map iteration order.
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%v: order changed the outcome: %v / %v", args, err1, err2)
		}
		if err1 == nil && (d1.Operation != d2.Operation || d1.Row.Operation != d2.Row.Operation) {
			t.Fatalf("%v: order changed the row: %s / %s", args, d1.Operation, d2.Operation)
		}
		if err1 != nil {
			e1, _ := json.Marshal(contracts.AsError(err1).Envelope())
			e2, _ := json.Marshal(contracts.AsError(err2).Envelope())
			if string(e1) != string(e2) {
				t.Fatalf("%v: order changed the error:\n%s\n%s", args, e1, e2)
			}
		}
	})
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	return compact(t, string(a)) == compact(t, string(b))
}

// compact re-encodes a JSON text canonically (sorted keys, no spaces).
func compact(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDispatchGolden pins both dispatch tables, rows in order.
func TestDispatchGolden(t *testing.T) {
	golden.Check(t, "testdata/dispatch.golden.json", marshalGolden(t, map[string][]contracts.DispatchRow{
		contracts.ToolPraxecQuery:   contracts.DispatchTable(contracts.ToolPraxecQuery),
		contracts.ToolPraxecCommand: contracts.DispatchTable(contracts.ToolPraxecCommand),
	}), "")
}

// TestUnusedModifierLinks: a modifier the matched operation does not take
// is refused with the next moves: the call without it and, for a search
// modifier sent to home, the search it asks for (DESIGN.md: kind is a
// modifier; it never selects a row).
func TestUnusedModifierLinks(t *testing.T) {
	for _, c := range []struct {
		tool, args, links string
	}{
		{contracts.ToolPraxecQuery, `{"kind":"workflow"}`,
			`[{"rel":"home","title":"The same call without kind","method":"praxec.query","args":{}},
			  {"rel":"search","title":"Search everything","method":"praxec.query","args":{"query":"","kind":"workflow"}}]`},
		{contracts.ToolPraxecQuery, `{"kind":0,"limit":5,"zzz":1}`,
			`[{"rel":"home","title":"The same call without kind","method":"praxec.query","args":{}},
			  {"rel":"search","title":"Search everything","method":"praxec.query","args":{"query":"","limit":5}}]`},
		{contracts.ToolPraxecQuery, `{"workflowId":"wf_1","limit":2}`,
			`[{"rel":"get","title":"The same call without limit","method":"praxec.query","args":{"workflowId":"wf_1"}}]`},
	} {
		var args map[string]any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		_, err := contracts.Classify(c.tool, args)
		ce := contracts.AsError(err)
		if ce == nil || ce.Code != contracts.CodeInvalidParams {
			t.Fatalf("%s %s: %v, want INVALID_PARAMS", c.tool, c.args, err)
		}
		got, _ := json.Marshal(ce.Links)
		if !jsonEqual(t, got, []byte(c.links)) {
			t.Errorf("%s %s: links %s, want %s", c.tool, c.args, got, c.links)
		}
	}
}
