package e2e_test

// This file is the package's harness. Its gateways are wired by
// gatewaytest the way cmd/praxa/serve.go wires one: the embedded example
// configuration (examples/praxec.yaml), a SQLite file in t.TempDir(), a
// real OIDC issuer served over HTTP and trusted through config.Auth.Issuers
// (discovery, not a static key set), and httpapi.New behind an httptest
// server. Tests talk to it with net/http only.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/issuer"
)

// resource is the resource identifier (token audience) of every gateway of
// the package: two replicas over one file sit behind one public name, so a
// token minted for one is accepted by the other.
const resource = "https://gateway.e2e.praxa.test"

// Identities used throughout the package.
const (
	tenantA       = "acme"
	userA         = "alice"
	operatorA     = "olivia-operator"
	tenantB       = "globex"
	userB         = "bob"
	tenantSandbox = "sandbox"
	userSandbox   = "sandy"
)

// sandboxPolicy denies destructive tools to the sandbox tenant, as the
// commented policy block of examples/praxec.yaml does.
var sandboxPolicy = config.Policy{DenyDestructive: []config.PrincipalMatch{{Tenant: tenantSandbox}}}

// newIssuer serves a real OIDC issuer signing with ES256 over HTTP.
func newIssuer(t testing.TB) *gatewaytest.Issuer {
	t.Helper()
	return gatewaytest.NewIssuer(t, issuer.Options{Algorithms: []string{issuer.ES256}})
}

// mint mints an access token of subject at tenant, valid an hour, for
// this package's resource; no scopes means every scope.
func mint(t testing.TB, ti *gatewaytest.Issuer, tenant, subject string, scopes ...string) string {
	t.Helper()
	if len(scopes) == 0 {
		scopes = nil
	}
	return ti.Token(t, resource, gatewaytest.TokenSpec{Tenant: tenant, Subject: subject, Scopes: scopes, TTL: time.Hour})
}

// principalOf is a principal of tenant with every scope, for calls into
// the service.
func principalOf(tenant string) *auth.Principal {
	return &auth.Principal{Tenant: tenant, Subject: "agent", Issuer: "https://issuer.test",
		Scopes: auth.NewScopeSet(contracts.Scopes()...)}
}

// gw is one running gateway.
type gw struct {
	rest    *gatewaytest.Client
	url     string
	client  *http.Client
	handler http.Handler
	service *gateway.Service
	store   *sqlitestore.Store
	dbPath  string
	cfg     *config.Config
}

// gwOptions tune startGateway.
type gwOptions struct {
	// dbPath opens an existing database file (a second engine); empty
	// creates one in t.TempDir().
	dbPath string
	// storeDSN opens PostgreSQL (pgstore) on that database instead of a
	// SQLite file; store is then nil.
	storeDSN string
	// policy is the configuration's policy block.
	policy config.Policy
}

// startGateway starts a complete gateway over the embedded examples
// (gatewaytest.New), trusting ti, without rate limits: one principal sends
// far more than the default 50 requests a second here (benchmarks, races);
// the limiter has tests of its own.
func startGateway(t testing.TB, ti *gatewaytest.Issuer, o gwOptions) *gw {
	t.Helper()
	g := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:   ti,
		DBPath:   o.dbPath,
		StoreDSN: o.storeDSN,
		Edit: func(cfg *config.Config) {
			cfg.Auth.Resource = resource
			cfg.Policy = o.policy
		},
	})
	return wrapGateway(g)
}

// wrapGateway is g as a gw.
func wrapGateway(g *gatewaytest.Gateway) *gw {
	return &gw{rest: g.REST(), url: g.URL, client: g.Client, handler: g.Handler, service: g.Service, store: g.Store, dbPath: g.DBPath, cfg: g.Config}
}

// req is one HTTP request to a gateway.
type req struct {
	method string
	path   string // path and query, relative to the gateway
	body   any    // JSON-encoded; nil sends no body
	token  string
	key    string // Idempotency-Key header, when not empty
	trace  string // W3C trace id sent as traceparent, when not empty
}

// do sends r to the gateway.
func (g *gw) do(t testing.TB, r req) *gatewaytest.Response {
	t.Helper()
	res, err := g.send(r)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	return res
}

