package connect

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/strictjson"
	"github.com/praxa/praxa/gateway/telemetry/tracing"
	"github.com/praxa/praxa/gateway/workflow"
)

// The backoff between two starts of an MCP connection.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 30 * time.Second
	// healthyAfter is how long a session must live for the backoff to
	// reset.
	healthyAfter = time.Minute
	// openTimeout bounds opening a session (start and handshake).
	openTimeout = 30 * time.Second
	// drainGrace is how long the answer of a streamable HTTP request may
	// go on being read after its call's context ended (see
	// drainTransport).
	drainGrace = 250 * time.Millisecond
	// maxIdlePerHost is how many kept-alive HTTP connections to one host
	// an mcp (URL) or rest connection keeps between calls. Calls overlap,
	// each holding its own HTTP connection while it runs (an mcp call
	// over streamable HTTP holds its POST until the result arrives), so
	// the pool must keep as many as the load overlaps: with the default
	// transport's 2, every call beyond the second in flight dialed a new
	// TCP connection and closed it afterwards.
	maxIdlePerHost = 64
)

// newTransport returns the HTTP transport of one connection: the default
// transport's settings (proxy from the environment, dial and TLS
// timeouts, HTTP/2), keeping up to maxIdlePerHost connections alive.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = maxIdlePerHost
	t.MaxIdleConnsPerHost = maxIdlePerHost
	return t
}

// mcpConn is one MCP connection: a session opened on first use and held.
// Every call goes through that one session, concurrently: go-sdk's client
// session does not serialize calls (each is written as it comes, over
// stdio one line under a short write lock, over streamable HTTP its own
// POST on its own HTTP connection, and the answers are matched by id), so
// one session serves any number of calls in flight. One session also
// keeps what a stateful upstream holds per session in one place, and one
// child process per stdio connection.
type mcpConn struct {
	name   string
	cfg    config.Connection
	log    *slog.Logger
	getenv func(string) string
	client *mcp.Client
	// transport carries the sessions of a URL connection (nil for a
	// child): kept across sessions, so that a reopened session reuses its
	// connections, and closed with the connection.
	transport *http.Transport
	// secrets are the configured values an error text must not carry
	// (see redact).
	secrets []string
	// auth obtains the bearer token of a URL connection's requests (nil:
	// none); bearer is the token its session's requests carry, set before
	// each call. A connection that acts as the caller (token-exchange)
	// holds no session of its own: callers holds one connection per
	// caller, each with its session.
	auth    *tokenAuth
	tokens  *Tokens
	bearer  atomic.Pointer[string]
	callers *callerSessions
	// notify is Options.ToolsChanged; imported says proxy.import lists
	// the connection (set by setup before any session opens): only then
	// is the server's tools/list_changed listened to, over streamable
	// HTTP on the standalone stream.
	notify   func(connection string)
	imported bool
	// The POST path of a call (mcp_post.go), for a URL connection: post
	// sends on the connection's transport; fixedHeaders are the
	// configured headers as the last dial interpolated them; headerTools
	// names the listed tools whose calls stay on the session; metaJSON is
	// the client's members of a call's _meta; nextID numbers its calls.
	post         *http.Client
	fixedHeaders atomic.Pointer[headerSet]
	headerTools  atomic.Pointer[map[string]bool]
	metaJSON     []byte
	nextID       atomic.Int64

	mu      sync.Mutex
	cs      *mcp.ClientSession
	cmd     *exec.Cmd
	opened  time.Time
	dead    bool
	closed  bool
	backoff time.Duration
	nextTry time.Time
	// opening is the open in progress, nil when none runs.
	opening *opening
	// starts counts the sessions opened (for tests and metrics).
	starts int
}

