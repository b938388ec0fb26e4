package auth

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
)

// ScopeSet is a set of granted scopes. Scopes match exactly and
// case-sensitively; unknown scopes are kept and simply never match a
// contract scope.
type ScopeSet map[contracts.Scope]struct{}

// NewScopeSet returns the set of scopes.
func NewScopeSet(scopes ...contracts.Scope) ScopeSet {
	s := make(ScopeSet, len(scopes))
	for _, sc := range scopes {
		s[sc] = struct{}{}
	}
	return s
}

// Has reports whether s holds scope.
func (s ScopeSet) Has(scope contracts.Scope) bool {
	_, ok := s[scope]
	return ok
}

// Sorted returns the scopes in sorted order.
func (s ScopeSet) Sorted() []contracts.Scope {
	return slices.Sorted(maps.Keys(s))
}

// String returns the scopes sorted and space-separated, as in a scope claim.
func (s ScopeSet) String() string {
	var b strings.Builder
	for i, sc := range s.Sorted() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(sc))
	}
	return b.String()
}

// Principal is the caller a verified access token describes. The edge builds
// it; the service layer decides with it. Treat it as read-only: Verify hands
// every caller its own copy.
type Principal struct {
	// Subject is the sub claim.
	Subject string
	// ClientID is the client_id claim (or azp when client_id is absent).
	ClientID string
	// Tenant is the tenant claim (config auth.claims.tenant).
	Tenant string
	// Scopes are the granted scopes, from scope and scp.
	Scopes ScopeSet
	// Compartments and Purposes are the memory compartments and purposes the
	// token allows; nil when the token names none.
	Compartments []string
	Purposes     []string
	// Tools is the token's tool allowlist; nil means no allowlist (every
	// tool), an empty, non-nil slice allows no tool.
	Tools []string
	// TokenID is the jti claim.
	TokenID string
	// Issuer is the iss claim, a configured trusted issuer.
	Issuer string
	// Expiry is the exp claim.
	Expiry time.Time
	// LocalUID is set on the one principal that is no token's: the
	// operating-system account running an operator command with direct
	// access to the store (praxa approvals, capabilities, lexicon,
	// tokens), whose Subject is then os:NAME. It holds the account's uid,
	// which every audit event of the principal records (attribute uid).
	LocalUID string
}

// HasScope reports whether the principal was granted scope.
func (p *Principal) HasScope(scope contracts.Scope) bool {
	return p != nil && p.Scopes.Has(scope)
}

// MissingScopes returns the scopes of need the principal lacks, in the order
// given and without duplicates; nil when it holds them all. A 403 challenge
// lists them all at once.
func (p *Principal) MissingScopes(need ...contracts.Scope) []contracts.Scope {
	var out []contracts.Scope
	for _, sc := range need {
		if !p.HasScope(sc) && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// AllowsTool reports whether the token's tool allowlist admits the tool
// name. A token without an allowlist admits every tool. The allowlist only
// narrows: the scope check still applies.
func (p *Principal) AllowsTool(name string) bool {
	if p == nil {
		return false
	}
	return p.Tools == nil || slices.Contains(p.Tools, name)
}

// Namespace returns a stable identifier of the principal's tenant, issuer,
// subject and client: the lowercase hex SHA-256 of a length-prefixed
// encoding of the four, so no choice of values can make two principals
// collide. Idempotency keys are stored under it. It must never change
// between releases: stored keys would stop matching.
func (p *Principal) Namespace() string {
	h := sha256.New()
	h.Write([]byte("praxa-principal-v1"))
	var n [binary.MaxVarintLen64]byte
	for _, f := range []string{p.Tenant, p.Issuer, p.Subject, p.ClientID} {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(f)))])
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Clone returns a deep copy of p.
func (p *Principal) Clone() *Principal {
	if p == nil {
		return nil
	}
	c := *p
	c.Scopes = maps.Clone(p.Scopes)
	c.Compartments = slices.Clone(p.Compartments)
	c.Purposes = slices.Clone(p.Purposes)
	c.Tools = slices.Clone(p.Tools)
	return &c
}

type principalKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx carries, if any.
func FromContext(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok && p != nil
}

type challengeKey struct{}

// ChallengeFunc builds the WWW-Authenticate value of a refusal for want
// of scopes (RFC 6750 error="insufficient_scope" naming scopes, with the
// resource's metadata URL).
type ChallengeFunc func(scopes []string) string

// WithChallenge returns ctx carrying the transport's challenge builder, so
// that a protocol answered inside the request (MCP over HTTP) can step a
// client up with the same challenge the transport sends.
func WithChallenge(ctx context.Context, f ChallengeFunc) context.Context {
	return context.WithValue(ctx, challengeKey{}, f)
}

// ChallengeFrom returns the challenge builder ctx carries, if any.
func ChallengeFrom(ctx context.Context) (ChallengeFunc, bool) {
	f, ok := ctx.Value(challengeKey{}).(ChallengeFunc)
	return f, ok && f != nil
}