// send sends r to the gateway; unlike do it may run on any goroutine.
func (g *gw) send(r req) (*gatewaytest.Response, error) {
	var opts []gatewaytest.RequestOption
	if r.token != "" {
		opts = append(opts, gatewaytest.Bearer(r.token))
	}
	opts = append(opts, gatewaytest.KeyTrace(r.key, r.trace)...)
	return g.rest.Send(r.method, r.path, r.body, opts...)
}

// Shorthands for the calls tests construct on purpose (error cases, the
// first praxec start, observers). The link-following driver never uses
// them for its path.

func (g *gw) command(t testing.TB, token string, args map[string]any) *gatewaytest.Response {
	t.Helper()
	return g.do(t, req{method: http.MethodPost, path: "/v8/praxec/command", body: args, token: token})
}

func (g *gw) query(t testing.TB, token string, args map[string]any) *gatewaytest.Response {
	t.Helper()
	return g.do(t, req{method: http.MethodPost, path: "/v8/praxec/query", body: args, token: token})
}

func (g *gw) createMission(t testing.TB, token, key string, args map[string]any) *gatewaytest.Response {
	t.Helper()
	return g.do(t, req{method: http.MethodPost, path: "/v8/missions", body: args, token: token, key: key})
}

func (g *gw) getMission(t testing.TB, token, runID string) *gatewaytest.Response {
	t.Helper()
	return g.do(t, req{method: http.MethodGet, path: "/v8/missions/" + url.PathEscape(runID), token: token})
}

func (g *gw) signal(t testing.TB, token, key, runID string, args map[string]any) *gatewaytest.Response {
	t.Helper()
	return g.do(t, req{method: http.MethodPost, path: "/v8/missions/" + url.PathEscape(runID) + "/signals", body: args, token: token, key: key})
}

func (g *gw) cancelMission(t testing.TB, token, key, runID string, args map[string]any) *gatewaytest.Response {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return g.do(t, req{method: http.MethodPost, path: "/v8/missions/" + url.PathEscape(runID) + "/cancel", body: args, token: token, key: key})
}

func (g *gw) trace(t testing.TB, token, traceID string) *gatewaytest.Response {
	t.Helper()
	return g.do(t, req{method: http.MethodGet, path: "/v8/traces/" + url.PathEscape(traceID), token: token})
}

// newKey returns a fresh idempotency key.
func newKey() string { return "e2e-" + randomHex(16) }