// opening is one open of a session (start or dial, and handshake). It runs
// on a goroutine of its own, so that a call waiting for it gives up when
// its own context ends while the open goes on, bounded by openTimeout:
// the session it opens is kept for the next call, its failure sets the
// backoff.
type opening struct {
	done   chan struct{} // closed once cs or err is set
	cancel context.CancelFunc
	cs     *mcp.ClientSession
	err    error
}

func newMCPConn(name string, c config.Connection, o *Options) *mcpConn {
	copts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	conn := &mcpConn{name: name, cfg: c, log: o.Logger.With("connection", name), getenv: o.Getenv,
		secrets: secretValues(c, o.Getenv), notify: o.ToolsChanged}
	if conn.notify != nil {
		// Told of a changed tool list (over stdio; over streamable HTTP on
		// the standalone stream, or subscriptions/listen at 2026-07-28), a
		// connection proxy.import lists tells the gateway, which lists
		// again.
		copts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
			if !conn.imported {
				return
			}
			conn.log.Info("mcp connection: the server's tool list changed; listing its tools again")
			conn.notify(name)
		}
	}
	info := &mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}
	conn.client = mcp.NewClient(info, copts)
	if c.URL != "" {
		conn.transport = newTransport()
		conn.post = &http.Client{Transport: conn.transport}
		conn.metaJSON = clientMeta(info)
		conn.auth, conn.tokens = newTokenAuth(name, c, o.Getenv), o.Tokens
		if conn.auth.perCaller() {
			conn.callers = newCallerSessions(conn, o)
		}
	}
	return conn
}

// reason words an error of the connection for a message: URLs reduced to
// their host, no configured URL query, header or env value, nor the
// upstream token its requests carry.
func (c *mcpConn) reason(err error) string {
	secrets := c.secrets
	if tok := c.bearer.Load(); tok != nil {
		secrets = secretList(append(slices.Clone(c.secrets), *tok)...)
	}
	return redact(withoutURLError(err), secrets)
}

// session returns the open session, opening it when there is none (after
// the backoff of failed starts). A call waits for the open no longer than
// its ctx allows: it then answers unavailable (nothing was sent) and the
// open goes on for the calls that follow.
func (c *mcpConn) session(ctx context.Context) (*mcp.ClientSession, error) {
	return c.sessionWithin(ctx, openTimeout)
}

// sessionWithin is session where an open it starts may take up to limit.
func (c *mcpConn) sessionWithin(ctx context.Context, limit time.Duration) (*mcp.ClientSession, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, unavailable(config.ExecutorMCP, c.name, "the gateway is shutting down")
		}
		if c.cs != nil && !c.dead {
			cs := c.cs
			c.mu.Unlock()
			return cs, nil
		}
		o := c.opening
		if o == nil {
			if c.cs != nil {
				c.teardownLocked()
			}
			if wait := time.Until(c.nextTry); wait > 0 {
				c.mu.Unlock()
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return nil, unavailable(config.ExecutorMCP, c.name, "the server is restarting after a failure; retry in %s", wait.Round(time.Millisecond))
				case <-t.C:
				}
				continue
			}
			o = c.startOpenLocked(limit)
		}
		c.mu.Unlock()
		select {
		case <-o.done:
			if o.err != nil {
				return nil, o.err
			}
			return o.cs, nil
		case <-ctx.Done():
			return nil, unavailable(config.ExecutorMCP, c.name, "the session did not open in time (%v); it goes on opening for the next call", context.Cause(ctx))
		}
	}
}

// startOpenLocked starts opening a session on a goroutine of its own,
// bounded by limit.
func (c *mcpConn) startOpenLocked(limit time.Duration) *opening {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	o := &opening{done: make(chan struct{}), cancel: cancel}
	c.opening = o
	go c.open(ctx, o)
	return o
}

