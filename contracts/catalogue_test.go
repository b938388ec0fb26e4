package contracts_test

import (
	"encoding/json"
	"iter"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// catalogueRow is one row of the seeds/003 tool table, plus the praxec pair.
type catalogueRow struct {
	name, method, path string
	scope              contracts.Scope
	idempotency        contracts.Idempotency
	pathArgument       string
}

// wantCatalogue is the contract's tool list in its stable order. The twelve
// aura_* rows are copied from the seeds/003 table; they are facts and must
// never drift.
var wantCatalogue = []catalogueRow{
	{"aura_submit_intent", "POST", "/v8/intents", "missions:write", "required", ""},
	{"aura_create_mission", "POST", "/v8/missions", "missions:write", "required", ""},
	{"aura_get_mission", "GET", "/v8/missions/{runId}", "missions:read", "safe-read", "runId"},
	{"aura_signal_mission", "POST", "/v8/missions/{runId}/signals", "missions:write", "required", "runId"},
	{"aura_cancel_mission", "POST", "/v8/missions/{runId}/cancel", "missions:write", "required", "runId"},
	{"aura_search_capabilities", "POST", "/v8/capabilities/search", "capabilities:read", "safe-read", ""},
	{"aura_query_memory", "POST", "/v8/memory/query", "memory:read", "safe-read", ""},
	{"aura_get_skill", "GET", "/v8/skills/{skillId}", "skills:read", "safe-read", "skillId"},
	{"aura_get_trace", "GET", "/v8/traces/{traceId}", "traces:read", "safe-read", "traceId"},
	{"aura_list_goals", "GET", "/v8/context-twin/goals", "context:read", "safe-read", ""},
	{"aura_list_world_certificates", "GET", "/v8/world-model/certificates", "world:read", "safe-read", ""},
	{"aura_get_coverage", "GET", "/v8/coverage", "coverage:read", "safe-read", ""},
	{"praxec.query", "POST", "/v8/praxec/query", "capabilities:read", "safe-read", ""},
	{"praxec.command", "POST", "/v8/praxec/command", "missions:write", "versioned", ""},
}

func TestCatalogueRows(t *testing.T) {
	tools := contracts.Tools()
	if len(tools) != 14 {
		t.Fatalf("the contract has %d tools, want 14", len(tools))
	}
	aura := 0
	for _, tool := range tools {
		if strings.HasPrefix(tool.Name, "aura_") {
			aura++
		}
	}
	if aura != 12 {
		t.Errorf("the contract has %d aura_* tools, want 12", aura)
	}
	for i, want := range wantCatalogue {
		t.Run(want.name, func(t *testing.T) {
			got := tools[i]
			if got.Name != want.name {
				t.Fatalf("tool %d is %q, want %q", i, got.Name, want.name)
			}
			if got.Method != want.method || got.Path != want.path || got.RequiredScope != want.scope ||
				got.Idempotency != want.idempotency || got.PathArgument != want.pathArgument {
				t.Errorf("row = (%s %s %s %s pathArgument=%q), want (%s %s %s %s pathArgument=%q)",
					got.Method, got.Path, got.RequiredScope, got.Idempotency, got.PathArgument,
					want.method, want.path, want.scope, want.idempotency, want.pathArgument)
			}
			if got.Description == "" || got.Title == "" || got.OperationID == "" {
				t.Errorf("title %q, description %q, operationId %q: none may be empty", got.Title, got.Description, got.OperationID)
			}
			if len(got.InputSchema) == 0 || len(got.OutputSchema) == 0 {
				t.Error("every tool has an input and an output schema")
			}
			if got.Mutates() != (want.idempotency != contracts.IdempotencySafeRead) {
				t.Errorf("Mutates() = %v for idempotency %s", got.Mutates(), want.idempotency)
			}
			wantIsAura := strings.HasPrefix(want.name, "aura_")
			if contracts.IsAura(want.name) != wantIsAura {
				t.Errorf("IsAura(%q) = %v, want %v", want.name, !wantIsAura, wantIsAura)
			}
		})
	}
}

func TestCatalogueOrderIsStable(t *testing.T) {
	var want []string
	for _, r := range wantCatalogue {
		want = append(want, r.name)
	}
	if got := contracts.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v\nwant      %v", got, want)
	}
	checkOrder(t, want, contracts.Tools(), contracts.All(), func(tool contracts.Tool) string { return tool.Name }, "Tools", "All")
}

