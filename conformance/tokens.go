package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/issuer"
)

// Tenant names one of the two tenants the suite works with: tenant A owns
// the objects the cases create, tenant B tries to reach them.
type Tenant string

// The two tenants, and a third that only the quota case uses: the target
// is configured with a small quota for it (server.quotas.tenants), so
// filling it up leaves tenants A and B alone.
const (
	TenantA     Tenant = "a"
	TenantB     Tenant = "b"
	TenantQuota Tenant = "quota"
)

// ErrNoToken is returned by a Tokens that cannot supply the token asked
// for; the case that needed it is skipped.
var ErrNoToken = errors.New("conformance: no such token")

// Tokens supplies access tokens the target accepts.
type Tokens interface {
	// Token returns a valid token of tenant with exactly scopes (every
	// scope of the contract when asked by the suite for "all"), or an
	// error wrapping ErrNoToken when it has none.
	Token(ctx context.Context, tenant Tenant, scopes []string) (string, error)
}

// Forgery names a deliberately invalid token.
type Forgery string

// The forgeries the authentication cases send. Each is a token of tenant A
// with every scope that is otherwise valid.
const (
	ForgeAlgNone           Forgery = "alg-none"
	ForgeHMACPublicKey     Forgery = "hs256-public-key"
	ForgeUnknownKeyID      Forgery = "unknown-kid"
	ForgeForeignKey        Forgery = "foreign-key"
	ForgeTamperedSignature Forgery = "tampered-signature"
	ForgeWrongIssuer       Forgery = "wrong-iss"
	ForgeNoIssuer          Forgery = "no-iss"
	ForgeIssuerSlash       Forgery = "iss-trailing-slash"
	ForgeWrongAudience     Forgery = "wrong-aud"
	ForgeNoAudience        Forgery = "no-aud"
	ForgeExpired           Forgery = "expired"
	ForgeNoExpiry          Forgery = "no-exp"
	ForgeNotYetValid       Forgery = "nbf-ahead"
	ForgeIssuedInFuture    Forgery = "iat-ahead"
	ForgeNoSubject         Forgery = "no-sub"
	ForgeNoTokenID         Forgery = "no-jti"
	ForgeNoClientID        Forgery = "no-client_id"
	ForgeNoTenant          Forgery = "no-tenant"
	ForgeExpiryAsString    Forgery = "exp-string"
	ForgeAudienceAsNumber  Forgery = "aud-number"
)

// AudienceList is not a forgery but a variant a verifier must accept: aud
// an array that contains the target's resource beside another audience
// (standards #11).
const AudienceList Forgery = "aud-list"

// Forger is a Tokens that can also sign forged tokens: it holds a signing
// key the target trusts.
type Forger interface {
	Tokens
	Forge(ctx context.Context, f Forgery) (string, error)
}

// AllScopes returns every scope of the contract, sorted.
func AllScopes() []string {
	var out []string
	for _, s := range contracts.Scopes() {
		out = append(out, string(s))
	}
	return out
}

// Default tenant names and the tenant claim of IssuerTokens.
const (
	DefaultTenantA     = "conformance-a"
	DefaultTenantB     = "conformance-b"
	DefaultTenantQuota = "conformance-quota"
	DefaultTenantClaim = "tenant_id"
)

// IssuerTokens signs tokens with an issuer the target trusts: the suite's
// own (StartIssuer) or one whose key the operator hands over (the key of
// praxa serve --dev). It supplies every token and every forgery.
type IssuerTokens struct {
	Issuer *issuer.Issuer
	// IssuerURL is the iss claim (default: the issuer's own URL).
	IssuerURL string
	// Audience is the target's resource identifier (the aud claim).
	Audience string
	// TenantClaim names the claim that carries the tenant (default
	// tenant_id).
	TenantClaim string
	// TenantA, TenantB and TenantQuota are the tenants' names (defaults
	// conformance-a, conformance-b and conformance-quota).
	TenantA, TenantB, TenantQuota string
	// TTL is the lifetime of the tokens (default 15 minutes).
	TTL time.Duration
}

var _ Forger = (*IssuerTokens)(nil)

func (it *IssuerTokens) tenantName(t Tenant) string {
	a, b := it.TenantA, it.TenantB
	if a == "" {
		a = DefaultTenantA
	}
	if b == "" {
		b = DefaultTenantB
	}
	switch t {
	case TenantB:
		return b
	case TenantQuota:
		if it.TenantQuota != "" {
			return it.TenantQuota
		}
		return DefaultTenantQuota
	}
	return a
}

func (it *IssuerTokens) claims(tenant Tenant, scopes []string) map[string]any {
	ttl := it.TTL
	if ttl == 0 {
		ttl = 15 * time.Minute
	}
	name := it.tenantName(tenant)
	c := it.Issuer.Claims(it.IssuerURL, it.Audience, "conformance-"+string(tenant), name, scopes, ttl)
	c["client_id"] = "praxa-conformance"
	if tc := it.TenantClaim; tc != "" && tc != "tenant_id" {
		delete(c, "tenant_id")
		c[tc] = name
	}
	return c
}

// Token implements Tokens.
func (it *IssuerTokens) Token(_ context.Context, tenant Tenant, scopes []string) (string, error) {
	return it.Issuer.Sign(it.claims(tenant, scopes))
}