// open opens a session and keeps it, or records the failure's backoff.
func (c *mcpConn) open(ctx context.Context, o *opening) {
	defer close(o.done)
	defer o.cancel()
	cs, cmd, err := c.dial(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opening = nil
	switch {
	case err != nil:
		if c.backoff == 0 {
			c.backoff = minBackoff
		} else {
			c.backoff = min(2*c.backoff, maxBackoff)
		}
		c.nextTry = time.Now().Add(c.backoff)
		c.log.Warn("mcp connection failed to open", "err", err, "retry_in", c.backoff)
		o.err = err
	case c.closed:
		// Closed while it opened: the session is not kept.
		_ = cs.Close()
		if cmd != nil && cmd.Process != nil {
			killGroup(cmd.Process.Pid)
		}
		o.err = unavailable(config.ExecutorMCP, c.name, "the gateway is shutting down")
	default:
		c.cs, c.cmd, c.dead, c.opened = cs, cmd, false, time.Now()
		c.starts++
		go c.watch(cs)
		c.log.Info("mcp connection opened", "pid", pid(cmd), "protocol", cs.InitializeResult().ProtocolVersion)
		o.cs = cs
	}
}

// dial starts the child (or dials the URL) and runs the handshake.
func (c *mcpConn) dial(ctx context.Context) (*mcp.ClientSession, *exec.Cmd, error) {
	var transport mcp.Transport
	var cmd *exec.Cmd
	if c.cfg.URL != "" {
		headers := map[string]string{}
		for k, v := range c.cfg.Headers {
			s, missing := config.Interpolate(v, c.getenv)
			if len(missing) > 0 {
				c.log.Warn("mcp connection header refers to unset environment variables", "header", k, "variables", missing)
			}
			headers[k] = s
		}
		c.fixedHeaders.Store(&headerSet{m: headers})
		var rt http.RoundTripper = headerTransport{headers: headers, next: drainTransport{next: c.transport}}
		if c.auth != nil {
			rt = bearerTransport{bearer: &c.bearer, next: rt}
		}
		transport = &mcp.StreamableClientTransport{Endpoint: c.cfg.URL, DisableStandaloneSSE: !c.imported || c.notify == nil,
			HTTPClient: &http.Client{Transport: rt}}
	} else {
		env, missing := childEnv(c.cfg.Env, c.getenv, nil)
		if len(missing) > 0 {
			c.log.Warn("mcp connection env refers to unset environment variables", "variables", missing)
		}
		path, err := lookPath(c.cfg.Command, env)
		if err != nil {
			return nil, nil, unavailable(config.ExecutorMCP, c.name, "%s", execErrorMessage(c.cfg.Command, err))
		}
		cmd = exec.Command(path, c.cfg.Args...)
		cmd.Env = env
		prepare(cmd)
		cmd.Stderr = &logWriter{log: c.log}
		transport = &spawnTransport{inner: &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}}
	}
	cs, err := c.client.Connect(ctx, transport, nil)
	if err != nil {
		if cmd != nil && cmd.Process != nil {
			killGroup(cmd.Process.Pid)
			_ = cmd.Process.Kill()
		}
		if c.cfg.URL != "" {
			return nil, nil, unavailable(config.ExecutorMCP, c.name, "cannot open the session to %s: %s", urlHost(c.cfg.URL), c.reason(err))
		}
		return nil, nil, unavailable(config.ExecutorMCP, c.name, "cannot open the session: %s", c.reason(err))
	}
	return cs, cmd, nil
}

// urlHost names the host of a URL for a message.
func urlHost(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "the configured URL"
}

