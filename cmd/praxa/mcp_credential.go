package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/restclient"
	"github.com/praxa/praxa/mcpadapter"
)

// credentialFlags are praxa mcp's ways to a credential: a fixed token
// (--token, PRAXA_TOKEN), a command that prints one, or an OAuth client
// (client credentials, or a refresh token). A secret is never a flag's
// value, which any user of the machine could read in ps: it is named by
// the environment variable that holds it.
type credentialFlags struct {
	token, tokenCommand                  string
	clientID, secretEnv, refreshEnv      string
	tokenURL, issuer, scope, tenantClaim string
}

func (f *credentialFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.token, "token", "", "access token the server acts with (default $PRAXA_TOKEN); a fixed token cannot be renewed: it stops working when it expires")
	fs.StringVar(&f.tokenCommand, "token-command", "", "command that prints an access token (argv split as a shell splits words; no shell unless it runs sh -c '…'), "+
		"run at start, shortly before each token expires and when one is refused, e.g. 'praxa token --data-dir DIR' for a --dev gateway")
	fs.StringVar(&f.clientID, "client-id", "", "OAuth client id: obtain and renew tokens with the client credentials grant (secret in --client-secret-env), or by redeeming --refresh-token-env")
	fs.StringVar(&f.secretEnv, "client-secret-env", "", "name of the environment variable holding the client's secret (never the secret itself: a flag shows in ps)")
	fs.StringVar(&f.refreshEnv, "refresh-token-env", "", "name of the environment variable holding a refresh token to redeem (instead of client credentials)")
	fs.StringVar(&f.tokenURL, "token-url", "", "the issuer's token endpoint (default: from --issuer's OpenID discovery)")
	fs.StringVar(&f.issuer, "issuer", "", "the issuer whose discovery names the token endpoint (default: the one issuer the gateway trusts)")
	fs.StringVar(&f.scope, "scope", "", "space-separated scopes to ask the issuer for (default: the client's own)")
	fs.StringVar(&f.tenantClaim, "tenant-claim", "tenant_id", "with --gateway: the claim the gateway reads the tenant from (its auth.claims.tenant), which every renewed token must keep")
}

// credentialKind is the way to a credential the flags chose.
type credentialKind int

const (
	fixedToken credentialKind = iota
	commandToken
	clientCredentials
	refreshToken
)

// kind checks the flags' combination and names the way they chose. A
// usage mistake is said on stderr.
func (f *credentialFlags) kind(env *environment) (credentialKind, error) {
	usage := func(format string, args ...any) (credentialKind, error) {
		fmt.Fprintf(env.stderr, "praxa mcp: "+format+"\n", args...)
		return 0, errUsage
	}
	chosen := 0
	for _, set := range []bool{f.token != "", f.tokenCommand != "", f.clientID != ""} {
		if set {
			chosen++
		}
	}
	if chosen > 1 {
		return usage("choose one credential: --token, --token-command or --client-id")
	}
	if f.clientID == "" {
		for _, o := range []struct{ name, v string }{{"--client-secret-env", f.secretEnv}, {"--refresh-token-env", f.refreshEnv},
			{"--token-url", f.tokenURL}, {"--issuer", f.issuer}, {"--scope", f.scope}} {
			if o.v != "" {
				return usage("%s needs --client-id", o.name)
			}
		}
	}
	switch {
	case f.tokenCommand != "":
		return commandToken, nil
	case f.clientID != "" && f.refreshEnv != "":
		return refreshToken, nil
	case f.clientID != "":
		if f.secretEnv == "" {
			return usage("--client-id needs --client-secret-env NAME (client credentials) or --refresh-token-env NAME")
		}
		return clientCredentials, nil
	}
	if f.token == "" {
		f.token = env.getenv("PRAXA_TOKEN")
	}
	if f.token == "" {
		return 0, errors.New("no credential: pass --token or set PRAXA_TOKEN, or let the server obtain and renew its own with " +
			"--token-command 'COMMAND' or --client-id ID --client-secret-env NAME (the MCP server never runs anonymously)")
	}
	return fixedToken, nil
}

// credentialTarget is what the gateway the server talks to tells about
// the tokens it accepts.
type credentialTarget struct {
	// issuers are the issuers it trusts; resource its resource
	// identifier (the audience a token must name).
	issuers  []string
	resource string
	// check verifies a token and says whose it is (the gateway's own
	// verifier, or for --gateway its claims: the gateway verifies it).
	check func(ctx context.Context, tok string) (restclient.Checked, error)
	// invocation is the praxa mcp command line that reaches the gateway
	// (without a credential), for the commands the advice shows;
	// devDataDir the data directory of a --dev local store.
	invocation string
	devDataDir string
}

