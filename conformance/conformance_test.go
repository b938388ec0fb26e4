package conformance_test

// These tests run the suite against a real gateway, wired by gatewaytest
// the way cmd/praxa/serve.go wires one (the embedded examples/praxec.yaml,
// SQLite in t.TempDir(), the service, bearer verification trusting the
// suite's own issuer through OIDC discovery, the REST edge, MCP at /mcp and
// the OpenAPI document), and against two deliberately broken variants of
// it, to show that the suite passes what conforms and fails what does not.
// Only these test files use gatewaytest: the suite itself stays a black
// box (see deps_test.go).

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/conformance"
	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// resource is the resource identifier (token audience) of the test gateway.
const resource = "https://gateway.conformance.praxa.test"

// startGateway serves a complete gateway (gatewaytest.New) that trusts iss;
// wrap, when not nil, breaks it.
func startGateway(t *testing.T, iss *conformance.Issuer, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	return gatewaytest.New(t, &gatewaytest.Options{
		Issuer: &gatewaytest.Issuer{Issuer: iss.Issuer, URL: iss.URL()},
		Edit: func(cfg *config.Config) {
			cfg.Auth.Resource = resource
			// ERR-007 fills this tenant's quota, and only this one's.
			two := 2
			cfg.Server.Quotas.Tenants = map[string]config.QuotaOverride{conformance.DefaultTenantQuota: {OpenMissions: &two}}
		},
		Wrap: wrap,
	}).URL
}

