package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/workflow"
)

// statelessUpstream is a go-sdk server at 2026-07-28 (stateless streamable
// HTTP) with one tool per kind of answer a call can get. cancels receives
// the body of every notifications/cancelled it is sent; posts counts the
// tools/call requests.
func statelessUpstream(t testing.TB) (url string, cancels chan string, posts *atomic.Int32) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	add := func(name string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, h)
	}
	result := func(r *mcp.CallToolResult) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return r, nil }
	}
	png := []byte{0x89, 'P', 'N', 'G'}
	add("text", result(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}))
	add("empty", result(&mcp.CallToolResult{}))
	add("mixed", result(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a"},
		&mcp.TextContent{Text: "b", Annotations: &mcp.Annotations{Priority: 0.5}, Meta: mcp.Meta{"k": "v"}},
		&mcp.ImageContent{Data: png, MIMEType: "image/png"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x", MIMEType: "text/plain", Text: "r"}},
		&mcp.ResourceLink{URI: "file:///y", Name: "y"},
		&mcp.TextContent{Text: ""},
	}}))
	add("structured", result(&mcp.CallToolResult{StructuredContent: map[string]any{"n": 1, "f": 2.5, "s": "x", "a": []any{true, nil, map[string]any{}}},
		Content: []mcp.Content{&mcp.TextContent{Text: `{"n":1}`}}}))
	add("iserror", result(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the tool failed"}}}))
	add("rpcerror", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("refused by the tool")
	})
	add("echo", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		got, err := json.Marshal(map[string]any{"arguments": req.Params.Arguments, "meta": req.Params.Meta})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(got)}}}, err
	})
	release := make(chan struct{}) // the slow tool answers once the test ends
	add("slow", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
		case <-release:
		}
		return &mcp.CallToolResult{}, nil
	})
	s.AddTool(&mcp.Tool{Name: "mirrored", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}}},
		result(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	posts, cancels = new(atomic.Int32), make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Mcp-Method") {
		case "tools/call":
			posts.Add(1)
		case "notifications/cancelled":
			body, _ := io.ReadAll(r.Body)
			cancels <- string(body)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv.URL, cancels, posts
}

// newTestConn is an mcp connection to url; post says whether its calls may
// take the POST path.
func newTestConn(t testing.TB, url string, post bool) *mcpConn {
	t.Helper()
	m := New(map[string]config.Connection{"up": {Kind: config.ExecutorMCP, URL: url}},
		&Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ClientName: "praxa", ClientVersion: "test"})
	t.Cleanup(func() { m.Close() })
	c := m.mcp["up"]
	if !post {
		c.post = nil
	}
	return c
}

