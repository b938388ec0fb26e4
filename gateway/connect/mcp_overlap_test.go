package connect_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

type echoArgs struct {
	Message string `json:"message"`
}

// echoUpstream is a real go-sdk MCP server over streamable HTTP with one
// tool, echo; dials counts the TCP connections it accepted.
func echoUpstream(tb testing.TB) (srv *httptest.Server, dials *atomic.Int32) {
	tb.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Message}}}, nil, nil
	})
	return countingServer(tb, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// barrier holds its callers until n of them wait at once, then lets them
// all go: calls that only pass it if they are in flight together.
type barrier struct {
	n       int32
	waiting atomic.Int32
	release chan struct{}
	once    sync.Once
}

func newBarrier(n int) *barrier { return &barrier{n: int32(n), release: make(chan struct{})} }

// wait returns once n callers wait, or with ctx's error.
func (b *barrier) wait(ctx context.Context) error {
	if b.waiting.Add(1) >= b.n {
		b.once.Do(func() { close(b.release) })
	}
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("only %d of %d calls arrived together: %w", b.waiting.Load(), b.n, ctx.Err())
	}
}

// barrierServer is a real go-sdk MCP server whose tool wait answers once
// n calls of it are in flight at once (each round of n calls meets a
// fresh barrier); sessions counts the sessions clients initialized.
func barrierServer(n int) (s *mcp.Server, sessions *atomic.Int32) {
	sessions = new(atomic.Int32)
	s = mcp.NewServer(&mcp.Implementation{Name: "barrier", Version: "1"},
		&mcp.ServerOptions{InitializedHandler: func(context.Context, *mcp.InitializedRequest) { sessions.Add(1) }})
	var mu sync.Mutex
	var arrived int
	b := newBarrier(n)
	mcp.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		cur := b
		if arrived++; arrived%n == 0 {
			b = newBarrier(n)
		}
		mu.Unlock()
		if err := cur.wait(ctx); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
	})
	return s, sessions
}

// countingServer serves h over HTTP and counts the TCP connections it
// accepted.
func countingServer(tb testing.TB, h http.Handler) (srv *httptest.Server, dials *atomic.Int32) {
	tb.Helper()
	dials = new(atomic.Int32)
	srv = httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv, dials
}

// together runs k calls of x at once through r and fails the test with
// the errors of those that failed.
func together(t *testing.T, ctx context.Context, r workflow.Runner, x config.Executor, k int) {
	t.Helper()
	errs := make(chan error, k)
	for range k {
		go func() {
			_, err := r.Run(ctx, x, workflow.Scope{})
			errs <- err
		}()
	}
	for range k {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// keptBound is the most TCP connections rounds of k overlapping calls to
// one host may dial when connections are kept: the first round dials k
// (and the handshake of an MCP session one or two); a later round may
// dial one whose connection was not back in the pool yet when it began.
// A transport that keeps 2 (the default) dials k-2 more every round: the
// bound lets a quarter of that through, so that a slow machine's
// stragglers do not fail the test and a transport that drops connections
// does.
func keptBound(k, rounds int) int32 { return int32(k + 2 + (k-2)*rounds/4) }

// TestMCPCallsOverlapOverHTTP: calls to one streamable HTTP upstream
// overlap: k calls of a tool that answers only once k of its calls are in
// flight at once all succeed (a call serialized behind another would
// hold them all until the deadline), over one session, round after round,
// and the HTTP connections they used are kept: after the first round
// none is dialed again (the default transport kept 2, so each round of k
// dialed k-2 new ones).
func TestMCPCallsOverlapOverHTTP(t *testing.T) {
	for _, k := range []int{8, 32} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			s, sessions := barrierServer(k)
			srv, dials := countingServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
			m := connect.New(map[string]config.Connection{"up": {Kind: "mcp", URL: srv.URL}}, &connect.Options{Logger: quiet()})
			defer m.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			x := config.Executor{Kind: "mcp", Connection: "up", Tool: "wait", TimeoutMs: 30000}
			const rounds = 10
			for i := range rounds {
				together(t, ctx, m.Runners()["mcp"], x, k)
				if t.Failed() {
					t.Fatalf("round %d", i+1)
				}
			}
			if n, up := m.Starts("up"), sessions.Load(); n != 1 || up != 1 {
				t.Errorf("%d sessions opened (%d seen by the upstream), want 1", n, up)
			}
			if d := dials.Load(); d > keptBound(k, rounds) {
				t.Errorf("%d TCP connections dialed for %d rounds of %d overlapping calls: connections are not kept", d, rounds, k)
			}
		})
	}
}

