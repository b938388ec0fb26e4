package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/issuer"
)

// tokenLog is a file a token command appends each token it prints to.
type tokenLog string

func (l tokenLog) tokens(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(string(l))
	if os.IsNotExist(err) {
		return nil
	}
	must(t, err, "read the token log")
	return strings.Fields(string(b))
}

// jtiOf reads a token's jti (the test's own tokens: no verification).
func jtiOf(t *testing.T, tok string) string {
	t.Helper()
	jti, _ := gatewaytest.JWTClaims(t, tok)["jti"].(string)
	return jti
}

// home calls praxec.query home and returns the result.
func home(t *testing.T, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolPraxecQuery, Arguments: map[string]any{}})
}

func homeOK(t *testing.T, cs *mcp.ClientSession, what string) {
	t.Helper()
	res, err := home(t, cs)
	must(t, err, "%s", what)
	if res.IsError {
		t.Fatalf("%s: %s", what, res.Content[0].(*mcp.TextContent).Text)
	}
}

// renewsAfterRevocation revokes the token jti in the store of dataDir
// and calls the server until renewed reports that it obtained another
// token: every call succeeds, the first ones with the revoked token (until
// the server's verifier, or the gateway's, polls the revocation), the
// later with the new one.
func renewsAfterRevocation(t *testing.T, bin, dataDir, jti string, cs *mcp.ClientSession, renewed func() bool) {
	t.Helper()
	if code, _, stderr := runChild(t, bin, childEnv(), "tokens", "revoke", jti, "--data-dir", dataDir); code != 0 {
		t.Fatalf("praxa tokens revoke: %s", stderr)
	}
	gatewaytest.Eventually(t, "a renewal after the revocation", 20*time.Second, func() bool {
		homeOK(t, cs, "a call after the revocation")
		return renewed()
	})
}

