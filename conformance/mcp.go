package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/restclient"
)

// mcpPath is where the contract's MCP server is served over streamable
// HTTP, beside /v8.
const mcpPath = "/mcp"

// mcpProtocolVersion is the protocol version of the suite's raw JSON-RPC
// requests.
const mcpProtocolVersion = "2025-06-18"

// session connects the go-sdk client to the target's /mcp with tok; it is
// closed when the case ends.
func (t *T) session(tok string) *mcp.ClientSession {
	hc := *t.r.http
	hc.Transport = &restclient.BearerTransport{Token: tok, Base: hc.Transport}
	client := mcp.NewClient(&mcp.Implementation{Name: SuiteName, Version: Version}, nil)
	cs, err := client.Connect(t.ctx, &mcp.StreamableClientTransport{Endpoint: t.r.base + mcpPath, HTTPClient: &hc,
		DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect an MCP client to %s: %v", mcpPath, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool through an MCP session; a protocol error fails the
// case.
func (t *T) callTool(cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	res, err := cs.CallTool(t.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// toolText returns the text of a result's first text content.
func toolText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// toolError checks that res is a tool error in the seeds/000 envelope
// {error:{code,message,hint}, links} with no structuredContent, and
// returns it.
func (t *T) toolError(what string, res *mcp.CallToolResult) contracts.ErrorEnvelope {
	if !res.IsError {
		t.Fatalf("%s: want a tool result with isError, got a success: %s", what, truncate(toolText(res), 300))
	}
	if res.StructuredContent != nil {
		t.Fatalf("%s: an error result must carry no structuredContent (clients validate it against the output schema)", what)
	}
	var env struct {
		Error *contracts.ErrorBody `json:"error"`
		Links *[]contracts.Link    `json:"links"`
	}
	text := toolText(res)
	if err := json.Unmarshal([]byte(text), &env); err != nil || env.Error == nil || env.Links == nil {
		t.Fatalf("%s: the error text is not the {error:{code,message,hint}, links:[]} envelope: %s", what, truncate(text, 300))
	}
	if env.Error.Code == "" || env.Error.Message == "" {
		t.Fatalf("%s: the error envelope needs a code and a message: %s", what, truncate(text, 300))
	}
	return contracts.ErrorEnvelope{Error: *env.Error, Links: *env.Links}
}

// rpcAnswer is one raw JSON-RPC exchange over /mcp.
type rpcAnswer struct {
	resp *response
	// msg is the JSON-RPC response, when the answer held one.
	msg *struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
}

// rpc posts one JSON-RPC body to /mcp (no initialize: the transport is
// expected to serve stateless requests) and decodes the answer, JSON or an
// event stream. body is encoded as JSON unless it is []byte or a string,
// which are sent as they are.
func (t *T) rpc(tok string, header http.Header, body any) rpcAnswer {
	return t.rpcSend(tok, header, mustJSON(t, body), false)
}

// rpcSend is rpc for raw bytes; chunked sends them without a
// Content-Length. A JSON answer is decoded whatever its status (a
// refusal's JSON-RPC error).
func (t *T) rpcSend(tok string, header http.Header, body []byte, chunked bool) rpcAnswer {
	h := http.Header{}
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", mcpProtocolVersion)
	for k, vs := range header {
		h[k] = vs
	}
	resp := t.do(request{method: http.MethodPost, path: mcpPath, token: tok, header: h, body: body, chunked: chunked})
	a := rpcAnswer{resp: resp}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.Status != http.StatusOK && mt != "application/json" {
		return a
	}
	payload := resp.Body
	if mt == "text/event-stream" {
		payload = nil
		sc := bufio.NewScanner(bytes.NewReader(resp.Body))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				payload = []byte(strings.TrimSpace(data))
				if bytes.Contains(payload, []byte(`"id"`)) {
					break
				}
			}
		}
	}
	if len(payload) > 0 && json.Unmarshal(payload, &a.msg) != nil {
		a.msg = nil
	}
	return a
}

// expectRPCError fails unless the answer is HTTP status with a JSON-RPC
// error of code whose id is null.
func (t *T) expectRPCError(what string, a rpcAnswer, status, code int) {
	t.expectStatus(what, a.resp, status)
	if a.msg == nil || a.msg.Error == nil {
		t.Fatalf("%s: want a JSON-RPC error %d, got %s", what, code, snippet(a.resp.Body))
	}
	if a.msg.Error.Code != code {
		t.Fatalf("%s: want JSON-RPC error %d, got %d %q", what, code, a.msg.Error.Code, a.msg.Error.Message)
	}
	if id := strings.TrimSpace(string(a.msg.ID)); id != "null" {
		t.Fatalf("%s: the error names id %s, want null", what, truncate(id, 40))
	}
}

// rawCall is a tools/call of tool whose arguments are the JSON text args,
// sent as written.
func rawCall(id int, tool, args string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`)
}

// expectNothingRan fails unless key is still free on the target: an
// aura_submit_intent with it and a fresh intent succeeds, which it would
// not (idempotency-key-reused) had a refused call with that key run.
func (t *T) expectNothingRan(what, tok, key string) {
	res := t.callTool(t.session(tok), contracts.ToolSubmitIntent, map[string]any{"idempotencyKey": key, "intent": "conformance after a refusal"})
	if res.IsError {
		env := t.toolError(what, res)
		t.Fatalf("%s ran: its key then answered %s", what, env.Error.Code)
	}
}