// newTraceID returns a fresh W3C trace id.
func newTraceID() string { return randomHex(16) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// link is one entry of links[] as a client reads it.
type link struct {
	Rel         string         `json:"rel"`
	Title       string         `json:"title"`
	Method      string         `json:"method"`
	Actor       string         `json:"actor"`
	Args        map[string]any `json:"args"`
	InputSchema map[string]any `json:"inputSchema"`
}

// wantSearchFinds fails unless a search for query (of every kind)
// answers an item with id.
func wantSearchFinds(t testing.TB, w *gw, tok, query, id string) {
	t.Helper()
	res := w.query(t, tok, map[string]any{"query": query})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if !strings.Contains(string(res.Body), `"id":"`+id+`"`) {
		t.Fatalf("search did not find %s: %s", id, res.Body)
	}
}

// linksOf reads the links[] of a decoded answer; it fails unless the
// member is present and an array.
func linksOf(t testing.TB, body map[string]any) []link {
	t.Helper()
	raw, ok := body["links"]
	if !ok {
		t.Fatalf("answer has no links member: %v", body)
	}
	if _, ok := raw.([]any); !ok {
		t.Fatalf("links is %T, not an array", raw)
	}
	b, _ := json.Marshal(raw)
	var out []link
	if err := gatewaytest.DecodeJSON(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// findLink returns the link with rel; it fails when there is none.
func findLink(t testing.TB, links []link, rel string) link {
	t.Helper()
	for _, l := range links {
		if l.Rel == rel {
			return l
		}
	}
	rels := make([]string, 0, len(links))
	for _, l := range links {
		rels = append(rels, l.Rel)
	}
	t.Fatalf("no link %q among %v", rel, rels)
	return link{}
}

// requiredOf lists the required members of a link's inputSchema.
func requiredOf(schema map[string]any) []string {
	raw, _ := schema["required"].([]any)
	var out []string
	for _, r := range raw {
		if s, ok := r.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// agent is a client that only follows links: each call it makes is a
// link's args sent verbatim to the REST route of the tool its method
// names.
type agent struct {
	g     *gw
	token string
	// trace, when set, is sent as the traceparent of every call.
	trace string
}

// followOK follows the link rel of body, adding fill, and fails unless it
// answers 200; it returns the answer.
func (a *agent) followOK(t testing.TB, body map[string]any, rel string, fill map[string]any) *gatewaytest.Response {
	t.Helper()
	r := a.follow(t, findLink(t, linksOf(t, body), rel), fill)
	gatewaytest.WantStatus(t, r, http.StatusOK)
	return r
}

// follow makes the call link l describes. fill holds what the model adds:
// transition arguments that the link's inputSchema requires and its
// prefill (args.arguments) does not supply; anything else in fill fails
// the test, so the driver never edits a call beyond the model's share.
// Every successful answer is validated against the output schema of the
// tool the link names.
func (a *agent) follow(t testing.TB, l link, fill map[string]any) *gatewaytest.Response {
	t.Helper()
	res := a.g.do(t, a.request(t, l, fill))
	if res.Status < 300 {
		validateOutput(t, l.Method, res)
	}
	return res
}

// request is the HTTP request that follows link l (see follow).
func (a *agent) request(t testing.TB, l link, fill map[string]any) req {
	t.Helper()
	args := maps.Clone(l.Args)
	if len(fill) > 0 {
		prefill, _ := args["arguments"].(map[string]any)
		merged := maps.Clone(prefill)
		if merged == nil {
			merged = map[string]any{}
		}
		required := requiredOf(l.InputSchema)
		for k, v := range fill {
			if !slices.Contains(required, k) {
				t.Fatalf("link %s: the model may fill only required arguments; %q is not required by %v", l.Rel, k, l.InputSchema)
			}
			if _, ok := prefill[k]; ok {
				t.Fatalf("link %s: %q is prefilled; the model must not change it", l.Rel, k)
			}
			merged[k] = v
		}
		args["arguments"] = merged
	}
	take := func(name string) string {
		s, ok := args[name].(string)
		if !ok || s == "" {
			t.Fatalf("link %s (%s) has no %s in args %v", l.Rel, l.Method, name, l.Args)
		}
		delete(args, name)
		return s
	}
	r := req{token: a.token, trace: a.trace}
	switch l.Method {
	case contracts.ToolPraxecCommand:
		r.method, r.path, r.body = http.MethodPost, "/v8/praxec/command", args
	case contracts.ToolPraxecQuery:
		r.method, r.path, r.body = http.MethodPost, "/v8/praxec/query", args
	case contracts.ToolCreateMission:
		r.key = take("idempotencyKey")
		r.method, r.path, r.body = http.MethodPost, "/v8/missions", args
	case contracts.ToolSignalMission:
		r.key = take("idempotencyKey")
		r.method, r.path, r.body = http.MethodPost, "/v8/missions/"+url.PathEscape(take("runId"))+"/signals", args
	case contracts.ToolCancelMission:
		r.key = take("idempotencyKey")
		r.method, r.path, r.body = http.MethodPost, "/v8/missions/"+url.PathEscape(take("runId"))+"/cancel", args
	case contracts.ToolGetMission:
		r.method, r.path = http.MethodGet, "/v8/missions/"+url.PathEscape(take("runId"))
	case contracts.ToolGetTrace:
		r.method, r.path = http.MethodGet, "/v8/traces/"+url.PathEscape(take("traceId"))
	default:
		t.Fatalf("link %s names %q, a tool this driver cannot call", l.Rel, l.Method)
	}
	if r.method == http.MethodGet {
		q := url.Values{}
		for k, v := range args {
			s, ok := v.(string)
			if !ok {
				t.Fatalf("link %s: GET argument %s is %T", l.Rel, k, v)
			}
			q.Set(k, s)
		}
		if len(q) > 0 {
			r.path += "?" + q.Encode()
		}
	}
	return r
}

// validateOutput holds a successful answer to the output schema of tool.
func validateOutput(t testing.TB, tool string, r *gatewaytest.Response) {
	t.Helper()
	var v any
	if err := gatewaytest.DecodeJSON(r.Body, &v); err != nil {
		t.Fatalf("%s answered %d with invalid JSON: %v", tool, r.Status, err)
	}
	if err := contracts.ValidateOutput(tool, v); err != nil {
		ce := contracts.AsError(err)
		t.Errorf("CONTRACT: a real %s answer violates its output schema: %v %+v\n%s", tool, err, ce.Fields, r.Body)
	}
}

// problem is gatewaytest.Problem with its links as the agent reads them.
type problem struct {
	gatewaytest.Problem
	Links []link
}

// wantProblem is gatewaytest.WantProblem with the links decoded for the
// agent.
func wantProblem(t testing.TB, r *gatewaytest.Response, status int, code contracts.Code) problem {
	t.Helper()
	p := problem{Problem: gatewaytest.WantProblem(t, r, status, code)}
	p.Links = linksOf(t, p.Raw)
	return p
}

// str reads a string member path ("workflow.state") of a decoded answer.
func str(t testing.TB, body map[string]any, path string) string {
	t.Helper()
	v := member(t, body, path)
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s is %T (%v), not a string", path, v, v)
	}
	return s
}

// num reads an integer member path of a decoded answer.
func num(t testing.TB, body map[string]any, path string) int64 {
	t.Helper()
	v := member(t, body, path)
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%s is %T (%v), not a number", path, v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return i
}

func member(t testing.TB, body map[string]any, path string) any {
	t.Helper()
	var cur any = body
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s: %v is not an object", path, cur)
		}
		if cur, ok = m[p]; !ok {
			t.Fatalf("%s: no member %q in %v", path, p, m)
		}
	}
	return cur
}

// strs reads a string-array member of a decoded answer.
func strs(t testing.TB, body map[string]any, name string) []string {
	t.Helper()
	raw, ok := body[name].([]any)
	if !ok {
		t.Fatalf("%s is %T, not an array", name, body[name])
	}
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

// traceEvents reads a trace as an observer (a token with traces:read).
type traceEvent struct {
	Seq        int64          `json:"seq"`
	Type       string         `json:"type"`
	Outcome    string         `json:"outcome"`
	Code       string         `json:"code"`
	Operation  string         `json:"operation"`
	WorkflowID string         `json:"workflowId"`
	RunID      string         `json:"runId"`
	Attributes map[string]any `json:"attributes"`
}

func (g *gw) traceEvents(t testing.TB, token, traceID string) []traceEvent {
	t.Helper()
	r := g.trace(t, token, traceID)
	gatewaytest.WantStatus(t, r, http.StatusOK)
	validateOutput(t, contracts.ToolGetTrace, r)
	var out struct {
		Events []traceEvent `json:"events"`
	}
	if err := gatewaytest.DecodeJSON(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Events
}

// countEvents counts the events of a type.
func countEvents(events []traceEvent, typ string) int {
	n := 0
	for _, e := range events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// apiGateway starts a gateway on the configuration yaml (named file in its
// problems) whose connection api calls the upstream at the URL api (none:
// as yaml says), over a SQLite file or the PostgreSQL database dsn names,
// with the clock now (nil: the real one); edit, if set, changes the
// configuration further.
func apiGateway(t *testing.T, ti *gatewaytest.Issuer, file, yaml, api, dsn string, now func() time.Time, edit func(*config.Config)) *gatewaytest.Gateway {
	t.Helper()
	return gatewaytest.New(t, &gatewaytest.Options{
		Issuer:   ti,
		Now:      now,
		StoreDSN: dsn,
		Config:   func() (*config.Config, error) { return config.Parse(file, []byte(yaml)) },
		Edit: func(cfg *config.Config) {
			cfg.Auth.Resource = resource
			setBaseURL(cfg, "api", api)
			if edit != nil {
				edit(cfg)
			}
		},
	})
}

// setBaseURL points cfg's connection name at url (none: leaves it as
// configured).
func setBaseURL(cfg *config.Config, name, url string) {
	if url == "" {
		return
	}
	c := cfg.Connections[name]
	c.BaseURL = url
	cfg.Connections[name] = c
}

// githubGateway starts a gateway on examples/FILE whose github connection
// runs command with args and whose github_api connection calls the URL api
// (none: as the file says); edit, if set, changes the configuration
// further.
func githubGateway(t testing.TB, ti *gatewaytest.Issuer, file, command string, args []string, api string, edit func(*config.Config)) *gatewaytest.Gateway {
	t.Helper()
	return gatewaytest.New(t, &gatewaytest.Options{
		Issuer: ti,
		Config: func() (*config.Config, error) { return config.Load(filepath.Join("..", "..", "examples", file)) },
		Edit: func(cfg *config.Config) {
			cfg.Auth.Resource = resource
			gh := cfg.Connections["github"]
			gh.Command, gh.Args = command, args
			cfg.Connections["github"] = gh
			setBaseURL(cfg, "github_api", api)
			if edit != nil {
				edit(cfg)
			}
		},
	})
}

// moveLease reads, from st, the lease on acme's workflow wf's move from
// version.
func moveLease(st store.Store, wf string, version int64) (store.MoveLease, error) {
	var l store.MoveLease
	err := st.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		l, err = tx.GetMoveLease(ctx, tenantA, wf, version)
		return err
	})
	return l, err
}

// resolveStaleLease sends submit, whose move a stuck gateway holds under
// its lease, to w: refused as in progress while the lease is live; once
// clk is past the lease's deadline the stuck gateway is taken for stopped
// and the move is outcome-unknown, on the first request and on its retry.
// It returns the last answer.
func resolveStaleLease(t *testing.T, w *gw, clk *gatewaytest.Clock, tok string, submit map[string]any) *gatewaytest.Response {
	t.Helper()
	res := w.command(t, tok, submit)
	wantProblem(t, res, http.StatusConflict, contracts.CodeIdempotencyInProgress)
	clk.Set(gateway.DefaultLeaseTTL + time.Minute)
	for range 2 {
		res = w.command(t, tok, submit)
		wantProblem(t, res, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
	}
	return res
}

// wantReplay fails unless again answers as the replay of first: marked
// Idempotent-Replayed and with first's body; what names the request.
func wantReplay(t testing.TB, what string, first, again *gatewaytest.Response) {
	t.Helper()
	if again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, first.Body) {
		t.Errorf("%s was not replayed: Idempotent-Replayed %q, body\n%s\nwant the first's\n%s", what, again.Header.Get("Idempotent-Replayed"), again.Body, first.Body)
	}
}

// sendTwice sends one request twice with send, fails unless both answer
// status and the second is the first's replay (wantReplay), and returns
// both answers.
func sendTwice(t testing.TB, what string, status int, send func() *gatewaytest.Response) (first, again *gatewaytest.Response) {
	t.Helper()
	first = send()
	gatewaytest.WantStatus(t, first, status)
	again = send()
	gatewaytest.WantStatus(t, again, status)
	wantReplay(t, what, first, again)
	return first, again
}

// sweepAtOnce runs sweep (a method of the service: SweepLeases,
// SweepIdleRuns) on every service at once and returns how many they swept
// in all; a sweep's error fails t.
func sweepAtOnce(t *testing.T, sweep func(*gateway.Service, context.Context) (int, error), svcs ...*gateway.Service) int {
	total := 0
	for _, n := range gatewaytest.Race(len(svcs), func(i int) int {
		n, err := sweep(svcs[i], context.Background())
		if err != nil {
			t.Errorf("sweep on service %d: %v", i, err)
		}
		return n
	}) {
		total += n
	}
	return total
}

// stuckMove starts a run on g (startRun) and sends its move next through
// a replica of g, in the background, to an upstream (api) that holds the
// calls to paths on hold; it returns once each of paths was called once,
// the replica stuck mid-move, with the workflow, the version the move
// leaves, the move's arguments and where the replica's late answer comes.
func stuckMove(t *testing.T, g *gatewaytest.Gateway, api *countingAPI, hold chan struct{}, tok, next string, paths ...string) (wf string, version int64, submit map[string]any, late <-chan *gatewaytest.Response) {
	t.Helper()
	stuck := wrapGateway(g.Replica(t, nil))
	wf, submit = startRun(t, wrapGateway(g), tok, next)
	version = num(t, map[string]any{"v": submit["expectedVersion"]}, "v")
	answer := make(chan *gatewaytest.Response, 1)
	go func() { answer <- stuck.command(t, tok, submit) }()
	each := func(ok func(calls int32) bool) bool {
		for _, p := range paths {
			if !ok(api.calls(p).Load()) {
				return false
			}
		}
		return true
	}
	gatewaytest.Poll(10*time.Second, func() bool { return each(func(n int32) bool { return n != 0 }) })
	if !each(func(n int32) bool { return n == 1 }) {
		close(hold)
		t.Fatalf("the calls to %v never reached the upstream once each", paths)
	}
	return wf, version, submit, answer
}

// wantLateOutcomeUnknown releases hold, on which a stuck gateway's call
// waits, and fails unless that call's answer, read from late within 10s,
// is the recorded 504 outcome-unknown; what names the call.
func wantLateOutcomeUnknown(t *testing.T, hold chan struct{}, late <-chan *gatewaytest.Response, what string) {
	t.Helper()
	close(hold)
	select {
	case rs := <-late:
		wantProblem(t, rs, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never answered", what)
	}
}

// fire sends the transition of workflow wf, with arguments when not nil,
// at the version the workflow is at now.
func (g *gw) fire(t testing.TB, tok, wf, transition string, arguments map[string]any) *gatewaytest.Response {
	t.Helper()
	cur := g.query(t, tok, map[string]any{"workflowId": wf})
	gatewaytest.WantStatus(t, cur, http.StatusOK)
	call := map[string]any{"workflowId": wf, "expectedVersion": num(t, cur.Object(t), "workflow.version"), "transition": transition}
	if arguments != nil {
		call["arguments"] = arguments
	}
	return g.command(t, tok, call)
}

// wantUnknownOutcome fails unless the last run of acme's workflow wf, as
// w reads it, has the outcome unknown and, when version is not 0, the
// workflow is at version+1 (the unknown move recorded).
func wantUnknownOutcome(t *testing.T, w *gw, tok, wf string, version int64) {
	t.Helper()
	got := w.query(t, tok, map[string]any{"workflowId": wf})
	gatewaytest.WantStatus(t, got, http.StatusOK)
	body := got.Object(t)
	if v := num(t, body, "workflow.version"); version != 0 && v != version+1 {
		t.Errorf("version %d, want %d", v, version+1)
	}
	if o := str(t, body, "context.lastRun.outcome"); o != "unknown" {
		t.Errorf("context.lastRun.outcome = %q", o)
	}
}

// eachStore runs fn on SQLite and, with PRAXA_TEST_PG_DSN, on PostgreSQL.
func eachStore(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "") })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.Schema(t)) })
}

