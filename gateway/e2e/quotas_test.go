package e2e_test

// Tenant quotas (issue 17 item 3, gateway/quotas.go): at a tenant's limit
// a creation answers 429 quota-exceeded (problem+json over REST, the
// seeds/000 envelope over MCP) with links to what the tenant holds open,
// writes nothing, calls nothing outside and consumes no idempotency key;
// the limit holds across replicas on one PostgreSQL database.

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
)

// quotasYAML holds a workflow whose start calls the upstream (ship: its
// first transition is deterministic), one that calls nothing (note) and
// one whose move queues an approval (release).
//
//go:embed testdata/quotas.yaml
var quotasYAML string

// The tenants of these tests and their quotas: quota-a holds 2 open
// missions, quota-c 1 pending approval; quota-b's override lifts the
// open-missions limit.
const (
	quotaA = "quota-a"
	quotaB = "quota-b"
	quotaC = "quota-c"
)

func quotaConfig(cfg *config.Config) {
	unlimited, many := 0, 100
	cfg.Server.Quotas = config.Quotas{OpenMissions: 2, PendingApprovals: 1, Tenants: map[string]config.QuotaOverride{
		quotaB: {OpenMissions: &unlimited},
		quotaC: {OpenMissions: &many},
	}}
}

// startQuotaGateway starts a gateway on quotasYAML over a SQLite file, or
// the PostgreSQL database dsn names, with the upstream api.
func startQuotaGateway(t *testing.T, ti *gatewaytest.Issuer, api, dsn string) *gatewaytest.Gateway {
	t.Helper()
	return apiGateway(t, ti, "quotas.yaml", quotasYAML, api, dsn, nil, quotaConfig)
}

