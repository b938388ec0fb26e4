package restclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// TokenSource gives the bearer token each request carries.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// TokenFunc adapts a function to a TokenSource.
type TokenFunc func(ctx context.Context) (string, error)

// Token implements TokenSource.
func (f TokenFunc) Token(ctx context.Context) (string, error) { return f(ctx) }

// StaticToken returns a TokenSource that always answers tok: it cannot
// renew it.
func StaticToken(tok string) TokenSource {
	return TokenFunc(func(context.Context) (string, error) { return tok, nil })
}

// Renewer is a TokenSource that can replace a token the gateway refused
// (401 invalid-token: expired, revoked). A Client whose Options.Token is
// a Renewer renews a refused token and sends the request again, once per
// request: an authentication refusal comes before anything else, so
// nothing of the first request ran.
type Renewer interface {
	TokenSource
	// Renew returns the token to use instead of refused: a fresh one,
	// or the one another caller has already renewed it with; never
	// refused itself.
	Renew(ctx context.Context, refused string) (string, error)
}

// Identity names the principal a token stands for: the claims the
// gateway keys a principal's state on (its idempotency namespace).
// Every token a Renewing source obtains must name the identity its first
// one named.
type Identity struct {
	Issuer, Subject, Tenant, ClientID string
}

// String names the identity for people (never a token).
func (id Identity) String() string {
	return fmt.Sprintf("subject %q of tenant %q (issuer %s, client %q)", id.Subject, id.Tenant, id.Issuer, id.ClientID)
}

// Checked is what a check learned of a token.
type Checked struct {
	Identity
	// Expiry is the token's exp; zero when it has none.
	Expiry time.Time
}

// ErrIdentityChanged is the cause of the RenewError a Renewing source
// answers, for good, once a token it obtained named another identity
// than its first.
var ErrIdentityChanged = errors.New("restclient: the renewed token names another principal")

// RenewError is a token that could not be obtained or renewed. Reason is
// safe to show to the caller of a tool (it never holds a token, a secret
// or what a command printed); Err, for logs, may say more.
type RenewError struct {
	Reason string
	Err    error
}

// Error implements error.
func (e *RenewError) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *RenewError) Unwrap() error { return e.Err }

// errRefusedAgain is a renewal that gave the token that was refused.
var errRefusedAgain = &RenewError{Reason: "the credential source gave again the token that was refused"}

// RenewalReason returns the Reason of the RenewError in err's chain, ""
// when there is none.
func RenewalReason(err error) string {
	var re *RenewError
	if errors.As(err, &re) {
		return re.Reason
	}
	return ""
}