func pid(cmd *exec.Cmd) int {
	if cmd == nil || cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

// watch marks the session dead when it ends.
func (c *mcpConn) watch(cs *mcp.ClientSession) {
	err := cs.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs != cs || c.closed {
		return
	}
	c.dead = true
	if time.Since(c.opened) >= healthyAfter {
		c.backoff = 0
		c.nextTry = time.Time{}
	} else {
		if c.backoff == 0 {
			c.backoff = minBackoff
		} else {
			c.backoff = min(2*c.backoff, maxBackoff)
		}
		c.nextTry = time.Now().Add(c.backoff)
	}
	var reason string
	if err != nil {
		reason = c.reason(err)
	}
	c.log.Warn("mcp connection ended; it will be opened again on the next call", "err", reason, "retry_after", c.backoff)
}

// teardownLocked closes the current session and kills its process group.
func (c *mcpConn) teardownLocked() {
	cs, cmd := c.cs, c.cmd
	c.cs, c.cmd = nil, nil
	if cs != nil {
		_ = cs.Close()
	}
	if cmd != nil && cmd.Process != nil {
		killGroup(cmd.Process.Pid)
	}
}

// markDead records that the session broke during a call.
func (c *mcpConn) markDead(cs *mcp.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs == cs {
		c.dead = true
	}
}

// close ends the session and kills its process group; an open in progress
// is cancelled and waited for, so that no child it started outlives it.
func (c *mcpConn) close() error {
	c.closeSession()
	if c.callers != nil {
		c.callers.close()
	}
	if c.transport != nil {
		c.transport.CloseIdleConnections()
	}
	return nil
}

// closeSession is close without the HTTP transport, which a caller's
// session shares with its connection.
func (c *mcpConn) closeSession() {
	c.mu.Lock()
	c.closed = true
	o := c.opening
	c.teardownLocked()
	c.mu.Unlock()
	if o != nil {
		o.cancel()
		<-o.done
	}
}

// Starts returns how many sessions the connection opened.
func (c *mcpConn) Starts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.starts
}

// call calls one tool: on the connection's session, or on the session of
// the caller ctx carries when the connection acts as the caller. A call
// whose upstream token cannot be had is not sent. It returns the result as
// the executor's output (see resultOutput), whether the tool answered an
// error, and the upstream token the call carried ("" when none), which
// its output must not carry.
func (c *mcpConn) call(ctx context.Context, tool string, args map[string]any) (map[string]any, bool, string, error) {
	var tok string
	if c.auth != nil {
		var err error
		if tok, err = c.tokens.token(ctx, c.auth); err != nil {
			return nil, false, "", err
		}
		if c.callers != nil {
			cred, _ := auth.CredentialFrom(ctx) // token checked it is there
			cc, release, err := c.callers.get(cred)
			if err != nil {
				return nil, false, "", err
			}
			defer release()
			c = cc
		}
		c.bearer.Store(&tok)
	}
	out, isError, err := c.callOn(ctx, tool, args, tok)
	return out, isError, tok, err
}