// usageOf counts the tenant's usage of the quota kind in the store.
func usageOf(t *testing.T, st store.Store, tenant, kind string) int {
	t.Helper()
	var n int
	err := st.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		n, err = tx.TenantUsage(ctx, tenant, kind)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wantQuotaProblem checks a 429 quota-exceeded problem naming the kind in
// its errors member, and returns it.
func wantQuotaProblem(t *testing.T, r *gatewaytest.Response, kind string) problem {
	t.Helper()
	p := wantProblem(t, r, http.StatusTooManyRequests, contracts.CodeQuotaExceeded)
	if len(p.Errors) != 1 || p.Errors[0].Keyword != "quota" || p.Errors[0].Detail != kind || p.Errors[0].Pointer != "" {
		t.Errorf("errors %+v, want one {pointer: \"\", keyword: quota, detail: %s}", p.Errors, kind)
	}
	return p
}

// getLinks returns the args value of name in the get links of links.
func getLinks(links []link, name string) []string {
	var out []string
	for _, l := range links {
		if l.Rel == "get" {
			out = append(out, fmt.Sprint(l.Args[name]))
		}
	}
	return out
}

// TestTenantQuotas: on SQLite (and PostgreSQL when PRAXA_TEST_PG_DSN is
// set), each quota refuses the creation past it over REST and MCP, writes
// nothing, consumes no key, links to what is open, is per tenant, and
// shows on /metrics.
func TestTenantQuotas(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		api, srv := newDeployAPI(t, nil)
		ti := newIssuer(t)
		g := startQuotaGateway(t, ti, srv.URL, dsn)
		w := wrapGateway(g)
		tokA, tokB, tokC := mint(t, ti, quotaA, userA), mint(t, ti, quotaB, userA), mint(t, ti, quotaC, userA)

		// Two open missions of quota-a: a note (no outside call) and a
		// ship whose start called the upstream.
		var runs []string
		for _, def := range []string{"note", "ship"} {
			r := w.createMission(t, tokA, newKey(), map[string]any{"definitionId": def, "goal": def})
			gatewaytest.WantStatus(t, r, http.StatusCreated)
			runs = append(runs, str(t, r.Object(t), "runId"))
		}
		if n := api.calls("/deploy").Load(); n != 1 {
			t.Fatalf("the upstream was called %d times by the ship start, want 1", n)
		}
		// The third: refused before anything, its key not consumed.
		key := newKey()
		p := wantQuotaProblem(t, w.createMission(t, tokA, key, map[string]any{"definitionId": "note", "goal": "note"}), store.QuotaOpenMissions)
		if got := getLinks(p.Links, "runId"); strings.Join(got, ",") != strings.Join(runs, ",") {
			t.Errorf("the get links name runs %v, want the open ones %v", got, runs)
		}
		for _, l := range p.Links {
			if l.Rel == "get" && l.Method != contracts.ToolGetMission {
				t.Errorf("aura answer links %s with %s", l.Rel, l.Method)
			}
		}
		findLink(t, p.Links, "search")
		// A start that would call outside is refused before its call,
		// with its start lease (keyed) or without (praxec, keyless).
		wantQuotaProblem(t, w.createMission(t, tokA, newKey(), map[string]any{"definitionId": "ship", "goal": "ship"}), store.QuotaOpenMissions)
		pp := wantQuotaProblem(t, w.command(t, tokA, map[string]any{"definitionId": "ship"}), store.QuotaOpenMissions)
		if n := api.calls("/deploy").Load(); n != 1 {
			t.Errorf("the upstream was called %d times, want 1: a start refused by its quota called out", n)
		}
		for _, l := range pp.Links {
			if l.Rel == "get" && l.Method != contracts.ToolPraxecQuery {
				t.Errorf("praxec answer links %s with %s", l.Rel, l.Method)
			}
		}
		if n := usageOf(t, g.DB, quotaA, store.QuotaOpenMissions); n != 2 {
			t.Fatalf("quota-a holds %d open missions after the refusals, want 2", n)
		}

		// Over MCP: an error result carrying the seeds/000 envelope.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs := gatewaytest.MCPSession(t, g.URL+"/mcp", tokA)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolCreateMission,
			Arguments: map[string]any{"definitionId": "note", "goal": "note", "idempotencyKey": newKey()}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || len(res.Content) == 0 || res.StructuredContent != nil {
			t.Fatalf("MCP create at the quota: %+v, want an error result without structuredContent", res)
		}
		var env contracts.ErrorEnvelope
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
			t.Fatal(err)
		}
		if env.Error.Code != contracts.CodeQuotaExceeded || env.Error.Hint == "" || len(env.Links) != 3 ||
			len(env.Fields) != 1 || env.Fields[0].Detail != store.QuotaOpenMissions {
			t.Errorf("MCP envelope %+v, want quota-exceeded with a hint, two get links and the search, and the kind", env)
		}

		// Another tenant's quota is its own (quota-b: unlimited).
		for range 3 {
			gatewaytest.WantStatus(t, w.createMission(t, tokB, newKey(), map[string]any{"definitionId": "note", "goal": "note"}), http.StatusCreated)
		}
		// A cancelled mission frees its slot: the refused key now runs.
		gatewaytest.WantStatus(t, w.cancelMission(t, tokA, newKey(), runs[0], nil), http.StatusOK)
		gatewaytest.WantStatus(t, w.createMission(t, tokA, key, map[string]any{"definitionId": "note", "goal": "note"}), http.StatusCreated)

		// Pending approvals: quota-c may hold one.
		var rel []map[string]any
		for range 2 {
			r := w.createMission(t, tokC, newKey(), map[string]any{"definitionId": "release", "goal": "release"})
			gatewaytest.WantStatus(t, r, http.StatusCreated)
			rel = append(rel, r.Object(t))
		}
		signal := func(m map[string]any) *gatewaytest.Response {
			return w.signal(t, tokC, newKey(), str(t, m, "runId"), map[string]any{"signal": "release", "expectedVersion": num(t, m, "workflow.version")})
		}
		first := signal(rel[0])
		if first.Status/100 != 2 || str(t, first.Object(t), "result.status") != "pending_approval" {
			t.Fatalf("first release: %d %s", first.Status, first.Body)
		}
		pa := wantQuotaProblem(t, signal(rel[1]), store.QuotaPendingApprovals)
		if got := getLinks(pa.Links, "runId"); len(got) != 1 || got[0] != str(t, rel[0], "runId") {
			t.Errorf("the pending-approvals answer links %v, want the mission waiting for approval %s", got, str(t, rel[0], "runId"))
		}
		if got := str(t, w.getMission(t, tokC, str(t, rel[1], "runId")).Object(t), "workflow.state"); got != "draft" {
			t.Errorf("the refused release moved its mission to %s", got)
		}
		if n := usageOf(t, g.DB, quotaC, store.QuotaPendingApprovals); n != 1 {
			t.Errorf("quota-c holds %d pending approvals, want 1", n)
		}

		// /metrics: refusals by kind, and what every tenant holds.
		mr, err := g.Client.Get(g.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(mr.Body)
		mr.Body.Close()
		for _, want := range []string{
			`praxa_quota_refusals_total{kind="openMissions"} 4`,
			`praxa_quota_refusals_total{kind="pendingApprovals"} 1`,
			`praxa_quota_refusals_total{kind="goals"} 0`,
			`praxa_quota_usage{kind="openMissions"} 7`, // a: 2, b: 3, c: 2
			`praxa_quota_usage{kind="pendingApprovals"} 1`,
		} {
			if !strings.Contains(string(body), want+"\n") {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

// TestTenantQuotaAcrossPostgresReplicas: two replicas on one PostgreSQL
// database hold one tenant's quota together: of starts raced through both,
// with and without outside calls, exactly the limit are created and the
// upstream is called only by those that were.
func TestTenantQuotaAcrossPostgresReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	hold := make(chan struct{})
	api, srv := newDeployAPI(t, hold)
	ti := newIssuer(t)
	g1 := startQuotaGateway(t, ti, srv.URL, dsn)
	g2 := g1.Replica(t, nil)
	ws := []*gw{wrapGateway(g1), wrapGateway(g2)}
	tok := mint(t, ti, quotaA, userA)
	for _, def := range []string{"ship", "note"} {
		t.Run(def, func(t *testing.T) {
			before := api.calls("/deploy").Load()
			calls := 0 // the starts that call the upstream, held until the others answered
			if def == "ship" {
				calls = 2
			}
			res := raceHeld(8, calls, ws, hold, func(w *gw) *gatewaytest.Response {
				r, err := w.send(req{method: http.MethodPost, path: "/v8/missions", body: map[string]any{"definitionId": def, "goal": def}, token: tok, key: newKey()})
				if err != nil {
					return &gatewaytest.Response{Status: 599, Body: []byte(err.Error())}
				}
				return r
			})
			created, refused := 0, 0
			for _, r := range res {
				switch r.Status {
				case http.StatusCreated:
					created++
				case http.StatusTooManyRequests:
					wantQuotaProblem(t, r, store.QuotaOpenMissions)
					refused++
				default:
					t.Errorf("answer %d %s", r.Status, r.Body)
				}
			}
			if created != 2 || refused != 6 {
				t.Errorf("created %d and refused %d of 8 raced starts, want 2 and 6", created, refused)
			}
			if n := usageOf(t, g1.DB, quotaA, store.QuotaOpenMissions); n != 2 {
				t.Errorf("quota-a holds %d open missions, want 2", n)
			}
			if def == "ship" {
				if n := api.calls("/deploy").Load() - before; n != 2 {
					t.Errorf("the upstream was called %d times, want 2 (one per created mission)", n)
				}
			}
			// Make room for the next round: finish or close both.
			for _, r := range res {
				if r.Status != http.StatusCreated {
					continue
				}
				m := r.Object(t)
				next := "close"
				if def == "ship" {
					next = "finish"
				}
				gatewaytest.WantStatus(t, ws[0].signal(t, tok, newKey(), str(t, m, "runId"), map[string]any{"signal": next, "expectedVersion": num(t, m, "workflow.version")}), http.StatusOK)
			}
		})
	}
}
