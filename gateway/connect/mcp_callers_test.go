package connect_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

// sessionLog is what a go-sdk MCP server over HTTP saw: the bearer token of
// each request by session, and the sessions closed (DELETE).
type sessionLog struct {
	mu      sync.Mutex
	bearers map[string]map[string]bool
	deleted []string
}

func (l *sessionLog) snapshot() (map[string][]string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]string{}
	for sid, bs := range l.bearers {
		for b := range bs {
			out[sid] = append(out[sid], b)
		}
	}
	return out, append([]string(nil), l.deleted...)
}

// TestCallerSessionsBoundedAndIdleClosed: an mcp connection acting as the
// caller keeps one upstream session per caller, never one for two, at most
// the bound (the least recently used idle one is closed), and closes those
// idle for CallerSessionIdle.
func TestCallerSessionsBoundedAndIdleClosed(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ping"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return nil, struct{}{}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	log := &sessionLog{bearers: map[string]map[string]bool{}}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			log.mu.Lock()
			if r.Method == http.MethodDelete {
				log.deleted = append(log.deleted, sid)
			} else {
				if log.bearers[sid] == nil {
					log.bearers[sid] = map[string]bool{}
				}
				log.bearers[sid][r.Header.Get("Authorization")] = true
			}
			log.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	// The exchange answers a token naming the subject token it was given.
	te := newTokenEndpoint(t, func(_ int, form map[string]string) (int, string) {
		return 200, `{"access_token":"up-` + form["subject_token"] + `","token_type":"Bearer","expires_in":300}`
	})
	m := connect.New(map[string]config.Connection{"tools": {Kind: "mcp", URL: up.URL, Auth: &config.ConnectionAuth{Kind: config.AuthTokenExchange,
		TokenEndpoint: te.srv.URL, Audience: "https://up.test", ClientID: "gw", ClientSecret: "${GW_SECRET}"}}},
		&connect.Options{Logger: quiet(), Getenv: env(map[string]string{"GW_SECRET": "gw-secret"})})
	t.Cleanup(func() { m.Close() })
	m.SetCallerSessionBound("tools", 2)
	run := m.Runners()["mcp"]
	call := func(who string) {
		t.Helper()
		ctx := auth.WithCredential(context.Background(), auth.NewCredential("tok-"+who,
			&auth.Principal{Issuer: "https://idp.test", Tenant: "acme", Subject: who, TokenID: "j-" + who, Expiry: time.Now().Add(time.Hour)}))
		if _, err := run.Run(ctx, config.Executor{Kind: "mcp", Connection: "tools", Tool: "ping"}, workflow.Scope{}); err != nil {
			t.Fatalf("%s: %v", who, err)
		}
	}
	for _, who := range []string{"alice", "bob", "alice", "bob"} {
		call(who)
	}
	if n := m.CallerSessions("tools"); n != 2 {
		t.Errorf("%d caller sessions, want 2", n)
	}
	call("carol") // a third caller: alice's, the least recently used, is closed
	if n := m.CallerSessions("tools"); n != 2 {
		t.Errorf("%d caller sessions after a third caller, want 2 (the bound)", n)
	}
	bySession, deleted := log.snapshot()
	if len(bySession) != 3 {
		t.Errorf("the upstream saw %d sessions, want 3 (one per caller): %v", len(bySession), bySession)
	}
	for sid, bearers := range bySession {
		if len(bearers) != 1 {
			t.Errorf("session %s carried %v: two callers shared it", sid, bearers)
		}
	}
	if len(deleted) != 1 || !strings.Contains(strings.Join(bySession[deleted[0]], ""), "up-tok-alice") {
		t.Errorf("closed sessions %v, want alice's only (%v)", deleted, bySession)
	}
	if n := m.SweepCallerSessions("tools", time.Now().Add(connect.CallerSessionIdle-time.Second)); n != 0 {
		t.Errorf("swept %d sessions used a moment ago", n)
	}
	if n := m.SweepCallerSessions("tools", time.Now().Add(connect.CallerSessionIdle)); n != 2 || m.CallerSessions("tools") != 0 {
		t.Errorf("swept %d idle sessions, %d left; want 2 and 0", n, m.CallerSessions("tools"))
	}
	if _, deleted := log.snapshot(); len(deleted) != 3 {
		t.Errorf("the upstream saw %d sessions closed, want 3", len(deleted))
	}
	call("alice") // a swept caller opens a session again
	if n := m.CallerSessions("tools"); n != 1 {
		t.Errorf("%d caller sessions, want 1", n)
	}
}
