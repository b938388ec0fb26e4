package connect_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/gateway/workflow"
)

// The caller's raw token in these tests: it must never show in an error.
const callerToken = "caller-raw-token-0123456789"

// tokenEndpoint is an OAuth token endpoint over HTTP (the real OAuth
// server's tests are in oauthtest): it checks the client's Basic
// credentials and answers with answer, counting the requests.
type tokenEndpoint struct {
	srv    *httptest.Server
	n      atomic.Int32
	mu     sync.Mutex
	forms  []map[string]string
	answer func(n int, form map[string]string) (int, string)
}

func newTokenEndpoint(t *testing.T, answer func(n int, form map[string]string) (int, string)) *tokenEndpoint {
	te := &tokenEndpoint{answer: answer}
	te.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(te.n.Add(1))
		id, secret, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || !ok || id != "gw" || secret != "gw-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		form := map[string]string{}
		for k := range r.PostForm {
			form[k] = r.PostForm.Get(k)
		}
		te.mu.Lock()
		te.forms = append(te.forms, form)
		te.mu.Unlock()
		st, body := te.answer(n, form)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st)
		w.Write([]byte(body))
	}))
	t.Cleanup(te.srv.Close)
	return te
}

// bearerAPI is a REST upstream that records the Authorization headers it
// receives.
type bearerAPI struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newBearerAPI(t *testing.T) *bearerAPI {
	a := &bearerAPI{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.seen = append(a.seen, r.Header.Get("Authorization"))
		a.mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *bearerAPI) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// authREST returns the rest runner of a connection api whose auth is kind,
// against the token endpoint te, with tokens as its cache.
func authREST(t *testing.T, api, te, kind string, tokens *connect.Tokens) workflow.Runner {
	t.Helper()
	a := &config.ConnectionAuth{Kind: kind, TokenEndpoint: te, ClientID: "gw", ClientSecret: "${GW_SECRET}", Scope: "read"}
	if kind == config.AuthTokenExchange {
		a.Audience = "https://api.test"
	}
	m := connect.New(map[string]config.Connection{"api": {Kind: "rest", BaseURL: api, Auth: a}},
		&connect.Options{Logger: quiet(), Getenv: env(map[string]string{"GW_SECRET": "gw-secret"}), Tokens: tokens})
	t.Cleanup(func() { m.Close() })
	return m.Runners()["rest"]
}

var getWhoami = config.Executor{Kind: "rest", Connection: "api", Method: "GET", Path: "/whoami"}

// caller returns ctx carrying a credential of subject, live until expiry.
func caller(ctx context.Context, subject, jti string, expiry time.Time) context.Context {
	return auth.WithCredential(ctx, auth.NewCredential(callerToken, &auth.Principal{Issuer: "https://idp.test", Tenant: "acme", Subject: subject, TokenID: jti, Expiry: expiry}))
}

// TestClientCredentialsCachedUntilNearExpiry: the gateway's own token is
// obtained once, sent as Bearer, served from the cache until shortly
// before it expires, then obtained again.
func TestClientCredentialsCachedUntilNearExpiry(t *testing.T) {
	te := newTokenEndpoint(t, func(n int, form map[string]string) (int, string) {
		if form["grant_type"] != "client_credentials" || form["scope"] != "read" {
			return 400, `{"error":"invalid_request"}`
		}
		return 200, `{"access_token":"cc-` + string(rune('0'+n)) + `","token_type":"Bearer","expires_in":300}`
	})
	api := newBearerAPI(t)
	var clock atomic.Int64
	start := time.Unix(1_800_000_000, 0)
	tokens := connect.NewTokens(&connect.TokensOptions{Now: func() time.Time { return start.Add(time.Duration(clock.Load())) }})
	run := authREST(t, api.srv.URL, te.srv.URL, config.AuthClientCredentials, tokens)
	for _, at := range []time.Duration{0, time.Minute, 269 * time.Second, 271 * time.Second, 272 * time.Second} {
		clock.Store(int64(at))
		if _, err := run.Run(context.Background(), getWhoami, workflow.Scope{}); err != nil {
			t.Fatalf("at +%v: %v", at, err)
		}
	}
	want := []string{"Bearer cc-1", "Bearer cc-1", "Bearer cc-1", "Bearer cc-2", "Bearer cc-2"}
	if got := api.got(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the upstream saw %v, want %v (a 300s token served until 30s before it expires)", got, want)
	}
	if n := te.n.Load(); n != 2 {
		t.Errorf("%d token requests, want 2", n)
	}
}

// TestTokenExchangeRefusesWithoutLiveCaller: a connection that acts as
// the caller sends nothing, and asks no token endpoint, for a move that
// runs without a caller's token (resumed, background), with an expired
// one, or with a revoked one; it says so.
func TestTokenExchangeRefusesWithoutLiveCaller(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "praxa.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.Revoke(ctx, store.Revocation{JTI: "revoked-jti", RevokedAt: time.Now(), By: "operator"})
	}); err != nil {
		t.Fatal(err)
	}
	revs, err := gateway.NewRevocations(ctx, st, time.Hour, nil, quiet())
	if err != nil {
		t.Fatal(err)
	}
	te := newTokenEndpoint(t, func(int, map[string]string) (int, string) {
		return 200, `{"access_token":"x","token_type":"Bearer","expires_in":300}`
	})
	api := newBearerAPI(t)
	tokens := connect.NewTokens(nil)
	tokens.SetRevocations(revs)
	run := authREST(t, api.srv.URL, te.srv.URL, config.AuthTokenExchange, tokens)
	for _, c := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"no caller", ctx, "runs without a caller's token"},
		{"expired", caller(ctx, "alice", "j1", time.Now().Add(-time.Second)), "has expired"},
		{"revoked", caller(ctx, "alice", "revoked-jti", time.Now().Add(time.Hour)), "is revoked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := run.Run(c.ctx, getWhoami, workflow.Scope{})
			var xe *workflow.ExecutorError
			if !errors.As(err, &xe) || xe.Outcome != workflow.OutcomeFailed || !strings.Contains(xe.Message, c.want) || !strings.Contains(xe.Message, "nothing was sent") {
				t.Fatalf("error %v, want a failed call saying %q and that nothing was sent", err, c.want)
			}
		})
	}
	if n := len(api.got()); n != 0 {
		t.Errorf("the upstream saw %d requests", n)
	}
	if n := te.n.Load(); n != 0 {
		t.Errorf("the token endpoint saw %d requests", n)
	}
}