// TestPostPathMatchesSession: a call at 2026-07-28 sent as its own POST
// answers what the same call through go-sdk's client session answers (the
// output, isError, and the error's outcome and message), for every kind of
// answer; and the upstream sees the same arguments and _meta.
func TestPostPathMatchesSession(t *testing.T) {
	url, _, posts := statelessUpstream(t)
	viaPost, viaSession := newTestConn(t, url, true), newTestConn(t, url, false)
	ctx := workflow.WithTraceparent(context.Background(), ids.Traceparent(ids.Trace()))
	args := map[string]any{"s": "x", "n": 3, "nested": map[string]any{"a": []any{1.5, "b", nil, true}}, "u": "é\u2028<>&"}
	for _, tool := range []string{"text", "empty", "mixed", "structured", "iserror", "rpcerror", "echo", "missing"} {
		t.Run(tool, func(t *testing.T) {
			before := posts.Load()
			gotOut, gotErr, gotE := viaPost.callForTest(ctx, tool, args)
			if posts.Load() == before {
				t.Fatal("the call did not reach the upstream")
			}
			wantOut, wantErr, wantE := viaSession.callForTest(ctx, tool, args)
			if !reflect.DeepEqual(gotOut, wantOut) || gotErr != wantErr {
				t.Errorf("POST path: %v isError=%v\nsession:   %v isError=%v", gotOut, gotErr, wantOut, wantErr)
			}
			if fmt.Sprint(gotE) != fmt.Sprint(wantE) || outcome(gotE) != outcome(wantE) {
				t.Errorf("POST path error: %v (%s)\nsession error:   %v (%s)", gotE, outcome(gotE), wantE, outcome(wantE))
			}
			var g, w *workflow.ExecutorError
			if errors.As(gotE, &g) && errors.As(wantE, &w) && !reflect.DeepEqual(g.Output, w.Output) {
				t.Errorf("POST path error output %v, session %v", g.Output, w.Output)
			}
		})
	}
	cs, err := viaPost.session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !viaPost.postable(cs, "text") {
		t.Error("a call at 2026-07-28 does not take the POST path")
	}
	// A tool that mirrors an argument in a header, once listed, stays on
	// the session, which sends the header.
	if _, err := viaPost.tools(ctx); err != nil {
		t.Fatal(err)
	}
	if viaPost.postable(cs, "mirrored") || !viaPost.postable(cs, "text") {
		t.Error("after tools/list, mirrored should stay on the session and text take the POST path")
	}
	if out, _, err := viaPost.callForTest(ctx, "mirrored", map[string]any{"region": "eu"}); err != nil || out["text"] != "ok" {
		t.Errorf("mirrored through the session: %v %v", out, err)
	}
}

// callForTest is the mcp executor's call as Run makes it, without the
// token it carried.
func (c *mcpConn) callForTest(ctx context.Context, tool string, args map[string]any) (map[string]any, bool, error) {
	out, isError, _, err := c.call(ctx, tool, args)
	return out, isError, err
}

// outcome is the Outcome of err's *workflow.ExecutorError ("" without one).
func outcome(err error) string {
	var e *workflow.ExecutorError
	if errors.As(err, &e) {
		return e.Outcome
	}
	return ""
}

