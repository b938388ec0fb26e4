// Package oauthtest tests the upstream auth of connections (token exchange,
// client credentials) against a real OAuth 2.0 authorization server: panva's
// oidc-provider, pinned in node/package.json and run by node/server.mjs.
package oauthtest

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/gatewaytest"
)

// provider is a running oidc-provider.
type provider struct {
	// Issuer is its issuer URL; the token endpoint is Issuer+"/token".
	Issuer string
}

// client is one client of the provider (oidc-provider client metadata).
type client map[string]any

// startProvider runs node/server.mjs until the test ends. It skips the test,
// saying why, when node/node_modules is missing and PRAXA_NODE_TESTS is
// unset; CI sets it (and runs npm ci in node/), so there a missing install
// fails.
func startProvider(t *testing.T, clients []client, scopes, audiences []string, defaultResource string) *provider {
	t.Helper()
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join("node", "node_modules", "oidc-provider", "package.json")); serr != nil || err != nil {
		if os.Getenv("PRAXA_NODE_TESTS") == "" {
			t.Skip("the OAuth server is not installed: run `npm ci` in gateway/connect/oauthtest/node (needs node and npm), or set PRAXA_NODE_TESTS=1 to make this a failure")
		}
		t.Fatalf("PRAXA_NODE_TESTS is set but the OAuth server cannot run (node: %v; node_modules: %v): run npm ci in gateway/connect/oauthtest/node", err, serr)
	}
	cj, err := json.Marshal(clients)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = "node"
	cmd.Env = append(os.Environ(), "PROVIDER_CLIENTS="+string(cj), "PROVIDER_SCOPES="+strings.Join(scopes, " "),
		"PROVIDER_AUDIENCES="+strings.Join(audiences, " "), "PROVIDER_TENANT=acme", "PROVIDER_DEFAULT_RESOURCE="+defaultResource)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &gatewaytest.LogBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		stdin.Close() // the server exits when its stdin closes
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-line:
		var out struct {
			Issuer string `json:"issuer"`
		}
		if !ok || json.Unmarshal([]byte(l), &out) != nil || out.Issuer == "" {
			t.Fatalf("the OAuth server did not start (%q); stderr:\n%s", l, stderr.String())
		}
		return &provider{Issuer: out.Issuer}
	case <-time.After(60 * time.Second):
		t.Fatalf("the OAuth server did not start within a minute; stderr:\n%s", stderr.String())
	}
	return nil
}

// clientCredentials asks the provider for a token with the client's secret:
// an access token (a JWT) whose sub is the client, for resource.
func (p *provider) clientCredentials(t *testing.T, id, secret, resource string, scopes []string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}, "scope": {strings.Join(scopes, " ")}}
	req, err := http.NewRequest(http.MethodPost, p.Issuer+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(id, secret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || out.AccessToken == "" {
		t.Fatalf("client_credentials for %s: %d %s", id, resp.StatusCode, body)
	}
	return out.AccessToken
}

// ecKey returns a fresh P-256 key as a PKCS #8 PEM and as a public JWK.
func ecKey(t *testing.T, kid string) (string, map[string]any) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	pt, err := k.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	jwk := map[string]any{"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
		"x": base64.RawURLEncoding.EncodeToString(pt[1:33]), "y": base64.RawURLEncoding.EncodeToString(pt[33:])}
	return pemText, jwk
}

// ctxT returns a context that ends with the test.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
