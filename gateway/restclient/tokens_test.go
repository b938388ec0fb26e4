package restclient_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/restclient"
)

// tokens is a scripted credential source: each fetch answers the next
// token, whose identity and lifetime the script names.
type tokens struct {
	mu      sync.Mutex
	now     time.Time
	next    []scripted
	fetches int
}

type scripted struct {
	tok     string
	subject string
	ttl     time.Duration
	err     error
}

func (s *tokens) clock() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

func (s *tokens) advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(d)
}

func (s *tokens) fetch(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetches++
	if len(s.next) == 0 {
		return "", errors.New("script exhausted")
	}
	n := s.next[0]
	s.next = s.next[1:]
	if n.err != nil {
		return "", n.err
	}
	return n.tok + "|" + n.subject + "|" + s.now.Add(n.ttl).Format(time.RFC3339Nano), nil
}

// check reads the scripted token's identity and expiry.
func (s *tokens) check(_ context.Context, tok string) (restclient.Checked, error) {
	parts := strings.Split(tok, "|")
	exp, err := time.Parse(time.RFC3339Nano, parts[2])
	if err != nil {
		return restclient.Checked{}, err
	}
	return restclient.Checked{Identity: restclient.Identity{Issuer: "https://issuer", Subject: parts[1], Tenant: "t1", ClientID: "c"}, Expiry: exp}, nil
}

func (s *tokens) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

// newScript returns a Renewing source over the script; stopped receives
// what it was stopped with.
func newScript(next ...scripted) (s *tokens, r *restclient.Renewing, stopped <-chan error) {
	s = &tokens{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), next: next}
	stop := make(chan error, 1)
	r = restclient.NewRenewing(restclient.RenewingOptions{Fetch: s.fetch, Check: s.check, Now: s.clock,
		Stop: func(err error) { stop <- err }})
	return s, r, stop
}

func name(tok string) string { return strings.Split(tok, "|")[0] }

// TestRenewingRenewsBeforeExpiry: the token is fetched once and served
// until it comes within its margin of exp (a fifth of its lifetime, at
// most 30s), then renewed on the next call.
func TestRenewingRenewsBeforeExpiry(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		ttl, margin time.Duration
	}{{time.Hour, 30 * time.Second}, {10 * time.Second, 2 * time.Second}} {
		s, r, _ := newScript(scripted{tok: "a", subject: "alice", ttl: tc.ttl}, scripted{tok: "b", subject: "alice", ttl: tc.ttl})
		for range 3 {
			if tok, err := r.Token(ctx); err != nil || name(tok) != "a" {
				t.Fatalf("ttl %s: Token: %q %v", tc.ttl, tok, err)
			}
		}
		s.advance(tc.ttl - tc.margin - time.Millisecond)
		if tok, _ := r.Token(ctx); name(tok) != "a" || s.count() != 1 {
			t.Errorf("ttl %s: renewed before the margin: %q after %d fetches", tc.ttl, tok, s.count())
		}
		s.advance(time.Millisecond)
		if tok, err := r.Token(ctx); err != nil || name(tok) != "b" || s.count() != 2 {
			t.Errorf("ttl %s: at the margin: %q %v after %d fetches, want b", tc.ttl, tok, err, s.count())
		}
		if id, ok := r.Identity(); !ok || id.Subject != "alice" {
			t.Errorf("Identity: %v %v", id, ok)
		}
	}
}