func startIssuer(t *testing.T) *conformance.Issuer {
	t.Helper()
	iss, err := conformance.StartIssuer("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iss.Close() })
	return iss
}

// runSuite runs the selected cases (all when opts is nil) and returns the
// verdicts by case id.
func runSuite(t *testing.T, target conformance.Target, opts *conformance.Options) (*conformance.Report, map[string]conformance.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := conformance.Run(ctx, target, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	byID := map[string]conformance.Result{}
	for _, r := range rep.Results {
		byID[r.ID] = r
	}
	return rep, byID
}

// TestRealGateway: against the gateway as it is, the suite finds no
// failure; every skip says why; the report records as coverage evidence
// that aura_get_coverage then serves.
func TestRealGateway(t *testing.T) {
	iss := startIssuer(t)
	base := startGateway(t, iss, nil)
	target := conformance.Target{BaseURL: base, Tokens: iss.Tokens(resource)}
	rep, byID := runSuite(t, target, nil)
	if len(rep.Results) != len(conformance.Cases()) {
		t.Fatalf("%d results for %d cases", len(rep.Results), len(conformance.Cases()))
	}
	// The quota tenant has a quota here (startGateway): ERR-007 runs.
	if r := byID["ERR-007"]; r.Verdict != conformance.Pass {
		t.Errorf("ERR-007 against a gateway with a quota for %s: %s %s", conformance.DefaultTenantQuota, r.Verdict, r.Reason)
	}
	for _, r := range rep.Results {
		switch r.Verdict {
		case conformance.Fail:
			t.Errorf("%s (%s) failed: %s", r.ID, r.Title, r.Reason)
		case conformance.Skip:
			if r.Reason == "" {
				t.Errorf("%s was skipped without a reason", r.ID)
			}
			t.Logf("%s skipped: %s", r.ID, r.Reason)
		}
	}

	// Record the report and read it back through aura_get_coverage.
	recorded, err := rep.Record(context.Background(), target)
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	_, total := rep.Summary()
	if recorded.Passed != total.Pass || recorded.Failed != total.Fail || recorded.Skipped != total.Skip {
		t.Errorf("recorded %+v, the report counts %+v", recorded, total)
	}
	tok, err := target.Tokens.Token(context.Background(), conformance.TenantB, []string{string(contracts.ScopeCoverageRead)})
	if err != nil {
		t.Fatal(err)
	}
	cov := getCoverage(t, base, tok, "")
	if cov.Run == nil || cov.Run.RunID != recorded.RunID {
		t.Fatalf("the coverage names run %+v, want %s", cov.Run, recorded.RunID)
	}
	byOp := map[string][]coverageCase{}
	for _, op := range cov.Operations {
		byOp[op.OperationID] = op.Cases
	}
	for _, tool := range contracts.Tools() {
		if len(byOp[tool.OperationID]) == 0 {
			t.Errorf("no recorded case covers %s", tool.OperationID)
		}
	}
	found := false
	for _, c := range byOp["getMission"] {
		if c.ID == "AUTH-001" {
			found = true
			if c.Result != string(conformance.Pass) || c.At == "" || c.RunID != recorded.RunID {
				t.Errorf("AUTH-001 in the coverage: %+v", c)
			}
		}
	}
	if !found {
		t.Errorf("AUTH-001 is not listed under getMission: %+v", byOp["getMission"])
	}

	// A later run restricted to one group keeps the other cases' last
	// results.
	partial, _ := runSuite(t, target, &conformance.Options{Groups: []conformance.Group{conformance.GroupMCP}})
	second, err := partial.Record(context.Background(), target)
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	cov = getCoverage(t, base, tok, "getMission")
	if len(cov.Operations) != 1 || cov.Operations[0].OperationID != "getMission" {
		t.Fatalf("operationId=getMission: %+v", cov.Operations)
	}
	for _, c := range cov.Operations[0].Cases {
		if c.ID == "AUTH-001" && c.RunID != recorded.RunID {
			t.Errorf("AUTH-001 after a run of the mcp group names run %s, want the first run %s", c.RunID, recorded.RunID)
		}
	}
	if cov.Run.RunID != second.RunID {
		t.Errorf("the coverage names run %s, want the latest %s", cov.Run.RunID, second.RunID)
	}
}

type coverageCase struct {
	ID     string `json:"id"`
	Result string `json:"result"`
	At     string `json:"at"`
	RunID  string `json:"runId"`
}

type coverage struct {
	Statement string `json:"statement"`
	Run       *struct {
		RunID string `json:"runId"`
	} `json:"run"`
	Operations []struct {
		OperationID string         `json:"operationId"`
		Cases       []coverageCase `json:"cases"`
	} `json:"operations"`
}

// getCoverage reads GET /v8/coverage and checks it against the contract's
// output schema.
func getCoverage(t *testing.T, base, tok, operationID string) coverage {
	t.Helper()
	url := base + "/v8/coverage"
	if operationID != "" {
		url += "?operationId=" + operationID
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v8/coverage: %d %s", resp.StatusCode, b)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := contracts.ValidateOutput(contracts.ToolGetCoverage, v); err != nil {
		t.Fatalf("GET /v8/coverage does not match the output schema: %v %+v", err, contracts.AsError(err).Fields)
	}
	var cov coverage
	if err := json.Unmarshal(b, &cov); err != nil {
		t.Fatal(err)
	}
	return cov
}

// expectFailures checks that every case in want failed.
func expectFailures(t *testing.T, byID map[string]conformance.Result, want []string) {
	t.Helper()
	for _, id := range want {
		r, ok := byID[id]
		switch {
		case !ok:
			t.Errorf("%s did not run", id)
		case r.Verdict != conformance.Fail:
			t.Errorf("%s: %s, want fail (%s)", id, r.Verdict, r.Reason)
		default:
			t.Logf("%s fails as it should: %s", id, r.Reason)
		}
	}
}

// TestBrokenScopes: a gateway that does not check scopes (modelled by a
// front end that swaps every under-scoped token for one of the same
// principal with every scope) fails every scope case.
func TestBrokenScopes(t *testing.T) {
	iss := startIssuer(t)
	escalate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
				if claims := conformance.Payload(tok); claims != nil {
					if scope, _ := claims["scope"].(string); scope != strings.Join(conformance.AllScopes(), " ") {
						claims["scope"] = strings.Join(conformance.AllScopes(), " ")
						if full, err := iss.Sign(claims); err == nil {
							r.Header.Set("Authorization", "Bearer "+full)
						}
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	base := startGateway(t, iss, escalate)
	_, byID := runSuite(t, conformance.Target{BaseURL: base, Tokens: iss.Tokens(resource)},
		&conformance.Options{Groups: []conformance.Group{conformance.GroupScopes}, Cases: []string{"ERR-006"}})
	var want []string
	for _, c := range conformance.Cases() {
		if c.Group == conformance.GroupScopes {
			want = append(want, c.ID)
		}
	}
	expectFailures(t, byID, append(want, "ERR-006"))
}

// TestBrokenReplays: a gateway that executes every retry again (modelled by
// a front end that gives every request a fresh Idempotency-Key) fails the
// replay cases.
func TestBrokenReplays(t *testing.T) {
	iss := startIssuer(t)
	rekey := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Idempotency-Key") != "" {
				r.Header.Set("Idempotency-Key", "rekeyed-"+rand.Text())
			}
			next.ServeHTTP(w, r)
		})
	}
	base := startGateway(t, iss, rekey)
	_, byID := runSuite(t, conformance.Target{BaseURL: base, Tokens: iss.Tokens(resource)},
		&conformance.Options{Groups: []conformance.Group{conformance.GroupIdempotency}})
	expectFailures(t, byID, []string{"IDEM-002", "IDEM-003", "IDEM-004", "IDEM-005", "IDEM-006", "IDEM-007", "IDEM-008",
		"IDEM-010", "IDEM-014", "IDEM-016"})
	// What does not depend on replays still passes.
	for _, id := range []string{"IDEM-001", "IDEM-009", "IDEM-011", "IDEM-012"} {
		if r := byID[id]; r.Verdict != conformance.Pass {
			t.Errorf("%s: %s, want pass (%s)", id, r.Verdict, r.Reason)
		}
	}
}