// TestPostPathGivesUp: a call whose context ends before its answer answers
// outcome unknown, and the upstream is told the call was cancelled, with
// the call's id, as go-sdk's client tells it.
func TestPostPathGivesUp(t *testing.T) {
	url, cancels, _ := statelessUpstream(t)
	c := newTestConn(t, url, true)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	before := c.nextID.Load()
	_, _, err := c.callForTest(ctx, "slow", nil)
	if outcome(err) != workflow.OutcomeUnknown || !strings.Contains(fmt.Sprint(err), "no answer in time") {
		t.Fatalf("a call given up: %v (%s), want outcome unknown, no answer in time", err, outcome(err))
	}
	select {
	case body := <-cancels:
		var n struct {
			Params struct {
				RequestID int64          `json:"requestId"`
				Meta      map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(body), &n); err != nil || n.Params.RequestID != before+1 || n.Params.Meta["io.modelcontextprotocol/protocolVersion"] != revisionStateless {
			t.Errorf("notifications/cancelled %s, want requestId %d and the client's _meta", body, before+1)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream was not told within 10s")
	}
}

// scriptedUpstream answers server/discover as a 2026-07-28 server and every
// tools/call with the events script returns for the call's id (or, for a
// GET, for the Last-Event-ID it resumes).
func scriptedUpstream(t *testing.T, script func(w http.ResponseWriter, r *http.Request, id string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method == http.MethodPost {
			_ = json.NewDecoder(r.Body).Decode(&msg)
		}
		switch {
		case msg.Method == "server/discover":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`, msg.ID)
		case msg.Method == "tools/list":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`, msg.ID)
		case msg.ID == nil && r.Method == http.MethodPost:
			w.WriteHeader(http.StatusAccepted)
		default:
			script(w, r, string(msg.ID))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestPostPathReadsStreams: the call's answer is found in an event stream
// after notifications and others' messages, a tools/list_changed is told,
// a stream cut before the answer is resumed from its last event id, and
// what cannot be a call's answer is refused with outcome unknown.
func TestPostPathReadsStreams(t *testing.T) {
	sse := func(w http.ResponseWriter, events ...string) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			fmt.Fprint(w, e)
		}
	}
	for _, c := range []struct {
		name      string
		script    func(w http.ResponseWriter, r *http.Request, id string)
		wantText  string
		wantErr   string
		wantTold  bool
		wantOcome string
	}{
		{name: "notifications first", script: func(w http.ResponseWriter, _ *http.Request, id string) {
			sse(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n",
				"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
				"data: {\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{}}\n\n",
				"data: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\n",
				"data: \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n")
		}, wantText: "done", wantTold: true},
		{name: "resumed", script: func(w http.ResponseWriter, r *http.Request, id string) {
			if r.Method == http.MethodGet {
				if r.Header.Get("Last-Event-ID") != "e1" {
					http.Error(w, "bad resume", http.StatusBadRequest)
					return
				}
				sse(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n")
				return
			}
			sse(w, "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
		}, wantText: "resumed"},
		{name: "cut without an event id", script: func(w http.ResponseWriter, _ *http.Request, _ string) {
			sse(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
		}, wantErr: "the stream ended without the call's answer", wantOcome: workflow.OutcomeUnknown},
		{name: "server request", script: func(w http.ResponseWriter, _ *http.Request, _ string) {
			sse(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"elicitation/create\",\"params\":{}}\n\n")
		}, wantErr: "sent a request (elicitation/create)", wantOcome: workflow.OutcomeUnknown},
		{name: "input required", script: func(w http.ResponseWriter, _ *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"input_required","inputRequests":{}}}`, id)
		}, wantErr: `answered "input_required"`, wantOcome: workflow.OutcomeFailed},
		{name: "not JSON", script: func(w http.ResponseWriter, _ *http.Request, _ string) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>")
		}, wantErr: `Content-Type "text/html"`, wantOcome: workflow.OutcomeUnknown},
		{name: "refused", script: func(w http.ResponseWriter, _ *http.Request, _ string) {
			http.Error(w, "no such session", http.StatusNotFound)
		}, wantErr: "the server answered 404 Not Found: no such session", wantOcome: workflow.OutcomeUnknown},
		{name: "rpc error", script: func(w http.ResponseWriter, _ *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown tool"}}`, id)
		}, wantErr: "tool t: unknown tool", wantOcome: workflow.OutcomeFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := scriptedUpstream(t, c.script)
			var told atomic.Int32
			m := New(map[string]config.Connection{"up": {Kind: config.ExecutorMCP, URL: url}},
				&Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ToolsChanged: func(string) { told.Add(1) }})
			t.Cleanup(func() { m.Close() })
			conn := m.mcp["up"]
			conn.imported = true
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn.nextID.Store(0) // the call is id 1
			out, _, err := conn.callForTest(ctx, "t", map[string]any{})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || outcome(err) != c.wantOcome {
					t.Fatalf("got %v, %v (%s), want an error with %q (%s)", out, err, outcome(err), c.wantErr, c.wantOcome)
				}
				return
			}
			if err != nil || out["text"] != c.wantText {
				t.Fatalf("got %v, %v, want text %q", out, err, c.wantText)
			}
			if (told.Load() > 0) != c.wantTold {
				t.Errorf("tools/list_changed told %d times, want %v", told.Load(), c.wantTold)
			}
		})
	}
}

