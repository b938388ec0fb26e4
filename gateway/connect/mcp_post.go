package connect

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/strictjson"
	"github.com/praxa/praxa/gateway/workflow"
)

// This file is the mcp executor's own tools/call over streamable HTTP at
// 2026-07-28 (DESIGN, "The MCP edge"; docs/decisions.md, "The proxied
// call's upstream hop"). At that revision a call is one self-contained
// POST: its _meta carries the protocol version, the client's info and
// capabilities, so no session state is read or written by it. go-sdk's
// client session sends it through a JSON-RPC connection (a request
// registered and awaited, the answer read on a goroutine of the
// transport, each message decoded twice with 32 KiB of scratch buffers);
// here the call is written as one body and its answer read in place, with
// the same headers and the same _meta as go-sdk's client sends, and its
// result converted once into the executor's output.
//
// The session (opened by go-sdk: server/discover, the tools/list the
// import makes, the standalone stream of a listening connection) stays
// go-sdk's; a call takes this path only when it would be sent the same
// way (post): the session negotiated 2026-07-28 and has no id, the URL is
// the session's endpoint, and the tool's input schema, as last listed,
// mirrors no argument in an Mcp-Param-* header. Every other call goes
// through the session as before.

// revisionStateless is the revision whose calls carry everything in their
// own _meta.
const revisionStateless = "2026-07-28"

// maxResultBytes bounds the answer of one call read on this path.
const maxResultBytes = 64 << 20

// maxResumes bounds how many times an event stream that ended before its
// answer is resumed (GET with Last-Event-ID), as go-sdk's client does.
const maxResumes = 2

// postable reports whether a call of tool on cs takes the POST path.
func (c *mcpConn) postable(cs *mcp.ClientSession, tool string) bool {
	if c.cfg.URL == "" || c.post == nil || cs.ID() != "" || !headerSafe(tool) {
		return false
	}
	if ir := cs.InitializeResult(); ir == nil || ir.ProtocolVersion != revisionStateless {
		return false
	}
	if h := c.headerTools.Load(); h != nil && (*h)[tool] {
		return false
	}
	return true
}

// headerSafe reports whether s can be sent as a header's value as it is
// (printable ASCII): go-sdk writes the tool's name in Mcp-Name unencoded.
func headerSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return s != ""
}

// noteTools records which of the listed tools mirror an argument in an
// Mcp-Param-* header (x-mcp-header in their input schema): go-sdk's client
// sends those headers for a tool its session has listed, so their calls
// stay on the session.
func (c *mcpConn) noteTools(tools []*mcp.Tool) {
	h := map[string]bool{}
	for _, t := range tools {
		raw, err := json.Marshal(t.InputSchema)
		if err != nil || bytes.Contains(raw, []byte(`"x-mcp-header"`)) {
			h[t.Name] = true
		}
	}
	c.headerTools.Store(&h)
}

// rpcAnswer is a JSON-RPC message of the call's answer.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// postCall sends one tools/call as its own POST and reads its answer. tok
// is the call's upstream token ("" when none); errors leave it out.
func (c *mcpConn) postCall(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, tok string) (map[string]any, bool, error) {
	id := c.nextID.Add(1)
	body, err := c.callBody(ctx, id, tool, args)
	if err != nil {
		return nil, false, &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorMCP, Connection: c.name,
			Message: fmt.Sprintf("tool %s: its arguments are not JSON: %v", tool, err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, false, unavailable(config.ExecutorMCP, c.name, "%s", c.reason(err))
	}
	req.Header = c.callHeader(tok, workflow.Traceparent(ctx), tool)
	resp, err := c.post.Do(req)
	if err != nil {
		return nil, false, c.broke(ctx, cs, tool, id, tok, err)
	}
	ans, err := c.answer(ctx, resp, id, tok)
	if err != nil {
		return nil, false, c.broke(ctx, cs, tool, id, tok, err)
	}
	if ans.Error != nil {
		return nil, false, &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorMCP, Connection: c.name,
			Message: fmt.Sprintf("tool %s: %s", tool, clip(ans.Error.Message, 500)),
			Output:  map[string]any{"error": map[string]any{"code": ans.Error.Code, "message": ans.Error.Message}}}
	}
	out, isError, err := postedOutput(ans.Result)
	var incomplete errIncomplete
	if errors.As(err, &incomplete) {
		return nil, false, &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorMCP, Connection: c.name,
			Message: fmt.Sprintf("tool %s answered %q: it asks its client for input (a multi round-trip call), which a proxied call cannot give", tool, clip(string(incomplete), 50))}
	}
	if err != nil {
		return nil, false, c.broke(ctx, cs, tool, id, tok, err)
	}
	return out, isError, nil
}