// TestRenewingFailures: a renewal that fails while the token in hand is
// valid keeps it; once it has expired, the failure is the answer, with
// its reason, until RetryAfterFailure has passed.
func TestRenewingFailures(t *testing.T) {
	ctx := context.Background()
	broken := &restclient.RenewError{Reason: "the token command failed (exit status 3)"}
	s, r, _ := newScript(scripted{tok: "a", subject: "alice", ttl: time.Hour}, scripted{err: broken}, scripted{err: broken},
		scripted{tok: "b", subject: "alice", ttl: time.Hour})
	if _, err := r.Token(ctx); err != nil {
		t.Fatal(err)
	}
	s.advance(time.Hour - 10*time.Second)
	if tok, err := r.Token(ctx); err != nil || name(tok) != "a" {
		t.Errorf("a failed early renewal: %q %v, want the token in hand", tok, err)
	}
	s.advance(10 * time.Second)
	_, err := r.Token(ctx)
	if restclient.RenewalReason(err) != broken.Reason {
		t.Errorf("an expired token whose renewal fails: %v", err)
	}
	// The calls within RetryAfterFailure answer that failure without
	// fetching; the first after it fetches.
	if _, err := r.Token(ctx); restclient.RenewalReason(err) != broken.Reason || s.count() != 3 {
		t.Errorf("a call right after the failure: %v after %d fetches, want the failure after 3", err, s.count())
	}
	if _, err := r.Renew(ctx, "any"); restclient.RenewalReason(err) != broken.Reason || s.count() != 3 {
		t.Errorf("a refusal right after the failure: %v after %d fetches, want the failure after 3", err, s.count())
	}
	s.advance(restclient.RetryAfterFailure)
	if tok, err := r.Token(ctx); err != nil || name(tok) != "b" || s.count() != 4 {
		t.Errorf("the call after RetryAfterFailure: %q %v, want b", tok, err)
	}
	// A plain error from Fetch gets a reason that says so.
	_, r2, _ := newScript(scripted{err: errors.New("boom")})
	if _, err := r2.Token(ctx); restclient.RenewalReason(err) != "obtaining a token failed" {
		t.Errorf("a plain fetch error: %v", err)
	}
}

// TestRenewingRefused: Renew replaces a refused token once, however many
// calls report it; the source giving the refused token again is an error.
func TestRenewingRefused(t *testing.T) {
	ctx := context.Background()
	s, r, _ := newScript(scripted{tok: "a", subject: "alice", ttl: time.Hour}, scripted{tok: "b", subject: "alice", ttl: time.Hour})
	a, _ := r.Token(ctx)
	b, err := r.Renew(ctx, a)
	if err != nil || name(b) != "b" {
		t.Fatalf("Renew: %q %v", b, err)
	}
	if again, err := r.Renew(ctx, a); err != nil || again != b || s.count() != 2 {
		t.Errorf("a second report of the same refusal: %q %v after %d fetches, want b without a fetch", again, err, s.count())
	}

	s2, r2, _ := newScript(scripted{tok: "a", subject: "alice", ttl: time.Hour}, scripted{tok: "a", subject: "alice", ttl: time.Hour})
	a, _ = r2.Token(ctx)
	// The scripted source formats the expiry into the token: the same
	// clock gives the same token.
	if _, err := r2.Renew(ctx, a); err == nil || s2.count() != 2 {
		t.Errorf("the refused token given again: %v", err)
	}
}

// TestRenewingIdentity: a token naming another principal than the first
// is never handed out; the source stops for good and says why.
func TestRenewingIdentity(t *testing.T) {
	ctx := context.Background()
	s, r, stopped := newScript(scripted{tok: "a", subject: "alice", ttl: time.Minute}, scripted{tok: "m", subject: "mallory", ttl: time.Hour},
		scripted{tok: "c", subject: "alice", ttl: time.Hour})
	if _, err := r.Token(ctx); err != nil {
		t.Fatal(err)
	}
	s.advance(time.Minute)
	tok, err := r.Token(ctx)
	if tok != "" || !errors.Is(err, restclient.ErrIdentityChanged) || !strings.Contains(err.Error(), `subject "mallory"`) {
		t.Fatalf("another principal's token: %q %v", tok, err)
	}
	if tok, err := r.Token(ctx); tok != "" || !errors.Is(err, restclient.ErrIdentityChanged) || s.count() != 2 {
		t.Errorf("after the stop: %q %v after %d fetches", tok, err, s.count())
	}
	// Stop runs on its own goroutine.
	select {
	case err := <-stopped:
		if !errors.Is(err, restclient.ErrIdentityChanged) {
			t.Errorf("Stop(%v)", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Stop was not called")
	}
}

// TestRenewingOneFetch: calls that need a token at once share one fetch.
func TestRenewingOneFetch(t *testing.T) {
	release := make(chan struct{})
	var fetches atomic.Int32
	r := restclient.NewRenewing(restclient.RenewingOptions{
		Fetch: func(context.Context) (string, error) {
			fetches.Add(1)
			<-release
			return "tok", nil
		},
		Check: func(context.Context, string) (restclient.Checked, error) {
			return restclient.Checked{Identity: restclient.Identity{Subject: "s", Tenant: "t"}}, nil
		}})
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() { got[i], _ = r.Token(context.Background()) })
	}
	gatewaytest.Eventually(t, "the first fetch", 10*time.Second, func() bool { return fetches.Load() != 0 })
	close(release)
	wg.Wait()
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
	for i, tok := range got {
		if tok != "tok" {
			t.Errorf("call %d got %q", i, tok)
		}
	}
}

