package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/telemetry"
)

// This file is /mcp's edge around the SDK's streamable handler, which it
// does not fork. It reads every POST body itself, once, before the SDK:
//
//   - within the gateway's one body limit (server.limits.maxBodyBytes, as
//     on /v8): a larger body answers HTTP 413, a JSON-RPC invalid request
//     (-32600) with a null id, and nothing runs;
//   - a JSON body strictly (ParseEnvelope): text that is not JSON or not
//     UTF-8 answers HTTP 400 and a parse error (-32700), a message with a
//     member named twice, an id too long or of the wrong type, a jsonrpc
//     other than "2.0" or a method that is not a string an invalid request
//     (-32600); the SDK sees only what passed.
//
// Otherwise it changes the shape of two kinds of answers and decides
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

// rpcEdge wraps the SDK's handler.
type rpcEdge struct {
	next http.Handler
	// params returns the x-mcp-header bindings of the tool of that name
	// (none for a tool the server does not register).
	params func(name string) []paramBinding
	// maxBody bounds a request body (server.limits.maxBodyBytes).
	maxBody int64
	// stateless, when set, answers the calls it takes itself, without
	// the SDK's per-request session (stateless.go).
	stateless *statelessPath
}

func (e rpcEdge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ew := &edgeWriter{ResponseWriter: w}
	if r.Method == http.MethodPost && r.Body != nil && r.Body != http.NoBody {
		body, ok := e.readBody(w, r)
		if !ok {
			return
		}
		ew.body = body
		r.Body = io.NopCloser(bytes.NewReader(body))
		// The SDK parses a body only under this media type (it answers
		// 415 to any other), and answers an empty one itself.
		if isJSON(r.Header.Get("Content-Type")) && len(bytes.TrimSpace(body)) > 0 {
			msg, rerr := ParseEnvelope(body)
			if rerr != nil {
				writeRPCError(w, http.StatusBadRequest, idOf(msg), rerr)
				return
			}
			ew.msg = msg
			ew.env = &ew.msg
		}
	}
	if v := r.Header.Get(headerProtocolVersion); r.Method == http.MethodPost && v >= revisionHeaders &&
		slices.Contains(supportedVersions, v) {
		var refused bool
		if r, refused = e.checkHeaders(w, r, ew.body, ew.env); refused {
			return
		}
	}
	ew.req = r
	ctx := context.WithValue(r.Context(), refusalKey{}, &ew.refusal)
	if telemetry.Tracing() && ew.env != nil && ew.env.ID != nil && len(ew.env.Batch) == 0 {
		// The MCP server span names the request's JSON-RPC id (traceCall).
		ctx = context.WithValue(ctx, rpcIDKey{}, ew.env.ID.String())
	}
	if e.stateless != nil && ew.env != nil {
		if call, ok := e.stateless.take(r, ew.env); ok {
			e.stateless.serve(w, r.WithContext(ctx), call, &ew.refusal)
			return
		}
	}
	e.next.ServeHTTP(ew, r.WithContext(ctx))
	ew.finish()
}

// readBody reads a request's body within the body limit; beyond it, or
// when the body cannot be read, it answers (ok false).
func (e rpcEdge) readBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	var err error
	switch n := r.ContentLength; {
	case n > e.maxBody:
	case n >= 0:
		// The server ends the body at its Content-Length: read it into
		// a buffer of that size.
		body = make([]byte, n)
		if _, err = io.ReadFull(r.Body, body); err == nil {
			return body, true
		}
	default:
		if body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, e.maxBody)); err == nil {
			return body, true
		}
	}
	if mbe := (*http.MaxBytesError)(nil); err == nil || errors.As(err, &mbe) {
		writeRPCError(w, http.StatusRequestEntityTooLarge, contracts.ID{}, &contracts.RPCError{Code: contracts.RPCInvalidRequest,
			Message: fmt.Sprintf("the body exceeds %d bytes (the gateway's server.limits.maxBodyBytes)", e.maxBody)})
	} else {
		writeRPCError(w, http.StatusBadRequest, contracts.ID{},
			&contracts.RPCError{Code: contracts.RPCInvalidRequest, Message: "failed to read body"})
	}
	return nil, false
}

