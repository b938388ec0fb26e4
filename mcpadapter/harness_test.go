package mcpadapter_test

// This file's gateways are wired by gatewaytest the way cmd/praxa/serve.go
// wires one: an OIDC issuer served over HTTP and trusted by discovery, a
// SQLite file in t.TempDir(), the service layer with the example workflows,
// the verifier, and httpapi.New with /mcp mounted as a stateless streamable
// HTTP handler over the adapter's server. Tests reach the adapter in memory (a Local
// backend bound to a principal, as praxa mcp does), over /mcp, or over REST.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/issuer"
	"github.com/praxa/praxa/mcpadapter"
)

// Identities used throughout the suite.
const (
	tenantA = "acme"
	userA   = "alice"
)

// harness is one running gateway (REST under /v8, MCP at /mcp) and the
// issuer it trusts.
type harness struct {
	iss      *issuer.Issuer
	issURL   string
	cfg      *config.Config
	dbPath   string
	service  *gateway.Service
	verifier *auth.Verifier
	url      string
	client   *http.Client
	g        *gatewaytest.Gateway
}

// harnessOptions tune newHarness.
type harnessOptions struct {
	// replicaOf makes the harness a second replica of another: same
	// database file, issuer and resource, its own store handle, service,
	// verifier and listener.
	replicaOf *harness
	// toolSet is the tool set /mcp registers ("" for all).
	toolSet string
	// quiet drops the gateway's logs (benchmarks).
	quiet bool
	// requestLines keeps the Info lines (the request lines) in Logs.
	requestLines bool
	// edit changes the configuration before the gateway starts.
	edit func(*config.Config)
	// configFile is the configuration file to start from (empty: the
	// embedded examples).
	configFile string
}

// newHarness starts a gateway (gatewaytest.New) over the embedded
// examples, without rate limits: benchmarks and drives send many calls
// with one token.
func newHarness(t testing.TB, o *harnessOptions) *harness {
	t.Helper()
	if o == nil {
		o = &harnessOptions{}
	}
	opts := &gatewaytest.Options{ToolSet: o.toolSet, Edit: o.edit, ConfigFile: o.configFile}
	if o.quiet {
		opts.LogLevel = slog.LevelError
	}
	if o.requestLines {
		opts.LogLevel = slog.LevelInfo
	}
	var g *gatewaytest.Gateway
	if r := o.replicaOf; r != nil {
		g = r.g.Replica(t, opts)
	} else {
		g = gatewaytest.New(t, opts)
	}
	return &harness{iss: g.Issuer.Issuer, issURL: g.Issuer.URL, cfg: g.Config, dbPath: g.DBPath,
		service: g.Service, verifier: g.Verifier, url: g.URL, client: g.Client, g: g}
}

// scopesWithout is every scope but drop.
func scopesWithout(drop ...contracts.Scope) []string {
	return slices.DeleteFunc(gatewaytest.AllScopes(), func(s string) bool { return slices.Contains(drop, contracts.Scope(s)) })
}

// token mints an access token of alice at acme for this gateway with the
// given scopes (nil: every scope) and extra claims.
func (h *harness) token(t testing.TB, scopes []string, extra map[string]any) string {
	t.Helper()
	return h.g.Token(t, tenantA, userA, scopes, extra)
}

// newClient is the go-sdk client every test uses.
func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcpadapter-test", Version: "0"}, nil)
}

// bind is a Local.Bind to the principal of tok, verified on every call,
// as praxa mcp binds a fixed token.
func (h *harness) bind(tok string) func(context.Context) (*auth.Principal, *auth.Credential, error) {
	return func(ctx context.Context) (*auth.Principal, *auth.Credential, error) {
		p, err := h.verifier.Verify(ctx, tok)
		if err != nil {
			return nil, nil, err
		}
		return p, auth.NewCredential(tok, p), nil
	}
}

// inMemory connects a client to an adapter server whose Local backend is
// bound to the principal of tok, as praxa mcp binds its credential.
func (h *harness) inMemory(t testing.TB, tok string, opts *mcpadapter.Options) *mcp.ClientSession {
	t.Helper()
	set := contracts.SetAll
	if opts != nil && opts.ToolSet != "" {
		set = opts.ToolSet
	}
	local := &mcpadapter.Local{Service: h.service, ToolSet: set,
		Bind: h.bind(tok),
		IDs:  func(context.Context) (string, string) { return ids.Request(), ids.Trace() }}
	srv, err := mcpadapter.New(local, opts)
	if err != nil {
		t.Fatal(err)
	}
	return connectServer(t, srv)
}

