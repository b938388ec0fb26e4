package gatewaytest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/praxa/praxa/internal/testkit"
)

// Client sends requests to a gateway over HTTP, as a test's client would:
// net/http only, every answer read whole. The zero value is not usable;
// Gateway.REST and NewClient make one.
type Client struct {
	// URL is the base URL request paths are relative to.
	URL string
	// HTTP sends the requests.
	HTTP *http.Client
}

// NewClient is a Client for the server at url (a praxa serve child
// process, a server the test started), sending with hc (nil:
// http.DefaultClient).
func NewClient(url string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{URL: strings.TrimRight(url, "/"), HTTP: hc}
}

// REST is a Client for this gateway's HTTP server.
func (g *Gateway) REST() *Client { return &Client{URL: g.URL, HTTP: g.Client} }

// Response is an HTTP answer with its body read.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Header holds the answer's headers.
	Header http.Header
	// Body is the whole body.
	Body []byte
}

// String is the status and the body, for failure messages.
func (r *Response) String() string { return strconv.Itoa(r.Status) + " " + string(r.Body) }

// Object decodes the body as a JSON object, numbers as json.Number (what
// the contract validators and a verbatim re-send expect); it fails the test
// unless the body is one.
func (r *Response) Object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := DecodeJSON(r.Body, &m); err != nil || m == nil {
		t.Fatalf("answer %d is not a JSON object: %v\n%s", r.Status, err, r.Body)
	}
	return m
}

// TraceID is the W3C trace id the gateway answered under (the trace id of
// its Traceparent header); it fails the test when the answer has no valid
// Traceparent.
func (r *Response) TraceID(t testing.TB) string {
	t.Helper()
	parts := strings.Split(r.Header.Get("Traceparent"), "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		t.Fatalf("no valid Traceparent in the answer: %q", r.Header.Get("Traceparent"))
	}
	return parts[1]
}

// DecodeJSON decodes one JSON value of b into v, numbers as json.Number
// where v holds them as any (testkit.DecodeJSON, for the tests that import
// gatewaytest).
func DecodeJSON(b []byte, v any) error { return testkit.DecodeJSON(b, v) }

// A RequestOption edits a request before it is sent.
type RequestOption func(*http.Request)

// Bearer sends token as the bearer credential.
func Bearer(token string) RequestOption {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

// Header adds the header name: value.
func Header(name, value string) RequestOption {
	return func(r *http.Request) { r.Header.Add(name, value) }
}

// IdempotencyKey sends key as the Idempotency-Key header.
func IdempotencyKey(key string) RequestOption { return Header("Idempotency-Key", key) }

// ContentType sets the Content-Type header to ct; "" removes it.
func ContentType(ct string) RequestOption {
	return func(r *http.Request) {
		if ct == "" {
			r.Header.Del("Content-Type")
		} else {
			r.Header.Set("Content-Type", ct)
		}
	}
}

// InTrace sends the request as part of the W3C trace id (a Traceparent
// header).
func InTrace(id string) RequestOption {
	return Header("Traceparent", "00-"+id+"-00f067aa0ba902b7-01")
}

// KeyTrace returns the options that send key as the Idempotency-Key and
// the request in the trace id trace, leaving out each that is "".
func KeyTrace(key, trace string) []RequestOption {
	var opts []RequestOption
	if key != "" {
		opts = append(opts, IdempotencyKey(key))
	}
	if trace != "" {
		opts = append(opts, InTrace(trace))
	}
	return opts
}

// Chunked hides the body's length, so the server must count while reading.
func Chunked() RequestOption {
	return func(r *http.Request) { r.ContentLength = -1 }
}

// Send sends method path (a path and query relative to c.URL) with body
// and returns the answer. A string or []byte body is sent as it is (""
// sends none), any other non-nil body JSON-encoded. POST, PUT and PATCH
// requests, and every request with a body, are sent as application/json
// unless an option says otherwise. Unlike Do it may run on any goroutine.
func (c *Client) Send(method, path string, body any, opts ...RequestOption) (*Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		if b != "" {
			rd = strings.NewReader(b)
		}
	case []byte:
		rd = bytes.NewReader(b)
	case json.RawMessage:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, c.URL+path, rd)
	if err != nil {
		return nil, err
	}
	switch {
	case rd != nil, method == http.MethodPost, method == http.MethodPut, method == http.MethodPatch:
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	if req.ContentLength < 0 && rd != nil {
		req.Body = io.NopCloser(rd) // not a *strings.Reader: sent chunked
		req.GetBody = nil
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}, nil
}

// Do is Send, failing the test on an error.
func (c *Client) Do(t testing.TB, method, path string, body any, opts ...RequestOption) *Response {
	t.Helper()
	r, err := c.Send(method, path, body, opts...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// Get sends a GET of path.
func (c *Client) Get(t testing.TB, path string, opts ...RequestOption) *Response {
	t.Helper()
	return c.Do(t, http.MethodGet, path, nil, opts...)
}

// Post sends a POST of body (as Send takes it) to path.
func (c *Client) Post(t testing.TB, path string, body any, opts ...RequestOption) *Response {
	t.Helper()
	return c.Do(t, http.MethodPost, path, body, opts...)
}

// WantStatus fails the test unless r has status.
func WantStatus(t testing.TB, r *Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
}
