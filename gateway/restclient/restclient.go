// Package restclient is a Go client of the Praxa REST API under /v8. It
// maps a contract tool call (tool name and JSON arguments) onto its REST
// operation exactly as the contract says: the path argument goes into the
// path, idempotencyKey into the Idempotency-Key header, the other arguments
// into the JSON body (POST) or the query string (GET). The MCP adapter's
// remote mode and the conformance suite use it.
//
// A client's token comes from a TokenSource. Renewing is one that obtains
// its tokens itself (from a command, or an OAuth token endpoint through
// golang.org/x/oauth2) and renews them before they expire and when the
// gateway refuses them, never switching principal; praxa mcp acts with
// it, on a local store as through a remote gateway.
//
// Of this module it imports only package contracts, so it can talk to any
// gateway that claims the contract.
package restclient

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/praxa/praxa/contracts"
)

// Client calls one gateway.
type Client struct {
	base  *url.URL
	http  *http.Client
	token TokenSource
	limit int64
}

// Options configure a Client. The zero value is usable.
type Options struct {
	// HTTPClient sends the requests (default http.DefaultClient).
	HTTPClient *http.Client
	// Token gives the bearer token of each request; nil sends none. A
	// Renewer renews a token the gateway refuses (see Renewer).
	Token TokenSource
	// MaxResponseBytes bounds a response body (default 8 MiB).
	MaxResponseBytes int64
}

// New returns a client of the gateway at baseURL (scheme, host and port;
// the contract's paths start with /v8).
func New(baseURL string, opts *Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("restclient: %q is not an http(s) base URL", baseURL)
	}
	o := cmp.Or(opts, &Options{})
	c := &Client{base: u, http: cmp.Or(o.HTTPClient, http.DefaultClient), token: o.Token, limit: 8 << 20}
	if o.MaxResponseBytes > 0 {
		c.limit = o.MaxResponseBytes
	}
	return c, nil
}

// BaseURL returns the gateway's base URL.
func (c *Client) BaseURL() string { return c.base.String() }

// Response is one answer of the gateway.
type Response struct {
	Status int
	Header http.Header
	// Body is the raw response body.
	Body []byte
	// Problem is the decoded problem of an error answer.
	Problem *Problem
	// RenewErr is why the token the gateway refused (401 invalid-token)
	// could not be renewed, when Options.Token is a Renewer; nil
	// otherwise.
	RenewErr error
}

// Replayed reports whether the answer was replayed for an idempotency key.
func (r *Response) Replayed() bool { return r.Header.Get("Idempotent-Replayed") == "true" }

// Problem is an RFC 9457 problem document with the gateway's members.
type Problem struct {
	Type      string                 `json:"type"`
	Title     string                 `json:"title"`
	Status    int                    `json:"status"`
	Detail    string                 `json:"detail"`
	Instance  string                 `json:"instance"`
	Code      contracts.Code         `json:"code"`
	RequestID string                 `json:"requestId"`
	Retryable bool                   `json:"retryable"`
	Hint      string                 `json:"hint"`
	Errors    []contracts.FieldError `json:"errors"`
	Links     []contracts.Link       `json:"links"`
	TraceID   string                 `json:"traceId"`

	// OperatorCommand is the command an operator runs instead, when the
	// answer names one.
	OperatorCommand string `json:"operatorCommand"`
}

// Err converts the problem to a contract error.
func (p *Problem) Err() *contracts.Error {
	return &contracts.Error{Code: p.Code, Message: p.Detail, Hint: p.Hint, OperatorCommand: p.OperatorCommand, Links: p.Links, Fields: p.Errors}
}

// ErrUnknownTool is returned for a tool the contract does not declare.
var ErrUnknownTool = errors.New("restclient: unknown tool")