// connectServer connects a client to srv over in-memory transports; both
// ends close when t ends.
func connectServer(t testing.TB, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := newClient().Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// overHTTP connects a client to the gateway's /mcp with tok.
func (h *harness) overHTTP(t testing.TB, tok string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: &gatewaytest.BearerTransport{Token: tok, Base: h.client.Transport}}
	cs, err := newClient().Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// rest sends one REST request with the headers header and returns the
// answer with its body read.
func (h *harness) rest(t testing.TB, method, path, body string, header map[string]string) (*gatewaytest.Response, []byte) {
	t.Helper()
	var opts []gatewaytest.RequestOption
	for k, v := range header {
		opts = append(opts, func(r *http.Request) { r.Header.Set(k, v) })
	}
	r := h.g.REST().Do(t, method, path, body, opts...)
	return r, r.Body
}

// link is a link of an answer, as a client reads it.
type link struct {
	Rel         string         `json:"rel"`
	Method      string         `json:"method"`
	Args        map[string]any `json:"args"`
	InputSchema map[string]any `json:"inputSchema"`
}

// answer is a successful tool result, decoded.
type answer struct {
	raw   json.RawMessage
	body  map[string]any
	links []link
	meta  mcp.Meta
}

func (a *answer) link(t testing.TB, rel string) link {
	t.Helper()
	for _, l := range a.links {
		if l.Rel == rel {
			return l
		}
	}
	t.Fatalf("no link %q in %s", rel, a.raw)
	return link{}
}

// str reads a string at a dotted path of the body.
func (a *answer) str(path string) string {
	var v any = a.body
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// call calls tool with args and requires a success: structuredContent that
// validates against the tool's output schema and one text content holding
// the same JSON.
func call(t testing.TB, cs *mcp.ClientSession, tool string, args any) *answer {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return success(t, tool, res)
}

// success checks a successful result and decodes it.
func success(t testing.TB, tool string, res *mcp.CallToolResult) *answer {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: isError result: %s", tool, textOf(t, res))
	}
	if res.StructuredContent == nil {
		t.Fatalf("%s: no structuredContent", tool)
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	text := textOf(t, res)
	if !jsonEqual(t, []byte(text), structured) {
		t.Errorf("%s: text content %s differs from structuredContent %s", tool, text, structured)
	}
	decoded := decode(t, structured)
	if err := contracts.ValidateOutput(tool, decoded); err != nil {
		t.Errorf("%s: structuredContent does not match the output schema: %v\n%s", tool, err, structured)
	}
	a := &answer{raw: structured, meta: res.Meta}
	a.body, _ = decoded.(map[string]any)
	var ls struct {
		Links []link `json:"links"`
	}
	if err := json.Unmarshal(structured, &ls); err != nil {
		t.Fatal(err)
	}
	a.links = ls.Links
	return a
}

// envelope is the seeds/000 error envelope.
type envelope struct {
	Error struct {
		Code    contracts.Code `json:"code"`
		Message string         `json:"message"`
		Hint    string         `json:"hint"`
	} `json:"error"`
	Links   []link                 `json:"links"`
	Errors  []contracts.FieldError `json:"errors"`
	TraceID string                 `json:"traceId"`
	// rawLinks are the links as sent.
	rawLinks json.RawMessage
}

// callErr calls tool and requires a tool error with code: isError, no
// structuredContent, one text content holding the envelope.
func callErr(t testing.TB, cs *mcp.ClientSession, tool string, args any, code contracts.Code) (*envelope, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v, want a tool error %s", tool, err, code)
	}
	return failure(t, tool, res, code), res
}

// failure checks an error result and decodes its envelope.
func failure(t testing.TB, tool string, res *mcp.CallToolResult, code contracts.Code) *envelope {
	t.Helper()
	if !res.IsError {
		t.Fatalf("%s: success %s, want error %s", tool, textOf(t, res), code)
	}
	if res.StructuredContent != nil {
		t.Errorf("%s: an error result carries structuredContent %v", tool, res.StructuredContent)
	}
	text := textOf(t, res)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		t.Fatalf("%s: error text is not JSON: %v\n%s", tool, err, text)
	}
	for k := range raw {
		if k != "error" && k != "links" && k != "errors" && k != "traceId" {
			t.Errorf("%s: envelope member %q beyond error, links, errors, traceId", tool, k)
		}
	}
	if _, ok := raw["links"]; !ok {
		t.Errorf("%s: envelope without links: %s", tool, text)
	}
	var env envelope
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		t.Fatal(err)
	}
	if env.Error.Code != code {
		t.Fatalf("%s: code %s, want %s: %s", tool, env.Error.Code, code, text)
	}
	env.rawLinks = raw["links"]
	// traceId names the call's trace; only a refusal made before any
	// gateway saw the call (a remote adapter's own) has none.
	if env.TraceID != "" && (len(env.TraceID) != 32 || strings.Trim(env.TraceID, "0123456789abcdef") != "") {
		t.Errorf("%s: envelope traceId %q is not a W3C trace id: %s", tool, env.TraceID, text)
	}
	if env.Error.Message == "" {
		t.Errorf("%s: error without a message: %s", tool, text)
	}
	return &env
}

