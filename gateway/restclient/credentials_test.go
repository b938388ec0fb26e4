package restclient_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/restclient"
	"github.com/praxa/praxa/issuer"
)

// TestCommandToken runs real commands: the token is what the command
// prints, trimmed; a command that fails, prints nothing, prints several
// words or too much, or outlives its timeout gives a reason that names
// the fault and nothing it printed.
func TestCommandToken(t *testing.T) {
	ctx := context.Background()
	var stderr bytes.Buffer
	tok, err := restclient.CommandToken([]string{"sh", "-c", `printf '  eyJ.a.b\n'; echo complaint >&2`}, &restclient.CommandOptions{Stderr: &stderr})(ctx)
	if err != nil || tok != "eyJ.a.b" || stderr.String() != "complaint\n" {
		t.Errorf("a token: %q %v, stderr %q", tok, err, stderr.String())
	}
	tok, err = restclient.CommandToken([]string{"sh", "-c", `echo "$PRAXA_X"`}, &restclient.CommandOptions{Env: []string{"PRAXA_X=from-env"}})(ctx)
	if err != nil || tok != "from-env" {
		t.Errorf("the environment given: %q %v", tok, err)
	}
	for _, tc := range []struct {
		argv    []string
		timeout time.Duration
		reason  string
	}{
		{[]string{"sh", "-c", "echo secret-ish; exit 3"}, 0, "the token command failed (exit status 3)"},
		{[]string{"sh", "-c", "true"}, 0, "the token command printed no token"},
		{[]string{"sh", "-c", "echo two words"}, 0, "the token command printed more than one word; it must print the access token alone"},
		{[]string{"sh", "-c", "head -c 70000 /dev/zero | tr '\\0' a"}, 0, "the token command printed more than 65536 bytes"},
		{[]string{"sleep", "10"}, 50 * time.Millisecond, "the token command did not finish within 50ms"},
		{[]string{"/nonexistent/praxa-token"}, 0, "the token command could not be run"},
		{nil, 0, "the token command is empty"},
	} {
		_, err := restclient.CommandToken(tc.argv, &restclient.CommandOptions{Timeout: tc.timeout})(ctx)
		if r := restclient.RenewalReason(err); r != tc.reason {
			t.Errorf("%q: reason %q (%v), want %q", tc.argv, r, err, tc.reason)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "praxa token --data-dir /tmp/x", want: []string{"praxa", "token", "--data-dir", "/tmp/x"}},
		{in: "  a\t b \n", want: []string{"a", "b"}},
		{in: `a 'b c' "d \"e\" \$f \x" g\ h ''`, want: []string{"a", "b c", `d "e" $f \x`, "g h", ""}},
		{in: `a'b'"c"d`, want: []string{"abcd"}},
		{in: `sh -c 'x | y; z'`, want: []string{"sh", "-c", "x | y; z"}},
		{in: "", bad: true},
		{in: "   ", bad: true},
		{in: "a 'b", bad: true},
		{in: `a "b`, bad: true},
		{in: `a \`, bad: true},
	} {
		got, err := restclient.SplitCommand(tc.in)
		if tc.bad != (err != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("SplitCommand(%q) = %q, %v", tc.in, got, err)
		}
	}
}

// FuzzSplitCommand: any argv, each word single-quoted the POSIX way,
// splits back to itself; no input makes it panic.
func FuzzSplitCommand(f *testing.F) {
	f.Add("praxa", "token --ttl 1h", "it's")
	f.Add("", `"`, `\`)
	f.Fuzz(func(t *testing.T, a, b, c string) {
		_, _ = restclient.SplitCommand(a + " " + b + c)
		argv := []string{a, b, c}
		var line []string
		for _, w := range argv {
			line = append(line, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
		}
		got, err := restclient.SplitCommand(strings.Join(line, " "))
		if err != nil || !slices.Equal(got, argv) {
			t.Errorf("SplitCommand(%q) = %q, %v, want %q", strings.Join(line, " "), got, err, argv)
		}
	})
}

// grantIssuer serves a real issuer with its token grants on.
func grantIssuer(t *testing.T) (*issuer.Issuer, string) {
	t.Helper()
	srv := gatewaytest.NewIssuer(t, issuer.Options{})
	is := srv.Issuer
	is.EnableTokenGrants(issuer.TokenOptions{Audience: "https://gw.example", Clients: []issuer.Client{
		{ID: "bridge", Secret: "s3cret", Account: issuer.Account{Tenant: "t1", Scopes: []string{"missions:read", "missions:write"}}},
		{ID: "cli"},
	}})
	return is, srv.URL + issuer.TokenPath
}

// TestOAuthClient obtains tokens from a real token endpoint: client
// credentials for the gateway's resource, with the scopes asked; refresh
// tokens, rotated on every redemption; refusals with the endpoint's code.
func TestOAuthClient(t *testing.T) {
	is, tokenURL := grantIssuer(t)
	ctx := context.Background()
	check := restclient.ClaimsCheck("")
	cc := restclient.OAuthClient{TokenURL: tokenURL, ClientID: "bridge", ClientSecret: "s3cret", Resource: "https://gw.example",
		Scopes: []string{"missions:read"}}.ClientCredentials()
	for range 2 {
		tok, err := cc(ctx)
		if err != nil {
			t.Fatal(err)
		}
		chk, err := check(ctx, tok)
		if err != nil || chk.Subject != "bridge" || chk.Tenant != "t1" || chk.ClientID != "bridge" || chk.Expiry.IsZero() {
			t.Errorf("client credentials token: %+v %v", chk, err)
		}
	}
	if n := len(is.IssuedTokenIDs()); n != 2 {
		t.Errorf("%d tokens issued, want 2: every call asks anew", n)
	}
	for _, tc := range []struct {
		c      restclient.OAuthClient
		reason string
	}{
		{restclient.OAuthClient{TokenURL: tokenURL, ClientID: "bridge", ClientSecret: "wrong"}, "the token endpoint " + tokenURL + " refused: invalid_client (the client is unknown or its secret is wrong)"},
		{restclient.OAuthClient{TokenURL: tokenURL, ClientID: "bridge", ClientSecret: "s3cret", Resource: "https://elsewhere"}, "the token endpoint " + tokenURL + " refused: invalid_target (this issuer issues tokens for https://gw.example only)"},
		{restclient.OAuthClient{TokenURL: "http://127.0.0.1:1/token", ClientID: "bridge", ClientSecret: "s3cret"}, "the token endpoint http://127.0.0.1:1/token could not be reached"},
	} {
		_, err := tc.c.ClientCredentials()(ctx)
		if r := restclient.RenewalReason(err); r != tc.reason {
			t.Errorf("reason %q, want %q", r, tc.reason)
		}
		if strings.Contains(restclient.RenewalReason(err), "s3cret") || strings.Contains(restclient.RenewalReason(err), "wrong") && !strings.Contains(tc.reason, "wrong") {
			t.Errorf("a reason carries the secret: %v", err)
		}
	}

	rt, err := is.RefreshToken("cli", issuer.Account{Subject: "alice", Tenant: "t2", Scopes: []string{"missions:read"}})
	if err != nil {
		t.Fatal(err)
	}
	refresh := restclient.OAuthClient{TokenURL: tokenURL, ClientID: "cli"}.RefreshToken(rt)
	for i := range 3 {
		tok, err := refresh(ctx)
		if err != nil {
			t.Fatalf("refresh %d: %v (each answer's refresh token must be the next one used)", i, err)
		}
		if chk, _ := check(ctx, tok); chk.Subject != "alice" || chk.Tenant != "t2" {
			t.Errorf("refreshed token: %+v", chk)
		}
	}
	// The first refresh token was rotated away.
	if _, err := (restclient.OAuthClient{TokenURL: tokenURL, ClientID: "cli"}).RefreshToken(rt)(ctx); !strings.Contains(restclient.RenewalReason(err), "invalid_grant") {
		t.Errorf("a spent refresh token: %v", err)
	}
}

func TestResourceMetadata(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/base/.well-known/oauth-protected-resource" || r.Header.Get("Authorization") != "" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"resource":"https://gw.example","authorization_servers":["https://issuer"]}`))
	}))
	defer srv.Close()
	c, _ := restclient.New(srv.URL+"/base/", &restclient.Options{Token: restclient.StaticToken("never-sent")})
	m, err := c.ResourceMetadata(context.Background())
	if err != nil || m.Resource != "https://gw.example" || !slices.Equal(m.AuthorizationServers, []string{"https://issuer"}) {
		t.Errorf("ResourceMetadata: %+v %v", m, err)
	}
	c, _ = restclient.New("http://127.0.0.1:1", nil)
	if _, err := c.ResourceMetadata(context.Background()); err == nil {
		t.Error("no gateway: no error")
	}
}