// TestDoRenewsRefusedToken: a request refused 401 invalid-token is sent
// once more with the renewed token; a static token or a failed renewal
// leaves the refusal as the answer, the latter with RenewErr.
func TestDoRenewsRefusedToken(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+" "+r.Header.Get("Idempotency-Key")+" "+string(b))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer fresh" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"status":401,"code":"invalid-token","detail":"the access token is not accepted: expired"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	t.Cleanup(srv.Close)
	call := func(src restclient.TokenSource) *restclient.Response {
		t.Helper()
		mu.Lock()
		seen = nil
		mu.Unlock()
		c, err := restclient.New(srv.URL, &restclient.Options{Token: src})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.CallTool(context.Background(), contracts.ToolSubmitIntent, []byte(`{"intent":"x","idempotencyKey":"key-0000000000000001"}`))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	renewing := restclient.NewRenewing(restclient.RenewingOptions{
		Fetch: func() func(context.Context) (string, error) {
			toks := []string{"stale", "fresh"}
			return func(context.Context) (string, error) { t := toks[0]; toks = toks[1:]; return t, nil }
		}(),
		Check: func(context.Context, string) (restclient.Checked, error) {
			return restclient.Checked{Identity: restclient.Identity{Subject: "s", Tenant: "t"}}, nil
		}})
	if resp := call(renewing); resp.Status != http.StatusOK || len(seen) != 2 ||
		seen[1] != `Bearer fresh key-0000000000000001 {"intent":"x"}` || seen[0] != `Bearer stale key-0000000000000001 {"intent":"x"}` {
		t.Errorf("renewed: %d, sent %q", resp.Status, seen)
	}
	if resp := call(restclient.StaticToken("stale")); resp.Status != http.StatusUnauthorized || resp.RenewErr != nil || len(seen) != 1 {
		t.Errorf("static: %d %v, sent %q", resp.Status, resp.RenewErr, seen)
	}
	failing := restclient.NewRenewing(restclient.RenewingOptions{
		Fetch: func() func(context.Context) (string, error) {
			n := 0
			return func(context.Context) (string, error) {
				if n++; n == 1 {
					return "stale", nil
				}
				return "", &restclient.RenewError{Reason: "the token command failed (exit status 1)"}
			}
		}(),
		Check: func(context.Context, string) (restclient.Checked, error) {
			return restclient.Checked{Identity: restclient.Identity{Subject: "s", Tenant: "t"}}, nil
		}})
	resp := call(failing)
	if resp.Status != http.StatusUnauthorized || restclient.RenewalReason(resp.RenewErr) != "the token command failed (exit status 1)" || len(seen) != 1 {
		t.Errorf("failed renewal: %d %v, sent %q", resp.Status, resp.RenewErr, seen)
	}
}

