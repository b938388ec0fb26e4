package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestTraceByCallerTraceID: the traceId a praxec.command names is a trace
// aura_get_trace reads, on REST (GET /v8/traces/{id}) and MCP alike: every
// event of the calls that named it (a start, a move, a refused move), each
// recorded under its own request's trace too; another tenant's calls with
// the same traceId stay out, and that tenant alone reads them.
func TestTraceByCallerTraceID(t *testing.T) {
	ti := newIssuer(t)
	g := startGateway(t, ti, gwOptions{})
	tokA, tokB := mint(t, ti, tenantA, userA), mint(t, ti, tenantB, userB)
	mine := "caller-" + newTraceID()

	started := g.command(t, tokA, map[string]any{"definitionId": "deploy_pipeline", "traceId": mine})
	gatewaytest.WantStatus(t, started, http.StatusOK)
	body := started.Object(t)
	id := str(t, body, "workflow.id")
	version := num(t, body, "workflow.version")
	gatewaytest.WantStatus(t, g.command(t, tokA, map[string]any{"workflowId": id, "expectedVersion": version, "transition": "run_lint", "traceId": mine}), http.StatusOK)
	wantProblem(t, g.command(t, tokA, map[string]any{"workflowId": id, "expectedVersion": version, "transition": "abort", "traceId": mine}),
		http.StatusConflict, contracts.CodeVersionConflict)
	// A call without traceId is not part of it.
	gatewaytest.WantStatus(t, g.query(t, tokA, map[string]any{"workflowId": id}), http.StatusOK)

	events := g.traceEvents(t, tokA, mine)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	for _, want := range []string{"workflow.started", "transition.fired", "request.refused"} {
		if !slices.Contains(types, want) {
			t.Errorf("the caller's trace lacks %s: %v", want, types)
		}
	}
	if slices.Contains(types, "request.allowed") {
		t.Errorf("the caller's trace holds a read that did not name it: %v", types)
	}

	// Another tenant's calls with the same traceId are its own.
	gatewaytest.WantStatus(t, g.command(t, tokB, map[string]any{"definitionId": "deploy_pipeline", "traceId": mine}), http.StatusOK)
	if n := len(g.traceEvents(t, tokA, mine)); n != len(events) {
		t.Errorf("another tenant's call changed the trace: %d events, had %d", n, len(events))
	}
	forB := g.traceEvents(t, tokB, mine)
	if len(forB) == 0 || slices.ContainsFunc(forB, func(e traceEvent) bool { return e.WorkflowID == id }) {
		t.Errorf("tenant B's view of the trace: %+v", forB)
	}
	if r := g.trace(t, mint(t, ti, "initech", userA), mine); r.Status != http.StatusNotFound {
		t.Errorf("a tenant that never named the trace: %d %s", r.Status, r.Body)
	}

	// The MCP tool reads the same trace.
	ctx := context.Background()
	cs := gatewaytest.MCPSession(t, g.url+"/mcp", tokA)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolGetTrace, Arguments: map[string]any{"traceId": mine}})
	if err != nil || res.IsError {
		t.Fatalf("aura_get_trace over MCP: %v %+v", err, res)
	}
	var out struct {
		TraceID string       `json:"traceId"`
		Events  []traceEvent `json:"events"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || out.TraceID != mine || len(out.Events) != len(events) {
		t.Errorf("aura_get_trace over MCP: %s, want the %d events REST answered", raw, len(events))
	}
}
