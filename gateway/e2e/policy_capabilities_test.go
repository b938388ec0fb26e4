package e2e_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// policyCapabilitiesYAML exposes four capabilities of the REST connection
// api, whose baseUrl is its %s: a GET (api.read), two DELETEs (api.delete,
// api.purge) and a POST configured not destructive (api.ping).
//
//go:embed testdata/policy-capabilities.yaml
var policyCapabilitiesYAML string

// hitCounter is a real REST upstream that counts the requests it
// receives by method and path.
type hitCounter struct {
	mu   sync.Mutex
	hits map[string]int
}

// newHitCounter serves a hitCounter until the test ends.
func newHitCounter(t *testing.T) (*hitCounter, *httptest.Server) {
	up := &hitCounter{hits: map[string]int{}}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	return up, srv
}

// surfaceArgs hands args to the service as a surface decodes them:
// numbers as json.Number.
func surfaceArgs(args map[string]any) func() (map[string]any, error) {
	return func() (map[string]any, error) {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		var out map[string]any
		return out, gatewaytest.DecodeJSON(b, &out)
	}
}

func (h *hitCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.hits[r.Method+" "+r.URL.Path]++
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"ok":true}`))
}

func (h *hitCounter) count(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[key]
}

// TestPolicyDeniesDestructiveCapabilities: policy.denyDestructive applies
// to proxy capabilities by the configuration's annotations (executor
// defaults: a REST DELETE is destructive, a GET is not; configured hints
// override them), whichever way the capability is reached: a
// praxec.command start of proxy_default, a later submit on a run, a
// directly exposed tool (light path and run path). A refusal answers
// destructive-action-denied, is audited, and reaches no upstream; the run
// keeps its version.
func TestPolicyDeniesDestructiveCapabilities(t *testing.T) {
	up, srv := newHitCounter(t)

	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, fmt.Sprintf(policyCapabilitiesYAML, srv.URL))
	g := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: path, Edit: func(cfg *config.Config) {
		cfg.Policy = config.Policy{DenyDestructive: []config.PrincipalMatch{{Tenant: tenantSandbox}}}
	}})
	sandbox, acme := principalOf(tenantSandbox), principalOf(tenantA)
	ctx := context.Background()
	// asJSON hands the service args as a surface decodes them (numbers
	// as json.Number).
	asJSON := surfaceArgs
	n := 0
	traceID := func() string {
		n++
		return fmt.Sprintf("%032x", 0xabc000+n)
	}
	// command sends praxec.command, over REST with an Idempotency-Key
	// when keyed, else over MCP without one.
	keyed := false
	command := func(p *auth.Principal, trace string, args map[string]any) *gateway.Result {
		c := gateway.Call{Tool: contracts.ToolPraxecCommand, Surface: gateway.SurfaceMCP,
			RequestID: "req-" + trace, TraceID: trace, Args: asJSON(args)}
		if keyed {
			c.Surface, c.Key, c.KeySent = gateway.SurfaceREST, gateway.NewIdempotencyKey(), true
		}
		return g.Service.Invoke(ctx, p, c)
	}
	start := func(p *auth.Principal, trace, capability string) *gateway.Result {
		return command(p, trace, map[string]any{"definitionId": config.ProxyDefaultWorkflow,
			"input": map[string]any{"capability": capability}})
	}
	direct := func(p *auth.Principal, trace, capability string) *contracts.Error {
		return g.Service.CallDirect(ctx, p, gateway.DirectCall{Capability: capability, Surface: gateway.SurfaceMCP,
			RequestID: "req-" + trace, TraceID: trace, Args: asJSON(map[string]any{})}).Err
	}
	// A run of the sandbox tenant that a read started: its later moves
	// are checked too.
	res := start(sandbox, traceID(), "api.read")
	if res.Err != nil {
		t.Fatalf("sandbox start of api.read: %v", res.Err)
	}
	var run gateway.Projection
	if err := json.Unmarshal(res.Body, &run); err != nil {
		t.Fatal(err)
	}
	// aura sends an aura_* mission tool over MCP.
	aura := func(p *auth.Principal, trace, tool string, args map[string]any) *gateway.Result {
		args["idempotencyKey"] = gateway.NewIdempotencyKey()
		return g.Service.Invoke(ctx, p, gateway.Call{Tool: tool, Surface: gateway.SurfaceMCP,
			RequestID: "req-" + trace, TraceID: trace, Args: asJSON(args)})
	}
	create := func(p *auth.Principal, trace, capability string) *gateway.Result {
		return aura(p, trace, contracts.ToolCreateMission, map[string]any{"goal": "use the items API",
			"definitionId": config.ProxyDefaultWorkflow, "input": map[string]any{"capability": capability}})
	}
	res = aura(sandbox, traceID(), contracts.ToolCreateMission, map[string]any{"goal": "use the items API", "runId": "policy-run",
		"definitionId": config.ProxyDefaultWorkflow, "input": map[string]any{"capability": "api.read"}})
	if res.Err != nil {
		t.Fatalf("sandbox aura_create_mission of api.read: %v", res.Err)
	}
	var auraRun gateway.Projection
	if err := json.Unmarshal(res.Body, &auraRun); err != nil {
		t.Fatal(err)
	}
	signal := func(p *auth.Principal, trace, capability string) *gateway.Result {
		return aura(p, trace, contracts.ToolSignalMission, map[string]any{"runId": "policy-run", "signal": capability,
			"expectedVersion": auraRun.Workflow.Version, "arguments": map[string]any{}})
	}
	submit := func(p *auth.Principal, trace, capability string) *gateway.Result {
		return command(p, trace, map[string]any{"workflowId": run.Workflow.ID, "transition": capability,
			"expectedVersion": run.Workflow.Version, "arguments": map[string]any{}})
	}

	for _, k := range []bool{false, true} {
		keyed = k
		for _, tc := range []struct {
			name     string
			call     func(trace string) *contracts.Error
			upstream string // the request the capability makes
			denied   bool
		}{
			{"start of a DELETE by the denied tenant", func(tr string) *contracts.Error { return start(sandbox, tr, "api.delete").Err }, "DELETE /items", true},
			{"later move of a DELETE on the denied tenant's run", func(tr string) *contracts.Error { return submit(sandbox, tr, "api.delete").Err }, "DELETE /items", true},
			{"aura_create_mission of a DELETE by the denied tenant", func(tr string) *contracts.Error { return create(sandbox, tr, "api.delete").Err }, "DELETE /items", true},
			{"aura_signal_mission of a DELETE on the denied tenant's run", func(tr string) *contracts.Error { return signal(sandbox, tr, "api.delete").Err }, "DELETE /items", true},
			{"direct DELETE (light path) by the denied tenant", func(tr string) *contracts.Error { return direct(sandbox, tr, "api.delete") }, "DELETE /items", true},
			{"direct DELETE (run path) by the denied tenant", func(tr string) *contracts.Error { return direct(sandbox, tr, "api.purge") }, "DELETE /all", true},
			{"start of a GET by the denied tenant", func(tr string) *contracts.Error { return start(sandbox, tr, "api.read").Err }, "GET /items", false},
			{"direct GET by the denied tenant", func(tr string) *contracts.Error { return direct(sandbox, tr, "api.read") }, "GET /items", false},
			{"POST configured non-destructive, by the denied tenant", func(tr string) *contracts.Error { return start(sandbox, tr, "api.ping").Err }, "POST /ping", false},
			{"start of a DELETE by another tenant", func(tr string) *contracts.Error { return start(acme, tr, "api.delete").Err }, "DELETE /items", false},
			{"direct DELETE by another tenant", func(tr string) *contracts.Error { return direct(acme, tr, "api.purge") }, "DELETE /all", false},
		} {
			t.Run(fmt.Sprintf("%s/keyed=%v", tc.name, keyed), func(t *testing.T) {
				before := up.count(tc.upstream)
				tr := traceID()
				err := tc.call(tr)
				after := up.count(tc.upstream)
				if !tc.denied {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					if after != before+1 {
						t.Fatalf("upstream %s called %d times, want 1", tc.upstream, after-before)
					}
					return
				}
				if err == nil || err.Code != contracts.CodeDestructiveActionDenied || err.Status() != http.StatusForbidden {
					t.Fatalf("answer %v, want %s (403)", err, contracts.CodeDestructiveActionDenied)
				}
				if !strings.Contains(err.Message, "(api.") {
					t.Errorf("message %q does not name the capability", err.Message)
				}
				if after != before {
					t.Fatalf("upstream %s called %d times by a refused call", tc.upstream, after-before)
				}
				refused := false
				for _, ev := range g.Events(t, tenantSandbox, tr) {
					if ev.Type == "request.refused" && ev.Code == string(contracts.CodeDestructiveActionDenied) {
						refused = true
					}
				}
				if !refused {
					t.Error("no request.refused event with destructive-action-denied")
				}
			})
		}
	}
	// The refused moves used no version of the run.
	get := g.Service.Invoke(ctx, sandbox, gateway.Call{Tool: contracts.ToolPraxecQuery, Surface: gateway.SurfaceMCP, RequestID: "req-get",
		Args: asJSON(map[string]any{"workflowId": run.Workflow.ID})})
	if get.Err != nil {
		t.Fatal(get.Err)
	}
	var now gateway.Projection
	if err := json.Unmarshal(get.Body, &now); err != nil {
		t.Fatal(err)
	}
	if now.Workflow.Version != run.Workflow.Version {
		t.Errorf("run version %d after refused moves, want %d", now.Workflow.Version, run.Workflow.Version)
	}
}

// TestPolicyRechecksApprover: approving fires the waiting move, so the
// destructive-action policy applies to the approver too. A capability
// that needs a person (a human executor: destructive unless annotated
// otherwise) is queued for approval by an agent the policy allows; an
// approver the policy denies destructive actions is refused
// destructive-action-denied (audited, with a link to read the run),
// nothing moves and the approval stays pending; another approver fires
// it. The same denied approver may approve a capability annotated
// non-destructive.
func TestPolicyRechecksApprover(t *testing.T) {
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, `proxy:
  expose:
    - name: ops.look
      description: Look around.
      executor: { kind: noop }
    - name: ops.drop_table
      description: Drop a table, once a person approves.
      executor: { kind: human, queue: ops }
    - name: ops.note
      description: Add a note, once a person approves.
      executor: { kind: human, queue: ops }
      annotations: { destructiveHint: false }
