package discovery_test

// The REST tests of discovery and the lexicon run the real stack: an OIDC
// issuer behind an httptest server, a SQLite store in t.TempDir(), the
// service with the index built from a configuration, the bearer verifier
// and the /v8 router behind another httptest server.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/httpapi"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/gateway/workflow"
	"github.com/praxa/praxa/issuer"
)

// catalogueYAML mirrors the seeds: the deploy_pipeline workflow of
// seeds/000, the github.list_issues exposure of seeds/004, a wrapped
// capability, a connection and a small lexicon.
const catalogueYAML = `
workflows:
  deploy_pipeline:
    version: 1
    title: Deploy Pipeline
    description: Lint, test, build, and deploy a service.
    tags: [deploy, pipeline]
    initial: lint
    states:
      lint: {}
      deployed: {terminal: true}
    transitions:
      - {name: run_lint, from: lint, to: deployed}
  release_approval:
    version: 1
    title: Release with approval
    description: Prepare a release and hold it until a person approves it.
    tags: [release, approval]
    initial: draft
    inputSchema:
      type: object
      properties:
        version: {type: string}
    states:
      draft: {}
      released: {terminal: true}
    transitions:
      - {name: release, from: draft, to: released}
capabilities:
  raw.create_pr:
    title: Create GitHub PR
    executor: {kind: mcp, connection: github, tool: create_pull_request}
  safe.create_pr:
    wraps: raw.create_pr
    guards:
      - kind: evidence
        requires: [tests_passed]
  ticket.open:
    title: Open a ticket
    description: Open a ticket in the tracker.
    tags: [ticket, write]
    domain: ticket
    exposeDirectly: true
proxy:
  expose:
    - name: github.list_issues
      title: List GitHub issues
      description: List issues from a GitHub repository.
      tags: [github, issues, read]
      aliases: [issues, bugs]
      inputSchema:
        type: object
        required: [repo]
        properties:
          repo: { type: string }
      executor:
        kind: mcp
        connection: github
        tool: list_issues
    - capability: safe.create_pr
      as: github.create_pr
      tags: [github, write]
      aliases: [pr, pull-request]
connections:
  github:
    kind: mcp
    command: github-mcp-server
lexicon:
  evidence-pack:
    definition_short: A bundle of facts the editor uses.
    bounded_context: swe-agent
    refs: [evidence pack]
  mission:
    definition_short: One run of a workflow toward a goal.
    bounded_context: gateway
    aliases: [run]
`

// Principals of the tests.
const (
	tenantA = "acme"
	userA   = "alice"
	tenantB = "globex"
	userB   = "bob"
)

type harnessOptions struct {
	lexiconWrites, skills, scripts bool
	// dbPath reuses a database (a restart); "" makes a fresh one.
	dbPath string
	// iss reuses an issuer, so tokens outlive a restart.
	iss *issuer.Issuer
}

