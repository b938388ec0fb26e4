package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/assembly"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/restclient"
	"github.com/praxa/praxa/mcpadapter"
)

// minter is a credential source over a gatewaytest gateway's issuer: each
// fetch mints the next token of the script (a subject, or an error), with
// a jti the test can revoke.
type minter struct {
	g *gatewaytest.Gateway
	t *testing.T

	mu      sync.Mutex
	script  []string // subjects; "" fails
	jtis    []string
	fetches int
}

func (m *minter) fetch(context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fetches++
	subject := userA
	if len(m.script) > 0 {
		subject, m.script = m.script[0], m.script[1:]
	}
	if subject == "" {
		return "", &restclient.RenewError{Reason: "the token command failed (exit status 7)"}
	}
	jti := fmt.Sprintf("renewal-%d", m.fetches)
	m.jtis = append(m.jtis, jti)
	return m.g.Token(m.t, tenantA, subject, nil, map[string]any{"jti": jti}), nil
}

func (m *minter) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fetches
}

// revokeLast revokes the token fetched last, as an operator would.
func (m *minter) revokeLast() {
	m.mu.Lock()
	jti := m.jtis[len(m.jtis)-1]
	m.mu.Unlock()
	if err := m.g.Service.RevokeToken(context.Background(), nil, gateway.RevokeRequest{JTI: jti, Reason: "test"}, m.g.Revocations); err != nil {
		m.t.Fatal(err)
	}
}

// envelopeOf decodes a tool error's seeds/000 envelope.
func envelopeOf(t *testing.T, res *mcp.CallToolResult) contracts.ErrorEnvelope {
	t.Helper()
	if !res.IsError {
		t.Fatalf("not an error: %s", textOf(t, res))
	}
	var env contracts.ErrorEnvelope
	if err := json.Unmarshal([]byte(textOf(t, res)), &env); err != nil {
		t.Fatal(err)
	}
	return env
}

var testRenewal = &mcpadapter.Renewal{Hint: "Run the token command yourself.", Command: "praxa token --data-dir /d"}

// wantRenewalFailed fails t unless env answers a call whose credential
// was refused and could not be renewed: invalid-token with message,
// testRenewal's hint and command, and one link, the operator path that
// runs the command.
func wantRenewalFailed(t *testing.T, env contracts.ErrorEnvelope, message string) {
	t.Helper()
	if env.Error.Code != contracts.CodeInvalidToken || env.Error.Message != message ||
		env.Error.Hint != testRenewal.Hint || env.Error.OperatorCommand != testRenewal.Command ||
		len(env.Links) != 1 || env.Links[0].Rel != "operator_path" || env.Links[0].Method != "cli" || env.Links[0].Args["command"] != testRenewal.Command {
		t.Errorf("a failed renewal: %+v", env)
	}
}

