package issuer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// served is a new issuer served on a loopback listener until t ends.
func served(t *testing.T) (*Issuer, *httptest.Server) {
	t.Helper()
	is, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(is)
	t.Cleanup(srv.Close)
	is.SetIssuer(srv.URL)
	return is, srv
}

// authzServer is an issuer with the authorization endpoint on, served on a
// loopback listener.
func authzServer(t *testing.T) (*Issuer, *httptest.Server) {
	t.Helper()
	is, srv := served(t)
	is.EnableAuthorization(AuthorizationOptions{Audience: "https://gw.example", Clients: map[string][]string{"console": {"http://127.0.0.1/cb"}},
		Accounts: []Account{{Subject: "alice", Tenant: "t1", Scopes: []string{"missions:read"}, Label: "Alice"}}})
	return is, srv
}

// authorize asks for a code as alice and returns it.
func authorize(t *testing.T, srv *httptest.Server, verifier, state string) string {
	t.Helper()
	form := url.Values{"response_type": {"code"}, "client_id": {"console"}, "redirect_uri": {"http://127.0.0.1/cb"}, "state": {state},
		"nonce": {"n-1"}, "code_challenge": {S256(verifier)}, "code_challenge_method": {"S256"}, "account": {"alice"}}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.PostForm(srv.URL+AuthorizePath, form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil || loc.Query().Get("state") != state {
		t.Fatalf("authorize: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	return loc.Query().Get("code")
}

func redeem(t *testing.T, srv *httptest.Server, code, verifier string) (int, map[string]any) {
	t.Helper()
	return grant(t, srv, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {"console"},
		"redirect_uri": {"http://127.0.0.1/cb"}, "code_verifier": {verifier}})
}

// TestAuthorizationCode: a code is redeemed once, with its PKCE verifier,
// for an access token of the chosen account and an ID token with the
// nonce; the discovery document names the endpoint.
func TestAuthorizationCode(t *testing.T) {
	is, srv := authzServer(t)
	const verifier = "v-0123456789-0123456789-0123456789-0123456789"
	code := authorize(t, srv, verifier, "s-1")
	if status, m := redeem(t, srv, code, "another-verifier-0123456789-0123456789-012"); status != http.StatusBadRequest || m["error"] != "invalid_grant" {
		t.Errorf("a wrong verifier: %d %v", status, m)
	}
	// The failed attempt used the code up.
	if status, _ := redeem(t, srv, code, verifier); status != http.StatusBadRequest {
		t.Errorf("a code used once was redeemed again: %d", status)
	}
	code = authorize(t, srv, verifier, "s-2")
	status, m := redeem(t, srv, code, verifier)
	if status != http.StatusOK {
		t.Fatalf("redeem: %d %v", status, m)
	}
	access := claimsOf(t, m["access_token"].(string))
	if access["sub"] != "alice" || access["aud"] != "https://gw.example" || access["tenant_id"] != "t1" || access["scope"] != "missions:read" || access["client_id"] != "console" {
		t.Errorf("access token claims: %v", access)
	}
	id := claimsOf(t, m["id_token"].(string))
	if id["aud"] != "console" || id["nonce"] != "n-1" || id["iss"] != is.Issuer() {
		t.Errorf("ID token claims: %v", id)
	}
	if status, _ := redeem(t, srv, code, verifier); status != http.StatusBadRequest {
		t.Errorf("a redeemed code was redeemed again: %d", status)
	}
	doc, _ := is.Discovery()
	var d map[string]any
	_ = json.Unmarshal(doc, &d)
	if d["authorization_endpoint"] != is.Issuer()+AuthorizePath || !strings.Contains(string(doc), `"S256"`) {
		t.Errorf("discovery: %s", doc)
	}
}

func claimsOf(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %s", jwt)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// TestAuthorizeRefusals: an unknown client, a redirect URI not
// registered, a request without PKCE S256 or without state get a page
// that says so, never a redirect.
func TestAuthorizeRefusals(t *testing.T) {
	_, srv := authzServer(t)
	good := url.Values{"response_type": {"code"}, "client_id": {"console"}, "redirect_uri": {"http://127.0.0.1/cb"}, "state": {"s"},
		"code_challenge": {S256("v")}, "code_challenge_method": {"S256"}}
	for _, c := range []struct{ name, key, value, want string }{
		{"unknown client", "client_id", "other", "unknown client_id"},
		{"redirect", "redirect_uri", "http://127.0.0.1/evil", "redirect_uri is not registered"},
		{"plain PKCE", "code_challenge_method", "plain", "PKCE is required"},
		{"no challenge", "code_challenge", "", "PKCE is required"},
		{"no state", "state", "", "state is required"},
		{"implicit", "response_type", "token", "response_type must be code"},
	} {
		q := url.Values{}
		for k, v := range good {
			q[k] = v
		}
		q.Set(c.key, c.value)
		res, err := http.Get(srv.URL + AuthorizePath + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), c.want) || res.Request.URL.Path != AuthorizePath {
			t.Errorf("%s: %d %s", c.name, res.StatusCode, body)
		}
	}
	res, err := http.Get(srv.URL + AuthorizePath + "?" + good.Encode())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `value="alice"`) ||
		!strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("the login page: %d %s", res.StatusCode, body)
	}
}

// TestAuthorizeLoopbackOnly: off a loopback listener, or from a peer that
// is not on loopback, the endpoint and the code grant do not exist.
func TestAuthorizeLoopbackOnly(t *testing.T) {
	is, _ := authzServer(t)
	for _, c := range []struct{ local, remote string }{
		{"192.0.2.10:8080", "127.0.0.1:5000"},
		{"127.0.0.1:8080", "198.51.100.7:5000"},
		{"0.0.0.0:8080", "198.51.100.7:5000"},
	} {
		for _, r := range []*http.Request{
			httptest.NewRequest(http.MethodGet, AuthorizePath+"?client_id=console", nil),
			httptest.NewRequest(http.MethodPost, TokenPath, strings.NewReader("grant_type=authorization_code&code=x")),
		} {
			if r.Method == http.MethodPost {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			r.RemoteAddr = c.remote
			local, _ := net.ResolveTCPAddr("tcp", c.local)
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
			w := httptest.NewRecorder()
			is.ServeHTTP(w, r)
			if r.URL.Path == AuthorizePath && w.Code != http.StatusNotFound {
				t.Errorf("%s on %s from %s: %d", r.URL.Path, c.local, c.remote, w.Code)
			}
			if r.URL.Path == TokenPath && strings.Contains(w.Body.String(), "access_token") {
				t.Errorf("the code grant answered off loopback: %s", w.Body.String())
			}
		}
	}
}

// FuzzAuthorizeQuery: whatever the query, a request is accepted only for
// a registered client and redirect URI, with state and an S256 challenge.
func FuzzAuthorizeQuery(f *testing.F) {
	f.Add("response_type=code&client_id=console&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&state=s&code_challenge_method=S256&code_challenge=" + S256("v"))
	f.Add("client_id=console&redirect_uri=http://127.0.0.1/cb&client_id=other")
	f.Add("%zz&;;=")
	o := &AuthorizationOptions{Clients: map[string][]string{"console": {"http://127.0.0.1/cb"}}}
	is := &Issuer{}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		req, problem := is.parseAuthorize(q, o)
		if problem != "" {
			return
		}
		if req.ClientID != "console" || req.RedirectURI != "http://127.0.0.1/cb" || req.State == "" || len(req.Challenge) != 43 ||
			q.Get("code_challenge_method") != "S256" || q.Get("response_type") != "code" {
			t.Fatalf("accepted %q: %+v", raw, req)
		}
	})
}
