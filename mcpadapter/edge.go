package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
)

// This file is /mcp's edge around the SDK's streamable handler, which it
// does not fork: it changes the shape of two kinds of answers and decides
// nothing itself.
//
//   - The SDK refuses some requests in text/plain (before 2026-07-28 an
//     unknown method "JSON RPC not handled", a batch, an unsupported
//     MCP-Protocol-Version, a body that is not JSON). The edge answers the
//     same status with a JSON-RPC error object instead, at every revision:
//     application/json, the request's id when it has one, null otherwise.
//   - A tools/call the service refuses for want of a scope answers HTTP 403
//     with WWW-Authenticate: Bearer error="insufficient_scope", scope="…"
//     (MCP authorization, scope challenge handling), and a JSON-RPC error
//     whose data is the refusal's envelope, instead of 200 with isError.

// RPCInsufficientScope is the JSON-RPC error code of a tools/call refused
// with HTTP 403 for want of a scope: an implementation-defined server error
// (JSON-RPC reserves -32000 to -32099 for them; the go-sdk takes -32001 to
// -32005 and MCP -32002, -32020 to -32022 and -32042). Its data is the
// seeds/000 envelope of the refusal, links and traceId included.
const RPCInsufficientScope = -32030

// notHandled starts the message of the SDK's refusal of a method it does
// not serve (its jsonrpc2.ErrNotHandled, which is internal).
const notHandled = "JSON RPC not handled"

// maxPeek bounds how much of a refused request's body the edge reads to
// find its id.
const maxPeek = 1 << 20

// rpcEdge wraps the SDK's handler.
type rpcEdge struct {
	next http.Handler
	// params returns the x-mcp-header bindings of the tool of that name
	// (none for a tool the server does not register).
	params func(name string) []paramBinding
}

func (e rpcEdge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if v := r.Header.Get(headerProtocolVersion); r.Method == http.MethodPost && v >= revisionHeaders &&
		slices.Contains(supportedVersions, v) {
		var refused bool
		if r, refused = e.checkHeaders(w, r); refused {
			return
		}
	}
	ew := &edgeWriter{ResponseWriter: w, req: r}
	if r.Body != nil {
		ew.body = &teeBody{rc: r.Body}
		if n := r.ContentLength; n > 0 && n <= maxPeek {
			ew.body.seen.Grow(int(n))
		}
		r.Body = ew.body
	}
	ctx := context.WithValue(r.Context(), refusalKey{}, &ew.refusal)
	e.next.ServeHTTP(ew, r.WithContext(ctx))
	ew.finish()
}

// checkHeaders checks the headers of a request at 2026-07-28 or later that
// mirror its body, where the SDK does not (headers.go): a refusal is
// answered here (refused true); otherwise the request goes on, with
// Mcp-Name decoded when it came Base64-encoded.
func (e rpcEdge) checkHeaders(w http.ResponseWriter, r *http.Request) (_ *http.Request, refused bool) {
	name, mm := checkStandardHeaders(r.Header)
	if mm == nil && e.params != nil && r.Header.Get(headerMethod) == "tools/call" {
		if bindings := e.params(name); len(bindings) > 0 {
			// A body the SDK would refuse as too large, or could not read,
			// is left to it.
			if body, whole, err := readBody(r, mcp.DefaultMaxRequestBodyBytes); err == nil && whole {
				mm = checkParamHeaders(r.Header, body, name, bindings)
			}
		}
	}
	if mm != nil {
		body, _, _ := readBody(r, maxPeek)
		writeRPCError(w, http.StatusBadRequest, requestID(body), mm.rpcError())
		return r, true
	}
	if vs := r.Header.Values(headerName); len(vs) == 1 && vs[0] != name {
		r = r.Clone(r.Context())
		r.Header.Set(headerName, name)
	}
	return r, false
}

// refusalKey carries, in a tool handler's context, where the handler
// leaves a refusal for want of a scope (an *atomic.Pointer[scopeRefusal]).
type refusalKey struct{}

// scopeRefusal is a tools/call answer the edge turns into a 403.
type scopeRefusal struct {
	challenge string
	message   string
	envelope  json.RawMessage
}

// noteRefusal leaves an insufficient-scope refusal for the edge, when the
// call came over HTTP and the transport can challenge; over stdio (no
// edge, no step-up) the tool error stands alone.
func noteRefusal(ctx context.Context, res *mcp.CallToolResult, err *contracts.Error) {
	if err == nil || err.Code != contracts.CodeInsufficientScope {
		return
	}
	slot, ok := ctx.Value(refusalKey{}).(*atomic.Pointer[scopeRefusal])
	if !ok {
		return
	}
	challenge, ok := auth.ChallengeFrom(ctx)
	if !ok {
		return
	}
	var env json.RawMessage
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			env = json.RawMessage(tc.Text)
			break
		}
	}
	slot.Store(&scopeRefusal{challenge: challenge(gateway.RequiredScopes(err)), message: err.Message, envelope: env})
}