// headers sets the connection's configured headers and its bearer token
// on h, as the session's transport does for go-sdk's requests.
func (c *mcpConn) headers(h http.Header, tok string) {
	for k, v := range c.fixedHeaders.Load().m {
		h.Set(k, v)
	}
	if c.auth != nil {
		h.Set("Authorization", "Bearer "+tok)
	}
	h.Set("Mcp-Protocol-Version", revisionStateless)
}

// callHeader is the header of a call's POST: what headers sets, the call's
// W3C trace context (as in its _meta; "": none) and the members go-sdk's
// client sends with a tools/call, in one map whose values share one array.
func (c *mcpConn) callHeader(tok, traceparent, tool string) http.Header {
	fixed := c.fixedHeaders.Load().m
	h := make(http.Header, len(fixed)+7)
	for k, v := range fixed {
		h.Set(k, v)
	}
	vals := make([]string, 0, 7)
	set := func(k, v string) { // k in canonical form, as Set would write it
		vals = append(vals, v)
		h[k] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	if c.auth != nil {
		set("Authorization", "Bearer "+tok)
	}
	set("Mcp-Protocol-Version", revisionStateless)
	if traceparent != "" {
		set("Traceparent", traceparent)
	}
	set("Content-Type", "application/json")
	set("Accept", "application/json, text/event-stream")
	set("Mcp-Method", "tools/call")
	set("Mcp-Name", tool)
	return h
}

// callBody is the JSON-RPC request of a call, its _meta as go-sdk's client
// writes it at 2026-07-28 (and the call's W3C trace context).
func (c *mcpConn) callBody(ctx context.Context, id int64, tool string, args map[string]any) ([]byte, error) {
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	name, _ := json.Marshal(tool)
	b := make([]byte, 0, 160+len(c.metaJSON)+len(name)+len(argsJSON))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"_meta":{`...)
	b = append(b, c.metaJSON...)
	if tp := workflow.Traceparent(ctx); tp != "" {
		v, _ := json.Marshal(tp)
		b = append(b, `,"traceparent":`...)
		b = append(b, v...)
	}
	b = append(b, `},"name":`...)
	b = append(b, name...)
	b = append(b, `,"arguments":`...)
	b = append(b, argsJSON...)
	return append(b, "}}"...), nil
}

// clientMeta is the members of a call's _meta that name the client at
// 2026-07-28 (without braces), as go-sdk's client writes them for the
// mcp connections' client, which declares no capabilities (newMCPConn):
// go-sdk writes an empty ClientCapabilities as {} (TestPostPathMatchesSession
// compares what the upstream receives either way).
func clientMeta(info *mcp.Implementation) []byte {
	infoJSON, _ := json.Marshal(info)
	var b []byte
	b = append(b, `"io.modelcontextprotocol/clientCapabilities":{}`...)
	b = append(b, `,"io.modelcontextprotocol/clientInfo":`...)
	b = append(b, infoJSON...)
	b = append(b, `,"io.modelcontextprotocol/protocolVersion":"`+revisionStateless+`"`...)
	return b
}

// errNoAnswer is a stream that ended without the call's answer.
var errNoAnswer = errors.New("the stream ended without the call's answer")

// answer reads the call's answer from resp: one JSON body, or the event
// stream's message whose id is the call's (notifications before it are
// read past; a tools/list_changed is told as the session would tell it).
// A stream that ends before it is resumed from its last event id.
func (c *mcpConn) answer(ctx context.Context, resp *http.Response, id int64, tok string) (*rpcAnswer, error) {
	for resumes := 0; ; resumes++ {
		ans, lastEvent, err := c.read(resp, id)
		if !errors.Is(err, errNoAnswer) || lastEvent == "" || resumes == maxResumes {
			return ans, err
		}
		req, rerr := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.URL, nil)
		if rerr != nil {
			return nil, err
		}
		c.headers(req.Header, tok)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Last-Event-ID", lastEvent)
		if resp, rerr = c.post.Do(req); rerr != nil {
			return nil, fmt.Errorf("%w; resuming it: %w", err, rerr)
		}
	}
}

// read reads one response: the call's answer, or errNoAnswer with the
// last event id the stream carried.
func (c *mcpConn) read(resp *http.Response, id int64) (*rpcAnswer, string, error) {
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxResultBytes)
	want := strconv.AppendInt(nil, id, 10)
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode != http.StatusOK {
		// A refusal may carry the call's JSON-RPC error (go-sdk's server
		// answers an unknown tool 400 with one): it is the call's answer.
		text, _ := io.ReadAll(io.LimitReader(body, 64<<10))
		if strings.HasPrefix(ct, "application/json") {
			if ans, err := c.message(text, want); err == nil && ans != nil && ans.Error != nil {
				return ans, "", nil
			}
		}
		return nil, "", fmt.Errorf("the server answered %s: %s", resp.Status, clip(strings.TrimSpace(string(text)), 500))
	}
	switch {
	case strings.HasPrefix(ct, "application/json"):
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, "", err
		}
		ans, err := c.message(raw, want)
		if err == nil && ans == nil {
			err = fmt.Errorf("the server answered another message than the call's: %s", clip(string(raw), 200))
		}
		return ans, "", err
	case strings.HasPrefix(ct, "text/event-stream"):
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 0, 4096), maxResultBytes)
		var data []byte
		var lastID string
		for sc.Scan() {
			line := sc.Bytes()
			switch {
			case len(line) == 0: // the event's end
				if len(data) > 0 {
					ans, err := c.message(data, want)
					if err != nil || ans != nil {
						_, _ = io.Copy(io.Discard, body) // read to its end, so the connection is kept
						return ans, lastID, err
					}
				}
				data = data[:0]
			case bytes.HasPrefix(line, []byte("data:")):
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
			case bytes.HasPrefix(line, []byte("id:")):
				lastID = strings.TrimSpace(string(line[3:]))
			}
		}
		if err := sc.Err(); err != nil {
			return nil, lastID, err
		}
		return nil, lastID, errNoAnswer
	default:
		return nil, "", fmt.Errorf("the server answered with Content-Type %q, neither JSON nor an event stream", ct)
	}
}

// message decodes one JSON-RPC message of the answer: the call's answer
// (nil when it is another message), or an error when it cannot be one.
func (c *mcpConn) message(raw, want []byte) (*rpcAnswer, error) {
	m, ok := plainAnswer(raw)
	if !ok {
		m = rpcAnswer{}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("an answer that is not JSON-RPC: %w", err)
		}
	}
	switch {
	case m.Method == "notifications/tools/list_changed" && m.ID == nil:
		if c.notify != nil && c.imported {
			c.log.Info("mcp connection: the server's tool list changed; listing its tools again")
			c.notify(c.name)
		}
		return nil, nil
	case m.Method != "" && m.ID == nil: // another notification (progress, a log message)
		return nil, nil
	case m.Method != "":
		return nil, fmt.Errorf("the server sent a request (%s) in the call's stream, which %s does not allow", clip(m.Method, 100), revisionStateless)
	case bytes.Equal(bytes.TrimSpace(m.ID), want):
		if m.Error == nil && m.Result == nil {
			return nil, errors.New("an answer with neither a result nor an error")
		}
		return &m, nil
	default:
		return nil, nil // a message for another request
	}
}

// plainAnswer is json.Unmarshal of raw into an rpcAnswer for the message
// nearly every answer is, read in place: members named exactly id,
// method (a string), result and error, each at most once, beside members
// encoding/json would match to none of them. Its id and result are
// subslices of raw (json.Unmarshal copies them). ok is false, with the
// answer to be decoded as before, for anything else
// (TestPlainAnswer holds the two equal).
func plainAnswer(raw []byte) (m rpcAnswer, ok bool) {
	if !json.Valid(raw) || !opens(raw, '{') {
		return m, false
	}
	var seen [4]bool
	for name, v := range strictjson.Members(raw) {
		i, plain := matchMember(answerMembers[:], seen[:], name)
		if !plain {
			return m, false
		}
		switch i {
		case 0:
			m.ID = v
		case 1:
			if m.Method, ok = plainString(v); !ok {
				return m, false
			}
		case 2:
			m.Result = v
		case 3:
			if json.Unmarshal(v, &m.Error) != nil {
				return m, false
			}
		}
	}
	return m, true
}

// answerMembers are the members of a message rpcAnswer reads, in the
// order plainAnswer numbers them.
var answerMembers = [4]string{"id", "method", "result", "error"}

// broke is the error of a call whose answer was not had: unknown whether
// the tool ran. A call given up by its context tells the server, as
// go-sdk's client does (notifications/cancelled); any other failure marks
// the session dead, as the session's own failure does.
func (c *mcpConn) broke(ctx context.Context, cs *mcp.ClientSession, tool string, id int64, tok string, err error) error {
	if ctx.Err() != nil {
		go c.cancelled(id, tok, context.Cause(ctx))
		return &workflow.ExecutorError{Outcome: workflow.OutcomeUnknown, Kind: config.ExecutorMCP, Connection: c.name,
			Message: fmt.Sprintf("tool %s: no answer in time (%v)", tool, context.Cause(ctx))}
	}
	c.markDead(cs)
	return &workflow.ExecutorError{Outcome: workflow.OutcomeUnknown, Kind: config.ExecutorMCP, Connection: c.name,
		Message: fmt.Sprintf("tool %s: the connection broke during the call: %s", tool, redact(c.reason(err), secretList(tok)))}
}

// cancelled tells the server the call id was given up, within a second.
func (c *mcpConn) cancelled(id int64, tok string, why error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	reason, _ := json.Marshal(fmt.Sprint(why))
	b := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{`)
	b = append(b, c.metaJSON...)
	b = append(b, `},"requestId":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"reason":`...)
	b = append(b, reason...)
	b = append(b, "}}"...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(b))
	if err != nil {
		return
	}
	c.headers(req.Header, tok)
	if tp := workflow.Traceparent(ctx); tp != "" {
		req.Header.Set("Traceparent", tp) // as in its _meta
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", "notifications/cancelled")
	if resp, err := c.post.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
	}
}

