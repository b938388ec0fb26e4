package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/gateway/workflow"
)

// A REST call is one request: the retries of a refused call (408, 429,
// a 503 to an idempotent method or with Retry-After, a connection that
// could not be made) and of an idempotent method answered 5xx or left
// unanswered are the workflow engine's, by
// the capability's reliability (DefaultRESTRetries when it sets none; see
// config.Reliability), so that every attempt is recorded and none is made
// after a call that may have acted.
const maxBody = 4 << 20

// restConn is one rest connection.
type restConn struct {
	name   string
	cfg    config.Connection
	log    *slog.Logger
	getenv func(string) string
	client *http.Client
	// auth obtains the bearer token of each call (nil: none).
	auth   *tokenAuth
	tokens *Tokens
}

func newRESTConn(name string, c config.Connection, o *Options) *restConn {
	return &restConn{name: name, cfg: c, log: o.Logger.With("connection", name), getenv: o.Getenv,
		client: &http.Client{Transport: newTransport(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		auth:   newTokenAuth(name, c, o.Getenv), tokens: o.Tokens}
}

// restRunner runs rest executors.
type restRunner struct{ m *Manager }

// pathVar matches {name} in a path template.
var pathVar = regexp.MustCompile(`\{([^{}/]+)\}`)

// Run sends the request once: baseUrl + path, whose {name} segments are
// filled from the arguments, then the context, then the input (escaped as
// a path segment); query, headers and body resolved against the scope; the
// connection's headers (with ${NAME} read from the environment) first. The
// output is {status, body}: body is the answer parsed as JSON when it is
// JSON, else its text. 2xx succeed. The other answers are classified
// (restOutcome) for the engine, which retries only an unavailable one:
// 408, 429 and a 503 to an idempotent method or with Retry-After refuse
// the call before acting, and a connection that could not be made sent
// nothing. A request that cannot be built (a path variable no source
// holds, a URL that does not parse, a body that cannot be encoded) is a
// failure of this call: sending it again would fail the same way.
func (r restRunner) Run(ctx context.Context, x config.Executor, scope workflow.Scope) (map[string]any, error) {
	c, ok := r.m.rest[x.Connection]
	if !ok {
		return nil, noConnection(config.ExecutorREST, x.Connection)
	}
	var missingVar string
	path := pathVar.ReplaceAllStringFunc(x.Path, func(m string) string {
		name := m[1 : len(m)-1]
		for _, src := range []map[string]any{scope.Arguments, scope.Context, scope.Input} {
			if v, ok := src[name]; ok && v != nil {
				return url.PathEscape(argValues(v)[0])
			}
		}
		missingVar = name
		return ""
	})
	if missingVar != "" {
		return nil, notSent(c.name, "the path %s needs {%s}, which neither the arguments, the context nor the input hold", x.Path, missingVar)
	}
	target := strings.TrimRight(c.cfg.BaseURL, "/")
	if path != "" {
		target += "/" + strings.TrimLeft(path, "/")
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, notSent(c.name, "the URL of %s %s is not valid", x.Method, x.Path)
	}
	q := u.Query()
	if x.Query != nil {
		resolved, _ := workflow.Resolve(x.Query, scope).(map[string]any)
		for _, k := range sortedKeys(resolved) {
			if resolved[k] == nil {
				continue
			}
			for _, v := range argValues(resolved[k]) {
				q.Add(k, v)
			}
		}
	}
	u.RawQuery = q.Encode()
	header := http.Header{}
	for k, v := range c.cfg.Headers {
		s, missing := config.Interpolate(v, c.getenv)
		if len(missing) > 0 {
			c.log.Warn("rest connection header refers to unset environment variables", "header", k, "variables", missing)
		}
		header.Set(k, s)
	}
	for k, v := range x.Headers {
		if strings.HasPrefix(v, "$.") {
			header.Set(k, argValues(workflow.Resolve(v, scope))[0])
		} else {
			header.Set(k, v)
		}
	}
	var body []byte
	if x.Body != nil {
		body, err = json.Marshal(workflow.Resolve(x.Body, scope))
		if err != nil {
			return nil, notSent(c.name, "the body cannot be encoded: %v", err)
		}
		if header.Get("Content-Type") == "" {
			header.Set("Content-Type", "application/json")
		}
	}
	if header.Get("Accept") == "" {
		header.Set("Accept", "application/json")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout(x))
	defer cancel()
	if c.auth != nil {
		// The token first: a call that cannot have one is not sent.
		tok, err := c.tokens.token(ctx, c.auth)
		if err != nil {
			return nil, err
		}
		header.Set("Authorization", "Bearer "+tok)
		// An upstream that echoes the token (a debugging endpoint, an
		// error page) does not get it into the run, the record or the
		// audit.
		out, err := c.do(ctx, x.Method, u, header, body, x.Path)
		return scrub(out, tok), scrubError(err, tok)
	}
	return c.do(ctx, x.Method, u, header, body, x.Path)
}

// repeatable reports whether a request with this method may be sent again
// after a transport error (RFC 9110 idempotent methods).
func repeatable(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

func (c *restConn) do(ctx context.Context, method string, u *url.URL, header http.Header, body []byte, path string) (map[string]any, error) {
	what := method + " " + path
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, notSent(c.name, "%s: the request cannot be built: %s", what, transportReason(err))
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	req.Header = header.Clone()
	if tp := workflow.Traceparent(ctx); tp != "" && req.Header.Get("Traceparent") == "" {
		req.Header.Set("Traceparent", tp)
	}
	span := telemetry.StartHTTPClient(ctx, req, path)
	resp, err := c.client.Do(req)
	telemetry.EndHTTPClient(span, resp, err)
	if err != nil {
		if isDialError(err) {
			return nil, unavailable(config.ExecutorREST, c.name, "%s: cannot reach %s: %v", what, u.Host, transportReason(err))
		}
		return nil, &workflow.ExecutorError{Outcome: workflow.OutcomeUnknown, Kind: config.ExecutorREST, Connection: c.name,
			Message: fmt.Sprintf("%s: no answer: %v", what, transportReason(err)), Repeatable: repeatable(method)}
	}
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	st := resp.StatusCode
	if rerr != nil && st >= 200 && st < 300 {
		// The upstream said yes and the answer broke off: it acted, and
		// what it answered is lost.
		return nil, &workflow.ExecutorError{Outcome: workflow.OutcomeUnknown, Kind: config.ExecutorREST, Connection: c.name,
			Message: fmt.Sprintf("%s answered %d, then the answer broke off: %v", what, st, transportReason(rerr))}
	}
	out := map[string]any{"status": st}
	if v, ok := parseJSON(raw); ok {
		out["body"] = v
	} else {
		out["body"] = string(raw)
	}
	if st >= 200 && st < 300 {
		return out, nil
	}
	ra, hasRA := retryAfter(resp.Header.Get("Retry-After"))
	xe := &workflow.ExecutorError{Outcome: restOutcome(method, st, hasRA), Kind: config.ExecutorREST, Connection: c.name,
		Message: fmt.Sprintf("%s answered %d", what, st), Output: out, Repeatable: st >= 500 && repeatable(method)}
	if xe.Outcome == workflow.OutcomeUnavailable && ra > 0 {
		xe.RetryAfter = min(ra, config.MaxRetryAfter)
	}
	return nil, xe
}

// notSent is the error of a REST call whose request could not be built:
// nothing was sent, but sending it again would fail the same way (a
// configuration or argument error of this call), so it is failed, not
// unavailable, and neither retried nor handed to a fallback.
func notSent(conn, format string, args ...any) *workflow.ExecutorError {
	return &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorREST, Connection: conn, Message: fmt.Sprintf(format, args...)}
}

// restOutcome classifies an HTTP error status (retryAfter: the answer
// carries a valid Retry-After): 408 and 429 refuse the call before acting
// (unavailable, which the engine may retry). A 503 does too when the
// method is idempotent or the answer asks to be tried again later
// (Retry-After); a 503 to a POST or PATCH without it is failed, since
// proxies answer 503 when the upstream reset after the request was
// forwarded, and such a call is not repeated. A 502 or 504 to a method
// that may not be repeated leaves unknown whether the upstream behind the
// gateway acted; anything else is a failure the upstream answered.
func restOutcome(method string, status int, retryAfter bool) string {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests:
		return workflow.OutcomeUnavailable
	case http.StatusServiceUnavailable:
		if retryAfter || repeatable(method) {
			return workflow.OutcomeUnavailable
		}
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		if !repeatable(method) {
			return workflow.OutcomeUnknown
		}
	}
	return workflow.OutcomeFailed
}

// retryAfter reads a Retry-After header (RFC 9110 §10.2.3: seconds or an
// HTTP date): how long to wait (never negative) and whether it was valid.
func retryAfter(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		if n > math.MaxInt64/int(time.Second) {
			// Beyond what a Duration holds (about 292 years): as long as
			// can be said; the caller bounds it anyway.
			return math.MaxInt64, true
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// isDialError reports whether err happened before the request was sent
// (the connection could not be made).
func isDialError(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return true
	}
	var de *net.DNSError
	return errors.As(err, &de)
}

// transportReason words a transport error without the URL (which may
// carry a query the caller did not mean to show).
func transportReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return hostOnly(err.Error())
}