// TestRESTCallsKeepConnections: overlapping REST calls to one host keep
// their connections for the calls that follow, as MCP ones do.
func TestRESTCallsKeepConnections(t *testing.T) {
	const k, rounds = 8, 10
	var mu sync.Mutex
	var arrived int
	b := newBarrier(k)
	srv, dials := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur := b
		if arrived++; arrived%k == 0 {
			b = newBarrier(k)
		}
		mu.Unlock()
		if err := cur.wait(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusGatewayTimeout)
			return
		}
		ok(w)
	}))
	m := connect.New(map[string]config.Connection{"api": {Kind: "rest", BaseURL: srv.URL}}, &connect.Options{Logger: quiet()})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	x := config.Executor{Kind: "rest", Connection: "api", Method: "GET", Path: "/wait", TimeoutMs: 30000}
	for i := range rounds {
		together(t, ctx, m.Runners()["rest"], x, k)
		if t.Failed() {
			t.Fatalf("round %d", i+1)
		}
	}
	if d := dials.Load(); d > keptBound(k, rounds) {
		t.Errorf("%d TCP connections dialed for %d rounds of %d overlapping calls: connections are not kept", d, rounds, k)
	}
}

// TestMCPCallsKeepTheirConnection: a call over streamable HTTP that
// returns leaves its HTTP connection to the next call. go-sdk reads the
// end of a call's event stream after the call returned, when the runner
// has cancelled the call's context: cancelled under it, the connection
// was closed, and about one sequential call in fifteen dialed anew.
func TestMCPCallsKeepTheirConnection(t *testing.T) {
	srv, dials := echoUpstream(t)
	m := connect.New(map[string]config.Connection{"up": {Kind: "mcp", URL: srv.URL}}, &connect.Options{Logger: quiet()})
	defer m.Close()
	r := m.Runners()["mcp"]
	x := config.Executor{Kind: "mcp", Connection: "up", Tool: "echo"}
	const calls = 300
	for i := range calls {
		out, err := r.Run(context.Background(), x, workflow.Scope{Arguments: map[string]any{"message": "hi"}})
		if err != nil || out["text"] != "hi" {
			t.Fatalf("call %d: %v %v", i+1, out, err)
		}
	}
	// The handshake may take a second connection (the initialized
	// notification sent while the initialize answer is read).
	if d := dials.Load(); d > 3 {
		t.Errorf("%d TCP connections dialed for %d sequential calls, want 1 or 2", d, calls)
	}
}

// TestMCPCallGivenUpEndsUpstream: a call over streamable HTTP that runs
// out of time answers unknown (it was sent), the upstream's handler sees
// its context end (the answer's stream is not kept open for the next
// call's sake), and the session serves the next call.
func TestMCPCallGivenUpEndsUpstream(t *testing.T) {
	ended := make(chan struct{}, 1)
	s := mcp.NewServer(&mcp.Implementation{Name: "block", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		ended <- struct{}{}
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Message}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer srv.Close()
	m := connect.New(map[string]config.Connection{"up": {Kind: "mcp", URL: srv.URL}}, &connect.Options{Logger: quiet()})
	defer m.Close()
	r := m.Runners()["mcp"]
	_, err := r.Run(context.Background(), config.Executor{Kind: "mcp", Connection: "up", Tool: "block", TimeoutMs: 300}, workflow.Scope{})
	if outcome(err) != workflow.OutcomeUnknown {
		t.Fatalf("call: %v, want unknown", err)
	}
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the upstream's handler still runs: the call's end did not reach it")
	}
	out, err := r.Run(context.Background(), config.Executor{Kind: "mcp", Connection: "up", Tool: "echo"}, workflow.Scope{Arguments: map[string]any{"message": "after"}})
	if err != nil || out["text"] != "after" {
		t.Fatalf("next call: %v %v", out, err)
	}
}