// source returns the token source the flags chose and how the operator
// renews it. A renewing source calls stop when a renewed token names
// another principal than the first.
func (f *credentialFlags) source(ctx context.Context, env *environment, kind credentialKind, t credentialTarget, stop func(error),
	log *slog.Logger) (restclient.TokenSource, *mcpadapter.Renewal, error) {
	var (
		fetch   func(context.Context) (string, error)
		renewal *mcpadapter.Renewal
	)
	switch kind {
	case fixedToken:
		cmd := t.invocation + " --token-command " + config.ShellQuote("<a command that prints an access token>")
		if t.devDataDir != "" {
			cmd = t.invocation + " --token-command " + config.ShellQuote(devTokenCommand(t.devDataDir))
		}
		return restclient.StaticToken(f.token), &mcpadapter.Renewal{
			Hint: "This server was started with a fixed token (--token or PRAXA_TOKEN), which it cannot renew. Restart it with a fresh token, " +
				"or let it obtain and renew its own: --token-command 'COMMAND' (a command that prints an access token), " +
				"or --client-id ID --client-secret-env NAME (the client credentials grant at the issuer). See docs/mcp-hosts-credentials.md.",
			Command: cmd}, nil
	case commandToken:
		argv, err := restclient.SplitCommand(f.tokenCommand)
		if err != nil {
			fmt.Fprintf(env.stderr, "praxa mcp: --token-command: %v\n", err)
			return nil, nil, errUsage
		}
		fetch = restclient.CommandToken(argv, &restclient.CommandOptions{Stderr: env.stderr})
		renewal = &mcpadapter.Renewal{
			Hint: "This server renews its token by running its --token-command. Run that command yourself to see why it fails " +
				"(what it wrote on stderr is in the server's log), fix it, and call again: the server runs it again on the next call.",
			Command: f.tokenCommand}
	case clientCredentials, refreshToken:
		c, err := f.oauthClient(ctx, env, t)
		if err != nil {
			return nil, nil, err
		}
		if kind == clientCredentials {
			fetch = c.ClientCredentials()
			test := "curl -sS -u " + config.ShellQuote(c.ClientID+":$"+f.secretEnv) + " -d grant_type=client_credentials"
			if c.Resource != "" {
				test += " --data-urlencode " + config.ShellQuote("resource="+c.Resource)
			}
			if f.scope != "" {
				test += " --data-urlencode " + config.ShellQuote("scope="+f.scope)
			}
			renewal = &mcpadapter.Renewal{
				Hint: fmt.Sprintf("This server obtains its token with the client credentials of client %q (--client-id), whose secret is in the "+
					"environment variable %s (--client-secret-env), at %s. Check that the client exists at the issuer and may have the scopes asked, "+
					"and that %s holds its secret in the MCP host's configuration (restart the server after changing it); then call again. "+
					"The command asks the token endpoint as the server does.", c.ClientID, f.secretEnv, c.TokenURL, f.secretEnv),
				Command: test + " " + config.ShellQuote(c.TokenURL)}
		} else {
			rt := env.getenv(f.refreshEnv)
			if rt == "" {
				return nil, nil, fmt.Errorf("--refresh-token-env: the environment variable %s is empty or unset", f.refreshEnv)
			}
			fetch = c.RefreshToken(rt)
			renewal = &mcpadapter.Renewal{
				Hint: fmt.Sprintf("This server renews its token with the refresh token of the environment variable %s (--refresh-token-env) "+
					"for client %q at %s, and the issuer no longer takes it: it expired or was revoked (an issuer that rotates refresh tokens "+
					"takes each once; the server keeps the newest in memory only). Obtain a new refresh token, put it in %s in the MCP host's "+
					"configuration and restart the server; --client-id with --client-secret-env, or --token-command, survive restarts.",
					f.refreshEnv, c.ClientID, c.TokenURL, f.refreshEnv)}
		}
	}
	src := restclient.NewRenewing(restclient.RenewingOptions{Fetch: fetch, Check: t.check, Stop: stop, Logger: log})
	return src, renewal, nil
}

// devTokenCommand is the command that prints a token of the dev issuer
// of dataDir: the --token-command of praxa mcp on a --dev store.
func devTokenCommand(dataDir string) string {
	return "praxa token --data-dir " + config.ShellQuote(dataDir)
}

// oauthClient is the OAuth client of the flags: its token endpoint is
// --token-url, or the one the discovery document of --issuer (default:
// the gateway's one issuer) names; the resource asked for is the
// gateway's.
func (f *credentialFlags) oauthClient(ctx context.Context, env *environment, t credentialTarget) (restclient.OAuthClient, error) {
	c := restclient.OAuthClient{TokenURL: f.tokenURL, ClientID: f.clientID, Scopes: strings.Fields(f.scope), Resource: t.resource,
		HTTPClient: &http.Client{Timeout: 30 * time.Second}}
	if f.secretEnv != "" {
		if c.ClientSecret = env.getenv(f.secretEnv); c.ClientSecret == "" {
			return c, fmt.Errorf("--client-secret-env: the environment variable %s is empty or unset", f.secretEnv)
		}
	}
	if c.TokenURL != "" {
		return c, nil
	}
	iss := f.issuer
	if iss == "" {
		if len(t.issuers) != 1 {
			return c, fmt.Errorf("the gateway trusts %d issuers (%s): name the one to ask with --issuer URL, or its token endpoint with --token-url URL",
				len(t.issuers), strings.Join(t.issuers, ", "))
		}
		iss = t.issuers[0]
	}
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, c.HTTPClient), iss)
	if err != nil {
		return c, fmt.Errorf("the discovery of issuer %s: %w (name its token endpoint with --token-url URL)", iss, err)
	}
	if c.TokenURL = p.Endpoint().TokenURL; c.TokenURL == "" {
		return c, fmt.Errorf("the discovery document of issuer %s names no token endpoint: name it with --token-url URL", iss)
	}
	return c, nil
}