// jsonUpstream is a REST upstream that answers JSON: what handle writes,
// else (handle returning false) {"ok":true}. It closes when t ends.
func jsonUpstream(t *testing.T, handle func(w http.ResponseWriter, r *http.Request) (answered bool)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !handle(w, r) {
			w.Write([]byte(`{"ok":true}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// countingAPI is a REST upstream (jsonUpstream) that counts its calls by
// path. A call to a path in hold waits, once counted, until that channel
// gives or is closed; one to a path in slow takes that long (an upstream
// really this slow); one to a path in refuse answers 400 with that body.
type countingAPI struct {
	hold   map[string]chan struct{}
	slow   map[string]time.Duration
	refuse map[string]string

	mu     sync.Mutex
	counts map[string]*atomic.Int32
}

// serve starts the upstream; it closes when t ends.
func (a *countingAPI) serve(t *testing.T) *httptest.Server {
	return jsonUpstream(t, func(w http.ResponseWriter, r *http.Request) bool {
		a.calls(r.URL.Path).Add(1)
		if hold := a.hold[r.URL.Path]; hold != nil {
			<-hold
		}
		time.Sleep(a.slow[r.URL.Path])
		if body, ok := a.refuse[r.URL.Path]; ok {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(body))
			return true
		}
		return false
	})
}

// calls is the count of the calls to path.
func (a *countingAPI) calls(path string) *atomic.Int32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.counts == nil {
		a.counts = map[string]*atomic.Int32{}
	}
	if a.counts[path] == nil {
		a.counts[path] = new(atomic.Int32)
	}
	return a.counts[path]
}