// CallTool sends one tool call as its REST operation. args must be a JSON
// object (it may be empty). The error is non-nil only when no answer came
// back. Arguments that cannot be expressed as the REST request without
// changing them (not an object, duplicate members, a path argument or an
// idempotencyKey that is missing or not a string) give the *contracts.Error
// the gateway itself answers them with (INVALID_PARAMS naming the field,
// malformed-json, idempotency-key-invalid), and nothing is sent. An error
// answer is a Response with a Problem.
func (c *Client) CallTool(ctx context.Context, tool string, args json.RawMessage) (*Response, error) {
	t, ok := contracts.Lookup(tool)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTool, tool)
	}
	fields := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(args)) > 0 {
		if err := json.Unmarshal(args, &fields); err != nil || fields == nil {
			return nil, invalidArgument(contracts.CodeInvalidParams, "", "type", "must be of type object",
				"the arguments of "+tool+" must be a JSON object")
		}
		// Decoding into a map keeps the last of duplicate members; the
		// gateway refuses duplicates, so they must not be collapsed here.
		// (Nested values travel verbatim, for the gateway to check.)
		if name, dup := duplicateMember(args); dup {
			return nil, &contracts.Error{Code: contracts.CodeMalformedJSON, Message: fmt.Sprintf("duplicate member name %q", name)}
		}
	}
	path := t.Path
	if t.PathArgument != "" {
		var v string
		raw, ok := fields[t.PathArgument]
		if !ok {
			return nil, invalidArgument(contracts.CodeInvalidParams, "/"+t.PathArgument, "required", "is required",
				"the arguments do not match the input schema of "+tool)
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, invalidArgument(contracts.CodeInvalidParams, "/"+t.PathArgument, "type", "must be of type string",
				"the arguments do not match the input schema of "+tool)
		}
		if v == "" {
			return nil, invalidArgument(contracts.CodeInvalidParams, "/"+t.PathArgument, "minLength", "must be at least 1 characters long",
				"the arguments do not match the input schema of "+tool)
		}
		path = strings.Replace(path, "{"+t.PathArgument+"}", url.PathEscape(v), 1)
		delete(fields, t.PathArgument)
	}
	header := http.Header{}
	if raw, ok := fields["idempotencyKey"]; ok && t.Idempotency == contracts.IdempotencyRequired {
		var k string
		if err := json.Unmarshal(raw, &k); err != nil || k == "" {
			// Present but empty or not a string: malformed, not missing,
			// as the gateway answers it.
			return nil, contracts.CheckIdempotencyKey("\x00")
		}
		header.Set("Idempotency-Key", k)
		delete(fields, "idempotencyKey")
	}
	if t.Method == http.MethodGet {
		q := url.Values{}
		names := make([]string, 0, len(fields))
		for k := range fields {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			var s string
			if err := json.Unmarshal(fields[k], &s); err != nil {
				s = string(fields[k]) // numbers and booleans travel as their JSON text
			}
			q.Set(k, s)
		}
		return c.Do(ctx, http.MethodGet, path, q, header, nil)
	}
	body, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	return c.Do(ctx, t.Method, path, nil, header, body)
}

// duplicateMember reports the first member name that occurs twice in the
// JSON object obj.
func duplicateMember(obj []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		name, _ := tok.(string)
		if seen[name] {
			return name, true
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// invalidArgument is the refusal of arguments CallTool cannot send.
func invalidArgument(code contracts.Code, pointer, keyword, detail, message string) *contracts.Error {
	return &contracts.Error{Code: code, Message: message,
		Fields: []contracts.FieldError{{Pointer: pointer, Keyword: keyword, Detail: detail}}}
}

// Do sends one request to path (relative to the base URL, and already
// escaped: a path segment holding a value is escaped with url.PathEscape)
// and reads the answer. A non-nil body is sent as application/json. When
// the gateway refuses the token (401 invalid-token) and Options.Token is
// a Renewer, the token is renewed and the request sent once more with it;
// a renewal that fails leaves the refusal as the answer, with RenewErr.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, header http.Header, body []byte) (*Response, error) {
	u := *c.base
	u.RawPath = strings.TrimRight(c.base.EscapedPath(), "/") + path
	p, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return nil, fmt.Errorf("restclient: path %q: %w", path, err)
	}
	u.Path = p
	if query != nil {
		u.RawQuery = query.Encode()
	}
	var tok string
	if c.token != nil {
		if tok, err = c.token.Token(ctx); err != nil {
			return nil, fmt.Errorf("restclient: token: %w", err)
		}
	}
	resp, err := c.send(ctx, method, u.String(), path, header, body, tok)
	if err != nil || resp.Status != http.StatusUnauthorized || resp.Problem == nil || resp.Problem.Code != contracts.CodeInvalidToken {
		return resp, err
	}
	r, ok := c.token.(Renewer)
	if !ok || tok == "" {
		return resp, nil
	}
	fresh, rerr := r.Renew(ctx, tok)
	if rerr != nil {
		resp.RenewErr = rerr
		return resp, nil
	}
	return c.send(ctx, method, u.String(), path, header, body, fresh)
}

// send sends one request with the bearer token tok (none when empty) and
// reads the answer.
func (c *Client) send(ctx context.Context, method, target, path string, header http.Header, body []byte, tok string) (*Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, fmt.Errorf("restclient: %w", err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("restclient: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.limit+1))
	if err != nil {
		return nil, fmt.Errorf("restclient: %s %s: %w", method, path, err)
	}
	if int64(len(data)) > c.limit {
		return nil, fmt.Errorf("restclient: %s %s: the answer exceeds %d bytes", method, path, c.limit)
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/problem+json" {
		var p Problem
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("restclient: %s %s: malformed problem: %w", method, path, err)
		}
		out.Problem = &p
	} else if resp.StatusCode >= 400 {
		out.Problem = &Problem{Status: resp.StatusCode, Code: codeForStatus(resp.StatusCode),
			Detail: fmt.Sprintf("the gateway answered %d without a problem document", resp.StatusCode)}
	}
	return out, nil
}

// codeForStatus names a code for an error answer that carries no problem.
func codeForStatus(status int) contracts.Code {
	switch status {
	case http.StatusUnauthorized:
		return contracts.CodeUnauthenticated
	case http.StatusForbidden:
		return contracts.CodeInsufficientScope
	case http.StatusNotFound:
		return contracts.CodeNotFound
	case http.StatusTooManyRequests:
		return contracts.CodeRateLimited
	case http.StatusGatewayTimeout:
		return contracts.CodeOutcomeUnknown
	case http.StatusServiceUnavailable:
		return contracts.CodeUnavailable
	}
	return contracts.CodeInternal
}