// scopeChallenged requires err, the answer of a tools/call over /mcp, to be
// the JSON-RPC error of a 403 scope challenge, and returns the refusal's
// envelope (its data).
func scopeChallenged(t testing.TB, tool string, res *mcp.CallToolResult, err error) *envelope {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcpadapter.RPCInsufficientScope {
		t.Fatalf("%s: result %+v, error %v; want the JSON-RPC error %d of a 403 scope challenge", tool, res, err, mcpadapter.RPCInsufficientScope)
	}
	var env envelope
	if err := json.Unmarshal(we.Data, &env); err != nil {
		t.Fatalf("%s: the error's data is not the envelope: %v\n%s", tool, err, we.Data)
	}
	if env.Error.Code != contracts.CodeInsufficientScope || len(env.TraceID) != 32 || env.Links == nil {
		t.Errorf("%s: envelope %s, want insufficient-scope with links and traceId", tool, we.Data)
	}
	return &env
}

// textOf returns the one text content of res.
func textOf(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d contents, want exactly one text content", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// decode decodes JSON with numbers kept exact, as the schema validator wants.
func decode(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	ca, cb := canonical(t, a), canonical(t, b)
	return bytes.Equal(ca, cb)
}

func canonical(t testing.TB, b []byte) []byte {
	t.Helper()
	out, err := json.Marshal(decode(t, b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// follow calls the link rel of a verbatim: its method, its args copied
// as they are. fill holds the arguments the link's inputSchema requires
// and its prefill lacks (the model's share); it is added to args.arguments
// only for fields the schema requires.
func follow(t testing.TB, cs *mcp.ClientSession, a *answer, rel string, fill map[string]any) *answer {
	t.Helper()
	return call(t, cs, a.link(t, rel).Method, followArgs(t, a.link(t, rel), fill))
}

// followArgs returns the arguments that follow l: its args verbatim, with
// fill added to args.arguments where the link's inputSchema requires a
// field the prefill lacks.
func followArgs(t testing.TB, l link, fill map[string]any) map[string]any {
	t.Helper()
	var args map[string]any
	b, _ := json.Marshal(l.Args)
	if err := json.Unmarshal(b, &args); err != nil {
		t.Fatal(err)
	}
	if len(fill) == 0 {
		return args
	}
	var required []string
	if r, ok := l.InputSchema["required"].([]any); ok {
		for _, v := range r {
			s, _ := v.(string)
			required = append(required, s)
		}
	}
	arguments, _ := args["arguments"].(map[string]any)
	if arguments == nil {
		arguments = map[string]any{}
	}
	for k, v := range fill {
		if !slices.Contains(required, k) {
			t.Fatalf("link %s: its inputSchema does not require %q (required: %v)", l.Rel, k, required)
		}
		if _, ok := arguments[k]; ok {
			t.Fatalf("link %s: %q is prefilled already", l.Rel, k)
		}
		arguments[k] = v
	}
	args["arguments"] = arguments
	return args
}
