package issuer

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// grantsServer is an issuer with the token grants on for a confidential
// client "bridge" (secret "s3cret", tenant t1) and a public client "cli".
func grantsServer(t *testing.T) (*Issuer, *httptest.Server) {
	t.Helper()
	is, srv := served(t)
	is.EnableTokenGrants(TokenOptions{Audience: "https://gw.example", Clients: []Client{
		{ID: "bridge", Secret: "s3cret", Account: Account{Tenant: "t1", Scopes: []string{"missions:read", "missions:write"}}},
		{ID: "cli"},
	}})
	return is, srv
}

// grant posts a token request; basic, when set, is the client's id and
// secret sent as HTTP Basic.
func grant(t *testing.T, srv *httptest.Server, form url.Values, basic ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+TokenPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if len(basic) == 2 {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// TestClientCredentialsGrant: a confidential client gets a token of its
// own account, for the audience, with the scopes it asks among its own,
// authenticating by Basic or by the form; a wrong secret, a public
// client, a foreign resource or scope are refused with RFC 6749 codes.
func TestClientCredentialsGrant(t *testing.T) {
	is, srv := grantsServer(t)
	cc := url.Values{"grant_type": {"client_credentials"}}
	status, m := grant(t, srv, cc, "bridge", "s3cret")
	if status != http.StatusOK || m["token_type"] != "Bearer" || m["expires_in"] != float64(DefaultTTL.Seconds()) || m["refresh_token"] != nil {
		t.Fatalf("client_credentials: %d %v", status, m)
	}
	c := claimsOf(t, m["access_token"].(string))
	if c["sub"] != "bridge" || c["client_id"] != "bridge" || c["tenant_id"] != "t1" || c["aud"] != "https://gw.example" ||
		c["scope"] != "missions:read missions:write" || c["iss"] != is.Issuer() {
		t.Errorf("claims: %v", c)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"bridge"}, "client_secret": {"s3cret"},
		"scope": {"missions:read"}, "resource": {"https://gw.example"}}
	status, m = grant(t, srv, form)
	if status != http.StatusOK {
		t.Fatalf("client_secret_post: %d %v", status, m)
	}
	c2 := claimsOf(t, m["access_token"].(string))
	if c2["scope"] != "missions:read" {
		t.Errorf("client_secret_post with a narrower scope: %v", c2)
	}
	if ids := is.IssuedTokenIDs(); len(ids) != 2 || ids[1] != c2["jti"] {
		t.Errorf("IssuedTokenIDs %v, want 2, the last %v", ids, c2["jti"])
	}
	for _, tc := range []struct {
		name   string
		form   url.Values
		basic  []string
		status int
		code   string
	}{
		{"wrong secret", cc, []string{"bridge", "nope"}, 401, "invalid_client"},
		{"unknown client", cc, []string{"who", "s3cret"}, 401, "invalid_client"},
		{"no client", cc, nil, 401, "invalid_client"},
		{"secret twice", url.Values{"grant_type": {"client_credentials"}, "client_secret": {"s3cret"}}, []string{"bridge", "s3cret"}, 401, "invalid_client"},
		{"public client", url.Values{"grant_type": {"client_credentials"}, "client_id": {"cli"}}, nil, 400, "unauthorized_client"},
		{"foreign resource", url.Values{"grant_type": {"client_credentials"}, "resource": {"https://other.example"}}, []string{"bridge", "s3cret"}, 400, "invalid_target"},
		{"scope beyond the client's", url.Values{"grant_type": {"client_credentials"}, "scope": {"missions:read tokens:write"}}, []string{"bridge", "s3cret"}, 400, "invalid_scope"},
		{"another grant", url.Values{"grant_type": {"password"}}, []string{"bridge", "s3cret"}, 400, "unsupported_grant_type"},
	} {
		if status, m := grant(t, srv, tc.form, tc.basic...); status != tc.status || m["error"] != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.name, status, m, tc.status, tc.code)
		}
	}
	if n := len(is.IssuedTokenIDs()); n != 2 {
		t.Errorf("refusals issued tokens: %d issued", n)
	}
	doc, _ := is.Discovery()
	var d struct {
		Grants  []string `json:"grant_types_supported"`
		Methods []string `json:"token_endpoint_auth_methods_supported"`
	}
	_ = json.Unmarshal(doc, &d)
	if !slices.Equal(d.Grants, []string{"client_credentials", "refresh_token"}) || !slices.Contains(d.Methods, "client_secret_basic") {
		t.Errorf("discovery lists %v %v", d.Grants, d.Methods)
	}
}

// TestRefreshTokenGrant: a refresh token is redeemed once, by its client,
// for an access token of its account and the next refresh token.
func TestRefreshTokenGrant(t *testing.T) {
	is, srv := grantsServer(t)
	alice := Account{Subject: "alice", Tenant: "t2", Scopes: []string{"missions:read"}}
	if _, err := is.RefreshToken("nobody", alice); err != ErrUnknownClient {
		t.Errorf("RefreshToken of an unknown client: %v", err)
	}
	rt, err := is.RefreshToken("cli", alice)
	if err != nil {
		t.Fatal(err)
	}
	if status, m := grant(t, srv, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}, "bridge", "s3cret"); status != 400 || m["error"] != "invalid_grant" {
		t.Errorf("another client's refresh token: %d %v", status, m)
	}
	// The attempt used it up (RFC 9700: a refresh token presented by the
	// wrong client is spent).
	rt, _ = is.RefreshToken("cli", alice)
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {"cli"}}
	status, m := grant(t, srv, form)
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %v", status, m)
	}
	if c := claimsOf(t, m["access_token"].(string)); c["sub"] != "alice" || c["tenant_id"] != "t2" || c["client_id"] != "cli" {
		t.Errorf("claims: %v", c)
	}
	next, _ := m["refresh_token"].(string)
	if next == "" || next == rt {
		t.Fatalf("the answer carries no new refresh token: %v", m)
	}
	if status, m := grant(t, srv, form); status != 400 || m["error"] != "invalid_grant" {
		t.Errorf("a refresh token redeemed twice: %d %v", status, m)
	}
	form.Set("refresh_token", next)
	if status, _ := grant(t, srv, form); status != http.StatusOK {
		t.Errorf("the rotated refresh token: %d", status)
	}
}

// TestTokenGrantsOff: without EnableTokenGrants the endpoint answers
// unsupported_grant_type and discovery lists no grant.
func TestTokenGrantsOff(t *testing.T) {
	is, srv := served(t)
	if status, m := grant(t, srv, url.Values{"grant_type": {"client_credentials"}}, "bridge", "s3cret"); status != 400 || m["error"] != "unsupported_grant_type" {
		t.Errorf("client_credentials while off: %d %v", status, m)
	}
	doc, _ := is.Discovery()
	if !strings.Contains(string(doc), `"grant_types_supported":[]`) {
		t.Errorf("discovery: %s", doc)
	}
}
