package mcpadapter_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/mcpadapter"
)

// listTools lists every tool, following pages.
func listTools(t testing.TB, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	var out []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tool)
	}
	return out
}

func TestToolsListIsTheContract(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.inMemory(t, h.token(t, nil, nil), nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("in-memory protocol %s, want 2026-07-28", v)
	}
	tools := listTools(t, cs)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	want := contracts.Names()
	slices.Sort(want)
	slices.Sort(names)
	if len(want) != 14 || !slices.Equal(names, want) {
		t.Fatalf("tools/list names %v, want the 14 contract tools %v", names, want)
	}
	for _, tool := range tools {
		c, _ := contracts.Lookup(tool.Name)
		if tool.Title != c.Title || tool.Description != c.Description {
			t.Errorf("%s: title/description %q/%q, want %q/%q", tool.Name, tool.Title, tool.Description, c.Title, c.Description)
		}
		in, _ := json.Marshal(tool.InputSchema)
		if !jsonEqual(t, in, c.InputSchema) {
			t.Errorf("%s: inputSchema\n%s\nwant\n%s", tool.Name, in, c.InputSchema)
		}
		out, _ := json.Marshal(tool.OutputSchema)
		if !jsonEqual(t, out, c.OutputSchema) {
			t.Errorf("%s: outputSchema\n%s\nwant\n%s", tool.Name, out, c.OutputSchema)
		}
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations %+v lack destructiveHint or openWorldHint", tool.Name, a)
			continue
		}
		got := contracts.Annotations{ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: *a.DestructiveHint,
			IdempotentHint: a.IdempotentHint, OpenWorldHint: *a.OpenWorldHint}
		if got != c.Annotations || a.Title != c.Title {
			t.Errorf("%s: annotations %+v (title %q), want %+v (title %q)", tool.Name, got, a.Title, c.Annotations, c.Title)
		}
	}
}

func TestToolSetsRegisterOnlyTheirTools(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	for _, name := range []string{contracts.SetAura, contracts.SetPraxec, contracts.SetReadOnlyIncidentReview} {
		t.Run(name, func(t *testing.T) {
			set, _ := contracts.LookupToolSet(name)
			cs := h.inMemory(t, tok, &mcpadapter.Options{ToolSet: name})
			var got []string
			for _, tool := range listTools(t, cs) {
				got = append(got, tool.Name)
			}
			want := slices.Clone(set.Tools)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("tools %v, want %v", got, want)
			}
			// A tool outside the set is not served at all.
			outside := contracts.ToolPraxecQuery
			if set.Contains(outside) {
				outside = contracts.ToolGetTrace
			}
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: outside, Arguments: map[string]any{}}); err == nil {
				t.Errorf("%s outside the set %s was served", outside, name)
			}
		})
	}
	if _, err := mcpadapter.New(nil, &mcpadapter.Options{ToolSet: "no-such-set"}); err == nil {
		t.Error("New accepted an unknown tool set")
	}
}

// driveDeployPipeline starts deploy_pipeline with praxec.command and drives
// it to its terminal state by copying link args only. It returns the
// answers in order.
func driveDeployPipeline(t testing.TB, cs *mcp.ClientSession) []*answer {
	t.Helper()
	home := call(t, cs, contracts.ToolPraxecQuery, map[string]any{})
	for _, rel := range []string{"search", "list_workflows", "list_capabilities"} {
		if l := home.link(t, rel); l.Method != contracts.ToolPraxecQuery {
			t.Errorf("home link %s names %s", rel, l.Method)
		}
	}
	started := call(t, cs, contracts.ToolPraxecCommand, map[string]any{"definitionId": "deploy_pipeline"})
	answers := []*answer{started}
	steps := []struct {
		rel   string
		fill  map[string]any
		state string
	}{
		{"run_lint", nil, "test"},
		{"run_tests", map[string]any{"coverage": 90}, "build"},
		{"build", map[string]any{"artifactId": "art_mcp"}, "ready_to_deploy"},
		{"deploy", nil, "deployed"},
	}
	if s := started.str("workflow.state"); s != "lint" {
		t.Fatalf("started in %q, want lint: %s", s, started.raw)
	}
	cur := started
	for _, s := range steps {
		l := cur.link(t, s.rel)
		if l.Method != contracts.ToolPraxecCommand {
			t.Fatalf("link %s names %s, want %s", s.rel, l.Method, contracts.ToolPraxecCommand)
		}
		cur = follow(t, cs, cur, s.rel, s.fill)
		if got := cur.str("workflow.state"); got != s.state {
			t.Fatalf("after %s: state %q, want %q: %s", s.rel, got, s.state, cur.raw)
		}
		answers = append(answers, cur)
	}
	if st := cur.str("result.status"); st != "completed" || len(cur.links) != 0 {
		t.Errorf("terminal answer: status %q with %d links, want completed with none", st, len(cur.links))
	}
	return answers
}

