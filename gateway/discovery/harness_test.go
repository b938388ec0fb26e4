package discovery_test

// The REST tests of discovery and the lexicon run the real stack, wired by
// gatewaytest: an OIDC issuer behind an httptest server, a SQLite store in
// t.TempDir(), the service with the index built from a configuration, the
// bearer verifier and the /v8 router behind another httptest server.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
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
    # The evidence safe.create_pr's guard requires: a configuration
    # whose guard nothing can satisfy is refused.
    produces: [tests_passed]
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
	auditor *audit.Auditor
	stop    func()
	g       *gatewaytest.Gateway
}

// newHarness starts a gateway (gatewaytest.New) over catalogueYAML, with
// the discovery switches of o.
func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	opts := &gatewaytest.Options{
		Config:        func() (*config.Config, error) { return config.Parse("catalogue.yaml", []byte(catalogueYAML)) },
		Edit:          func(cfg *config.Config) { cfg.Auth.Resource = "https://praxa.test" }, // stable across restarts
		RateLimits:    true,
		DBPath:        o.dbPath,
		LexiconWrites: o.lexiconWrites, SkillsSearch: o.skills, ScriptsSearch: o.scripts,
	}
	if o.iss != nil {
		// Still served where the first harness served it.
		opts.Issuer = &gatewaytest.Issuer{Issuer: o.iss, URL: o.iss.Issuer()}
	}
	g := gatewaytest.New(t, opts)
	return &harness{url: g.URL, client: g.Client, iss: g.Issuer.Issuer, issURL: g.Issuer.URL, cfg: g.Config,
		dbPath: g.DBPath, store: g.Store, auditor: g.Auditor, stop: g.Close, g: g}
}

// token mints a token for subject at tenant with scopes (nil: every scope).
func (h *harness) token(t *testing.T, tenant, subject string, scopes ...contracts.Scope) string {
	t.Helper()
	var names []string
	if scopes != nil {
		names = []string{}
	}
	for _, s := range scopes {
		names = append(names, string(s))
	}
	return h.g.Token(t, tenant, subject, names, nil)
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
	opts := []gatewaytest.RequestOption{gatewaytest.Bearer(token)}
	if traceID != "" {
		opts = append(opts, gatewaytest.InTrace(traceID))
	}
	if key != "" {
		opts = append(opts, gatewaytest.IdempotencyKey(key))
	}
	r := gatewaytest.NewClient(h.url, h.client).Do(t, http.MethodPost, path, body, opts...)
	return resp{status: r.Status, header: r.Header, body: r.Body}
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
	return h.g.Events(t, tenant, traceID)
}