// TestClaimsCheck reads a token's identity and expiry from its claims,
// and refuses a token that names no subject or tenant.
func TestClaimsCheck(t *testing.T) {
	jwt := func(claims string) string {
		return "eyJhbGciOiJFUzI1NiJ9." + b64(claims) + ".c2ln"
	}
	ctx := context.Background()
	chk, err := restclient.ClaimsCheck("")(ctx, jwt(`{"iss":"https://i","sub":"alice","tenant_id":"t1","azp":"cli","exp":1900000000}`))
	want := restclient.Identity{Issuer: "https://i", Subject: "alice", Tenant: "t1", ClientID: "cli"}
	if err != nil || chk.Identity != want || !chk.Expiry.Equal(time.Unix(1900000000, 0)) {
		t.Errorf("ClaimsCheck: %+v %v", chk, err)
	}
	chk, err = restclient.ClaimsCheck("org")(ctx, jwt(`{"sub":"alice","org":"o1","client_id":"c","azp":"x"}`))
	if err != nil || chk.Tenant != "o1" || chk.ClientID != "c" || !chk.Expiry.IsZero() {
		t.Errorf("ClaimsCheck(org): %+v %v", chk, err)
	}
	for _, bad := range []string{"opaque", jwt(`{"sub":"alice"}`), jwt(`{"tenant_id":"t"}`), jwt(`[1]`), jwt(`{"sub":"a","tenant_id":"t","exp":1.5}`),
		"a.!!.c", jwt(`{"sub":"a","tenant_id":"t"} {}`)} {
		if _, err := restclient.ClaimsCheck("")(ctx, bad); restclient.RenewalReason(err) == "" {
			t.Errorf("ClaimsCheck(%q): %v, want a refusal with a reason", bad, err)
		}
	}
	if _, err := restclient.ClaimsCheck("")(ctx, jwt(`{"sub":"a"}`)); !strings.Contains(err.Error(), "--tenant-claim") {
		t.Errorf("a token without the tenant claim does not name the fix: %v", err)
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func ExampleSplitCommand() {
	argv, _ := restclient.SplitCommand(`sh -c 'praxa token --data-dir "$HOME/.praxa" | tr -d "\n"'`)
	for _, a := range argv {
		fmt.Printf("[%s]\n", a)
	}
	// Output:
	// [sh]
	// [-c]
	// [praxa token --data-dir "$HOME/.praxa" | tr -d "\n"]
}

// FuzzClaimsCheck: no token makes the check panic; one it accepts names a
// subject and a tenant, and a well-formed token's claims come back as
// they were written.
func FuzzClaimsCheck(f *testing.F) {
	f.Add("alice", "t1", int64(1900000000), "e30")
	f.Add("", "", int64(-1), "!!")
	check := restclient.ClaimsCheck("")
	f.Fuzz(func(t *testing.T, sub, tenant string, exp int64, raw string) {
		if chk, err := check(context.Background(), "h."+raw+".s"); err == nil && (chk.Subject == "" || chk.Tenant == "") {
			t.Errorf("accepted %q without a subject or tenant: %+v", raw, chk)
		}
		b, _ := json.Marshal(map[string]any{"sub": sub, "tenant_id": tenant, "exp": exp})
		// JSON holds only valid UTF-8: what was written is what it reads.
		var written struct{ Sub, Tenant string }
		_ = json.Unmarshal(b, &struct {
			Sub    *string `json:"sub"`
			Tenant *string `json:"tenant_id"`
		}{&written.Sub, &written.Tenant})
		sub, tenant = written.Sub, written.Tenant
		chk, err := check(context.Background(), "h."+base64.RawURLEncoding.EncodeToString(b)+".s")
		if sub == "" || tenant == "" {
			if err == nil {
				t.Errorf("accepted a token without a subject or tenant: %s", b)
			}
			return
		}
		if err != nil || chk.Subject != sub || chk.Tenant != tenant || chk.Expiry.Unix() != exp {
			t.Errorf("%s: %+v %v", b, chk, err)
		}
	})
}

// TestRenewingCancelledFetch: the cancellation of the call that fetches
// is not the answer of the calls that waited for it; one of them fetches
// anew, and no failure is remembered.
func TestRenewingCancelledFetch(t *testing.T) {
	var fetches atomic.Int32
	r := restclient.NewRenewing(restclient.RenewingOptions{
		Fetch: func(ctx context.Context) (string, error) {
			if fetches.Add(1) == 1 {
				<-ctx.Done()
				return "", &restclient.RenewError{Reason: "the token command did not finish", Err: ctx.Err()}
			}
			return "tok", nil
		},
		Check: func(context.Context, string) (restclient.Checked, error) {
			return restclient.Checked{Identity: restclient.Identity{Subject: "s", Tenant: "t"}}, nil
		}})
	first, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.Token(first); done <- err }()
	gatewaytest.Eventually(t, "the first fetch", 10*time.Second, func() bool { return fetches.Load() != 0 })
	waited := make(chan string, 1)
	second := &doneWatch{Context: context.Background(), asked: make(chan struct{})}
	go func() { tok, _ := r.Token(second); waited <- tok }()
	select { // the second call waits on the first's fetch
	case <-second.asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the second call never waited on the first's fetch")
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled call got a token")
	}
	if tok := <-waited; tok != "tok" || fetches.Load() != 2 {
		t.Errorf("the waiting call: %q after %d fetches, want tok after 2", tok, fetches.Load())
	}
}

// doneWatch is a context that closes asked when a call first asks for its
// Done: a Renewing source's call does so only to wait on another call's
// fetch.
type doneWatch struct {
	context.Context
	asked chan struct{}
	once  sync.Once
}

func (c *doneWatch) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}
