package main

import (
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/issuer"
)

// devDataDir makes the dev issuer of a data directory as praxa serve
// --dev does for a gateway whose public URL is publicURL, and returns the
// directory and a token of that issuer.
func devDataDir(t *testing.T, publicURL string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Server.PublicURL = publicURL
	cfg.Defaults("")
	is, err := openDevIssuer(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mintDevToken(is, cfg, allScopes(), devTenant, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return dir, tok
}

// TestLocalTrust: with --dev, a command on the data directory of a
// gateway that terminates TLS takes serve's https:// public URL and
// audience, and trusts its dev issuer; without --dev, nothing of it.
func TestLocalTrust(t *testing.T) {
	dir, _ := devDataDir(t, "https://127.0.0.1:8443")
	cfg := config.Default()
	statics, err := localTrust(serveFlags{dev: true, dataDir: dir}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.PublicURL != "https://127.0.0.1:8443" || cfg.Auth.Resource != "https://127.0.0.1:8443" ||
		len(statics) != 1 || statics[0].Issuer != "https://127.0.0.1:8443/dev/issuer" {
		t.Errorf("--dev: public URL %s, resource %s, issuers %+v", cfg.Server.PublicURL, cfg.Auth.Resource, statics)
	}
	// A public URL the configuration names wins.
	cfg = config.Default()
	cfg.Server.PublicURL = "https://praxa.example.com"
	if _, err := localTrust(serveFlags{dev: true, dataDir: dir}, cfg); err != nil || cfg.Server.PublicURL != "https://praxa.example.com" {
		t.Errorf("server.publicURL: %s %v", cfg.Server.PublicURL, err)
	}
	cfg = config.Default()
	statics, err = localTrust(serveFlags{dataDir: dir, addr: "127.0.0.1:9000"}, cfg)
	if err != nil || len(statics) != 0 || cfg.Server.PublicURL != "http://127.0.0.1:9000" {
		t.Errorf("without --dev: %s %+v %v", cfg.Server.PublicURL, statics, err)
	}
	if _, err := localTrust(serveFlags{dev: true, dataDir: t.TempDir()}, config.Default()); err == nil ||
		!strings.Contains(err.Error(), "run praxa serve --dev --data-dir") {
		t.Errorf("--dev on a data directory serve --dev never ran on: %v", err)
	}
}

// TestRefusedTokenAdvice: praxa mcp and an operator command given a dev
// token they do not trust say why and what to do: --dev when they run
// without it, a token of the data directory's own dev issuer when it is
// another's, and an expired one is to be minted again.
func TestRefusedTokenAdvice(t *testing.T) {
	dir, tok := devDataDir(t, "http://127.0.0.1:18080")
	other, otherTok := devDataDir(t, "http://127.0.0.1:18081")
	is, err := issuer.LoadOrCreate(devDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := readDevIssuer(dir)
	expired, err := is.Mint(info.Issuer, info.Audience, devSubject, devTenant, allScopes(), -time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"mcp without --dev", []string{"mcp", "--data-dir", dir, "--token", tok},
			[]string{"the credential is not accepted: invalid token: untrusted issuer\nThe token was issued by http://127.0.0.1:18080/dev/issuer; this command trusts no issuer", "add --dev, with the --data-dir of that gateway", "auth.issuers"}},
		{"mcp --dev, another data directory's token", []string{"mcp", "--dev", "--data-dir", dir, "--token", otherTok},
			[]string{"untrusted issuer\nThe token was issued by http://127.0.0.1:18081/dev/issuer; this command trusts http://127.0.0.1:18080/dev/issuer",
				"mint one with praxa token --data-dir " + dir}},
		{"mcp --dev, expired", []string{"mcp", "--dev", "--data-dir", dir, "--token", expired},
			[]string{"invalid token: expired\nMint a fresh token of the dev issuer of " + dir + " with praxa token --data-dir " + dir}},
		{"approvals without --dev", []string{"approvals", "list", "--data-dir", other, "--token", otherTok},
			[]string{"the access token (--token or PRAXA_OPERATOR_TOKEN) is refused: untrusted issuer", "add --dev",
				"act as the operating-system user"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCommand(t, tc.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1:\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("%q missing:\n%s", w, stderr)
				}
			}
		})
	}
}