`)
	g := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: path, Edit: func(cfg *config.Config) {
		cfg.Policy = config.Policy{DenyDestructive: []config.PrincipalMatch{{Tenant: tenantA, Subject: "bob"}}}
	}})
	principal := func(subject string) *auth.Principal {
		return &auth.Principal{Tenant: tenantA, Subject: subject, Issuer: "https://issuer.test", Scopes: auth.NewScopeSet(contracts.Scopes()...)}
	}
	agent, bob, alice := principal("agent"), principal("bob"), principal("alice")
	ctx := context.Background()
	invoke := func(args map[string]any) gateway.Projection {
		t.Helper()
		res := g.Service.Invoke(ctx, agent, gateway.Call{Tool: contracts.ToolPraxecCommand, Surface: gateway.SurfaceMCP, TraceID: newTraceID(),
			Args: surfaceArgs(args)})
		if res.Err != nil {
			t.Fatalf("praxec.command %v: %v", args, res.Err)
		}
		var run gateway.Projection
		if err := json.Unmarshal(res.Body, &run); err != nil {
			t.Fatal(err)
		}
		return run
	}
	// queue starts a run and moves it by capability, which queues an
	// approval; it returns the approval's id and the run.
	queue := func(capability string) (string, gateway.Projection) {
		t.Helper()
		run := invoke(map[string]any{"definitionId": config.ProxyDefaultWorkflow, "input": map[string]any{"capability": "ops.look"}})
		run = invoke(map[string]any{"workflowId": run.Workflow.ID, "expectedVersion": run.Workflow.Version, "transition": capability})
		if run.Approval == nil {
			t.Fatalf("no approval queued for %s: %+v", capability, run)
		}
		return run.Approval.ID, run
	}
	id, run := queue("ops.drop_table")
	trace := newTraceID()
	_, err := g.Service.ResolveApproval(ctx, bob, id, true, "", "req-bob", trace)
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeDestructiveActionDenied || !strings.Contains(ce.Message, "ops.drop_table") {
		t.Fatalf("bob approves a destructive capability: %v, want destructive-action-denied", err)
	}
	if len(ce.Links) != 1 || ce.Links[0].Rel != "get" || ce.Links[0].Args["workflowId"] != run.Workflow.ID {
		t.Errorf("the refusal's links %+v, want get of the run", ce.Links)
	}
	list, err := g.Service.ListApprovals(ctx, alice, "pending", 100)
	if err != nil || len(list.Approvals) != 1 || list.Approvals[0].ID != id {
		t.Fatalf("after bob's refused approval the pending approvals are %+v, %v", list.Approvals, err)
	}
	g.Flush(t)
	refused := false
	for _, ev := range g.StoredEvents(t, tenantA, trace) {
		refused = refused || ev.Type == "approval.refused" && ev.Code == string(contracts.CodeDestructiveActionDenied)
	}
	if !refused {
		t.Error("bob's refused approval is not audited")
	}
	res, err := g.Service.ResolveApproval(ctx, alice, id, true, "", "req-alice", newTraceID())
	if err != nil || res.Approval.Status != "approved" || res.Approval.ResolvedBy != "alice" || res.Mission.Workflow.Version <= run.Workflow.Version {
		t.Fatalf("alice approves: %+v, %v", res, err)
	}
	// Not destructive by its annotations: bob may approve it.
	id, _ = queue("ops.note")
	if res, err := g.Service.ResolveApproval(ctx, bob, id, true, "", "req-bob-2", newTraceID()); err != nil || res.Approval.Status != "approved" {
		t.Fatalf("bob approves a non-destructive capability: %+v, %v", res, err)
	}
}