// errIncomplete is a result whose resultType is not "complete": the tool
// asks its client for input (SEP-2322's multi round-trip), which the tool
// did not act on yet.
type errIncomplete string

func (e errIncomplete) Error() string { return "a result of type " + strconv.Quote(string(e)) }

// postedResult is a CallToolResult as the POST path reads it: its content
// items decoded as plain JSON values.
type postedResult struct {
	Content           []map[string]any `json:"content"`
	StructuredContent any              `json:"structuredContent"`
	IsError           bool             `json:"isError"`
	ResultType        string           `json:"resultType"`
}

// postedOutput converts a call's result into the executor's output, as
// resultOutput does for go-sdk's decoded result: a plain text item (type
// and text alone, nearly every item) is the map it decoded into; any other
// item goes through go-sdk's own decoding and resultOutput, so that it
// reads the same either way.
func postedOutput(raw json.RawMessage) (map[string]any, bool, error) {
	if out, isError, ok := plainPostedOutput(raw); ok {
		return out, isError, nil
	}
	return decodedPostedOutput(raw)
}

// plainPostedOutput is postedOutput for the result nearly every tool
// answers, read in place without decoding it through reflection: an
// object whose members are content (an array of plain text items, each
// exactly {"type":"text","text":...}), structuredContent, isError (true or
// false), resultType ("complete" or "") and members whose names
// encoding/json would match to none of these (it matches names without
// regard to case). ok is false, with nothing read, for anything else,
// which decodedPostedOutput reads as before: the output is then the same
// either way (TestPostedOutputPlain holds the two to it).
func plainPostedOutput(raw json.RawMessage) (out map[string]any, isError, ok bool) {
	if !json.Valid(raw) || !opens(raw, '{') {
		return nil, false, false
	}
	var content, structured json.RawMessage
	var seen [4]bool
	for name, v := range strictjson.Members(raw) {
		i, plain := matchMember(postedMembers[:], seen[:], name)
		if !plain {
			return nil, false, false
		}
		switch i {
		case 0:
			content = v
		case 1:
			structured = v
		case 2:
			switch string(v) {
			case "true":
				isError = true
			case "false":
			default:
				return nil, false, false
			}
		case 3:
			if t, ok := plainString(v); !ok || t != "" && t != "complete" {
				return nil, false, false
			}
		}
	}
	if !seen[0] || !opens(content, '[') {
		return nil, false, false
	}
	items := make([]any, 0, 1)
	var texts []string
	for item := range strictjson.Elements(content) {
		text, ok := plainTextItem(item)
		if !ok {
			return nil, false, false
		}
		texts = append(texts, text)
		items = append(items, map[string]any{"type": "text", "text": text})
	}
	out = map[string]any{"content": items, "text": strings.Join(texts, "\n")}
	if structured != nil {
		var v any
		if json.Unmarshal(structured, &v) != nil {
			return nil, false, false
		}
		if v != nil {
			out["structuredContent"] = v
		}
	}
	return out, isError, true
}

