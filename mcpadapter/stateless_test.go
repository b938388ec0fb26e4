package mcpadapter_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// wireAnswer is one /mcp answer as a client reads it: the status, the
// headers that matter and the JSON-RPC message, whether it came as a JSON
// body or as the one message event of a stream.
type wireAnswer struct {
	status    int
	challenge string
	stream    bool
	message   string
}

// postMCP sends body to url's /mcp with the headers of a 2026-07-28 client
// (or those of hdr, which replace them; "" deletes one).
func postMCP(t *testing.T, url, tok, body string, hdr map[string]string) wireAnswer {
	t.Helper()
	opts := []gatewaytest.RequestOption{gatewaytest.Bearer(tok),
		gatewaytest.Header("Accept", "application/json, text/event-stream"), gatewaytest.Header("Mcp-Protocol-Version", "2026-07-28")}
	var call struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(body), &call) == nil {
		opts = append(opts, gatewaytest.Header("Mcp-Method", call.Method))
		if call.Params.Name != "" {
			opts = append(opts, gatewaytest.Header("Mcp-Name", call.Params.Name))
		}
	}
	for k, v := range hdr {
		opts = append(opts, func(r *http.Request) {
			if v == "" {
				r.Header.Del(k)
			} else {
				r.Header.Set(k, v)
			}
		})
	}
	res := gatewaytest.NewClient(url, nil).Do(t, http.MethodPost, "/mcp", body, opts...)
	b := res.Body
	a := wireAnswer{status: res.Status, challenge: res.Header.Get("WWW-Authenticate")}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		a.stream = true
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<22)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				b = []byte(data)
			}
		}
	}
	a.message = normalizeWire(t, b)
	return a
}

