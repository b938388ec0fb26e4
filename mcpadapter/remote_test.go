package mcpadapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/restclient"
	"github.com/praxa/praxa/mcpadapter"
)

// remote connects a client in memory to an adapter whose backend is the
// gateway's REST API, as praxa mcp --gateway does.
func (h *harness) remote(t testing.TB, tok string) *mcp.ClientSession {
	t.Helper()
	rc, err := restclient.New(h.url, &restclient.Options{HTTPClient: h.client, Token: restclient.StaticToken(tok)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpadapter.New(&mcpadapter.Remote{Client: rc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return connectServer(t, srv)
}

// The remote backend answers what the local one answers: the same
// successes and the same error envelopes, whatever the REST mapping of the
// tool (body, query string, path argument, Idempotency-Key header).
func TestRemoteBackendMatchesLocal(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	rs := h.remote(t, tok)
	ls := h.inMemory(t, tok, nil)

	answers := driveDeployPipeline(t, rs)
	runID := answers[0].str("workflow.id")
	viaREST := call(t, rs, contracts.ToolGetMission, map[string]any{"runId": runID})
	local := call(t, ls, contracts.ToolGetMission, map[string]any{"runId": runID})
	if !jsonEqual(t, viaREST.raw, local.raw) {
		t.Errorf("aura_get_mission remote %s, local %s", viaREST.raw, local.raw)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{contracts.ToolSearchCapabilities, map[string]any{"query": "deploy", "kind": "workflow", "limit": 3}},
		{contracts.ToolListWorldCertificates, map[string]any{"limit": 5}},
		{contracts.ToolGetCoverage, map[string]any{}},
		{contracts.ToolPraxecQuery, map[string]any{"query": "", "kind": "workflow"}},
	} {
		r, l := tryCall(t, rs, c.tool, c.args), tryCall(t, ls, c.tool, c.args)
		if r.IsError != l.IsError || (r.IsError && textOf(t, r) != textOf(t, l)) {
			t.Errorf("%s %v: remote %s (isError %v), local %s (isError %v)", c.tool, c.args, textOf(t, r), r.IsError, textOf(t, l), l.IsError)
		}
		if !r.IsError {
			success(t, c.tool, r)
		}
	}

	// Errors keep their envelope through REST: code, message, hint, links
	// and field errors.
	for _, c := range []struct {
		tool string
		args map[string]any
		code contracts.Code
	}{
		{contracts.ToolPraxecCommand, map[string]any{"input": map[string]any{}}, contracts.CodeAmbiguousIntent},
		{contracts.ToolPraxecQuery, map[string]any{"bogus": 1}, contracts.CodeInvalidParams},
		{contracts.ToolSubmitIntent, map[string]any{"intent": "deploy"}, contracts.CodeIdempotencyKeyMissing},
		{contracts.ToolSubmitIntent, map[string]any{"intent": "deploy", "idempotencyKey": 7}, contracts.CodeIdempotencyKeyInvalid},
		{contracts.ToolSubmitIntent, map[string]any{"intent": "deploy", "idempotencyKey": ""}, contracts.CodeIdempotencyKeyInvalid},
		{contracts.ToolSubmitIntent, map[string]any{"intent": "deploy", "idempotencyKey": "short"}, contracts.CodeIdempotencyKeyInvalid},
		{contracts.ToolGetMission, map[string]any{}, contracts.CodeInvalidParams},
		{contracts.ToolGetMission, map[string]any{"runId": "wf_nope"}, contracts.CodeNotFound},
		{contracts.ToolGetMission, map[string]any{"runId": 7}, contracts.CodeInvalidParams},
	} {
		renv, r := callErr(t, rs, c.tool, c.args, c.code)
		lenv, l := callErr(t, ls, c.tool, c.args, c.code)
		// Each names its own call's trace: the remote gateway's, or none
		// when the adapter refused the arguments before sending them.
		if lenv.TraceID == "" || renv.TraceID == lenv.TraceID {
			t.Errorf("%s %v: traceId remote %q, local %q", c.tool, c.args, renv.TraceID, lenv.TraceID)
		}
		if rt, lt := withoutTrace(t, textOf(t, r)), withoutTrace(t, textOf(t, l)); !jsonEqual(t, rt, lt) {
			t.Errorf("%s %v:\nremote %s\nlocal  %s", c.tool, c.args, rt, lt)
		}
	}

	// Duplicate members are refused as the gateway refuses them, not
	// collapsed on the way to it.
	dup := json.RawMessage(`{"workflowId":"wf_a","workflowId":"wf_b"}`)
	r, _ := callErr(t, rs, contracts.ToolPraxecQuery, dup, contracts.CodeMalformedJSON)
	l, _ := callErr(t, ls, contracts.ToolPraxecQuery, dup, contracts.CodeMalformedJSON)
	if !strings.Contains(r.Error.Message, `"workflowId"`) || !strings.Contains(l.Error.Message, `"workflowId"`) {
		t.Errorf("duplicate member: remote %q, local %q", r.Error.Message, l.Error.Message)
	}

	// A replay over REST is marked in _meta as it is locally.
	args := map[string]any{"idempotencyKey": "remote-replay-key-0001", "intent": "deploy the payments service"}
	first := call(t, rs, contracts.ToolSubmitIntent, args)
	again := call(t, rs, contracts.ToolSubmitIntent, args)
	if first.meta[mcpadapter.ReplayedMetaKey] != nil || again.meta[mcpadapter.ReplayedMetaKey] != true {
		t.Errorf("replay marks: first %v, again %v", first.meta, again.meta)
	}
	if !jsonEqual(t, first.raw, again.raw) {
		t.Errorf("replay %s differs from %s", again.raw, first.raw)
	}
}

func tryCall(t testing.TB, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// withoutTrace is an error envelope without its traceId member, and
// without the fresh key a retry_with_key link proposes.
func withoutTrace(t testing.TB, text string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("envelope %s: %v", text, err)
	}
	delete(m, "traceId")
	links, _ := m["links"].([]any)
	for _, l := range links {
		if l, ok := l.(map[string]any); ok && l["rel"] == "retry_with_key" {
			l["args"] = "fresh key"
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRemoteDirectCall: a direct tool of praxa mcp --gateway is the
// praxec.command start it stands for, encoded once and sent as its REST
// operation: the upstream is called, the answer is the capability's output
// with its run, and arguments the start cannot carry are refused before
// anything is sent.
func TestRemoteDirectCall(t *testing.T) {
	up := newUpstream(t)
	g := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: configFile(t, lightConfig(up.url))})
	rc, err := restclient.New(g.URL, &restclient.Options{HTTPClient: g.Client, Token: restclient.StaticToken(g.Token(t, tenantA, userA, nil, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpadapter.New(&mcpadapter.Remote{Client: rc}, &mcpadapter.Options{Direct: mcpadapter.DirectTools(g.Config.Exposed())})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs := connectServer(t, srv)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up.echo", Arguments: map[string]any{"text": "hi", "capability": "up.fail"}})
	if err != nil || res.IsError || textOf(t, res) != "echo: hi" {
		t.Fatalf("up.echo through the remote gateway: %v %+v", err, res)
	}
	if wf, ok := res.Meta[mcpadapter.WorkflowMetaKey].(map[string]any); !ok || wf["definitionId"] != "proxy_default" {
		t.Errorf("the answer names no run: %v", res.Meta)
	}
	calls := up.calls.Load()
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up.echo", Arguments: map[string]any{"text": 5}})
	if err != nil || !res.IsError || !strings.Contains(textOf(t, res), `"INVALID_PARAMS"`) {
		t.Errorf("invalid arguments: %v %+v", err, res)
	}
	if up.calls.Load() != calls {
		t.Error("a refused call reached the upstream")
	}
}

// TestDirectStart: the one encoding of a direct call as its start.
func TestDirectStart(t *testing.T) {
	for _, c := range []struct {
		args, want string
		code       contracts.Code
	}{
		{args: ``, want: `{"definitionId":"proxy_default","input":{"capability":"up.echo"}}`},
		{args: `{}`, want: `{"definitionId":"proxy_default","input":{"capability":"up.echo"}}`},
		{args: `{"text":"a\u00e9","n":[1,{"x":null}]}`, want: `{"definitionId":"proxy_default","input":{"capability":"up.echo","text":"a\u00e9","n":[1,{"x":null}]}}`},
		{args: `{"capability":"other","a":1}`, want: `{"definitionId":"proxy_default","input":{"capability":"up.echo","a":1}}`},
		{args: `{"\u0061":1}`, want: `{"definitionId":"proxy_default","input":{"capability":"up.echo","a":1}}`},
		{args: `[1]`, code: contracts.CodeInvalidParams},
		{args: `{"a":1,"a":2}`, code: contracts.CodeMalformedJSON},
		{args: `{"a":`, code: contracts.CodeMalformedJSON},
	} {
		got, ce := mcpadapter.DirectStart("up.echo", json.RawMessage(c.args))
		switch {
		case c.code != "" && (ce == nil || ce.Code != c.code):
			t.Errorf("%s: %s %v, want %s", c.args, got, ce, c.code)
		case c.code == "" && (ce != nil || string(got) != c.want):
			t.Errorf("%s: %s %v\nwant %s", c.args, got, ce, c.want)
		}
	}
}
