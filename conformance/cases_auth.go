package conformance

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/praxa/praxa/contracts"
)

// The authentication cases read a mission that does not exist
// (aura_get_mission, scope missions:read): a valid token gets 404, a
// refused one 401 before anything else is looked at.

func missionPath(runID string) string {
	return strings.Replace(mustTool(contracts.ToolGetMission).Path, "{runId}", url.PathEscape(runID), 1)
}

func authenticationCases() []Case {
	getMission := []string{"getMission"}
	forged := func(id, proves, title string, fs ...Forgery) Case {
		return Case{ID: id, Group: GroupAuthentication, Proves: proves, Title: title, Operations: getMission,
			Run: func(t *T) {
				for _, f := range fs {
					t.refusedToken(string(f), t.forged(f))
				}
			}}
	}
	return []Case{
		{ID: "AUTH-001", Group: GroupAuthentication, Proves: "control for standards #1-#20",
			Title: "A valid token is accepted: reading an unknown mission answers 404, not 401", Operations: getMission,
			Run: func(t *T) {
				resp := t.get(missionPath(randomID("run")), t.token(TenantA))
				t.expectProblem("valid token, unknown mission", resp, http.StatusNotFound, contracts.CodeNotFound)
			}},
		{ID: "AUTH-002", Group: GroupAuthentication, Proves: "standards #1",
			Title:      "No credentials: 401 unauthenticated with a Bearer challenge naming the scope and the resource metadata, without error",
			Operations: getMission, Run: func(t *T) {
				resp := t.get(missionPath(randomID("run")), "")
				t.expectProblem("no Authorization", resp, http.StatusUnauthorized, contracts.CodeUnauthenticated)
				t.expectChallenge("no Authorization", resp, "", string(contracts.ScopeMissionsRead))
			}},
		{ID: "AUTH-003", Group: GroupAuthentication, Proves: "standards #2, #3",
			Title:      "Basic credentials and an empty Bearer are refused 401 with a challenge, never 500",
			Operations: getMission, Run: func(t *T) {
				for _, v := range []string{"Basic Y29uZm9ybWFuY2U6c2VjcmV0", "Bearer", "Bearer "} {
					resp := t.do(request{method: http.MethodGet, path: missionPath(randomID("run")), header: http.Header{"Authorization": {v}}})
					t.expectStatus("Authorization: "+v, resp, http.StatusUnauthorized)
					raw := resp.Header.Get("WWW-Authenticate")
					c, ok := parseChallenge(raw)
					t.check(ok && strings.EqualFold(c.scheme, "Bearer"), "Authorization: %s: want a Bearer challenge, got %q", v, raw)
					if strings.HasPrefix(v, "Basic") {
						t.check(c.params["error"] == "", "Authorization: Basic carries no bearer token: the challenge must have no error, got %q", raw)
					}
				}
			}},
		{ID: "AUTH-004", Group: GroupAuthentication, Proves: "standards #4",
			Title:      "A token that is not a JWT is refused 401 invalid_token",
			Operations: getMission, Run: func(t *T) {
				for _, tok := range []string{"not.a.jwt", "conformance", "e30.e30.e30", "%%%.%%%.%%%"} {
					t.refusedToken(tok, tok)
				}
			}},
		forged("AUTH-005", "standards #5", "An unsigned token (alg none) is refused 401 invalid_token", ForgeAlgNone),
		forged("AUTH-006", "standards #6", "An HS256 token keyed with the issuer's public key (algorithm confusion) is refused 401", ForgeHMACPublicKey),
		forged("AUTH-007", "standards #8", "A token whose kid the issuer does not publish is refused 401", ForgeUnknownKeyID),
		forged("AUTH-008", "standards #9", "A token signed by a key outside the issuer's JWKS, under a published kid, is refused 401", ForgeForeignKey),
		forged("AUTH-009", "standards #9", "A token with a tampered signature is refused 401", ForgeTamperedSignature),
		forged("AUTH-010", "standards #10", "A token from another issuer, without iss, or from the trusted issuer with a trailing slash, is refused 401",
			ForgeWrongIssuer, ForgeNoIssuer, ForgeIssuerSlash),
		forged("AUTH-011", "standards #11", "A token whose audience is another resource, or that names none, is refused 401 (not 403)", ForgeWrongAudience, ForgeNoAudience),
		forged("AUTH-012", "standards #12", "An expired token, or one without exp, is refused 401", ForgeExpired, ForgeNoExpiry),
		forged("AUTH-013", "standards #13", "A token not valid yet (nbf an hour ahead) or issued in the future (iat an hour ahead) is refused 401", ForgeNotYetValid, ForgeIssuedInFuture),
		forged("AUTH-014", "standards #15", "A token without sub, jti, client_id or the tenant claim is refused 401", ForgeNoSubject, ForgeNoTokenID, ForgeNoClientID, ForgeNoTenant),
		forged("AUTH-015", "standards #18", "Claims of the wrong JSON type (exp a string, aud a number) are refused 401, never coerced", ForgeExpiryAsString, ForgeAudienceAsNumber),
		{ID: "AUTH-016", Group: GroupAuthentication, Proves: "standards #17",
			Title:      "A token in the query string is never accepted; in the header and the query at once it is 400 invalid_request",
			Operations: getMission, Run: func(t *T) {
				tok := t.token(TenantA)
				path := missionPath(randomID("run")) + "?access_token=" + url.QueryEscape(tok)
				resp := t.get(path, "")
				t.expectStatus("token in the query string only", resp, http.StatusBadRequest, http.StatusUnauthorized)
				resp = t.get(path, tok)
				t.expectProblem("token in the header and the query string", resp, http.StatusBadRequest, contracts.CodeInvalidRequest)
				t.expectChallenge("token in the header and the query string", resp, "invalid_request", "")
				resp = t.do(request{method: http.MethodGet, path: missionPath(randomID("run")),
					header: http.Header{"Authorization": {"Bearer " + tok, "Bearer " + tok}}})
				t.expectProblem("two Authorization headers", resp, http.StatusBadRequest, contracts.CodeInvalidRequest)
			}},
		{ID: "AUTH-017", Group: GroupAuthentication, Proves: "standards #20",
			Title:      "An oversized token (70 KiB) is refused with 400, 401 or 431, never accepted and never 500",
			Operations: getMission, Run: func(t *T) {
				resp := t.get(missionPath(randomID("run")), strings.Repeat("A", 70<<10))
				t.expectStatus("70 KiB bearer token", resp, http.StatusBadRequest, http.StatusUnauthorized, http.StatusRequestHeaderFieldsTooLarge)
			}},
		{ID: "AUTH-018", Group: GroupAuthentication, Proves: "standards #11 (aud array containing the resource)",
			Title:      "A token whose aud is an array that contains the target's resource is accepted",
			Operations: getMission, Run: func(t *T) {
				resp := t.get(missionPath(randomID("run")), t.forged(AudienceList))
				t.expectProblem("aud [other, resource]", resp, http.StatusNotFound, contracts.CodeNotFound)
			}},
		{ID: "AUTH-019", Group: GroupAuthentication, Proves: "standards #16; DESIGN.md revoked jti",
			Title:      "A token revoked through the operator endpoint is refused 401 invalid_token on its next call",
			Operations: []string{"getMission", contracts.EndpointRevokeToken}, Run: authRevoked},
	}
}