// volatile are the values that differ between two answers of the same
// call: ids minted per request, trace ids, times.
var volatile = []*regexp.Regexp{
	regexp.MustCompile(`\b(wf|idem|run|req|appr|intent)_[a-z0-9]{26}\b`),
	regexp.MustCompile(`\b[0-9a-f]{32}\b`),
	regexp.MustCompile(`\b[0-9a-f]{24}\b`),
	regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`),
}

// normalizeWire returns the canonical JSON of a message with its volatile
// values replaced (inside strings too: a text content holds the answer's
// JSON).
func normalizeWire(t *testing.T, b []byte) string {
	t.Helper()
	s := string(bytes.TrimSpace(b))
	for _, re := range volatile {
		s = re.ReplaceAllString(s, "<v>")
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s // not JSON: compared as it is
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// TestStatelessPathMatchesSDK sends one corpus of /mcp requests to two
// gateways on the same store: one with the stateless request path, one
// with go-sdk's stateless handler alone. Every answer must be the same:
// status, scope challenge and JSON-RPC message (the path answers with a
// JSON body where the SDK streams one event; a client reads the same
// message). The corpus covers what the path takes (direct tools on the
// light path and as runs, upstream failures, contract reads and writes,
// refusals of every kind, the scope challenge) and what it must leave to
// the SDK (other methods and revisions, tasks, input requests, bad _meta,
// mismatched headers), and records which answers came from the path.
func TestStatelessPathMatchesSDK(t *testing.T) {
	up := newUpstream(t)
	path := configFile(t, lightConfig(up.url))
	// Two replicas behind one public name: a token of one is the other's.
	same := func(cfg *config.Config) { cfg.Auth.Resource = "https://gateway.stateless.praxa.test" }
	fast := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: path, Edit: same})
	sdk := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: path, Edit: same, Issuer: fast.Issuer, DBPath: fast.DBPath, MCPSDKOnly: true})
	tok := fast.Token(t, tenantA, userA, nil, nil)
	readOnly := fast.Token(t, tenantA, userA, []string{string(contracts.ScopeCapabilitiesRead)}, nil)
	onlyHome := fast.Token(t, tenantA, userA, nil, map[string]any{"allowed_tools": []string{contracts.ToolPraxecQuery}})

	meta := func(extra string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":{` + extra + `}}`
	}
	call := func(id, name, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + meta("") + `}}`
	}
	cases := []struct {
		name, body, tok string
		hdr             map[string]string
		// path says whether the stateless path answers it.
		path bool
	}{
		{name: "light call", body: call("1", "up.echo", `{"text":"hi"}`), path: true},
		{name: "light call, string id", body: call(`"a-1"`, "up.echo", `{"text":"hi"}`), path: true},
		{name: "light call, invalid arguments", body: call("2", "up.echo", `{"text":5}`), path: true},
		{name: "light call, too long", body: call("3", "up.echo", `{"text":"0123456789012345678901234567890"}`), path: true},
		{name: "light call, upstream error", body: call("4", "up.fail", `{}`), path: true},
		{name: "direct run", body: call("5", "up.tests", `{"text":"hi"}`), path: true},
		{name: "direct run, guard refuses", body: call("6", "up.guarded", `{}`), path: true},
		{name: "direct call, no arguments", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"up.echo",` + meta("") + `}}`, path: true},
		{name: "home", body: call("8", contracts.ToolPraxecQuery, `{}`), path: true},
		{name: "search", body: call("9", contracts.ToolPraxecQuery, `{"query":"echo","limit":3}`), path: true},
		{name: "ambiguous", body: call("10", contracts.ToolPraxecQuery, `{"query":"x","subject":"y"}`), path: true},
		{name: "unknown mission", body: call("11", contracts.ToolGetMission, `{"runId":"nope"}`), path: true},
		{name: "key missing", body: call("12", contracts.ToolSubmitIntent, `{"intent":"x"}`), path: true},
		{name: "duplicate member in the arguments", body: `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"up.echo","arguments":{"text":"a","text":"b"},` + meta("") + `}}`},
		{name: "scope challenge", body: call("14", contracts.ToolPraxecCommand, `{"definitionId":"proxy_default","input":{"capability":"up.echo","text":"x"}}`), tok: readOnly, path: true},
		{name: "tool not allowed", body: call("15", "up.echo", `{"text":"hi"}`), tok: onlyHome, path: true},
		{name: "traceparent in _meta", body: `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"up.echo","arguments":{"text":"t"},` +
			`"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, path: true},
		// Left to the SDK.
		{name: "unknown tool", body: call("20", "nope.tool", `{}`)},
		{name: "signal (input requests)", body: call("21", contracts.ToolSignalMission, `{"runId":"x","signal":"s","expectedVersion":1,"idempotencyKey":"key-0000000000000001"}`)},
		{name: "tasks declared", body: `{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"up.echo","arguments":{"text":"hi"},` + meta(`"extensions":{"io.modelcontextprotocol/tasks":{}}`) + `}}`},
		{name: "no client capabilities", body: `{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"up.echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{name: "client info not an object", body: `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"up.echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":5,"io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{name: "no _meta", body: `{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"up.echo","arguments":{"text":"hi"}}}`},
		{name: "task augmentation", body: `{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"up.echo","arguments":{"text":"hi"},"task":{},` + meta("") + `}}`},
		{name: "arguments not an object", body: call("27", "up.echo", `[1]`)},
		{name: "Mcp-Name mismatch", body: call("28", "up.echo", `{"text":"hi"}`), hdr: map[string]string{"Mcp-Name": "up.fail"}},
		{name: "no Mcp-Name", body: call("29", "up.echo", `{"text":"hi"}`), hdr: map[string]string{"Mcp-Name": ""}},
		{name: "Accept without a stream", body: call("30", "up.echo", `{"text":"hi"}`), hdr: map[string]string{"Accept": "application/json"}},
		{name: "older revision", body: call("31", "up.echo", `{"text":"hi"}`), hdr: map[string]string{"Mcp-Protocol-Version": "2025-11-25"}},
		{name: "tools/list", body: `{"jsonrpc":"2.0","id":32,"method":"tools/list","params":{` + meta("") + `}}`},
		{name: "server/discover", body: `{"jsonrpc":"2.0","id":33,"method":"server/discover","params":{` + meta("") + `}}`},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk := c.tok
			if tk == "" {
				tk = tok
			}
			want := postMCP(t, sdk.URL, tk, c.body, c.hdr)
			got := postMCP(t, fast.URL, tk, c.body, c.hdr)
			if got.status != want.status || got.challenge != want.challenge || got.message != want.message {
				t.Errorf("stateless path: %d %q\n%s\ngo-sdk: %d %q\n%s", got.status, got.challenge, got.message, want.status, want.challenge, want.message)
			}
			// The path answers with a JSON body; go-sdk streams its
			// answers to calls (refusals are JSON bodies either way, so
			// only a 200 tells who answered).
			if answered := !got.stream && want.stream; want.status == http.StatusOK && answered != c.path {
				t.Errorf("answered by the stateless path: %v, want %v", answered, c.path)
			}
		})
	}
	if fmt.Sprint(up.calls.Load()) == "0" {
		t.Error("the upstream was never called")
	}
}