func TestDriveDeployPipelineInMemory(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.inMemory(t, h.token(t, nil, nil), nil)
	answers := driveDeployPipeline(t, cs)
	// The deploy link arrived prefilled; nothing was added to it.
	ready := answers[len(answers)-2]
	if l := ready.link(t, "deploy"); l.Args["arguments"].(map[string]any)["confirm"] != true {
		t.Errorf("deploy link args %v lack the prefill confirm: true", l.Args)
	}
	// get reads back the same instance on the aura surface too.
	id := answers[0].str("workflow.id")
	got := call(t, cs, contracts.ToolGetMission, map[string]any{"runId": id})
	if got.str("workflow.state") != "deployed" || got.str("result.status") != "completed" {
		t.Errorf("aura_get_mission after the drive: %s", got.raw)
	}
}

func TestToolErrors(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.inMemory(t, h.token(t, nil, nil), nil)

	t.Run("AMBIGUOUS_INTENT carries the seed's links", func(t *testing.T) {
		for tool, args := range map[string]map[string]any{
			contracts.ToolPraxecCommand: {"input": map[string]any{}},
			contracts.ToolPraxecQuery:   {"transition": "run_lint"},
		} {
			env, _ := callErr(t, cs, tool, args, contracts.CodeAmbiguousIntent)
			want, _ := json.Marshal(contracts.AmbiguousIntent(tool).Links)
			if !jsonEqual(t, env.rawLinks, want) {
				t.Errorf("%s: links %s, want the seed's %s", tool, env.rawLinks, want)
			}
		}
	})
	t.Run("INVALID_PARAMS names the unknown field", func(t *testing.T) {
		env, _ := callErr(t, cs, contracts.ToolPraxecQuery, map[string]any{"bogus": 1}, contracts.CodeInvalidParams)
		if len(env.Errors) == 0 || env.Errors[0].Pointer != "/bogus" {
			t.Errorf("field errors %+v, want one at /bogus", env.Errors)
		}
		env, _ = callErr(t, cs, contracts.ToolSubmitIntent,
			map[string]any{"idempotencyKey": "mcp-invalid-params-0001", "intent": "x", "colour": "red"}, contracts.CodeInvalidParams)
		if len(env.Errors) == 0 || env.Errors[0].Pointer != "/colour" {
			t.Errorf("field errors %+v, want one at /colour", env.Errors)
		}
	})
	t.Run("GUARD_REJECTED", func(t *testing.T) {
		started := call(t, cs, contracts.ToolPraxecCommand, map[string]any{"definitionId": "guarded_merge"})
		l := started.link(t, "merge")
		env, _ := callErr(t, cs, l.Method, followArgs(t, l, nil), contracts.CodeGuardRejected)
		if env.Error.Hint == "" && len(env.Links) == 0 {
			t.Errorf("GUARD_REJECTED gives neither a hint nor links: %+v", env)
		}
		// Nothing moved: the instance is still open at its version.
		got := call(t, cs, contracts.ToolPraxecQuery, map[string]any{"workflowId": started.str("workflow.id")})
		if got.str("workflow.state") != "open" {
			t.Errorf("after a rejected merge: %s", got.raw)
		}
	})
	t.Run("insufficient scope", func(t *testing.T) {
		ro := h.inMemory(t, h.token(t, scopesWithout(contracts.ScopeMissionsWrite), nil), nil)
		callErr(t, ro, contracts.ToolPraxecCommand, map[string]any{"definitionId": "deploy_pipeline"}, contracts.CodeInsufficientScope)
		callErr(t, ro, contracts.ToolCreateMission,
			map[string]any{"idempotencyKey": "mcp-scope-check-00001", "goal": "deploy", "definitionId": "deploy_pipeline"}, contracts.CodeInsufficientScope)
		// The reads its scopes allow still work.
		call(t, ro, contracts.ToolPraxecQuery, map[string]any{})
	})
	t.Run("tool not allowed by the token", func(t *testing.T) {
		narrow := h.inMemory(t, h.token(t, nil, map[string]any{"tools": []string{contracts.ToolPraxecQuery}}), nil)
		call(t, narrow, contracts.ToolPraxecQuery, map[string]any{})
		// The list shows every tool here: this in-memory server was built
		// without an Allowed filter; the HTTP test checks the narrowed list.
		callErr(t, narrow, contracts.ToolPraxecCommand, map[string]any{"definitionId": "deploy_pipeline"}, contracts.CodeToolNotAllowed)
	})
	t.Run("idempotency key missing", func(t *testing.T) {
		callErr(t, cs, contracts.ToolSubmitIntent, map[string]any{"intent": "deploy the payments service"}, contracts.CodeIdempotencyKeyMissing)
		callErr(t, cs, contracts.ToolSubmitIntent, map[string]any{"intent": "deploy", "idempotencyKey": "short"}, contracts.CodeIdempotencyKeyInvalid)
	})
	t.Run("unknown tool is a protocol error", func(t *testing.T) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "aura_no_such_tool", Arguments: map[string]any{}})
		if err == nil {
			t.Fatalf("unknown tool answered a result %+v, want a JSON-RPC error", res)
		}
	})
	t.Run("a binding that no longer verifies stops every call", func(t *testing.T) {
		// The binding verifies its token on every call: a token that no
		// longer verifies answers invalid-token as a tool error.
		bad := h.inMemory(t, h.token(t, nil, nil)+"x", nil)
		if env, _ := callErr(t, bad, contracts.ToolPraxecQuery, map[string]any{}, contracts.CodeInvalidToken); env.TraceID == "" {
			t.Errorf("the refusal names no trace")
		}
	})
}