// harness is one running gateway.
type harness struct {
	url     string
	client  *http.Client
	iss     *issuer.Issuer
	issURL  string
	cfg     *config.Config
	dbPath  string
	store   store.Store
	auditor *gateway.Auditor
	stop    func()
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	ctx := context.Background()
	h := &harness{iss: o.iss, dbPath: o.dbPath}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if h.iss == nil {
		iss, err := issuer.New(issuer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		h.iss = iss
	}
	issSrv := httptest.NewServer(h.iss)
	t.Cleanup(issSrv.Close)
	h.iss.SetIssuer(issSrv.URL)
	h.issURL = issSrv.URL

	cfg, err := config.Parse("catalogue.yaml", []byte(catalogueYAML))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Auth.Issuers = []config.Issuer{{Issuer: h.issURL}}
	srv := httptest.NewUnstartedServer(nil)
	cfg.Defaults(srv.Listener.Addr().String())
	cfg.Auth.Resource = "https://praxa.test" // stable across restarts
	h.cfg = cfg
	if h.dbPath == "" {
		h.dbPath = filepath.Join(t.TempDir(), "praxa.db")
	}
	st, err := sqlitestore.Open(ctx, h.dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.store = st
	h.auditor = gateway.NewAuditor(st, &gateway.AuditorOptions{Logger: log})
	reg, err := workflow.Compile(cfg.Workflows)
	if err != nil {
		t.Fatal(err)
	}
	index, err := discovery.Build(reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc := gateway.New(st, &gateway.Options{Logger: log, Auditor: h.auditor, Workflows: reg, Policy: cfg.Policy,
		Discovery: index, Lexicon: cfg.Lexicon, LexiconWrites: o.lexiconWrites, SkillsSearch: o.skills, ScriptsSearch: o.scripts})
	verifier, err := auth.NewVerifier(ctx, cfg.Auth, &auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = httpapi.New(httpapi.Options{Service: svc, Auth: verifier, Config: cfg, Logger: log})
	srv.Start()
	h.url, h.client = srv.URL, srv.Client()
	stopped := false
	h.stop = func() {
		if stopped {
			return
		}
		stopped = true
		srv.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := svc.Close(sctx); err != nil {
			t.Errorf("service close: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("store close: %v", err)
		}
	}
	t.Cleanup(h.stop)
	return h
}

// token mints a token for subject at tenant with scopes (nil: every scope).
func (h *harness) token(t *testing.T, tenant, subject string, scopes ...contracts.Scope) string {
	t.Helper()
	var names []string
	if scopes == nil {
		for _, s := range contracts.Scopes() {
			names = append(names, string(s))
		}
	}
	for _, s := range scopes {
		names = append(names, string(s))
	}
	tok, err := h.iss.Mint(h.issURL, h.cfg.Auth.Resource, subject, tenant, names, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// everyScopeBut is every scope except drop.
func everyScopeBut(drop contracts.Scope) []contracts.Scope {
	return slices.DeleteFunc(contracts.Scopes(), func(s contracts.Scope) bool { return s == drop })
}

// resp is an answer.
type resp struct {
	status int
	header http.Header
	body   []byte
}

// object decodes the answer as a JSON object.
func (r resp) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %d is not a JSON object: %v\n%s", r.status, err, r.body)
	}
	return m
}

// post sends body to path with the token; traceID, when set, is sent as
// the W3C traceparent; key as the Idempotency-Key.
func (h *harness) post(t *testing.T, path, token string, body any, traceID, key string) resp {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, h.url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	if traceID != "" {
		req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: out}
}

func (h *harness) query(t *testing.T, token string, args map[string]any) resp {
	t.Helper()
	return h.post(t, "/v8/praxec/query", token, args, "", "")
}

func (h *harness) command(t *testing.T, token string, args map[string]any) resp {
	t.Helper()
	return h.post(t, "/v8/praxec/command", token, args, "", "")
}

// ok checks a successful answer against the tool's output schema and
// returns it decoded.
func ok(t *testing.T, tool string, r resp) map[string]any {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", r.status, r.body)
	}
	m := r.object(t)
	var v any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if err := contracts.ValidateOutput(tool, v); err != nil {
		t.Errorf("%s answer does not match its output schema: %v\n%s", tool, err, r.body)
	}
	return m
}

// problem checks a refusal's status and code and returns it decoded.
func problem(t *testing.T, r resp, status int, code contracts.Code) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q", ct)
	}
	p := r.object(t)
	if p["code"] != string(code) {
		t.Fatalf("code %v, want %s: %s", p["code"], code, r.body)
	}
	return p
}

// jsonOf decodes a JSON literal.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad literal: %v\n%s", err, s)
	}
	return v
}

// events returns the audit events of the tenant's trace, once the
// asynchronous audit of reads was written.
func (h *harness) events(t *testing.T, tenant, traceID string) []store.Event {
	t.Helper()
	ctx := context.Background()
	if err := h.auditor.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var out []store.Event
	err := h.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		out, err = tx.TraceEvents(ctx, tenant, traceID, 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