// callOn calls the tool on c's session, or as its own POST when the
// session would send it as one (postable); errors leave out tok.
//
// While telemetry.Tracing, the call is an MCP client span (the MCP
// semantic conventions), whose context the call's _meta.traceparent
// carries to the upstream (both ways: the session's and the POST's).
func (c *mcpConn) callOn(ctx context.Context, tool string, args map[string]any, tok string) (out map[string]any, isError bool, err error) {
	if tracing.Recording(ctx) {
		var span trace.Span
		ctx, span = tracing.StartChild(ctx, "tools/call "+tool, trace.SpanKindClient,
			tracing.KeyMCPMethod.String("tools/call"), tracing.KeyToolName.String(tracing.Bounded(tool)),
			tracing.KeyConnection.String(tracing.Bounded(c.name)), tracing.KeyNetworkTransport.String(c.netTransport()))
		if span != nil {
			ctx = workflow.WithTraceparent(ctx, tracing.Traceparent(span.SpanContext()))
			defer func() {
				errType := ""
				var xe *workflow.ExecutorError
				switch {
				case errors.As(err, &xe):
					errType = xe.Outcome
				case err != nil:
					errType = "_OTHER"
				case isError:
					errType = "tool_error"
				}
				tracing.End(span, err, errType)
			}()
		}
	}
	cs, err := c.session(ctx)
	if err != nil {
		return nil, false, err
	}
	if c.postable(cs, tool) {
		return c.postCall(ctx, cs, tool, args, tok)
	}
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	if tp := workflow.Traceparent(ctx); tp != "" {
		// W3C trace context in _meta, as the 2026-07-28 revision carries it.
		params.Meta = mcp.Meta{"traceparent": tp}
	}
	res, err := cs.CallTool(ctx, params)
	if err == nil {
		return resultOutput(res), res.IsError, nil
	}
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we):
		return nil, false, &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorMCP, Connection: c.name,
			Message: fmt.Sprintf("tool %s: %s", tool, clip(we.Message, 500)), Output: map[string]any{"error": map[string]any{"code": we.Code, "message": we.Message}}}
	case ctx.Err() != nil:
		return nil, false, &workflow.ExecutorError{Outcome: workflow.OutcomeUnknown, Kind: config.ExecutorMCP, Connection: c.name,
			Message: fmt.Sprintf("tool %s: no answer in time (%v)", tool, context.Cause(ctx))}
	default:
		c.markDead(cs)
		return nil, false, &workflow.ExecutorError{Outcome: workflow.OutcomeUnknown, Kind: config.ExecutorMCP, Connection: c.name,
			Message: fmt.Sprintf("tool %s: the connection broke during the call: %s", tool, redact(c.reason(err), secretList(tok)))}
	}
}

// netTransport is the network.transport of c's calls: tcp for a URL
// connection, pipe for a child process on stdio.
func (c *mcpConn) netTransport() string {
	if c.transport != nil {
		return "tcp"
	}
	return "pipe"
}

// tools lists the connection's tools.
func (c *mcpConn) tools(ctx context.Context) ([]*mcp.Tool, error) {
	return c.toolsWithin(ctx, openTimeout)
}

// toolsWithin is tools where an open it starts may take up to limit.
func (c *mcpConn) toolsWithin(ctx context.Context, limit time.Duration) ([]*mcp.Tool, error) {
	if c.callers != nil {
		return nil, unavailable(config.ExecutorMCP, c.name, "the connection acts as the caller (auth token-exchange): its tools cannot be listed without one")
	}
	if c.auth != nil {
		tok, err := c.tokens.token(ctx, c.auth)
		if err != nil {
			return nil, err
		}
		c.bearer.Store(&tok)
	}
	cs, err := c.sessionWithin(ctx, limit)
	if err != nil {
		return nil, err
	}
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, unavailable(config.ExecutorMCP, c.name, "tools/list: %s", c.reason(err))
		}
		out = append(out, t)
	}
	c.noteTools(out)
	return out, nil
}

// mcpRunner runs mcp executors.
type mcpRunner struct{ m *Manager }

// Run calls the executor's tool with its map resolved against the scope
// (the call's arguments as they are when there is no map). The output is
// {content, structuredContent?, text}: text joins the text content.
func (r mcpRunner) Run(ctx context.Context, x config.Executor, scope workflow.Scope) (map[string]any, error) {
	c, ok := r.m.mcp[x.Connection]
	if !ok {
		return nil, noConnection(config.ExecutorMCP, x.Connection)
	}
	var args map[string]any
	if x.Map != nil {
		args, _ = workflow.Resolve(x.Map, scope).(map[string]any)
	} else {
		args = scope.Arguments
	}
	if args == nil {
		args = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout(x))
	defer cancel()
	out, isError, tok, err := c.call(ctx, x.Tool, args)
	if err != nil {
		return nil, scrubError(err, tok)
	}
	out = scrub(out, tok)
	if isError {
		text, _ := out["text"].(string)
		return nil, &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorMCP, Connection: x.Connection,
			Message: fmt.Sprintf("tool %s answered an error: %s", x.Tool, clip(text, 500)), Output: out}
	}
	return out, nil
}