// FuzzPostedAnswer: whatever an upstream answers a call with (a JSON body
// or an event stream), reading it and converting its result neither
// panics nor takes another message for the call's answer.
func FuzzPostedAnswer(f *testing.F) {
	f.Add(true, []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}}`))
	f.Add(false, []byte("event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\n"+
		"data: \"result\":{\"content\":[{\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"}]}}\n\n"))
	f.Add(true, []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}`))
	f.Add(true, []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`))
	f.Add(true, []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}`))
	c := &mcpConn{name: "up", log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f.Fuzz(func(t *testing.T, asJSON bool, body []byte) {
		ct := "text/event-stream"
		if asJSON {
			ct = "application/json"
		}
		resp := &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{"Content-Type": {ct}},
			Body: io.NopCloser(strings.NewReader(string(body)))}
		ans, _, err := c.read(resp, 1)
		if err != nil || ans == nil {
			return
		}
		var id int64
		if json.Unmarshal(ans.ID, &id) != nil || id != 1 {
			t.Fatalf("took the message with id %s for the call's answer", ans.ID)
		}
		if ans.Result != nil {
			_, _, _ = postedOutput(ans.Result)
		}
	})
}

// postedResults are results postedOutput reads: the plain shape and
// neighbours of it that plainPostedOutput must leave to the decoder.
var postedResults = []string{
	`{"content":[{"type":"text","text":"echo: hi"}]}`,
	`{"content":[{"type":"text","text":"a"},{"text":"b\n\u00e9","type":"text"}],"structuredContent":{"a":[1,2.5,"x",null,true]},"isError":true,"resultType":"complete"}`,
	` { "content" : [ ] , "structuredContent" : null , "isError" : false , "_meta" : {"k":1} } `,
	`{"content":[{"type":"text","text":"a","text":"b"}]}`,
	`{"content":[{"type":"text","type":"text"}]}`,
	`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
	`{"content":[{"type":"text","text":"a","annotations":{"priority":1}}]}`,
	`{"content":[{"type":"te\u0078t","text":"a"}]}`,
	"{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"}]}", // not UTF-8: replaced as encoding/json does
	`{"content":[{"type":"text","text":1}]}`,
	`{"content":[null]}`,
	`{"content":["text"]}`,
	`{"content":null}`,
	`{"content":{}}`,
	`{}`,
	`{"Content":[{"type":"text","text":"a"}]}`,
	`{"content":[{"type":"text","text":"a"}],"CONTENT":[]}`,
	`{"content":[{"type":"text","text":"a"}],"content":[]}`,
	`{"content":[{"type":"text","text":"a"}],"isError":null}`,
	`{"content":[{"type":"text","text":"a"}],"isError":"true"}`,
	`{"content":[{"type":"text","text":"a"}],"resultType":"input_required"}`,
	`{"content":[{"type":"text","text":"a"}],"resultType":null}`,
	`{"content":[{"type":"text","text":"a"}],"resultType":""}`,
	`{"content":[{"type":"text","text":"a"}],"structuredContent":1e400}`,
	`{"content":[{"type":"text","text":"a"}],"ſtructuredContent":{"a":1}}`,
	`{"con\u0074ent":[{"type":"text","text":"a"}]}`,
	`[]`,
	`{"content":[{"type":"text","text":"a"}]`,
}

// TestPostedOutputPlain: plainPostedOutput reads what it reads as the
// decoder does (the same output, isError and no error), and leaves alone
// the results that differ from the plain shape.
func TestPostedOutputPlain(t *testing.T) {
	checkPlainPath(t, postedResults, comparePostedOutput, 5, "results")
}

// checkPlainPath runs compare (which fails t when a plain path reads raw
// otherwise than its decoder, and reports whether the plain path read it)
// over corpus, and fails t when the plain path read fewer than atLeast of
// them (what: what they are, for the message).
func checkPlainPath(t *testing.T, corpus []string, compare func(*testing.T, []byte) bool, atLeast int, what string) {
	t.Helper()
	plain := 0
	for _, raw := range corpus {
		if compare(t, []byte(raw)) {
			plain++
		}
	}
	if plain < atLeast {
		t.Errorf("the plain path read %d of the %s, want the plain ones", plain, what)
	}
}

// comparePostedOutput fails t when plainPostedOutput reads raw otherwise
// than decodedPostedOutput; it reports whether the plain path read it.
func comparePostedOutput(t *testing.T, raw []byte) bool {
	t.Helper()
	out, isError, ok := plainPostedOutput(raw)
	if !ok {
		return false
	}
	want, wantError, err := decodedPostedOutput(raw)
	if err != nil || !reflect.DeepEqual(out, want) || isError != wantError {
		t.Errorf("%s: plain %v %v, decoded %v %v %v", raw, out, isError, want, wantError, err)
	}
	return true
}

// FuzzPostedOutput: whatever result an upstream answers, the plain path
// reads it as the decoder does, or leaves it to the decoder.
func FuzzPostedOutput(f *testing.F) {
	for _, raw := range postedResults {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { comparePostedOutput(t, raw) })
}

// TestCallHeader: the header of a call's POST is the one headers and Set
// give it, one member after the other, whatever the configured headers
// (one of them named as a call's own member, one not in canonical form)
// and whether the connection has a token or the call a trace context.
func TestCallHeader(t *testing.T) {
	for _, fixed := range []map[string]string{nil, {"x-tenant": "a", "Accept": "text/plain", "Mcp-Name": "other"}} {
		for _, auth := range []bool{false, true} {
			for _, tp := range []string{"", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"} {
				c := &mcpConn{}
				c.fixedHeaders.Store(&headerSet{m: fixed})
				if auth {
					c.auth = &tokenAuth{}
				}
				want := http.Header{}
				c.headers(want, "tok")
				if tp != "" {
					want.Set("Traceparent", tp)
				}
				want.Set("Content-Type", "application/json")
				want.Set("Accept", "application/json, text/event-stream")
				want.Set("Mcp-Method", "tools/call")
				want.Set("Mcp-Name", "echo")
				if got := c.callHeader("tok", tp, "echo"); !reflect.DeepEqual(got, want) {
					t.Errorf("fixed %v, auth %v, traceparent %q:\n got %v\nwant %v", fixed, auth, tp, got, want)
				}
			}
		}
	}
}

// answers are JSON-RPC messages an upstream may answer a call with.
var answers = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}]}}`,
	` { "result" : { } , "id" : "a" , "jsonrpc" : "2.0" } `,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m","data":{}}}`,
	`{"jsonrpc":"2.0","id":1,"error":null,"result":null}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`,
	`{"jsonrpc":"2.0","method":null}`,
	`{"jsonrpc":"2.0","method":"a\u00e9\ud83d\ude00"}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
	`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
	`{"jsonrpc":"2.0","ID":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"Result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":2}}`,
	`{"jsonrpc":"2.0","id":1,"error":"e"}`,
	`{"jsonrpc":"2.0","id":1,"method":3}`,
	`{"jsonrpc":"2.0","id":1,"result":{}`,
	`[{"id":1}]`,
	`{}`,
}

// TestPlainAnswer: plainAnswer reads what it reads as json.Unmarshal
// does, and leaves the rest to it.
func TestPlainAnswer(t *testing.T) {
	checkPlainPath(t, answers, comparePlainAnswer, 7, "messages")
}

// comparePlainAnswer fails t when plainAnswer reads raw otherwise than
// json.Unmarshal; it reports whether the plain path read it.
func comparePlainAnswer(t *testing.T, raw []byte) bool {
	t.Helper()
	got, ok := plainAnswer(raw)
	if !ok {
		return false
	}
	var want rpcAnswer
	if err := json.Unmarshal(raw, &want); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%s: plain %+v, json.Unmarshal %+v %v", raw, got, want, err)
	}
	return true
}

// FuzzPlainAnswer: whatever message an upstream answers, plainAnswer
// reads it as json.Unmarshal does, or leaves it to it.
func FuzzPlainAnswer(f *testing.F) {
	for _, raw := range answers {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { comparePlainAnswer(t, raw) })
}