var identifier = regexp.MustCompile(contracts.IdentifierPattern)

// TestSelectAndBaseline covers selection and the baseline format.
func TestSelectAndBaseline(t *testing.T) {
	all := conformance.Cases()
	if len(all) < 40 {
		t.Errorf("%d cases, want at least 40", len(all))
	}
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c.ID] {
			t.Errorf("case id %s is used twice", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Proves == "" || c.Run == nil || !slices.Contains(conformance.Groups(), c.Group) {
			t.Errorf("case %s is incomplete: %+v", c.ID, c)
		}
		if !identifier.MatchString(c.ID) {
			t.Errorf("case id %q does not match %s, which recorded coverage requires", c.ID, contracts.IdentifierPattern)
		}
		for _, op := range c.Operations {
			_, tool := contracts.ByOperationID(op)
			_, endpoint := contracts.LookupEndpoint(op)
			if !tool && !endpoint && op != contracts.OperationRecordCoverageRun {
				t.Errorf("case %s names operation %q, which is no operation of the contract", c.ID, op)
			}
		}
	}
	sel, err := conformance.Select([]conformance.Group{conformance.GroupMCP}, []string{"AUTH-001"})
	if err != nil {
		t.Fatal(err)
	}
	if sel[0].ID != "AUTH-001" || !slices.ContainsFunc(sel, func(c conformance.Case) bool { return c.ID == "MCP-001" }) {
		t.Errorf("Select(mcp, AUTH-001) = %d cases starting with %s", len(sel), sel[0].ID)
	}
	for _, bad := range [][2][]string{{{"nope"}, nil}, {nil, {"NOPE-1"}}} {
		groups := make([]conformance.Group, len(bad[0]))
		for i, g := range bad[0] {
			groups[i] = conformance.Group(g)
		}
		if _, err := conformance.Select(groups, bad[1]); err == nil {
			t.Errorf("Select(%v) accepted an unknown name", bad)
		}
	}

	b, err := conformance.ParseBaseline(strings.NewReader("# known failures\n\nAUTH-017\tproxy answers 502 on huge headers\nVAL-010  the CDN rewrites %00\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b["AUTH-017"] != "proxy answers 502 on huge headers" || b["VAL-010"] != "the CDN rewrites %00" {
		t.Errorf("ParseBaseline = %v", b)
	}
	for name, text := range map[string]string{
		"no reason":    "AUTH-017\n",
		"blank reason": "AUTH-017   \n",
		"twice":        "AUTH-017 a\nAUTH-017 b\n",
		"unknown case": "NOPE-001 a reason\n",
	} {
		if _, err := conformance.ParseBaseline(strings.NewReader(text)); err == nil {
			t.Errorf("%s: ParseBaseline accepted %q", name, text)
		}
	}
	rep := &conformance.Report{Results: []conformance.Result{
		{ID: "AUTH-017", Group: conformance.GroupAuthentication, Verdict: conformance.Fail},
		{ID: "VAL-010", Group: conformance.GroupValidation, Verdict: conformance.Pass},
		{ID: "VAL-001", Group: conformance.GroupValidation, Verdict: conformance.Fail},
		{ID: "VAL-002", Group: conformance.GroupValidation, Verdict: conformance.Skip},
	}}
	o := rep.Compare(b)
	if len(o.Failed) != 1 || o.Failed[0].ID != "VAL-001" || len(o.Known) != 1 || !slices.Equal(o.Fixed, []string{"VAL-010"}) {
		t.Errorf("Compare = %+v", o)
	}
	groups, total := rep.Summary()
	if total.Total() != 4 || total.Fail != 2 || len(groups) != 2 || groups[1].Group != conformance.GroupValidation || groups[1].Skip != 1 {
		t.Errorf("Summary = %+v, %+v", groups, total)
	}
}

// TestExecutorCases: the executors group against a gateway serving
// examples/executors.yaml (as CI runs it against praxa serve --dev
// --config examples/executors.yaml): every case runs and passes; against
// the example configuration (TestRealGateway) they skip, saying why.
func TestExecutorCases(t *testing.T) {
	iss := startIssuer(t)
	base := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:     &gatewaytest.Issuer{Issuer: iss.Issuer, URL: iss.URL()},
		ConfigFile: "../examples/executors.yaml",
		Edit:       func(cfg *config.Config) { cfg.Auth.Resource = resource },
	}).URL
	rep, _ := runSuite(t, conformance.Target{BaseURL: base, Tokens: iss.Tokens(resource)},
		&conformance.Options{Groups: []conformance.Group{conformance.GroupExecutors}})
	if len(rep.Results) == 0 {
		t.Fatal("no case of the executors group ran")
	}
	for _, r := range rep.Results {
		if r.Group != conformance.GroupExecutors || r.Verdict != conformance.Pass {
			t.Errorf("%s (%s): %s %s", r.ID, r.Group, r.Verdict, r.Reason)
		}
	}
}

// TestQuotaCaseWithoutQuota: against a gateway that gives the quota
// tenant no quota, ERR-007 skips, saying how to configure one, and opens
// no mission of tenants A and B.
func TestQuotaCaseWithoutQuota(t *testing.T) {
	iss := startIssuer(t)
	base := gatewaytest.New(t, &gatewaytest.Options{
		Issuer: &gatewaytest.Issuer{Issuer: iss.Issuer, URL: iss.URL()},
		Edit: func(cfg *config.Config) {
			cfg.Auth.Resource = resource
			cfg.Server.Quotas = config.Quotas{} // the embedded examples give the quota tenant one
		},
	}).URL
	_, byID := runSuite(t, conformance.Target{BaseURL: base, Tokens: iss.Tokens(resource)}, &conformance.Options{Cases: []string{"ERR-007"}})
	r := byID["ERR-007"]
	if r.Verdict != conformance.Skip || !strings.Contains(r.Reason, "server.quotas.tenants."+conformance.DefaultTenantQuota) {
		t.Fatalf("ERR-007 without a quota: %s %q, want a skip naming the configuration", r.Verdict, r.Reason)
	}
}