// TestMCPTokenCommand: praxa mcp --token-command outlives its tokens, on a
// local store and through a gateway: the command runs at start and again
// when the token in hand is refused (revoked under the server: the call
// still succeeds; an expired token is refused alike, and one about to
// expire is renewed first: restclient's and mcpadapter's tests, on a
// clock of their own). A fixed token, once refused, is answered with how
// to renew: --token-command and the very command line. A renewed token
// of another principal stops the server.
func TestMCPTokenCommand(t *testing.T) {
	bin := buildPraxa(t)
	dir := t.TempDir()
	gw := startDevServe(t, bin, dir)
	praxaToken := config.ShellQuote(bin) + " token --data-dir " + config.ShellQuote(dir)
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"local store", []string{"--dev", "--data-dir", dir}},
		{"gateway", []string{"--gateway", gw.url}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			log := tokenLog(filepath.Join(t.TempDir(), "tokens"))
			command := "sh -c " + config.ShellQuote(praxaToken+` | tee -a "$1"`) + " token " + config.ShellQuote(string(log))
			cs, _ := connectStdio(t, bin, childEnv(), append([]string{"mcp", "--token-command", command}, mode.args...)...)
			homeOK(t, cs, "first call")
			if n := len(log.tokens(t)); n != 1 {
				t.Fatalf("the command ran %d times at start, want 1", n)
			}
			renewsAfterRevocation(t, bin, dir, jtiOf(t, log.tokens(t)[0]), cs, func() bool { return len(log.tokens(t)) == 2 })
			homeOK(t, cs, "a call with the renewed token")
			if n := len(log.tokens(t)); n != 2 {
				t.Errorf("the command ran %d times, want 2", n)
			}
		})
	}
	t.Run("fixed token refused", func(t *testing.T) {
		t.Parallel()
		tok := mintToken(t, bin, dir)
		cs, _ := connectStdio(t, bin, childEnv(), "mcp", "--dev", "--data-dir", dir, "--token", tok)
		homeOK(t, cs, "first call")
		if code, _, stderr := runChild(t, bin, childEnv(), "tokens", "revoke", jtiOf(t, tok), "--data-dir", dir); code != 0 {
			t.Fatalf("praxa tokens revoke: %s", stderr)
		}
		var env contracts.ErrorEnvelope
		gatewaytest.Eventually(t, "the refusal of the revoked token", 20*time.Second, func() bool {
			res, err := home(t, cs)
			must(t, err, "a call after the revocation")
			return res.IsError && json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env) == nil
		})
		want := "praxa mcp --dev --data-dir " + config.ShellQuote(dir) + " --token-command " + config.ShellQuote("praxa token --data-dir "+config.ShellQuote(dir))
		if env.Error.Code != contracts.CodeInvalidToken || env.Error.Message != "the server's credential is no longer accepted: revoked" ||
			!strings.Contains(env.Error.Hint, "--token-command 'COMMAND'") || !strings.Contains(env.Error.Hint, "--client-id ID --client-secret-env NAME") ||
			env.Error.OperatorCommand != want || len(env.Links) != 1 || env.Links[0].Args["command"] != want {
			t.Errorf("the refusal: %+v, want the command %s", env, want)
		}
	})
	t.Run("another principal stops the server", func(t *testing.T) {
		t.Parallel()
		log := tokenLog(filepath.Join(t.TempDir(), "tokens"))
		script := `if [ -s "$1" ]; then exec ` + praxaToken + ` --subject mallory; fi; ` + praxaToken + ` | tee -a "$1"`
		cs, cmd, stderr := startStdio(t, bin, childEnv(), nil, "mcp", "--dev", "--data-dir", dir, "--token-command",
			"sh -c "+config.ShellQuote(script)+" token "+config.ShellQuote(string(log)))
		defer cs.Close()
		homeOK(t, cs, "first call")
		if code, _, stderr := runChild(t, bin, childEnv(), "tokens", "revoke", jtiOf(t, log.tokens(t)[0]), "--data-dir", dir); code != 0 {
			t.Fatalf("praxa tokens revoke: %s", stderr)
		}
		gatewaytest.Eventually(t, "the server's exit", 20*time.Second, func() bool {
			_, _ = home(t, cs)
			return strings.Contains(stderr.String(), "mallory")
		})
		cs.Close()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 ||
			!strings.Contains(stderr.String(), `praxa mcp: the renewed token names subject "mallory" of tenant "dev"`) {
			t.Errorf("exit %v, stderr:\n%s", cmd.ProcessState, stderr.String())
		}
	})
}