// TestStdioRenewsItsCredential: a stdio server on a local store whose
// credential renews obtains a new token when the one in hand is due and
// when the verifier refuses it (revoked here; expired alike), and goes on
// serving; a renewal that fails is refused invalid-token with why, how to
// renew (hint, operatorCommand, operator_path link); a renewed token of
// another principal is never used and stops the source.
func TestStdioRenewsItsCredential(t *testing.T) {
	g := gatewaytest.New(t, nil)
	ctx := context.Background()
	m := &minter{g: g, t: t, script: []string{userA, userA, userA, "", "mallory"}}
	var (
		clockMu sync.Mutex
		now     = time.Now()
		stopped = make(chan error, 1)
	)
	src := restclient.NewRenewing(restclient.RenewingOptions{Fetch: m.fetch, Check: g.CheckToken,
		Now:  func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now },
		Stop: func(err error) { stopped <- err }})
	cs, _ := g.StdioSessionWith(t, assembly.StdioCredential{Token: src, Renewal: testRenewal})
	home := func() *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolPraxecQuery, Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := home(); res.IsError || m.count() != 1 {
		t.Fatalf("first call: %s after %d fetches", textOf(t, res), m.count())
	}
	// Due: the next call renews first (the minted tokens live an hour).
	clockMu.Lock()
	now = now.Add(time.Hour - 30*time.Second)
	clockMu.Unlock()
	if res := home(); res.IsError || m.count() != 2 {
		t.Errorf("a due token: %s after %d fetches, want a renewal", textOf(t, res), m.count())
	}
	// Refused: revoked under the server, renewed on the refused call.
	m.revokeLast()
	if res := home(); res.IsError || m.count() != 3 {
		t.Errorf("a revoked token: %s after %d fetches, want a renewal", textOf(t, res), m.count())
	}
	// A renewal that fails answers why and how to renew.
	m.revokeLast()
	wantRenewalFailed(t, envelopeOf(t, home()), "the server's credential is no longer accepted: revoked; renewing it failed: the token command failed (exit status 7)")
	// Another principal's token (fetched once the failure's
	// RetryAfterFailure has passed) is refused and stops the source.
	clockMu.Lock()
	now = now.Add(restclient.RetryAfterFailure)
	clockMu.Unlock()
	env := envelopeOf(t, home())
	if env.Error.Code != contracts.CodeInvalidToken || !strings.Contains(env.Error.Message, `the renewed token names subject "mallory"`) {
		t.Errorf("another principal's token: %+v", env)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, restclient.ErrIdentityChanged) {
			t.Errorf("Stop(%v)", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the source did not stop")
	}
	if res := home(); !res.IsError || m.count() != 5 {
		t.Errorf("after the stop: %s after %d fetches", textOf(t, res), m.count())
	}
}

// TestStdioFixedTokenRefusal: a fixed token, revoked, is refused with the
// renewal the server was given; with none, the hint says to restart.
func TestStdioFixedTokenRefusal(t *testing.T) {
	g := gatewaytest.New(t, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		renewal *mcpadapter.Renewal
		hint    string
		links   int
	}{{testRenewal, testRenewal.Hint, 1}, {nil, "Restart the MCP server with a fresh token.", 0}} {
		jti := fmt.Sprintf("fixed-%d", tc.links)
		cs, _ := g.StdioSessionWith(t, assembly.StdioCredential{Token: restclient.StaticToken(g.Token(t, tenantA, userA, nil, map[string]any{"jti": jti})),
			Renewal: tc.renewal})
		if err := g.Service.RevokeToken(ctx, nil, gateway.RevokeRequest{JTI: jti}, g.Revocations); err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolPraxecQuery, Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		env := envelopeOf(t, res)
		if env.Error.Code != contracts.CodeInvalidToken || env.Error.Message != "the server's credential is no longer accepted: revoked" ||
			env.Error.Hint != tc.hint || len(env.Links) != tc.links {
			t.Errorf("renewal %v: %+v", tc.renewal, env)
		}
	}
}

// TestRemoteRenewsItsCredential: a client of a remote gateway renews a
// token the gateway refuses and sends the call again; a renewal that
// fails answers the gateway's refusal with why and how to renew.
func TestRemoteRenewsItsCredential(t *testing.T) {
	g := gatewaytest.New(t, nil)
	ctx := context.Background()
	m := &minter{g: g, t: t, script: []string{userA, userA, ""}}
	src := restclient.NewRenewing(restclient.RenewingOptions{Fetch: m.fetch, Check: restclient.ClaimsCheck("")})
	rc, err := restclient.New(g.URL, &restclient.Options{HTTPClient: g.Client, Token: src})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpadapter.New(&mcpadapter.Remote{Client: rc, Renewal: testRenewal}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectServer(t, srv)
	start := func() *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolPraxecCommand, Arguments: map[string]any{"definitionId": "deploy_pipeline"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := start(); res.IsError || m.count() != 1 {
		t.Fatalf("first call: %s", textOf(t, res))
	}
	m.revokeLast()
	if res := start(); res.IsError || m.count() != 2 {
		t.Errorf("a revoked token: %s after %d fetches, want a renewal and the call sent again", textOf(t, res), m.count())
	}
	m.revokeLast()
	wantRenewalFailed(t, envelopeOf(t, start()), "the access token is not accepted: revoked; renewing it failed: the token command failed (exit status 7)")
}
