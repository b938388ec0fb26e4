package contextrest_test

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/certs"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/httpapi"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/gateway/workflow"
	"github.com/praxa/praxa/issuer"
)

const resource = "https://gateway.context.praxa.test"

// Identities of the tests.
const (
	tenantA = "acme"
	userA   = "alice"
	tenantB = "globex"
	userB   = "bob"
)

// clock is the service's clock: the example certificates are valid from
// 2025 to 2035, one expired in 2024, one is valid only from 2099.
var clock = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// harness is one running gateway over the example configuration, with its
// skills and certificate issuer.
type harness struct {
	url    string
	client *http.Client
	k      *knowledge.Knowledge
	iss    *gatewaytest.Issuer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessTrusting(t, nil)
}

// newHarnessTrusting starts a gateway that trusts the certificate issuers
// of the example configuration and extra.
func newHarnessTrusting(t *testing.T, extra certs.Issuers) *harness {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	iss := gatewaytest.NewIssuer(t, issuer.Options{})

	cfg, cat, certIssuers := gatewaytest.ExampleKnowledge(t)
	cfg.Auth.Issuers = []config.Issuer{{Issuer: iss.URL}}
	cfg.Auth.Resource = resource
	cfg.Server.Limits.RatePerSecond = -1
	srv := httptest.NewUnstartedServer(nil)
	cfg.Defaults(srv.Listener.Addr().String())

	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "praxa.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	workflows, err := workflow.Compile(cfg.Workflows)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(certIssuers, extra)
	now := func() time.Time { return clock }
	svc := gateway.New(st, &gateway.Options{Logger: log, Workflows: workflows, Policy: cfg.Policy, Skills: cat, Now: now})
	k := knowledge.New(st, &knowledge.Options{Logger: log, Skills: cat, CertificateIssuers: certIssuers, Now: now, Quota: svc})
	svc.Register(k.Operations()...)
	v, err := auth.NewVerifier(ctx, cfg.Auth, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = httpapi.New(httpapi.Options{Service: svc, Knowledge: k, Auth: v, Config: cfg, Logger: log, Issuers: []string{iss.URL}})
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := svc.Close(sctx); err != nil {
			t.Errorf("service close: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("store close: %v", err)
		}
	})
	return &harness{url: srv.URL, client: srv.Client(), k: k, iss: iss}
}

// tok describes a token to mint.
type tok struct {
	tenant, subject string
	scopes          []string // nil: every scope
	compartments    []string
	purposes        []string
}

func without(scope contracts.Scope) []string {
	var out []string
	for _, s := range gatewaytest.AllScopes() {
		if s != string(scope) {
			out = append(out, s)
		}
	}
	return out
}

func (h *harness) token(t testing.TB, spec tok) string {
	t.Helper()
	if spec.tenant == "" {
		spec.tenant = tenantA
	}
	if spec.subject == "" {
		spec.subject = userA
	}
	extra := map[string]any{"client_id": spec.subject}
	if spec.compartments != nil {
		extra["compartments"] = spec.compartments
	}
	if spec.purposes != nil {
		extra["purposes"] = spec.purposes
	}
	return h.iss.Token(t, resource, gatewaytest.TokenSpec{Tenant: spec.tenant, Subject: spec.subject, Scopes: spec.scopes, TTL: time.Hour, Claims: extra})
}

// reviewer is tenant A's token for the example data: compartment payments,
// purpose incident-review (what serve --dev prints).
func (h *harness) reviewer(t testing.TB) string {
	return h.token(t, tok{compartments: []string{"payments"}, purposes: []string{"incident-review"}})
}

// resp is a read answer.
type resp = gatewaytest.Response

// do sends method path with body (as gatewaytest's Client sends it), as
// token's bearer when token is not "".
func (h *harness) do(t testing.TB, method, path, token string, body any) *resp {
	t.Helper()
	var opts []gatewaytest.RequestOption
	if token != "" {
		opts = append(opts, gatewaytest.Bearer(token))
	}
	return gatewaytest.NewClient(h.url, h.client).Do(t, method, path, body, opts...)
}

func (h *harness) getSkill(t testing.TB, token, id string, query url.Values) *resp {
	t.Helper()
	p := "/v8/skills/" + url.PathEscape(id)
	if len(query) > 0 {
		p += "?" + query.Encode()
	}
	return h.do(t, http.MethodGet, p, token, nil)
}

func (h *harness) queryMemory(t testing.TB, token string, body any) *resp {
	t.Helper()
	return h.do(t, http.MethodPost, "/v8/memory/query", token, body)
}

func (h *harness) listGoals(t testing.TB, token string, query url.Values) *resp {
	t.Helper()
	return h.do(t, http.MethodGet, "/v8/context-twin/goals?"+query.Encode(), token, nil)
}

func (h *harness) listCertificates(t testing.TB, token string, query url.Values) *resp {
	t.Helper()
	p := "/v8/world-model/certificates"
	if len(query) > 0 {
		p += "?" + query.Encode()
	}
	return h.do(t, http.MethodGet, p, token, nil)
}

// importMemory imports text as tenant's memory.
func (h *harness) importMemory(t testing.TB, tenant, text string) knowledge.ImportReport {
	t.Helper()
	return imported(t)(h.k.ImportMemory(context.Background(), nil, tenant, "memory.jsonl", strings.NewReader(text)))
}

// importGoals imports text as tenant's goals.
func (h *harness) importGoals(t testing.TB, tenant, text string) knowledge.ImportReport {
	t.Helper()
	return imported(t)(h.k.ImportGoals(context.Background(), nil, tenant, "goals.jsonl", strings.NewReader(text)))
}

// importCertificates imports text as the certificates file name.
func (h *harness) importCertificates(t testing.TB, name, text string) knowledge.ImportReport {
	t.Helper()
	return imported(t)(h.k.ImportCertificates(context.Background(), nil, name, strings.NewReader(text)))
}

// imported takes an import's result: the report, or the error, which
// fails t.
func imported(t testing.TB) func(knowledge.ImportReport, error) knowledge.ImportReport {
	return func(rep knowledge.ImportReport, err error) knowledge.ImportReport {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
}

func exampleFile(t testing.TB, name string) string {
	t.Helper()
	b, err := examples.FS.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := gatewaytest.DecodeJSON(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return m
}

// ok checks a 200 answer and holds it to tool's output schema.
func ok(t testing.TB, tool string, r *resp) map[string]any {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: %s", tool, r)
	}
	m := decode(t, r.Body)
	if err := contracts.ValidateOutput(tool, m); err != nil {
		t.Fatalf("CONTRACT: %s answer violates its output schema: %v %+v\n%s", tool, err, contracts.AsError(err).Fields, r.Body)
	}
	return m
}

// list reads an array of objects member.
func list(t testing.TB, m map[string]any, name string) []map[string]any {
	t.Helper()
	raw, ok := m[name].([]any)
	if !ok {
		t.Fatalf("%s is %T", name, m[name])
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i] = v.(map[string]any)
	}
	return out
}

func ids(items []map[string]any) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it["id"].(string))
	}
	return out
}