// TestMCPClientCredentials: praxa mcp obtains and renews its own tokens
// from a real token endpoint (the issuer package's, found by discovery):
// with the client credentials grant on a local store and through a
// gateway (whose protected resource metadata names the issuer and the
// audience), and by redeeming a rotating refresh token; each renews the
// token the gateway refuses. Mistakes in the flags, the secret or the
// command stop it at start, saying which, and never show the secret.
func TestMCPClientCredentials(t *testing.T) {
	bin := buildPraxa(t)
	is := gatewaytest.NewIssuer(t, issuer.Options{}).Issuer
	const resource = "https://praxa.test/"
	is.EnableTokenGrants(issuer.TokenOptions{Audience: resource, Clients: []issuer.Client{
		{ID: "bridge", Secret: "s3cret", Account: issuer.Account{Tenant: "t1", Scopes: allScopes()}},
		{ID: "cli"},
	}})
	cfg := filepath.Join(t.TempDir(), "praxec.yaml")
	must(t, os.WriteFile(cfg, []byte("auth:\n  resource: "+resource+"\n  issuers:\n    - issuer: "+is.Issuer()+"\n"), 0o600), "config")
	gwDir := t.TempDir()
	gw := startServe(t, bin, "--data-dir", gwDir, "--config", cfg)

	rt, err := is.RefreshToken("cli", issuer.Account{Subject: "alice", Tenant: "t1", Scopes: allScopes()})
	must(t, err, "refresh token")
	secret := childEnv("PRAXA_TEST_SECRET=s3cret")
	localDir, refreshDir := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		name    string
		env     []string
		args    []string
		banner  string
		dataDir string // whose store the revocation goes to
	}{
		{"client credentials, local store", secret, []string{"--data-dir", localDir, "--config", cfg, "--client-id", "bridge", "--client-secret-env", "PRAXA_TEST_SECRET"},
			"serving all tools on stdio for bridge (tenant t1)", localDir},
		{"client credentials, gateway", secret, []string{"--gateway", gw.url, "--client-id", "bridge", "--client-secret-env", "PRAXA_TEST_SECRET", "--scope", "capabilities:read"},
			"", gwDir},
		{"refresh token, local store", childEnv("PRAXA_TEST_RT=" + rt), []string{"--data-dir", refreshDir, "--config", cfg, "--client-id", "cli",
			"--refresh-token-env", "PRAXA_TEST_RT", "--token-url", is.Issuer() + issuer.TokenPath}, "serving all tools on stdio for alice (tenant t1)", refreshDir},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(is.IssuedTokenIDs())
			cs, stderr := connectStdio(t, bin, c.env, append([]string{"mcp"}, c.args...)...)
			homeOK(t, cs, "first call")
			if !strings.Contains(stderr.String(), c.banner) {
				t.Errorf("stderr does not say %q:\n%s", c.banner, stderr.String())
			}
			ids := is.IssuedTokenIDs()
			if len(ids) != before+1 {
				t.Fatalf("%d tokens issued at start, want 1", len(ids)-before)
			}
			renewsAfterRevocation(t, bin, c.dataDir, ids[len(ids)-1], cs, func() bool { return len(is.IssuedTokenIDs()) == before+2 })
		})
	}

	refusals := []struct {
		name, want string
		env        []string
		args       []string
	}{
		{"wrong secret", "the token endpoint " + is.Issuer() + issuer.TokenPath + " refused: invalid_client", childEnv("PRAXA_TEST_SECRET=nope"),
			[]string{"--data-dir", t.TempDir(), "--config", cfg, "--client-id", "bridge", "--client-secret-env", "PRAXA_TEST_SECRET"}},
		{"wrong secret, gateway", "no token for gateway " + gw.url + ": the token endpoint", childEnv("PRAXA_TEST_SECRET=nope"),
			[]string{"--gateway", gw.url, "--client-id", "bridge", "--client-secret-env", "PRAXA_TEST_SECRET"}},
		{"secret unset", "the environment variable PRAXA_TEST_SECRET is empty or unset", childEnv(),
			[]string{"--data-dir", t.TempDir(), "--config", cfg, "--client-id", "bridge", "--client-secret-env", "PRAXA_TEST_SECRET"}},
		{"no secret", "--client-id needs --client-secret-env NAME", childEnv(), []string{"--gateway", gw.url, "--client-id", "bridge"}},
		{"secret without a client", "--client-secret-env needs --client-id", childEnv(), []string{"--gateway", gw.url, "--client-secret-env", "X"}},
		{"two credentials", "choose one credential", childEnv(), []string{"--gateway", gw.url, "--token", "t", "--token-command", "praxa token"}},
		{"bad command", "--token-command: unterminated single quote", childEnv(), []string{"--gateway", gw.url, "--token-command", "sh -c 'x"}},
		{"failing command", "the token command failed (exit status 3)", childEnv(), []string{"--gateway", gw.url, "--token-command", "sh -c 'exit 3'"}},
		{"failing command, local", "the credential is not accepted: the token command failed (exit status 3)", childEnv(),
			[]string{"--data-dir", t.TempDir(), "--config", cfg, "--token-command", "sh -c 'exit 3'"}},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			code, stdout, stderr := runChild(t, bin, r.env, append([]string{"mcp"}, r.args...)...)
			if code == 0 || stdout != "" || !strings.Contains(stderr, r.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want it to say %q", code, stdout, stderr, r.want)
			}
			if strings.Contains(stderr, "s3cret") || strings.Contains(stderr, "nope") {
				t.Errorf("stderr shows the secret: %s", stderr)
			}
		})
	}
}