// TestTokenExchangeFailures: whatever the token endpoint answers short of
// a token, nothing is sent upstream, and the error says why without the
// caller's token or the client's secret; a refusal is failed, an outage
// unavailable (a retry may succeed; nothing was sent either way).
func TestTokenExchangeFailures(t *testing.T) {
	for _, c := range []struct {
		name, body, outcome, want string
		status                    int
	}{
		{"refused", `{"error":"invalid_grant","error_description":"subject_token ` + callerToken + ` is not accepted"}`, workflow.OutcomeFailed, "refused the exchange of the caller's token: answered 400 invalid_grant", 400},
		{"outage", `oops`, workflow.OutcomeUnavailable, "answered 503", 503},
		{"no token", `{"token_type":"Bearer"}`, workflow.OutcomeUnavailable, "answered 200 without a token", 200},
		{"not bearer", `{"access_token":"x","token_type":"DPoP","expires_in":60}`, workflow.OutcomeFailed, "only Bearer tokens are sent", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := newTokenEndpoint(t, func(_ int, form map[string]string) (int, string) {
				if form["subject_token"] != callerToken || form["subject_token_type"] != "urn:ietf:params:oauth:token-type:access_token" ||
					form["grant_type"] != "urn:ietf:params:oauth:grant-type:token-exchange" || form["audience"] != "https://api.test" {
					t.Errorf("exchange form %v", form)
				}
				return c.status, c.body
			})
			api := newBearerAPI(t)
			run := authREST(t, api.srv.URL, te.srv.URL, config.AuthTokenExchange, nil)
			_, err := run.Run(caller(context.Background(), "alice", "j1", time.Now().Add(time.Hour)), getWhoami, workflow.Scope{})
			var xe *workflow.ExecutorError
			if !errors.As(err, &xe) || xe.Outcome != c.outcome || !strings.Contains(xe.Message, c.want) {
				t.Fatalf("error %v, want %s saying %q", err, c.outcome, c.want)
			}
			b, _ := json.Marshal(xe)
			for _, secret := range []string{callerToken, "gw-secret"} {
				if strings.Contains(err.Error(), secret) || strings.Contains(string(b), secret) {
					t.Errorf("the error carries %q: %v", secret, err)
				}
			}
			if n := len(api.got()); n != 0 {
				t.Errorf("the upstream saw %d requests", n)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		api := newBearerAPI(t)
		run := authREST(t, api.srv.URL, srv.URL, config.AuthTokenExchange, nil)
		_, err := run.Run(caller(context.Background(), "alice", "j1", time.Now().Add(time.Hour)), getWhoami, workflow.Scope{})
		var xe *workflow.ExecutorError
		if !errors.As(err, &xe) || xe.Outcome != workflow.OutcomeUnavailable || !strings.Contains(xe.Message, "cannot be reached") {
			t.Fatalf("error %v", err)
		}
		if n := len(api.got()); n != 0 {
			t.Errorf("the upstream saw %d requests", n)
		}
	})
}

// TestTokenExchangeCachePerCaller: each caller's exchanged token is its
// own and is cached per caller; Forget drops what one inbound token
// obtained and nothing else.
func TestTokenExchangeCachePerCaller(t *testing.T) {
	te := newTokenEndpoint(t, func(n int, form map[string]string) (int, string) {
		return 200, `{"access_token":"up-` + form["subject_token"][:4] + `-` + string(rune('0'+n)) + `","token_type":"Bearer","expires_in":300}`
	})
	api := newBearerAPI(t)
	tokens := connect.NewTokens(nil)
	run := authREST(t, api.srv.URL, te.srv.URL, config.AuthTokenExchange, tokens)
	exp := time.Now().Add(time.Hour)
	for _, who := range []struct{ sub, jti string }{{"alice", "ja"}, {"bob", "jb"}, {"alice", "ja"}, {"bob", "jb"}} {
		if _, err := run.Run(caller(context.Background(), who.sub, who.jti, exp), getWhoami, workflow.Scope{}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := strings.Join(api.got(), ","), "Bearer up-call-1,Bearer up-call-2,Bearer up-call-1,Bearer up-call-2"; got != want {
		t.Errorf("the upstream saw %s, want %s", got, want)
	}
	if n := tokens.Forget("ja"); n != 1 || tokens.Len() != 1 {
		t.Errorf("Forget dropped %d, %d left; want 1 and 1", n, tokens.Len())
	}
	if _, err := run.Run(caller(context.Background(), "alice", "ja2", exp), getWhoami, workflow.Scope{}); err != nil {
		t.Fatal(err)
	}
	if n := te.n.Load(); n != 3 {
		t.Errorf("%d exchanges, want 3 (alice's again after Forget)", n)
	}
}

// TestPassthroughRefused: a configuration built without the loader (which
// refuses passthrough) still never sends the caller's token upstream.
func TestPassthroughRefused(t *testing.T) {
	api := newBearerAPI(t)
	run := authREST(t, api.srv.URL, "http://127.0.0.1:1/token", config.AuthPassthrough, nil)
	_, err := run.Run(caller(context.Background(), "alice", "j", time.Now().Add(time.Hour)), getWhoami, workflow.Scope{})
	if err == nil || !strings.Contains(err.Error(), "passthrough is forbidden") || len(api.got()) != 0 {
		t.Fatalf("error %v, upstream saw %v", err, api.got())
	}
}

// TestUpstreamEchoScrubbed: an upstream that echoes the token it was sent,
// in a success or in an error, does not get it into the call's output or
// error (which the run, the record and the audit keep).
func TestUpstreamEchoScrubbed(t *testing.T) {
	te := newTokenEndpoint(t, func(int, map[string]string) (int, string) {
		return 200, `{"access_token":"upstream-token-0123456789","token_type":"Bearer","expires_in":300}`
	})
	for _, status := range []int{200, 400} {
		echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(map[string]any{"you_sent": r.Header.Get("Authorization"), "n": 1})
		}))
		t.Cleanup(echo.Close)
		run := authREST(t, echo.URL, te.srv.URL, config.AuthClientCredentials, nil)
		out, err := run.Run(context.Background(), getWhoami, workflow.Scope{})
		var xe *workflow.ExecutorError
		if errors.As(err, &xe) {
			out = xe.Output
		} else if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(out)
		if strings.Contains(string(b), "upstream-token-0123456789") || !strings.Contains(string(b), "Bearer [redacted]") {
			t.Errorf("status %d: output %s", status, b)
		}
	}
}