// checkOrder fails unless the entries of list and of all, an accessor pair
// named listName and allName, are keyed want in want's order, and unless
// all stops when the loop over it breaks.
func checkOrder[T any](t *testing.T, want []string, list []T, all iter.Seq[T], key func(T) string, listName, allName string) {
	t.Helper()
	var fromList, fromAll []string
	for _, v := range list {
		fromList = append(fromList, key(v))
	}
	for v := range all {
		fromAll = append(fromAll, key(v))
	}
	if !slices.Equal(fromList, want) || !slices.Equal(fromAll, want) {
		t.Errorf("%s() order %v and %s() order %v differ from %v", listName, fromList, allName, fromAll, want)
	}
	wantStopsAt(t, all, 3, allName)
}

// wantStopsAt fails unless a loop over seq that breaks after n elements
// has seen n: the iterator stops when the loop body breaks.
func wantStopsAt[T any](t *testing.T, seq iter.Seq[T], n int, what string) {
	t.Helper()
	i := 0
	for range seq {
		i++
		if i == n {
			break
		}
	}
	if i != n {
		t.Errorf("breaking out of %s after %d saw %d", what, n, i)
	}
}

// lookupCase is a key to look up and whether it names an entry.
type lookupCase struct {
	key string
	ok  bool
}

// checkLookup holds lookup, the accessor named what, to every case: a copy
// of the entry with exactly that key, or the zero value and false.
func checkLookup[T any](t *testing.T, cases []lookupCase, lookup func(string) (T, bool), key func(T) string, what string) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := lookup(tt.key)
			if ok != tt.ok {
				t.Fatalf("%s(%q) ok = %v, want %v", what, tt.key, ok, tt.ok)
			}
			if ok && key(got) != tt.key {
				t.Errorf("%s(%q) returned %q", what, tt.key, key(got))
			}
			var zero T
			if !ok && !reflect.DeepEqual(got, zero) {
				t.Errorf("%s(%q) returned a non-zero value on failure", what, tt.key)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	tests := []lookupCase{
		{"aura_get_mission", true},
		{"praxec.query", true},
		{"praxec.command", true},
		{"aura_list_world_certificates", true},
		{"AURA_GET_MISSION", false},
		{"Aura_get_mission", false},
		{"aura_get_mission ", false},
		{" aura_get_mission", false},
		{"praxec_query", false},
		{"praxa_get_mission", false},
		{"get_mission", false},
		{"getMission", false},
		{"", false},
	}
	checkLookup(t, tests, contracts.Lookup, func(tool contracts.Tool) string { return tool.Name }, "Lookup")
	for _, tool := range contracts.Tools() {
		got, ok := contracts.ByOperationID(tool.OperationID)
		if !ok || got.Name != tool.Name {
			t.Errorf("ByOperationID(%q) = %q, %v; want %q", tool.OperationID, got.Name, ok, tool.Name)
		}
	}
	if _, ok := contracts.ByOperationID("GETMISSION"); ok {
		t.Error("ByOperationID matched a differently cased id")
	}
	if contracts.IsAura("AURA_GET_MISSION") || contracts.IsAura("aura_unknown") {
		t.Error("IsAura accepts a name outside the catalogue")
	}
}

// toolNameRE is the MCP tool-name rule (go-sdk validateToolName): the SDK
// only logs a bad name, so the contract enforces it here.
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

var operationIDRE = regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)