// matchMember finds the member name of an object among the members a
// struct reads (named exactly, as its fields' tags name them), as
// encoding/json matches it: its index, marked in seen, or -1 for a member
// of no field. plain is false when encoding/json's reading is not this
// simple one: a name that matches a field only without regard to case,
// or one seen before (encoding/json keeps the last).
func matchMember(members []string, seen []bool, name []byte) (i int, plain bool) {
	i = slices.Index(members, string(name))
	if i < 0 {
		for _, m := range members {
			if strings.EqualFold(m, string(name)) {
				return -1, false
			}
		}
		return -1, true
	}
	if seen[i] {
		return i, false
	}
	seen[i] = true
	return i, true
}

// postedMembers are the members of a result postedResult reads, in the
// order plainPostedOutput numbers them.
var postedMembers = [4]string{"content", "structuredContent", "isError", "resultType"}

// plainTextItem reads item, a content item of text json.Valid accepted,
// when it is exactly {"type":"text","text":T}: T as encoding/json decodes it.
func plainTextItem(item []byte) (string, bool) {
	if !opens(item, '{') {
		return "", false
	}
	var text string
	var typed, texted bool
	n := 0
	for name, v := range strictjson.Members(item) {
		n++
		switch string(name) {
		case "type":
			typed = string(v) == `"text"`
		case "text":
			text, texted = plainString(v)
		}
	}
	return text, n == 2 && typed && texted
}

