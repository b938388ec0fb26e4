package mcpadapter_test

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// headersConfig exposes the upstream's echo directly three times:
// up.region mirrors region and count into Mcp-Param-Region and
// Mcp-Param-Count and has a nullable note (a property of two types, which
// makes go-sdk v1.8.0 read none of the tool's bindings); up.plain mirrors
// region only; up.bad carries an x-mcp-header the specification forbids
// (on a number), on which the SDK's AddTool panics.
func headersConfig(url string) string {
	return fmt.Sprintf(headersYAML, url)
}

// headersYAML (testdata/headers.yaml) is the template headersConfig fills.
//
//go:embed testdata/headers.yaml
var headersYAML string

// TestMcpParamHeaders: at 2026-07-28, /mcp checks the headers that mirror
// a tools/call's body as the specification requires, where go-sdk v1.8.0
// does not: each refusal is 400 with the JSON-RPC error HeaderMismatch
// (-32020) and the request's id, and the upstream is not called; each
// conforming request is served. A tool with a forbidden x-mcp-header is
// not listed, and the gateway starts.
func TestMcpParamHeaders(t *testing.T) {
	up := newUpstream(t)
	g := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: configFile(t, headersConfig(up.url))})
	tok := g.Token(t, tenantA, userA, nil, nil)

	post := func(t *testing.T, tool string, args map[string]any, headers [][2]string) (int, *contracts.Response) {
		t.Helper()
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{
			"name": tool, "arguments": args,
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		for _, h := range headers {
			if h[1] == "\x00drop" {
				req.Header.Del(h[0])
				continue
			}
			req.Header.Add(h[0], h[1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			for line := range strings.SplitSeq(string(b), "\n") {
				if data, ok := strings.CutPrefix(line, "data: "); ok {
					b = []byte(data)
				}
			}
		}
		var msg contracts.Response
		if err := json.Unmarshal(b, &msg); err != nil {
			t.Fatalf("answer %d %s: %v", res.StatusCode, b, err)
		}
		return res.StatusCode, &msg
	}
	args := map[string]any{"text": "hi", "region": "eu", "count": 3}
	name := [2]string{"Mcp-Name", "up.region"}
	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		headers [][2]string
		refused string // the header named in the refusal; "" when served
		// invalid says the service refuses the served call's arguments
		// (a tool error: the upstream is not called).
		invalid bool
	}{
		{"all mirrored", "up.region", args, [][2]string{name, {"Mcp-Param-Region", "eu"}, {"Mcp-Param-Count", "3"}}, "", false},
		{"integer compared numerically", "up.region", args, [][2]string{name, {"Mcp-Param-Region", "eu"}, {"Mcp-Param-Count", "3.0"}}, "", false},
		{"absent arguments need no header", "up.region", map[string]any{"text": "hi"}, [][2]string{name}, "", false},
		{"null needs no header", "up.region", map[string]any{"text": "hi", "region": nil}, [][2]string{name}, "", true},
		{"Base64 value", "up.region", map[string]any{"text": "hi", "region": "Zürich"},
			[][2]string{name, {"Mcp-Param-Region", "=?base64?WsO8cmljaA==?="}}, "", false},
		{"Base64 name", "up.region", map[string]any{"text": "hi"}, [][2]string{{"Mcp-Name", "=?base64?dXAucmVnaW9u?="}}, "", false},
		{"missing param header", "up.region", args, [][2]string{name, {"Mcp-Param-Count", "3"}}, "Mcp-Param-Region", false},
		{"param mismatch", "up.region", args, [][2]string{name, {"Mcp-Param-Region", "us"}, {"Mcp-Param-Count", "3"}}, "Mcp-Param-Region", false},
		{"integer mismatch", "up.region", args, [][2]string{name, {"Mcp-Param-Region", "eu"}, {"Mcp-Param-Count", "4"}}, "Mcp-Param-Count", false},
		{"header for a null argument", "up.region", map[string]any{"text": "hi", "region": nil}, [][2]string{name, {"Mcp-Param-Region", "eu"}}, "Mcp-Param-Region", false},
		{"raw UTF-8 value", "up.region", map[string]any{"text": "hi", "region": "Zürich"}, [][2]string{name, {"Mcp-Param-Region", "Zürich"}}, "Mcp-Param-Region", false},
		{"repeated param", "up.region", map[string]any{"text": "hi", "region": "eu"},
			[][2]string{name, {"Mcp-Param-Region", "eu"}, {"Mcp-Param-Region", "eu"}}, "Mcp-Param-Region", false},
		{"repeated name", "up.region", map[string]any{"text": "hi"}, [][2]string{name, {"Mcp-Name", "up.plain"}}, "Mcp-Name", false},
		{"invalid Base64 name", "up.region", map[string]any{"text": "hi"}, [][2]string{{"Mcp-Name", "=?base64?dXA?="}}, "Mcp-Name", false},
		{"plain tool mirrored", "up.plain", map[string]any{"text": "hi", "region": "eu"}, [][2]string{{"Mcp-Name", "up.plain"}, {"Mcp-Param-Region", "eu"}}, "", false},
		{"plain tool missing header", "up.plain", map[string]any{"text": "hi", "region": "eu"}, [][2]string{{"Mcp-Name", "up.plain"}}, "Mcp-Param-Region", false},
		{"contract tool, Base64 name", contracts.ToolPraxecQuery, map[string]any{}, [][2]string{{"Mcp-Name", "=?base64?cHJheGVjLnF1ZXJ5?="}}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := up.calls.Load()
			status, msg := post(t, tc.tool, tc.args, tc.headers)
			calls := up.calls.Load() - before
			if tc.refused == "" {
				if status != http.StatusOK || msg.Error != nil {
					t.Fatalf("answer %d %+v, want 200 with a result", status, msg.Error)
				}
				if want := 1; tc.tool != contracts.ToolPraxecQuery && !tc.invalid && calls != 1 {
					t.Errorf("the upstream was called %d times, want %d", calls, want)
				}
				return
			}
			if status != http.StatusBadRequest || msg.Error == nil || msg.Error.Code != mcp.CodeHeaderMismatch {
				t.Fatalf("answer %d %+v, want 400 with error %d", status, msg.Error, mcp.CodeHeaderMismatch)
			}
			if got := msg.ID.String(); got != "7" {
				t.Errorf("the refusal names id %s, want 7", got)
			}
			var data struct {
				Header string `json:"header"`
			}
			if err := json.Unmarshal(msg.Error.Data, &data); err != nil || data.Header != tc.refused {
				t.Errorf("error %q data %s, want header %s", msg.Error.Message, msg.Error.Data, tc.refused)
			}
			if calls != 0 {
				t.Errorf("a refused call reached the upstream %d times", calls)
			}
		})
	}

	// go-sdk's own client at 2026-07-28 mirrors up.plain's region and is
	// served; up.bad is not listed.
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.URL + "/mcp",
		HTTPClient: &http.Client{Transport: &gatewaytest.BearerTransport{Token: tok, Base: http.DefaultTransport}}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var listed []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, tool.Name)
	}
	if !strings.Contains(strings.Join(listed, " "), "up.plain") || strings.Contains(strings.Join(listed, " "), "up.bad") {
		t.Errorf("tools/list: %v, want up.plain and no up.bad", listed)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up.plain", Arguments: map[string]any{"text": "hi", "region": "eu"}})
	if err != nil || res.IsError {
		t.Fatalf("go-sdk client at 2026-07-28: %v %+v", err, res)
	}
}