// RenewingOptions configure NewRenewing.
type RenewingOptions struct {
	// Fetch obtains a new token (required). Its *RenewError's Reason is
	// what callers are told when it fails.
	Fetch func(ctx context.Context) (string, error)
	// Check verifies a token Fetch gave and says whose it is and when it
	// expires (required); a token it refuses is not used.
	Check func(ctx context.Context, tok string) (Checked, error)
	// Stop is called once, when a token names another identity than the
	// first: the source then answers every call with that error, and
	// whoever acts with it should stop.
	Stop func(error)
	// Logger receives the renewals that failed while the token in hand
	// was still valid (nil: none are logged).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Renewal margin: a token is renewed once it is within renewMargin of its
// expiry, or within a fifth of its lifetime when that is shorter.
const renewMargin = 30 * time.Second

// RetryAfterFailure is how long a Renewing source answers the failure of
// its last Fetch rather than fetching again (a tools/list alone asks for
// the token once per tool, and a failing command must not run for each).
const RetryAfterFailure = 5 * time.Second

// Renewing is a TokenSource that obtains its token from a Fetch function
// and renews it: on the first call after the token comes within a margin
// of its exp (30 seconds, or a fifth of its lifetime when that is
// shorter), and when the gateway refused it (Renew). Every token is
// checked before it is used, and must name the identity of the first: a
// token naming another stops the source for good (Stop), so that whoever
// acts with it never switches principal. Calls that need a new token at
// the same time share one Fetch; a Fetch that failed is not tried again
// for RetryAfterFailure. It is safe for concurrent use.
type Renewing struct {
	o   RenewingOptions
	now func() time.Time

	mu       sync.Mutex
	tok      string
	got, exp time.Time
	first    *Identity
	stopped  error
	// failed is the last Fetch's failure, at failedAt; nil once one
	// succeeds.
	failed   error
	failedAt time.Time
	flight   *flight
	stopOnce sync.Once
}

// NewRenewing returns a source that has no token yet: the first call
// fetches it.
func NewRenewing(o RenewingOptions) *Renewing {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Renewing{o: o, now: now}
}

// Identity returns the identity every token must name: the first token's,
// once there was one.
func (r *Renewing) Identity() (Identity, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == nil {
		return Identity{}, false
	}
	return *r.first, true
}

// Token implements TokenSource: the token in hand, renewed first when it
// is due.
func (r *Renewing) Token(ctx context.Context) (string, error) { return r.obtain(ctx, "") }

// Renew implements Renewer.
func (r *Renewing) Renew(ctx context.Context, refused string) (string, error) {
	if refused == "" {
		return "", errors.New("restclient: Renew needs the refused token")
	}
	return r.obtain(ctx, refused)
}

// due reports whether the token in hand must be renewed before it is
// used. The caller holds r.mu.
func (r *Renewing) due(now time.Time) bool {
	if r.tok == "" {
		return true
	}
	if r.exp.IsZero() {
		return false
	}
	margin := min(renewMargin, r.exp.Sub(r.got)/5)
	return !now.Before(r.exp.Add(-margin))
}

// usable reports whether the token in hand is still within its
// lifetime. The caller holds r.mu.
func (r *Renewing) usable(now time.Time) bool {
	return r.tok != "" && (r.exp.IsZero() || now.Before(r.exp))
}

// flight is one Fetch under way, whose result the calls that need a
// token meanwhile share.
type flight struct {
	done chan struct{}
	tok  string
	err  error
	// cancelled: the call that fetched was cancelled, so its failure
	// is not the answer of the calls that waited.
	cancelled bool
}

// obtain returns the token in hand unless it is due or is refused, and
// otherwise fetches, checks and keeps a new one; calls that need one
// meanwhile share the result of that fetch.
func (r *Renewing) obtain(ctx context.Context, refused string) (string, error) {
	r.mu.Lock()
	for r.flight != nil {
		f := r.flight
		r.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		switch {
		case f.err != nil && f.cancelled:
			// Another call's cancellation is not this call's answer.
		case refused != "" && f.err == nil && f.tok == refused:
			return "", errRefusedAgain
		default:
			return f.tok, f.err
		}
		r.mu.Lock()
	}
	if r.stopped != nil {
		err := r.stopped
		r.mu.Unlock()
		return "", err
	}
	if refused != "" && r.tok != refused {
		// Another call has already replaced the refused token: the one
		// in hand serves, renewed first if it is due.
		refused = ""
	}
	now := r.now()
	if refused == "" && !r.due(now) {
		tok := r.tok
		r.mu.Unlock()
		return tok, nil
	}
	if r.failed != nil && now.Before(r.failedAt.Add(RetryAfterFailure)) {
		tok, err := "", r.failed
		if refused == "" && r.usable(now) {
			tok, err = r.tok, nil
		}
		r.mu.Unlock()
		return tok, err
	}
	f := &flight{done: make(chan struct{})}
	r.flight = f
	r.mu.Unlock()

	tok, chk, err := r.fetch(ctx)

	r.mu.Lock()
	f.tok, f.err = r.settle(ctx, refused, tok, chk, err)
	f.cancelled = ctx.Err() != nil
	r.flight = nil
	close(f.done)
	r.mu.Unlock()
	return f.tok, f.err
}

// settle keeps a fetched token, or decides what a failed fetch answers.
// The caller holds r.mu.
func (r *Renewing) settle(ctx context.Context, refused, tok string, chk Checked, err error) (string, error) {
	now := r.now()
	switch {
	case err != nil:
		if ctx.Err() == nil { // a cancelled call's failure says nothing of the source
			r.failed, r.failedAt = err, now
		}
	case r.first != nil && chk.Identity != *r.first:
		r.stopped = &RenewError{Reason: fmt.Sprintf("the renewed token names %s, not %s as the first did; "+
			"the server stops rather than act as another principal", chk.Identity, *r.first), Err: ErrIdentityChanged}
		r.tok = ""
		if r.o.Stop != nil {
			stopped := r.stopped
			r.stopOnce.Do(func() { go r.o.Stop(stopped) })
		}
		return "", r.stopped
	case tok == refused:
		err = errRefusedAgain
		r.failed, r.failedAt = err, now
	default:
		if r.first == nil {
			id := chk.Identity
			r.first = &id
		}
		r.tok, r.got, r.exp, r.failed = tok, now, chk.Expiry, nil
		return tok, nil
	}
	// A renewal due early that failed leaves the token in hand in use
	// while it is valid.
	if refused == "" && r.usable(now) {
		if r.o.Logger != nil {
			r.o.Logger.WarnContext(ctx, "renewing the access token failed; the current one is used until it expires",
				"expires", r.exp, "err", err)
		}
		return r.tok, nil
	}
	return "", err
}

// fetch runs Fetch and Check.
func (r *Renewing) fetch(ctx context.Context) (string, Checked, error) {
	tok, err := r.o.Fetch(ctx)
	if err != nil {
		if RenewalReason(err) == "" {
			err = &RenewError{Reason: "obtaining a token failed", Err: err}
		}
		return "", Checked{}, err
	}
	chk, err := r.o.Check(ctx, tok)
	if err != nil {
		if RenewalReason(err) == "" {
			err = &RenewError{Reason: "the new token is not accepted", Err: err}
		}
		return "", Checked{}, err
	}
	return tok, chk, nil
}

// ClaimsCheck returns a Check that reads a JWT access token's identity
// and expiry from its claims without verifying its signature: iss, sub,
// the tenant claim (tenantClaim; default tenant_id), client_id (or azp)
// and exp. It is the check of a client of a remote gateway, which
// verifies the signature of every token it receives: a token that passes
// both names the principal the gateway acts for. A token without a sub or
// a tenant is refused, so that two tokens cannot both lack what names
// them.
func ClaimsCheck(tenantClaim string) func(ctx context.Context, tok string) (Checked, error) {
	if tenantClaim == "" {
		tenantClaim = "tenant_id"
	}
	return func(_ context.Context, tok string) (Checked, error) {
		c, err := readClaims(tok)
		if err != nil {
			return Checked{}, &RenewError{Reason: "the token is not a JWT access token", Err: err}
		}
		var chk Checked
		chk.Issuer, _ = c["iss"].(string)
		chk.Subject, _ = c["sub"].(string)
		chk.Tenant, _ = c[tenantClaim].(string)
		chk.ClientID, _ = c["client_id"].(string)
		if chk.ClientID == "" {
			chk.ClientID, _ = c["azp"].(string)
		}
		if chk.Subject == "" || chk.Tenant == "" {
			return Checked{}, &RenewError{Reason: fmt.Sprintf("the token names no subject (sub) or no tenant (%s); "+
				"if the gateway reads the tenant from another claim (auth.claims.tenant), name it with --tenant-claim", tenantClaim)}
		}
		if exp, ok := c["exp"].(json.Number); ok {
			sec, err := exp.Int64()
			if err != nil {
				return Checked{}, &RenewError{Reason: "the token's exp is not a whole number of seconds"}
			}
			chk.Expiry = time.Unix(sec, 0)
		}
		return chk, nil
	}
}

// readClaims decodes the payload of a compact JWS without verifying it.
func readClaims(tok string) (map[string]any, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, errors.New("not three dot-separated parts")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var c map[string]any
	if err := dec.Decode(&c); err != nil || c == nil {
		return nil, errors.New("payload: not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("payload: more than one JSON value")
	}
	return c, nil
}