func TestNamesAndOperationIDs(t *testing.T) {
	names := map[string]string{}
	flattened := map[string]string{}
	opIDs := map[string]string{}
	routes := map[string]string{}
	for _, tool := range contracts.Tools() {
		if !toolNameRE.MatchString(tool.Name) {
			t.Errorf("%q is not a valid MCP tool name", tool.Name)
		}
		if prev, dup := names[tool.Name]; dup {
			t.Errorf("name %q is used twice (%s)", tool.Name, prev)
		}
		names[tool.Name] = tool.Name
		// Several LLM function-calling APIs forbid dots; a client that
		// rewrites them must not make two tools collide.
		flat := strings.ReplaceAll(tool.Name, ".", "_")
		if prev, dup := flattened[flat]; dup {
			t.Errorf("%q and %q collide as %q once dots become underscores", prev, tool.Name, flat)
		}
		flattened[flat] = tool.Name
		if !operationIDRE.MatchString(tool.OperationID) {
			t.Errorf("%s: operationId %q is not lowerCamelCase", tool.Name, tool.OperationID)
		}
		if prev, dup := opIDs[tool.OperationID]; dup {
			t.Errorf("operationId %q is used by %s and %s", tool.OperationID, prev, tool.Name)
		}
		opIDs[tool.OperationID] = tool.Name
		route := tool.Method + " " + tool.Path
		if prev, dup := routes[route]; dup {
			t.Errorf("route %q is used by %s and %s", route, prev, tool.Name)
		}
		routes[route] = tool.Name
	}
}

var pathParamRE = regexp.MustCompile(`\{([^}]*)\}`)

func TestPathsAndStatuses(t *testing.T) {
	for _, tool := range contracts.Tools() {
		if !strings.HasPrefix(tool.Path, "/"+contracts.APIVersion+"/") {
			t.Errorf("%s: path %q is not under /%s", tool.Name, tool.Path, contracts.APIVersion)
		}
		if tool.Method != "GET" && tool.Method != "POST" {
			t.Errorf("%s: method %q is neither GET nor POST", tool.Name, tool.Method)
		}
		if tool.Method == "GET" && tool.Mutates() {
			t.Errorf("%s: a GET tool must be a safe read", tool.Name)
		}
		var params []string
		for _, m := range pathParamRE.FindAllStringSubmatch(tool.Path, -1) {
			params = append(params, m[1])
		}
		switch {
		case tool.PathArgument == "" && len(params) != 0:
			t.Errorf("%s: path %q has parameters %v but no pathArgument", tool.Name, tool.Path, params)
		case tool.PathArgument != "" && !slices.Equal(params, []string{tool.PathArgument}):
			t.Errorf("%s: pathArgument %q, path parameters %v", tool.Name, tool.PathArgument, params)
		}
		want := 200
		if tool.Name == contracts.ToolCreateMission {
			want = 201
		}
		if tool.SuccessStatus != want {
			t.Errorf("%s: successStatus %d, want %d", tool.Name, tool.SuccessStatus, want)
		}
	}
}

func TestAnnotations(t *testing.T) {
	for _, tool := range contracts.Tools() {
		a := tool.Annotations
		if a.ReadOnlyHint != (tool.Idempotency == contracts.IdempotencySafeRead) {
			t.Errorf("%s: readOnlyHint %v for idempotency %s", tool.Name, a.ReadOnlyHint, tool.Idempotency)
		}
		if a.ReadOnlyHint && a.DestructiveHint {
			t.Errorf("%s: a read-only tool cannot be destructive", tool.Name)
		}
		if tool.Idempotency == contracts.IdempotencyRequired && !a.IdempotentHint {
			t.Errorf("%s: a keyed mutation replays, so it is idempotent", tool.Name)
		}
		if a.ReadOnlyHint && a.OpenWorldHint {
			t.Errorf("%s: a read of gateway state does not reach outside it", tool.Name)
		}
	}
	cancel, _ := contracts.Lookup(contracts.ToolCancelMission)
	if !cancel.Annotations.DestructiveHint {
		t.Error("aura_cancel_mission must be destructive (DESIGN.md)")
	}
}

// seedToolFields are the members of the seeds/003 PraxaMcpTool type; the
// contract adds title, outputSchema and successStatus beside them.
var seedToolFields = []string{"name", "description", "inputSchema", "operationId", "method", "path",
	"requiredScope", "idempotency", "annotations"}

