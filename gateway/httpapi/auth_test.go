package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/issuer"
)

// authCase is one request to GET /v8/traces/{id} of an existing trace and
// the answer expected: 200, or a refusal with its problem code and the
// error parameter of its challenge ("" for none).
type authCase struct {
	name string
	// auth builds the request options from a fresh harness-bound token
	// maker; nil means no Authorization at all.
	auth      func(t *testing.T, h *harness) []gatewaytest.RequestOption
	status    int
	code      contracts.Code
	challenge string // error param of WWW-Authenticate; "" for none
}

func withAuthorization(v string) []gatewaytest.RequestOption {
	return []gatewaytest.RequestOption{gatewaytest.Header("Authorization", v)}
}

func signed(spec tok) func(t *testing.T, h *harness) []gatewaytest.RequestOption {
	return func(t *testing.T, h *harness) []gatewaytest.RequestOption {
		return []gatewaytest.RequestOption{gatewaytest.Bearer(h.token(t, spec))}
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// accepted and refusal shorthands.
const (
	ok401   = http.StatusUnauthorized
	invalid = "invalid_token"
)

// TestAuthentication runs checklist items 1-18 against a real issuer.
func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	owner := h.tokenA(t)
	sub := h.submit(t, owner, newKey(), intentBody)
	gatewaytest.WantStatus(t, sub, http.StatusOK)
	trace := sub.TraceID(t)
	path := "/v8/traces/" + trace
	now := h.clock.Now().Unix()
	leeway := int64(time.Duration(h.cfg.Auth.Leeway).Seconds())

	cases := []authCase{
		// 1-3: no credentials: 401 with a challenge that carries no error.
		{name: "no Authorization", status: ok401, code: contracts.CodeUnauthenticated},
		{name: "Basic scheme", auth: func(*testing.T, *harness) []gatewaytest.RequestOption {
			return withAuthorization("Basic YWxpY2U6c2VjcmV0")
		},
			status: ok401, code: contracts.CodeUnauthenticated},
		{name: "Bearer without token", auth: func(*testing.T, *harness) []gatewaytest.RequestOption { return withAuthorization("Bearer") },
			status: ok401, code: contracts.CodeUnauthenticated},
		{name: "Bearer and blanks", auth: func(*testing.T, *harness) []gatewaytest.RequestOption { return withAuthorization("Bearer    ") },
			status: ok401, code: contracts.CodeUnauthenticated},
		{name: "Bearer-invalid scheme", auth: func(*testing.T, *harness) []gatewaytest.RequestOption { return withAuthorization("Bearer-invalid") },
			status: ok401, code: contracts.CodeUnauthenticated},
		{name: "scheme is case-insensitive", auth: func(t *testing.T, h *harness) []gatewaytest.RequestOption {
			return withAuthorization("bEaReR " + h.tokenA(t))
		}, status: http.StatusOK},

		// 4: malformed tokens.
		{name: "not a JWT", auth: func(*testing.T, *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{gatewaytest.Bearer("not.a.jwt")}
		},
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "one segment", auth: func(*testing.T, *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{gatewaytest.Bearer("abcdef")}
		},
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "outside b64token", auth: func(*testing.T, *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{gatewaytest.Bearer("a$b.c%d.e")}
		},
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "header not JSON", auth: func(*testing.T, *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{gatewaytest.Bearer(b64("hello") + "." + b64(`{"sub":"x"}`) + "." + b64("sig"))}
		}, status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "payload not JSON", auth: func(*testing.T, *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{gatewaytest.Bearer(b64(`{"alg":"RS256","typ":"at+jwt"}`) + "." + b64("hello") + "." + b64("sig"))}
		}, status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},

		// 5-9: signatures and algorithms.
		{name: "alg none", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithAlgNone()}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "HS256 keyed with the public key", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithHMACPublicKey()}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "RS384 outside the allowlist", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithAlgorithm("RS384")}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "PS256 outside the allowlist", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithAlgorithm("PS256")}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "ES256 key in the allowlist", auth: func(t *testing.T, h *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{gatewaytest.Bearer(h.token(t, tok{Sign: []issuer.SignOption{issuer.WithAlgorithm("ES256")}}))}
		}, status: http.StatusOK},
		{name: "unknown kid", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithKeyID("no-such-key")}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "foreign key under a published kid", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithForeignKey()}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "tampered signature", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithTamperedSignature()}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},

		// 10: issuer.
		{name: "iss of another issuer", auth: signed(tok{Claims: map[string]any{"iss": "https://evil.example"}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "iss missing", auth: signed(tok{Claims: map[string]any{"iss": nil}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "iss with a trailing slash", auth: func(t *testing.T, h *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{gatewaytest.Bearer(h.token(t, tok{Claims: map[string]any{"iss": h.issURL + "/"}}))}
		}, status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "iss differing in case", auth: func(t *testing.T, h *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{gatewaytest.Bearer(h.token(t, tok{Claims: map[string]any{"iss": strings.ToUpper(h.issURL)}}))}
		}, status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},

		// 11: audience.
		{name: "aud of another resource", auth: signed(tok{Claims: map[string]any{"aud": "https://other.example"}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "aud missing", auth: signed(tok{Claims: map[string]any{"aud": nil}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "aud with a trailing slash", auth: func(t *testing.T, h *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{gatewaytest.Bearer(h.token(t, tok{Claims: map[string]any{"aud": h.cfg.Auth.Resource + "/"}}))}
		}, status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "aud array containing ours", auth: func(t *testing.T, h *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{gatewaytest.Bearer(h.token(t, tok{Claims: map[string]any{"aud": []string{"https://other.example", h.cfg.Auth.Resource}}}))}
		}, status: http.StatusOK},
		{name: "aud array without ours", auth: signed(tok{Claims: map[string]any{"aud": []string{"https://a.example", "https://b.example"}}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},

		// 12-13: time claims, one leeway for all of them.
		{name: "expired beyond the leeway", auth: signed(tok{Claims: map[string]any{
			"exp": now - leeway - 5, "iat": now - 600, "nbf": now - 600}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "expired within the leeway", auth: signed(tok{Claims: map[string]any{
			"exp": now - leeway/3, "iat": now - 600, "nbf": now - 600}}),
			status: http.StatusOK},
		{name: "exp missing", auth: signed(tok{Claims: map[string]any{"exp": nil}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "nbf an hour ahead", auth: signed(tok{Claims: map[string]any{"nbf": now + 3600}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "nbf within the leeway", auth: signed(tok{Claims: map[string]any{"nbf": now + leeway/3}}),
			status: http.StatusOK},
		{name: "iat an hour ahead", auth: signed(tok{Claims: map[string]any{"iat": now + 3600}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},

		// 14: typ (JWT and a missing typ are accepted by default; see
		// TestRequireAtJWT for the strict setting).
		{name: "typ at+jwt", auth: signed(tok{}), status: http.StatusOK},
		{name: "typ application/at+jwt", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithType("application/at+jwt")}}),
			status: http.StatusOK},
		{name: "typ JWT accepted by default", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithType("JWT")}}),
			status: http.StatusOK},
		{name: "typ missing accepted by default", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithType("")}}),
			status: http.StatusOK},
		{name: "typ of another kind", auth: signed(tok{Sign: []issuer.SignOption{issuer.WithType("dpop+jwt")}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},

		// 15: required claims.
		{name: "sub missing", auth: signed(tok{Claims: map[string]any{"sub": nil}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "jti missing", auth: signed(tok{Claims: map[string]any{"jti": nil}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "client_id missing", auth: signed(tok{Claims: map[string]any{"client_id": nil}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "client_id from azp", auth: signed(tok{Claims: map[string]any{"client_id": nil, "azp": "agent-1"}}),
			status: http.StatusOK},
		{name: "tenant missing", auth: signed(tok{Claims: map[string]any{"tenant_id": nil}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "tenant empty", auth: signed(tok{Claims: map[string]any{"tenant_id": ""}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},

		// 18: claim type confusion is refused, never coerced.
		{name: "exp as a string", auth: signed(tok{Claims: map[string]any{"exp": fmt.Sprint(now + 600)}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "nbf as a string", auth: signed(tok{Claims: map[string]any{"nbf": fmt.Sprint(now - 60)}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "iat as a boolean", auth: signed(tok{Claims: map[string]any{"iat": true}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "aud as a number", auth: signed(tok{Claims: map[string]any{"aud": 42}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "scope as an object", auth: signed(tok{Claims: map[string]any{"scope": map[string]any{"traces:read": true}}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "sub as a number", auth: signed(tok{Claims: map[string]any{"sub": 7}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "tenant as a number", auth: signed(tok{Claims: map[string]any{"tenant_id": 7}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},
		{name: "tenant as an array", auth: signed(tok{Claims: map[string]any{"tenant_id": []string{tenantA}}}),
			status: ok401, code: contracts.CodeInvalidToken, challenge: invalid},

		// 17: the token travels in the Authorization header only.
		{name: "token in the query only", auth: func(t *testing.T, h *harness) []gatewaytest.RequestOption {
			return []gatewaytest.RequestOption{queryParam("access_token", h.tokenA(t))}
		}, status: http.StatusBadRequest, code: contracts.CodeInvalidRequest, challenge: "invalid_request"},
		{name: "token in header and query", auth: func(t *testing.T, h *harness) []gatewaytest.RequestOption {
			tk := h.tokenA(t)
			return []gatewaytest.RequestOption{gatewaytest.Bearer(tk), queryParam("access_token", tk)}
		}, status: http.StatusBadRequest, code: contracts.CodeInvalidRequest, challenge: "invalid_request"},
		{name: "Authorization sent twice", auth: func(t *testing.T, h *harness) []gatewaytest.RequestOption {
			tk := h.tokenA(t)
			return []gatewaytest.RequestOption{gatewaytest.Header("Authorization", "Bearer "+tk), gatewaytest.Header("Authorization", "Bearer "+tk)}
		}, status: http.StatusBadRequest, code: contracts.CodeInvalidRequest, challenge: "invalid_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []gatewaytest.RequestOption
			if tc.auth != nil {
				opts = tc.auth(t, h)
			}
			r := h.Get(t, path, opts...)
			if tc.status == http.StatusOK {
				gatewaytest.WantStatus(t, r, http.StatusOK)
				if got := r.Object(t)["traceId"]; got != trace {
					t.Fatalf("traceId %v, want %s", got, trace)
				}
				return
			}
			p := gatewaytest.WantProblem(t, r, tc.status, tc.code)
			ch := challengeParams(t, r)
			if ch["resource_metadata"] != h.metadataURL() {
				t.Errorf("resource_metadata %q, want %q", ch["resource_metadata"], h.metadataURL())
			}
			if ch["error"] != tc.challenge {
				t.Errorf("challenge error %q, want %q (%v)", ch["error"], tc.challenge, ch)
			}
			if tc.challenge == "" {
				// RFC 6750 §3: no error without credentials, and the scope
				// the call needs.
				if _, has := ch["error_description"]; has {
					t.Errorf("challenge without credentials has error_description: %v", ch)
				}
				if ch["scope"] != string(contracts.ScopeTracesRead) {
					t.Errorf("challenge scope %q, want %q", ch["scope"], contracts.ScopeTracesRead)
				}
			}
			if tc.challenge == invalid && ch["error_description"] == "" {
				t.Errorf("invalid_token challenge without error_description: %v", ch)
			}
			// Every refusal names the next move (issue 27 item 3: an
			// expired credential says how to renew it).
			if p.Hint == "" {
				t.Errorf("refusal %s without a hint: %s", tc.code, r.Body)
			} else if tc.name == "expired beyond the leeway" && !strings.Contains(p.Hint, "--token-command") {
				t.Errorf("expired token's hint %q does not say how a host renews it", p.Hint)
			}
		})
	}
}

// queryParam adds a query parameter.
func queryParam(name, value string) gatewaytest.RequestOption {
	return func(r *http.Request) {
		q := r.URL.Query()
		q.Add(name, value)
		r.URL.RawQuery = q.Encode()
	}
}

// TestAuthenticationOnMutation: a mutation is refused the same way as a
// read, with the mutation's scope in the challenge.
func TestAuthenticationOnMutation(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name   string
		opts   []gatewaytest.RequestOption
		status int
		code   contracts.Code
	}{
		{"no token", nil, ok401, contracts.CodeUnauthenticated},
		{"expired", []gatewaytest.RequestOption{gatewaytest.Bearer(h.token(t, tok{TTL: -time.Hour}))}, ok401, contracts.CodeInvalidToken},
		{"query token", []gatewaytest.RequestOption{queryParam("access_token", "abc")}, http.StatusBadRequest, contracts.CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Post(t, "/v8/intents", intentBody, append([]gatewaytest.RequestOption{gatewaytest.IdempotencyKey(newKey())}, tc.opts...)...)
			gatewaytest.WantProblem(t, r, tc.status, tc.code)
			ch := challengeParams(t, r)
			if tc.code == contracts.CodeUnauthenticated && ch["scope"] != string(contracts.ScopeMissionsWrite) {
				t.Errorf("challenge scope %q, want missions:write", ch["scope"])
			}
		})
	}
}

// TestRequireAtJWT: with auth.requireAtJwt only at+jwt is accepted (14).
func TestRequireAtJWT(t *testing.T) {
	h := newHarness(t, withConfig(func(c *config.Config) { c.Auth.RequireAtJWT = true }))
	for _, tc := range []struct {
		typ    string
		status int
	}{
		{"at+jwt", http.StatusNotFound}, // accepted: the trace does not exist
		{"application/at+jwt", http.StatusNotFound},
		{"JWT", ok401},
		{"", ok401},
		{"application/jwt", ok401},
	} {
		t.Run("typ="+tc.typ, func(t *testing.T) {
			r := h.Get(t, "/v8/traces/"+newTraceID(), gatewaytest.Bearer(h.token(t, tok{Sign: []issuer.SignOption{issuer.WithType(tc.typ)}})))
			if tc.status == ok401 {
				gatewaytest.WantProblem(t, r, ok401, contracts.CodeInvalidToken)
				if ch := challengeParams(t, r); ch["error"] != invalid {
					t.Errorf("challenge %v", ch)
				}
				return
			}
			gatewaytest.WantProblem(t, r, tc.status, contracts.CodeNotFound)
		})
	}
}

// TestUnknownKeyRefetch: many tokens with unknown kids cause at most one
// JWKS fetch; a rotated key works without restart once the refetch interval
// allows; a removed key stops working (8).
func TestUnknownKeyRefetch(t *testing.T) {
	h := newHarness(t)
	path := "/v8/traces/" + newTraceID()
	gatewaytest.WantProblem(t, h.Get(t, path, gatewaytest.Bearer(h.tokenA(t))), http.StatusNotFound, contracts.CodeNotFound) // keys loaded
	if n := h.iss.JWKSFetches(); n != 1 {
		t.Fatalf("JWKS fetched %d times by the first token, want 1", n)
	}
	interval := time.Duration(h.cfg.Auth.JWKSRefreshInterval)

	// Long-lived token of the first key, cached by the verifier.
	oldKid := h.iss.DefaultKeyID()
	oldTok := h.token(t, tok{TTL: 3 * time.Hour})
	gatewaytest.WantStatus(t, h.Get(t, path, gatewaytest.Bearer(oldTok)), http.StatusNotFound)

	// Within the interval, unknown kids cause no fetch at all.
	h.iss.ResetCounters()
	for i := range 10 {
		r := h.Get(t, path, gatewaytest.Bearer(h.token(t, tok{Sign: []issuer.SignOption{issuer.WithKeyID(fmt.Sprintf("bogus-%d", i))}})))
		gatewaytest.WantProblem(t, r, ok401, contracts.CodeInvalidToken)
	}
	if n := h.iss.JWKSFetches(); n != 0 {
		t.Fatalf("JWKS fetched %d times within the refresh interval, want 0", n)
	}

	// Past the interval, 25 distinct unknown kids cause at most one fetch.
	h.clock.Advance(interval + time.Second)
	h.iss.ResetCounters()
	for i := range 25 {
		r := h.Get(t, path, gatewaytest.Bearer(h.token(t, tok{Sign: []issuer.SignOption{issuer.WithKeyID(fmt.Sprintf("bogus-late-%d", i))}})))
		gatewaytest.WantProblem(t, r, ok401, contracts.CodeInvalidToken)
	}
	if n := h.iss.JWKSFetches(); n > 1 {
		t.Fatalf("JWKS fetched %d times for 25 unknown kids, want at most 1", n)
	}

	// Rotation: a new key is accepted without restart once a refetch is
	// allowed.
	if _, err := h.iss.Rotate(issuer.RS256); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(interval + time.Second)
	newTok := h.tokenA(t)
	gatewaytest.WantProblem(t, h.Get(t, path, gatewaytest.Bearer(newTok)), http.StatusNotFound, contracts.CodeNotFound)

	// Removal: once the verifier has refetched, the old key's tokens are
	// refused, cached or not.
	if !h.iss.RemoveKey(oldKid) {
		t.Fatal("old key not removed")
	}
	h.clock.Advance(interval + time.Second)
	gatewaytest.WantProblem(t, h.Get(t, path, gatewaytest.Bearer(h.token(t, tok{Sign: []issuer.SignOption{issuer.WithKeyID("trigger-refetch")}}))),
		ok401, contracts.CodeInvalidToken)
	gatewaytest.WantProblem(t, h.Get(t, path, gatewaytest.Bearer(oldTok)), ok401, contracts.CodeInvalidToken)
	gatewaytest.WantStatus(t, h.Get(t, path, gatewaytest.Bearer(newTok)), http.StatusNotFound)
}

// TestOversizedToken: a huge Authorization header is refused with 400 or
// 431, never 500, and triggers no discovery or JWKS fetch (20).
func TestOversizedToken(t *testing.T) {
	h := newHarness(t)
	for _, size := range []int{17 << 10, 60 << 10, 100 << 10} {
		t.Run(fmt.Sprintf("%dKiB", size>>10), func(t *testing.T) {
			// A syntactically plausible JWS, far too long.
			tk := b64(`{"alg":"RS256","kid":"x"}`) + "." + strings.Repeat("A", size) + ".sig"
			r := h.Get(t, "/v8/traces/"+newTraceID(), gatewaytest.Bearer(tk))
			switch r.Status {
			case http.StatusBadRequest:
				gatewaytest.WantProblem(t, r, http.StatusBadRequest, contracts.CodeInvalidRequest)
			case http.StatusRequestHeaderFieldsTooLarge:
			default:
				t.Fatalf("status %d, want 400 or 431: %s", r.Status, r.Body)
			}
		})
	}
	if d, j := h.iss.DiscoveryFetches(), h.iss.JWKSFetches(); d != 0 || j != 0 {
		t.Fatalf("oversized tokens caused %d discovery and %d JWKS fetches, want none", d, j)
	}
}

// TestRevocation: a token revoked through the operator endpoint is refused
// at once on this replica (16), and within the poll interval on another
// replica sharing the SQLite file.
func TestRevocation(t *testing.T) {
	h := newHarness(t)
	h2 := newHarness(t, asReplicaOf(h, 20*time.Millisecond))
	operator := h.token(t, tok{Subject: "ops", Scopes: []string{string(contracts.ScopeTokensWrite)}})

	claims := h.claims(tok{})
	jti := claims["jti"].(string)
	victim, err := h.iss.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	claims2 := h.claims(tok{})
	jti2 := claims2["jti"].(string)
	victim2, err := h.iss.Sign(claims2)
	if err != nil {
		t.Fatal(err)
	}
	path := "/v8/traces/" + newTraceID()
	// Both tokens work (and are cached by both verifiers) before.
	for _, tk := range []string{victim, victim2} {
		gatewaytest.WantStatus(t, h.Get(t, path, gatewaytest.Bearer(tk)), http.StatusNotFound)
		gatewaytest.WantStatus(t, h2.Get(t, path, gatewaytest.Bearer(tk)), http.StatusNotFound)
	}

	t.Run("operator endpoint refuses without tokens:write", func(t *testing.T) {
		r := h.Post(t, "/v8/tokens/revocations", `{"jti":"`+jti+`"}`, gatewaytest.Bearer(h.token(t, tok{Scopes: scopesWithout(string(contracts.ScopeTokensWrite))})))
		gatewaytest.WantProblem(t, r, http.StatusForbidden, contracts.CodeInsufficientScope)
		if ch := challengeParams(t, r); ch["error"] != "insufficient_scope" || ch["scope"] != string(contracts.ScopeTokensWrite) {
			t.Errorf("challenge %v", ch)
		}
		gatewaytest.WantStatus(t, h.Get(t, path, gatewaytest.Bearer(victim)), http.StatusNotFound) // still valid
	})
	t.Run("operator endpoint validates its body", func(t *testing.T) {
		for _, body := range []string{`{}`, `{"jti":""}`, `{"jti":"x","zzz":1}`, `{"jti":"x","jti":"y"}`, `[]`, `{"jti":` + `"` + strings.Repeat("j", 257) + `"}`} {
			r := h.Post(t, "/v8/tokens/revocations", body, gatewaytest.Bearer(operator))
			if r.Status != http.StatusBadRequest {
				t.Errorf("body %.40s: status %d, want 400: %s", body, r.Status, r.Body)
			}
		}
		r := h.Post(t, "/v8/tokens/revocations", `{"jti":"x"}`, gatewaytest.Bearer(operator), gatewaytest.ContentType("text/plain"))
		gatewaytest.WantProblem(t, r, http.StatusUnsupportedMediaType, contracts.CodeUnsupportedMediaType)
		gatewaytest.WantProblem(t, h.Post(t, "/v8/tokens/revocations", `{"jti":"x"}`), ok401, contracts.CodeUnauthenticated)
	})

	t.Run("same replica refuses at once", func(t *testing.T) {
		r := h.Post(t, "/v8/tokens/revocations", `{"jti":"`+jti+`","reason":"leaked"}`, gatewaytest.Bearer(operator))
		gatewaytest.WantStatus(t, r, http.StatusOK)
		if got := r.Object(t); got["jti"] != jti || got["revoked"] != true {
			t.Fatalf("answer %v", got)
		}
		for _, r := range []*gatewaytest.Response{
			h.Get(t, path, gatewaytest.Bearer(victim)),
			h.submit(t, victim, newKey(), intentBody),
		} {
			gatewaytest.WantProblem(t, r, ok401, contracts.CodeInvalidToken)
			if ch := challengeParams(t, r); ch["error"] != invalid || !strings.Contains(ch["error_description"], "revoked") {
				t.Errorf("challenge %v", ch)
			}
		}
		// Revoking again is not an error.
		gatewaytest.WantStatus(t, h.Post(t, "/v8/tokens/revocations", `{"jti":"`+jti+`"}`, gatewaytest.Bearer(operator)), http.StatusOK)
		// The other token is untouched.
		gatewaytest.WantStatus(t, h.Get(t, path, gatewaytest.Bearer(victim2)), http.StatusNotFound)
	})

	t.Run("other replica refuses after its refresh", func(t *testing.T) {
		gatewaytest.WantStatus(t, h.Post(t, "/v8/tokens/revocations", `{"jti":"`+jti2+`"}`, gatewaytest.Bearer(operator)), http.StatusOK)
		deadline := time.Now().Add(10 * time.Second)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			r := h2.Get(t, path, gatewaytest.Bearer(victim2))
			if r.Status == ok401 {
				gatewaytest.WantProblem(t, r, ok401, contracts.CodeInvalidToken)
				break
			}
			gatewaytest.WantStatus(t, r, http.StatusNotFound)
			if time.Now().After(deadline) {
				t.Fatalf("replica 2 still accepts a token revoked on replica 1 after 10s (poll interval %v)", h2.revs.Interval())
			}
			<-tick.C
		}
		// And the first revocation, made before replica 2 started polling
		// again, is seen there too.
		gatewaytest.WantProblem(t, h2.Get(t, path, gatewaytest.Bearer(victim)), ok401, contracts.CodeInvalidToken)
	})
}

// TestProtectedResourceMetadata checks the RFC 9728 document (19) for the
// default resource (the public URL) and for a resource with a path.
func TestProtectedResourceMetadata(t *testing.T) {
	check := func(t *testing.T, h *harness, path string) {
		r := h.Get(t, path)
		gatewaytest.WantStatus(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type %q", ct)
		}
		var doc struct {
			Resource               string   `json:"resource"`
			AuthorizationServers   []string `json:"authorization_servers"`
			ScopesSupported        []string `json:"scopes_supported"`
			BearerMethodsSupported []string `json:"bearer_methods_supported"`
			SigningAlgs            []string `json:"resource_signing_alg_values_supported"`
		}
		if err := json.Unmarshal(r.Body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Resource != h.cfg.Auth.Resource {
			t.Errorf("resource %q, want %q", doc.Resource, h.cfg.Auth.Resource)
		}
		if u, err := url.Parse(doc.Resource); err != nil || u.Fragment != "" || strings.Contains(doc.Resource, "#") {
			t.Errorf("resource %q has a fragment or does not parse", doc.Resource)
		}
		if !slices.Equal(doc.AuthorizationServers, []string{h.issURL}) {
			t.Errorf("authorization_servers %q, want [%s]", doc.AuthorizationServers, h.issURL)
		}
		if !slices.Equal(doc.BearerMethodsSupported, []string{"header"}) {
			t.Errorf("bearer_methods_supported %q", doc.BearerMethodsSupported)
		}
		for _, s := range gatewaytest.AllScopes() {
			if !slices.Contains(doc.ScopesSupported, s) {
				t.Errorf("scopes_supported lacks %s", s)
			}
		}
		// RFC 9728 defines resource_signing_alg_values_supported for the
		// resource's own signed responses; this one signs none.
		if doc.SigningAlgs != nil {
			t.Errorf("resource_signing_alg_values_supported %q: the gateway signs no responses", doc.SigningAlgs)
		}
	}
	t.Run("default resource", func(t *testing.T) {
		h := newHarness(t)
		check(t, h, "/.well-known/oauth-protected-resource")
	})
	t.Run("resource with a path", func(t *testing.T) {
		const resource = "https://api.praxa.test/v8"
		h := newHarness(t, withConfig(func(c *config.Config) { c.Auth.Resource = resource }))
		check(t, h, "/.well-known/oauth-protected-resource/v8")
		r := h.Get(t, "/v8/traces/"+newTraceID())
		gatewaytest.WantProblem(t, r, ok401, contracts.CodeUnauthenticated)
		if ch := challengeParams(t, r); ch["resource_metadata"] != "https://api.praxa.test/.well-known/oauth-protected-resource/v8" {
			t.Errorf("resource_metadata %q", ch["resource_metadata"])
		}
		// Tokens name that resource as their audience.
		gatewaytest.WantProblem(t, h.Get(t, "/v8/traces/"+newTraceID(), gatewaytest.Bearer(h.tokenA(t))), http.StatusNotFound, contracts.CodeNotFound)
	})
}