// isJSON reports whether a Content-Type is application/json, parameters
// aside, as the SDK reads it.
func isJSON(ct string) bool {
	if ct == "application/json" {
		return true // the usual header, without parsing it
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "application/json"
}

// idOf is the id a refusal of env names: its own, or null.
func idOf(env Envelope) contracts.ID {
	if env.ID == nil {
		return contracts.ID{}
	}
	return *env.ID
}

// refusedID is the id a refusal names: the message's as the edge parsed
// it (env), or, for a body it did not parse, as requestID reads it.
func refusedID(body []byte, env *Envelope) contracts.ID {
	if env != nil {
		return idOf(*env)
	}
	return requestID(body)
}

// checkHeaders checks the headers of a request at 2026-07-28 or later that
// mirror its body, where the SDK does not (headers.go), against the body
// as the edge read it (env nil: a body the SDK refuses): a refusal is
// answered here (refused true); otherwise the request goes on, with
// Mcp-Name decoded when it came Base64-encoded.
func (e rpcEdge) checkHeaders(w http.ResponseWriter, r *http.Request, body []byte, env *Envelope) (_ *http.Request, refused bool) {
	name, mm := checkStandardHeaders(r.Header)
	if mm == nil && e.params != nil && env != nil && r.Header.Get(headerMethod) == "tools/call" {
		if bindings := e.params(name); len(bindings) > 0 {
			mm = checkParamHeaders(r.Header, env, name, bindings)
		}
	}
	if mm != nil {
		writeRPCError(w, http.StatusBadRequest, refusedID(body, env), mm.rpcError())
		return r, true
	}
	if vs := r.Header.Values(headerName); len(vs) == 1 && vs[0] != name {
		r = r.Clone(r.Context())
		r.Header.Set(headerName, name)
	}
	return r, false
}

// writeScopeChallenge answers the tools/call id refused for want of a
// scope: HTTP 403, the scope challenge, and the refusal as a JSON-RPC error
// whose data is its envelope.
func writeScopeChallenge(w http.ResponseWriter, id contracts.ID, ref *scopeRefusal) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("WWW-Authenticate", ref.challenge)
	writeRPCError(w, http.StatusForbidden, id, &contracts.RPCError{Code: RPCInsufficientScope, Message: ref.message, Data: ref.envelope})
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

// edgeWriter passes the SDK's answer through, except a text/plain refusal
// (rewritten as a JSON-RPC error) and the answer of a tools/call refused
// for want of a scope (answered 403 instead).
type edgeWriter struct {
	http.ResponseWriter
	req *http.Request
	// body is the request's body as the edge read it (nil: not a POST);
	// env the message in it (msg), when the edge parsed it.
	body    []byte
	env     *Envelope
	msg     Envelope
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
				w.Header().Del("Connection")
				writeScopeChallenge(w.ResponseWriter, id, ref)
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
	body := w.body
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
	writeRPCError(w.ResponseWriter, w.status, refusedID(body, w.env), rerr)
}

// singleCall reports whether the request is one tools/call, and its id.
func (w *edgeWriter) singleCall() (contracts.ID, bool) {
	if w.env == nil || w.env.ID == nil || w.env.Method != "tools/call" {
		return contracts.ID{}, false
	}
	return *w.env.ID, true
}

// requestID is the id of body, a body the edge did not parse (one the SDK
// refuses unread, under another media type), when it is one JSON-RPC
// request with a valid id within MaxIDBytes; null otherwise (a batch, a
// notification, not JSON, too long an id, one that is not UTF-8).
func requestID(body []byte) contracts.ID {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || m.ID == nil || !utf8.Valid(m.ID) {
		return contracts.ID{}
	}
	id, rerr := parseID(bytes.TrimSpace(m.ID))
	if rerr != nil {
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