// plainString is a JSON string of text json.Valid accepted, as
// encoding/json decodes it (with invalid UTF-8 replaced).
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if s := v[1 : len(v)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s), true
	}
	var s string
	return s, json.Unmarshal(v, &s) == nil
}

// opens reports whether the JSON text v begins with c.
func opens(v []byte, c byte) bool {
	v = bytes.TrimLeft(v, " \t\r\n")
	return len(v) > 0 && v[0] == c
}

// decodedPostedOutput is postedOutput for any result.
func decodedPostedOutput(raw json.RawMessage) (map[string]any, bool, error) {
	var r postedResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, false, fmt.Errorf("a result that is not a tool's: %w", err)
	}
	if r.ResultType != "" && r.ResultType != "complete" {
		return nil, false, errIncomplete(r.ResultType)
	}
	content := make([]any, 0, len(r.Content))
	var texts []string
	for _, item := range r.Content {
		if text, ok := item["text"].(string); ok && len(item) == 2 && item["type"] == "text" {
			texts = append(texts, text)
			content = append(content, item)
			continue
		}
		itemJSON, err := json.Marshal(item)
		if err != nil {
			return nil, false, err
		}
		var one mcp.CallToolResult
		if err := json.Unmarshal([]byte(`{"content":[`+string(itemJSON)+`]}`), &one); err != nil {
			return nil, false, fmt.Errorf("a result that is not a tool's: %w", err)
		}
		o := resultOutput(&one)
		content = append(content, o["content"].([]any)...)
		if t, ok := one.Content[0].(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	out := map[string]any{"content": content, "text": strings.Join(texts, "\n")}
	if r.StructuredContent != nil {
		out["structuredContent"] = r.StructuredContent
	}
	return out, r.IsError, nil
}