// authRevoked revokes a fresh token by jti and checks it no longer works.
func authRevoked(t *T) {
	e, ok := contracts.LookupEndpoint(contracts.EndpointRevokeToken)
	if !ok {
		t.Skipf("the contract declares no revocation endpoint")
	}
	// A token of its own: the memoized ones serve the other cases.
	fresh, err := t.r.tokens.Token(t.ctx, TenantA, AllScopes())
	again, err2 := t.r.tokens.Token(t.ctx, TenantA, AllScopes())
	if err != nil || err2 != nil {
		t.Skipf("no fresh token: %v", errors.Join(err, err2))
	}
	if fresh == again || fresh == t.token(TenantA) {
		t.Skipf("the token source hands out the same token again: revoking it would end the run")
	}
	jti, _ := payload(fresh)["jti"].(string)
	if jti == "" {
		t.Skipf("the token carries no jti to revoke")
	}
	t.expectProblem("the fresh token before revocation", t.get(missionPath(randomID("run")), fresh), http.StatusNotFound, contracts.CodeNotFound)
	resp := t.post(e.Path, t.token(TenantA), "", map[string]any{"jti": jti, "reason": "conformance: revocation check"})
	t.expectStatus("revoke the fresh token", resp, http.StatusOK)
	t.refusedToken("the revoked token", fresh)
}

// payload decodes a JWT's claims without verifying them; nil when tok is
// not a JWT.
func payload(tok string) map[string]any {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil
	}
	var claims map[string]any
	if json.Unmarshal(b, &claims) != nil {
		return nil
	}
	return claims
}

// refusedToken checks that the bearer token tok is refused 401
// invalid_token.
func (t *T) refusedToken(what, tok string) {
	resp := t.get(missionPath(randomID("run")), tok)
	t.expectProblem(what, resp, http.StatusUnauthorized, contracts.CodeInvalidToken)
	t.expectChallenge(what, resp, "invalid_token", "")
}