// teeBody keeps what the SDK reads of the request body (up to maxPeek), so
// that a refusal can name the request's id.
type teeBody struct {
	rc   io.ReadCloser
	seen bytes.Buffer
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if room := maxPeek - t.seen.Len(); room > 0 {
		t.seen.Write(p[:min(n, room)])
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

// edgeWriter passes the SDK's answer through, except a text/plain refusal
// (rewritten as a JSON-RPC error) and the answer of a tools/call refused
// for want of a scope (answered 403 instead).
type edgeWriter struct {
	http.ResponseWriter
	req     *http.Request
	body    *teeBody
	refusal atomic.Pointer[scopeRefusal]

	state  edgeState
	status int
	text   bytes.Buffer
}

type edgeState uint8

const (
	undecided edgeState = iota
	passing             // the SDK's answer goes through
	rewriting           // a text/plain refusal, kept to rewrite at the end
	replaced            // the edge answered; the SDK's writes are dropped
)

func (w *edgeWriter) WriteHeader(code int) {
	if w.state != undecided {
		if w.state == passing {
			w.ResponseWriter.WriteHeader(code)
		}
		return
	}
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.state, w.status = rewriting, code
		return
	}
	if code == http.StatusOK {
		if ref := w.refusal.Load(); ref != nil {
			if id, ok := w.singleCall(); ok {
				w.state = replaced
				h := w.Header()
				h.Del("Connection")
				h.Set("Cache-Control", "no-store")
				h.Set("WWW-Authenticate", ref.challenge)
				writeRPCError(w.ResponseWriter, http.StatusForbidden, id,
					&contracts.RPCError{Code: RPCInsufficientScope, Message: ref.message, Data: ref.envelope})
				return
			}
		}
	}
	w.state = passing
	w.ResponseWriter.WriteHeader(code)
}

func (w *edgeWriter) Write(b []byte) (int, error) {
	if w.state == undecided {
		w.WriteHeader(http.StatusOK)
	}
	switch w.state {
	case rewriting:
		return w.text.Write(b)
	case replaced:
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher (the SSE answers flush).
func (w *edgeWriter) Flush() {
	if w.state == undecided {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.state == passing {
		f.Flush()
	}
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *edgeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the JSON-RPC error of a text/plain refusal.
func (w *edgeWriter) finish() {
	if w.state != rewriting {
		return
	}
	body := w.peek()
	rerr := &contracts.RPCError{Code: contracts.RPCInvalidRequest, Message: strings.TrimSpace(w.text.String())}
	version := w.req.Header.Get("Mcp-Protocol-Version")
	supported := mcp.SupportedProtocolVersions()
	switch {
	case w.status >= 500:
		rerr.Code = contracts.RPCInternalError
	case version != "" && !slices.Contains(supported, version):
		rerr.Code = mcp.CodeUnsupportedProtocolVersion
		rerr.Data, _ = json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: supported, Requested: version})
	case w.status == http.StatusBadRequest && len(bytes.TrimSpace(body)) > 0 && !json.Valid(body):
		rerr.Code = contracts.RPCParseError
	case strings.HasPrefix(rerr.Message, notHandled):
		rerr.Code = contracts.RPCMethodNotFound
	}
	writeRPCError(w.ResponseWriter, w.status, requestID(body), rerr)
}

// peek returns the request body as far as maxPeek, reading what the SDK
// left unread (it refuses some requests before reading them).
func (w *edgeWriter) peek() []byte {
	if w.body == nil {
		return nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(w.body, int64(maxPeek-w.body.seen.Len())))
	return w.body.seen.Bytes()
}

// singleCall reports whether the request is one tools/call, and its id.
func (w *edgeWriter) singleCall() (contracts.ID, bool) {
	if w.body == nil {
		return contracts.ID{}, false
	}
	var req contracts.Request
	if err := json.Unmarshal(w.body.seen.Bytes(), &req); err != nil || req.ID == nil || req.Method != "tools/call" {
		return contracts.ID{}, false
	}
	return *req.ID, true
}

// requestID is the id of body when it is one JSON-RPC request with a valid
// id; null otherwise (a batch, a notification, not JSON).
func requestID(body []byte) contracts.ID {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	var id contracts.ID
	if json.Unmarshal(body, &m) != nil || m.ID == nil || id.UnmarshalJSON(m.ID) != nil {
		return contracts.ID{}
	}
	return id
}

// writeRPCError writes a JSON-RPC error response with status.
func writeRPCError(w http.ResponseWriter, status int, id contracts.ID, rerr *contracts.RPCError) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(contracts.Response{JSONRPC: contracts.JSONRPCVersion, ID: id, Error: rerr})
}
