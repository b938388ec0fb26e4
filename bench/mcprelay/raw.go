package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawCaller calls the upstream's tool with one hand-written HTTP POST per
// call, replaying the headers and _meta that go-sdk's client sent on its
// first tools/call: the cheapest upstream call a relay can make (one
// json.Marshal of the request, one scan of the answer's SSE stream, one
// json.Unmarshal of the result), with none of a client session's
// machinery. With it, mcprelay -raw measures what a go-sdk server in front
// of the upstream costs when its upstream client costs next to nothing.
type rawCaller struct {
	hc       *http.Client
	endpoint string
	header   http.Header
	meta     json.RawMessage
	id       atomic.Int64
}

// recorder is an http.RoundTripper that keeps the first tools/call
// request it carries.
type recorder struct {
	next   http.RoundTripper
	mu     sync.Mutex
	header http.Header
	body   []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Method == http.MethodPost {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		if bytes.Contains(b, []byte(`"tools/call"`)) {
			r.mu.Lock()
			if r.header == nil {
				r.header, r.body = req.Header.Clone(), b
			}
			r.mu.Unlock()
		}
	}
	return r.next.RoundTrip(req)
}

// newRawCaller makes one tools/call of tool with args through cs (whose
// HTTP client's transport is rec) and keeps what it sent.
func newRawCaller(ctx context.Context, cs *mcp.ClientSession, rec *recorder, hc *http.Client, endpoint, tool string, args any) (*rawCaller, error) {
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args}); err != nil {
		return nil, fmt.Errorf("first call: %w", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.header == nil {
		return nil, errors.New("first call: no tools/call request seen")
	}
	var sent struct {
		Params struct {
			Meta json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(rec.body, &sent); err != nil {
		return nil, fmt.Errorf("first call's body: %w", err)
	}
	h := rec.header.Clone()
	h.Del("Content-Length")
	return &rawCaller{hc: hc, endpoint: endpoint, header: h, meta: sent.Params.Meta}, nil
}

// call sends one tools/call of tool with args and decodes its result.
func (c *rawCaller) call(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	type params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Meta      json.RawMessage `json:"_meta,omitempty"`
	}
	body, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  params `json:"params"`
	}{"2.0", c.id.Add(1), "tools/call", params{tool, args, c.meta}})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = c.header.Clone()
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("upstream answered %s: %s", resp.Status, b)
	}
	data, err := firstMessage(resp)
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result *mcp.CallToolResult `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return nil, err
	}
	if msg.Error != nil {
		return nil, errors.New(msg.Error.Message)
	}
	if msg.Result == nil {
		return nil, errors.New("upstream answered no result")
	}
	return msg.Result, nil
}

// firstMessage is the JSON-RPC response of an answer: its body, or the
// data of the first SSE event that carries a response (an "id" and a
// "result" or "error").
func firstMessage(resp *http.Response) ([]byte, error) {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return io.ReadAll(resp.Body)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		case len(line) == 0 && len(data) > 0:
			if bytes.Contains(data, []byte(`"result"`)) || bytes.Contains(data, []byte(`"error"`)) {
				return data, nil
			}
			data = data[:0]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(data) > 0 {
		return data, nil
	}
	return nil, errors.New("upstream's stream ended without a response")
}