// resultOutput renders a tool result as plain JSON values, converted once:
// a text item (nearly every item) is built as the map its JSON is, and
// structuredContent, which the client decoded into plain JSON values
// already, is kept as it is; only another kind of content item (an image,
// a resource) or a value of another Go type goes through its JSON.
func resultOutput(res *mcp.CallToolResult) map[string]any {
	out := map[string]any{}
	var texts []string
	content := make([]any, 0, len(res.Content))
	for _, ct := range res.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
			if t.Meta == nil && t.Annotations == nil {
				content = append(content, map[string]any{"type": "text", "text": t.Text})
				continue
			}
		}
		if v, ok := strictjson.ViaJSON(ct); ok {
			content = append(content, v)
		}
	}
	out["content"] = content
	out["text"] = strings.Join(texts, "\n")
	if res.StructuredContent != nil {
		if strictjson.Plain(res.StructuredContent) {
			out["structuredContent"] = res.StructuredContent
		} else if v, ok := strictjson.ViaJSON(res.StructuredContent); ok {
			out["structuredContent"] = v
		}
	}
	return out
}

// spawnTransport starts the child of a CommandTransport on the spawner's
// thread (see spawner).
type spawnTransport struct {
	inner *mcp.CommandTransport
}

func (t *spawnTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	var conn mcp.Connection
	err := onSpawner(func() error {
		var err error
		conn, err = t.inner.Connect(ctx)
		return err
	})
	return conn, err
}

// headerSet is the configured headers of a URL connection, interpolated.
type headerSet struct{ m map[string]string }

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	// A call's W3C trace context goes in its HTTP request too, as in its
	// _meta.
	if tp := workflow.Traceparent(r.Context()); tp != "" {
		r.Header.Set("Traceparent", tp)
	}
	return t.next.RoundTrip(r)
}

// bearerTransport sends the connection's current upstream token as
// Authorization: Bearer; a request made before any token is set goes
// without one.
type bearerTransport struct {
	bearer *atomic.Pointer[string]
	next   http.RoundTripper
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if tok := t.bearer.Load(); tok != nil {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+*tok)
	}
	return t.next.RoundTrip(r)
}

// drainTransport lets the answer of a request be read to its end after
// the request's context ends, so that its HTTP connection is kept. go-sdk
// sends each call over streamable HTTP as a POST carrying the call's
// context, and reads its answer (an event stream) on a goroutine of its
// own: the call returns when the result's event arrives, its context is
// cancelled then (the runner's timeout), and the goroutine still has the
// stream's end to read. Cancelled under it, the transport closed the
// connection, and a later call dialed a new one (about one call in
// fifteen, sequential). Here the request's own context ends when the
// call's does while no answer has come (the call gave up: nothing waits
// longer than before), and otherwise once the answer is read and closed,
// or drainGrace after the call's context ended (a call that gave up
// while its stream was open: go-sdk has sent the server its
// cancellation, the stream is dropped a little later than before).
type drainTransport struct {
	next http.RoundTripper
}

func (t drainTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	resp, err := t.next.RoundTrip(r.WithContext(rctx))
	stop()
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &drainBody{ReadCloser: resp.Body, cancel: cancel,
		stop: context.AfterFunc(ctx, func() { time.AfterFunc(drainGrace, cancel) })}
	return resp, nil
}

// drainBody is the body of an answer read under drainTransport: closing
// it ends the request's context.
type drainBody struct {
	io.ReadCloser
	cancel context.CancelFunc
	stop   func() bool
}

func (b *drainBody) Close() error {
	err := b.ReadCloser.Close()
	b.stop()
	b.cancel()
	return err
}

// logWriter logs a child's stderr, line by line, at debug level.
type logWriter struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		w.log.Debug("mcp child stderr", "line", clip(string(w.buf[:i]), 2000))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 {
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

var (
	_ io.Writer = (*logWriter)(nil)
	_           = bufio.NewReader
)
