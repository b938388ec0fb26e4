package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/restclient"
)

// retryAfter retries a request answered 429 after the Retry-After it
// names (at most 5 times, at most 10s each): the suite checks behaviour,
// not the target's rate limit, and may send more than a principal's burst.
type retryAfter struct{ base http.RoundTripper }

func withRetryAfter(c *http.Client) *http.Client {
	cp := *c
	base := cp.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cp.Transport = &retryAfter{base: base}
	return &cp
}

func (ra *retryAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := ra.base.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests || attempt == 5 || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		wait, perr := strconv.Atoi(resp.Header.Get("Retry-After"))
		if perr != nil || wait < 0 {
			wait = 1
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(time.Duration(min(wait, 10)) * time.Second):
		}
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// fetchResourceMetadata reads the target's protected resource metadata at
// the well-known URL under its base URL, where a gateway serving /v8 and
// /mcp under one resource identifier publishes it.
func fetchResourceMetadata(ctx context.Context, hc *http.Client, base string) (*restclient.ResourceMetadata, error) {
	c, err := restclient.New(base, &restclient.Options{HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	meta, err := c.ResourceMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("conformance: the target's protected resource metadata: %w", err)
	}
	return meta, nil
}

// newKey returns a fresh idempotency key (32 hex characters after a
// prefix): one logical mutation of one case.
func newKey() string {
	var b [16]byte
	rand.Read(b[:])
	return "conf-" + hex.EncodeToString(b[:])
}

// keyOfLength returns a fresh idempotency key of exactly n characters
// (16 <= n <= 128).
func keyOfLength(n int) string {
	k := newKey()
	for len(k) < n {
		k += newKey()
	}
	return k[:n]
}

// randomID returns an identifier nothing on the target can hold.
func randomID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// Tokens of the case.

// token returns a valid token of tenant with every scope.
func (t *T) token(tenant Tenant) string {
	return t.tokenWith(tenant, AllScopes()...)
}

// tokenWith returns a token of tenant with exactly scopes; the case is
// skipped when the token source has none.
func (t *T) tokenWith(tenant Tenant, scopes ...string) string {
	sorted := slices.Sorted(slices.Values(scopes))
	tok, err := t.r.token(t.ctx, tenant, sorted)
	if errors.Is(err, ErrNoToken) {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatalf("token of tenant %s: %v", tenant, err)
	}
	return tok
}

// tokenWithout returns a token of tenant A with every scope but scope.
func (t *T) tokenWithout(scope contracts.Scope) string {
	var scopes []string
	for _, s := range AllScopes() {
		if s != string(scope) {
			scopes = append(scopes, s)
		}
	}
	return t.tokenWith(TenantA, scopes...)
}

// forged returns a forged token; the case is skipped when the suite cannot
// sign for the target.
func (t *T) forged(f Forgery) string {
	fg, ok := t.r.tokens.(Forger)
	if !ok {
		t.Skipf("forged tokens need a signing key the target trusts: run with the suite's own issuer, or with --dev-data-dir against praxa serve --dev")
	}
	tok, err := fg.Forge(t.ctx, f)
	if err != nil {
		t.Fatalf("forge %s: %v", f, err)
	}
	return tok
}

// HTTP.

// request is one raw HTTP request.
type request struct {
	method string
	// path is appended verbatim to the base URL: it may hold a query and
	// escapes.
	path  string
	token string
	// header is added as given; "Content-Type" defaults to
	// application/json when a body is sent.
	header http.Header
	body   []byte
	// chunked sends the body without a Content-Length.
	chunked bool
}

// response is restclient's, so raw requests and tool calls read alike.
type response = restclient.Response

// do sends a raw request and reads the answer.
func (t *T) do(req request) *response {
	var rd io.Reader
	if req.body != nil {
		rd = bytes.NewReader(req.body)
		if req.chunked {
			rd = struct{ io.Reader }{rd} // hides the length
		}
	}
	hr, err := http.NewRequestWithContext(t.ctx, req.method, t.r.base+req.path, rd)
	if err != nil {
		t.Fatalf("build %s %s: %v", req.method, req.path, err)
	}
	for k, vs := range req.header {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	switch ct, given := req.header["Content-Type"]; {
	case given && len(ct) == 1 && ct[0] == "":
		hr.Header.Del("Content-Type") // a request sent without one
	case !given && req.body != nil:
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.token != "" {
		hr.Header.Set("Authorization", "Bearer "+req.token)
	}
	resp, err := t.r.http.Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", req.method, req.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		t.Fatalf("%s %s: read the answer: %v", req.method, req.path, err)
	}
	out := &response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/problem+json" {
		var p restclient.Problem
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("%s %s: the problem document does not parse: %v", req.method, req.path, err)
		}
		out.Problem = &p
	}
	return out
}

// post sends a JSON body to path with tok and, when key is not empty, an
// Idempotency-Key.
func (t *T) post(path, tok, key string, body any) *response {
	h := http.Header{}
	if key != "" {
		h.Set("Idempotency-Key", key)
	}
	return t.do(request{method: http.MethodPost, path: path, token: tok, header: h, body: mustJSON(t, body)})
}

// get sends a GET to path with tok.
func (t *T) get(path, tok string) *response {
	return t.do(request{method: http.MethodGet, path: path, token: tok})
}

// call sends one tool call as its REST operation, through restclient.
func (t *T) call(tok, tool string, args map[string]any) *response {
	c, err := restclient.New(t.r.base, &restclient.Options{HTTPClient: t.r.http, Token: restclient.StaticToken(tok)})
	if err != nil {
		t.Fatalf("%v", err)
	}
	resp, err := c.CallTool(t.ctx, tool, mustJSON(t, args))
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return resp
}

func mustJSON(t *T, v any) []byte {
	if b, ok := v.([]byte); ok {
		return b
	}
	if s, ok := v.(string); ok {
		return []byte(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

// object decodes a JSON object answer.
func (t *T) object(resp *response) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(resp.Body, &m); err != nil {
		t.Fatalf("the answer is not a JSON object (%d): %s", resp.Status, snippet(resp.Body))
	}
	return m
}

func snippet(b []byte) string {
	return truncate(strings.TrimSpace(string(b)), 300)
}

// describe names an answer in a reason.
func describe(resp *response) string {
	if resp.Problem != nil {
		return fmt.Sprintf("%d %s (%s)", resp.Status, resp.Problem.Code, truncate(resp.Problem.Detail, 200))
	}
	return fmt.Sprintf("%d %s", resp.Status, snippet(resp.Body))
}

// Checks.

// expectStatus fails unless the answer has one of the statuses.
func (t *T) expectStatus(what string, resp *response, statuses ...int) {
	if !slices.Contains(statuses, resp.Status) {
		t.Fatalf("%s: want HTTP %v, got %s", what, statuses, describe(resp))
	}
}

// expectProblem fails unless the answer is a problem document with status
// and code.
func (t *T) expectProblem(what string, resp *response, status int, code contracts.Code) {
	if resp.Status != status || resp.Problem == nil || resp.Problem.Code != code {
		t.Fatalf("%s: want %d %s as application/problem+json, got %s", what, status, code, describe(resp))
	}
}

// challenge is a parsed Bearer WWW-Authenticate challenge.
type challenge struct {
	scheme string
	params map[string]string
}

// parseChallenge reads the first challenge of a WWW-Authenticate value:
// a scheme, then comma-separated name=value pairs (values token or
// quoted-string).
func parseChallenge(v string) (challenge, bool) {
	v = strings.TrimSpace(v)
	scheme, rest, _ := strings.Cut(v, " ")
	c := challenge{scheme: scheme, params: map[string]string{}}
	if scheme == "" {
		return c, false
	}
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		name, after, ok := strings.Cut(rest, "=")
		if !ok {
			return c, false
		}
		name = strings.ToLower(strings.TrimSpace(name))
		after = strings.TrimSpace(after)
		var val string
		if strings.HasPrefix(after, `"`) {
			i := 1
			var b strings.Builder
			for ; i < len(after) && after[i] != '"'; i++ {
				if after[i] == '\\' && i+1 < len(after) {
					i++
				}
				b.WriteByte(after[i])
			}
			if i >= len(after) {
				return c, false
			}
			val, rest = b.String(), after[i+1:]
		} else {
			val, rest, _ = strings.Cut(after, ",")
			val = strings.TrimSpace(val)
			rest = "," + rest
		}
		c.params[name] = val
		rest = strings.TrimSpace(rest)
		if rest != "" && rest[0] != ',' {
			return c, false
		}
		rest = strings.TrimPrefix(rest, ",")
	}
	return c, true
}

// expectChallenge fails unless resp carries a Bearer challenge whose error
// parameter is errParam ("" meaning none) and, when scope is not empty,
// whose scope parameter lists it; it must name the resource metadata.
func (t *T) expectChallenge(what string, resp *response, errParam, scope string) challenge {
	raw := resp.Header.Get("WWW-Authenticate")
	c, ok := parseChallenge(raw)
	if !ok || !strings.EqualFold(c.scheme, "Bearer") {
		t.Fatalf("%s: want a Bearer WWW-Authenticate challenge, got %q", what, raw)
	}
	if got := c.params["error"]; got != errParam {
		if errParam == "" {
			t.Fatalf("%s: a request without credentials must get a challenge without error, got error=%q", what, got)
		}
		t.Fatalf("%s: want error=%q in the challenge, got %q", what, errParam, raw)
	}
	if scope != "" && !slices.Contains(strings.Fields(c.params["scope"]), scope) {
		t.Fatalf("%s: the challenge's scope must name %s, got %q", what, scope, raw)
	}
	if rm := c.params["resource_metadata"]; rm == "" {
		t.Fatalf("%s: the challenge names no resource_metadata: %q", what, raw)
	} else if u, err := url.Parse(rm); err != nil || !u.IsAbs() || u.Fragment != "" {
		t.Fatalf("%s: resource_metadata %q is not an absolute URL without fragment", what, rm)
	}
	return c
}