// Forge implements Forger.
func (it *IssuerTokens) Forge(_ context.Context, f Forgery) (string, error) {
	c := it.claims(TenantA, AllScopes())
	var opts []issuer.SignOption
	now := time.Now()
	tenantClaim := it.TenantClaim
	if tenantClaim == "" {
		tenantClaim = DefaultTenantClaim
	}
	switch f {
	case ForgeAlgNone:
		opts = append(opts, issuer.WithAlgNone())
	case ForgeHMACPublicKey:
		opts = append(opts, issuer.WithHMACPublicKey())
	case ForgeUnknownKeyID:
		opts = append(opts, issuer.WithKeyID("conformance-unknown-"+issuer.NewTokenID()))
	case ForgeForeignKey:
		opts = append(opts, issuer.WithForeignKey())
	case ForgeTamperedSignature:
		opts = append(opts, issuer.WithTamperedSignature())
	case ForgeWrongIssuer:
		c["iss"] = "https://issuer.conformance.invalid"
	case ForgeNoIssuer:
		delete(c, "iss")
	case ForgeIssuerSlash:
		c["iss"] = strings.TrimSuffix(fmt.Sprint(c["iss"]), "/") + "/"
	case ForgeWrongAudience:
		c["aud"] = "https://another-resource.conformance.invalid"
	case ForgeNoAudience:
		delete(c, "aud")
	case ForgeExpired:
		c["iat"], c["nbf"], c["exp"] = now.Add(-time.Hour).Unix(), now.Add(-time.Hour).Unix(), now.Add(-10*time.Minute).Unix()
	case ForgeNoExpiry:
		delete(c, "exp")
	case ForgeNotYetValid:
		c["nbf"] = now.Add(time.Hour).Unix()
		c["exp"] = now.Add(2 * time.Hour).Unix()
	case ForgeIssuedInFuture:
		c["iat"] = now.Add(time.Hour).Unix()
		c["exp"] = now.Add(2 * time.Hour).Unix()
	case ForgeNoSubject:
		delete(c, "sub")
	case ForgeNoTokenID:
		delete(c, "jti")
	case ForgeNoClientID:
		delete(c, "client_id")
	case ForgeNoTenant:
		delete(c, tenantClaim)
	case ForgeExpiryAsString:
		c["exp"] = fmt.Sprint(c["exp"])
	case ForgeAudienceAsNumber:
		c["aud"] = 42
	case AudienceList:
		c["aud"] = []string{"https://another-resource.conformance.invalid", it.Audience}
	default:
		return "", fmt.Errorf("conformance: unknown forgery %q", f)
	}
	return it.Issuer.Sign(c, opts...)
}

// TrustInstructions tells the operator how to make a target trust these
// tokens for a run.
func (it *IssuerTokens) TrustInstructions() string {
	iss := it.IssuerURL
	if iss == "" {
		iss = it.Issuer.Issuer()
	}
	claim := it.TenantClaim
	if claim == "" {
		claim = DefaultTenantClaim
	}
	alg := "?"
	if keys := it.Issuer.PublicKeys(); len(keys) > 0 {
		alg = keys[0].Algorithm
	}
	return fmt.Sprintf(`Make the target trust the suite's token issuer for this run:
  issuer URL:   %s  (OIDC discovery at %s%s, keys at %s%s)
  algorithm:    %s
  audience:     %s  (the target's resource identifier)
  tenant claim: %s  (tenants %q and %q)
For praxa serve, in praxec.yaml:
  auth:
    resource: %s
    issuers:
      - issuer: %s
    claims:
      tenant: %s
`, iss, iss, issuer.DiscoveryPath, iss, issuer.JWKSPath, alg, it.Audience, claim, it.tenantName(TenantA), it.tenantName(TenantB),
		it.Audience, iss, claim)
}

// MintFunc supplies tokens from a function, for a target whose issuer the
// suite cannot sign for. Forgeries are not available: the cases that need
// them are skipped.
type MintFunc func(ctx context.Context, tenant Tenant, scopes []string) (string, error)

// Token implements Tokens.
func (f MintFunc) Token(ctx context.Context, tenant Tenant, scopes []string) (string, error) {
	return f(ctx, tenant, scopes)
}

// PreMinted supplies tokens minted beforehand: one per tenant with every
// scope, and for tenant A one per scope that has every scope but that one.
// Cases that need any other token are skipped.
type PreMinted struct {
	A, B string
	// Without maps a scope to a token of tenant A that has every scope of
	// the contract except it.
	Without map[string]string
}

// Token implements Tokens.
func (p PreMinted) Token(_ context.Context, tenant Tenant, scopes []string) (string, error) {
	all := AllScopes()
	sorted := slices.Sorted(slices.Values(scopes))
	if slices.Equal(sorted, all) && tenant != TenantQuota {
		tok := p.A
		if tenant == TenantB {
			tok = p.B
		}
		if tok != "" {
			return tok, nil
		}
	} else if tenant == TenantA && len(sorted) == len(all)-1 {
		for _, s := range all {
			if !slices.Contains(sorted, s) {
				if tok := p.Without[s]; tok != "" {
					return tok, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%w: tenant %s with scopes %q was not minted beforehand", ErrNoToken, tenant, strings.Join(sorted, " "))
}
