package auth

import (
	"context"
	"log/slog"
	"time"
)

// Credential is the caller's verified access token as it came in, with
// the claims that name whose it is. It travels in the request's context
// from the edge to the executors, which exchange it for upstream tokens
// (RFC 8693): it is never stored, and it formats, logs and marshals as
// "[redacted]" so that no error, log line, trace or audit event can carry
// the token by accident. Only Token reveals it.
type Credential struct {
	token string
	// Issuer, Tenant, Subject and ClientID are the principal's.
	Issuer, Tenant, Subject, ClientID string
	// TokenID is the token's jti: a revocation of it drops what was
	// obtained with it.
	TokenID string
	// Expiry is the token's exp: the token is never used at or after it.
	Expiry time.Time
}

// NewCredential returns the credential of the raw token that p was
// verified from.
func NewCredential(raw string, p *Principal) *Credential {
	return &Credential{token: raw, Issuer: p.Issuer, Tenant: p.Tenant, Subject: p.Subject, ClientID: p.ClientID, TokenID: p.TokenID, Expiry: p.Expiry}
}

// Token returns the raw access token. Send it only to a token endpoint
// as a subject token; never log, store or echo it.
func (c *Credential) Token() string {
	if c == nil {
		return ""
	}
	return c.token
}

// Live reports whether the token is still within its lifetime at now.
func (c *Credential) Live(now time.Time) bool {
	return c != nil && c.token != "" && (c.Expiry.IsZero() || now.Before(c.Expiry))
}

const redacted = "[redacted]"

// String returns "[redacted]".
func (Credential) String() string { return redacted }

// GoString returns "[redacted]", so %#v does not print the token either.
func (Credential) GoString() string { return redacted }

// LogValue logs the credential as "[redacted]".
func (Credential) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON encodes the credential as "[redacted]".
func (Credential) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

type credentialKey struct{}

// WithCredential returns ctx carrying the caller's credential. The edge
// sets it once the token is verified; a move run inside the request (a
// call, an approval) sees the credential of the person whose request runs
// it, and a move run without a request (a sweeper, a resumed run) sees
// none.
func WithCredential(ctx context.Context, c *Credential) context.Context {
	return context.WithValue(ctx, credentialKey{}, c)
}

// CredentialFrom returns the credential ctx carries, if any.
func CredentialFrom(ctx context.Context) (*Credential, bool) {
	c, ok := ctx.Value(credentialKey{}).(*Credential)
	return c, ok && c != nil
}