// checkJSONForm marshals v and checks that the JSON object it makes has
// exactly the members want, and that it decodes back to wire (v as its
// wire form keeps it: Errors are not part of it); it returns the members.
func checkJSONForm[T any](t *testing.T, v, wire T, want []string) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want = slices.Sorted(slices.Values(want))
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, want) {
		t.Errorf("members %v\nwant    %v", got, want)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, wire) {
		t.Errorf("JSON round trip changed it:\n got %+v\nwant %+v", back, wire)
	}
	return m
}

func TestToolJSONForm(t *testing.T) {
	for _, tool := range contracts.Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			want := append(slices.Clone(seedToolFields), "outputSchema", "title", "successStatus")
			if tool.PathArgument != "" {
				want = append(want, "pathArgument")
			}
			// The JSON form decodes back to the same tool, Errors aside
			// (they are not part of the wire form).
			wire := tool.Clone()
			wire.Errors = nil
			m := checkJSONForm(t, tool, wire, want)
			var ann map[string]any
			if err := json.Unmarshal(m["annotations"], &ann); err != nil {
				t.Fatal(err)
			}
			wantAnn := []string{"destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint"}
			if got := slices.Sorted(maps.Keys(ann)); !slices.Equal(got, wantAnn) {
				t.Errorf("annotations members %v, want %v", got, wantAnn)
			}
			for k, v := range ann {
				if _, ok := v.(bool); !ok {
					t.Errorf("annotations.%s = %v, want a boolean", k, v)
				}
			}
			for _, k := range []string{"inputSchema", "outputSchema"} {
				var s map[string]any
				if err := json.Unmarshal(m[k], &s); err != nil {
					t.Errorf("%s is not a JSON object: %v", k, err)
				}
			}
			var path string
			if raw, ok := m["pathArgument"]; ok {
				if err := json.Unmarshal(raw, &path); err != nil || path == "" {
					t.Errorf("pathArgument = %s, want a non-empty string", raw)
				}
			}
			var idem string
			_ = json.Unmarshal(m["idempotency"], &idem)
			if !slices.Contains([]string{"required", "safe-read", "versioned"}, idem) {
				t.Errorf("idempotency %q is not a known class", idem)
			}
		})
	}
}

// TestMissionOutputDeclaresWaiting: a mission read declares the waiting
// member of a move parked on a sub-workflow; a member of the wrong shape
// does not validate.
func TestMissionOutputDeclaresWaiting(t *testing.T) {
	mission := func(waiting any) map[string]any {
		return map[string]any{"runId": "r-1", "workflow": map[string]any{"id": "wf_1", "definitionId": "release", "definitionVersion": 1,
			"state": "draft", "version": 2}, "result": map[string]any{"status": "executed"}, "context": map[string]any{},
			"evidence": []any{}, "links": []any{}, "waiting": waiting}
	}
	good := map[string]any{"transition": "review", "childWorkflowId": "wf_2", "childRunId": "wf_2", "definitionId": "review",
		"deadline": "2026-12-02T01:00:00Z"}
	onEnter := map[string]any{"transition": "", "state": "reviewing", "childWorkflowId": "wf_2", "childRunId": "wf_2", "definitionId": "review",
		"resumeAt": "2026-12-02T01:00:00Z"}
	for _, tool := range []string{contracts.ToolGetMission, contracts.ToolSignalMission, contracts.ToolCreateMission, contracts.ToolCancelMission} {
		for _, tc := range []struct {
			name    string
			waiting any
			ok      bool
		}{
			{"move", good, true},
			{"onEnter", onEnter, true},
			{"no child", map[string]any{"transition": "review", "childRunId": "wf_2", "definitionId": "review"}, false},
			{"child not a string", map[string]any{"transition": "review", "childWorkflowId": 2, "childRunId": "wf_2", "definitionId": "review"}, false},
			{"not an object", "review", false},
		} {
			err := contracts.ValidateOutput(tool, mission(tc.waiting))
			if (err == nil) != tc.ok {
				t.Errorf("%s, %s: ValidateOutput = %v, want ok %v", tool, tc.name, err, tc.ok)
			}
		}
	}
}
