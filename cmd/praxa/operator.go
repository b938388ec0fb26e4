package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strconv"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
)

// This file establishes who runs an operator command (praxa approvals,
// capabilities accept, lexicon define and alias, tokens revoke; the
// imports of memory, goals and certificates act as the operating-system
// user only, there being no scope for them): the
// identity its audit events record and the self-approval rule compares.
// It is never a name the caller types. Either the command is given an
// access token (--token, or PRAXA_OPERATOR_TOKEN), verified exactly as the gateway
// verifies a bearer token and as the console verifies the token of the
// person who signs in (trusted issuer, audience, signature, expiry,
// revocation), and it acts as that token's principal; or it acts as the
// operating-system account running it, which has direct access to the
// store: subject os:NAME (NAME from the account database, never from the
// environment), client praxa-cli, and the uid on every audit event.

// operatorClientID is the client id of an operator command run without a
// token.
const operatorClientID = "praxa-cli"

// operatorTokenEnv is the environment variable an operator command reads
// its token from when --token is not given. It is not PRAXA_TOKEN, which
// every example exports for the agent's calls: an operator command in that
// shell would act as the agent, approving its own request or doing what
// only an operator may, with no sign of it.
const operatorTokenEnv = "PRAXA_OPERATOR_TOKEN"

// operatorTokenUsage documents --token of the operator commands.
const operatorTokenUsage = "act as the principal of this access token (default $" + operatorTokenEnv + "; never $PRAXA_TOKEN, the agent's), verified as the gateway verifies a bearer token " +
	"(with --dev, by the dev issuer of the data directory); without one, act as the operating-system user running the command " +
	"(subject os:NAME, its uid recorded on every audit event)"

// operatorToken registers --token on an operator command's flags.
func operatorToken(fs *flag.FlagSet) *string {
	return fs.String("token", "", operatorTokenUsage)
}

// operatorPrincipal returns the principal an operator command acts as, with the
// scope it needs: the verified principal of token (or of $PRAXA_OPERATOR_TOKEN when
// token is empty), which must grant scope and, when tenant is named, be of
// that tenant; else the operating-system account running the command, in
// tenant (the command requires it when it acts in one). cfg is the
// configuration the command loaded (its auth section says which issuers
// and audience to trust; Defaults is applied with f.addr) and st the store
// (the revoked tokens).
func operatorPrincipal(ctx context.Context, env *environment, f serveFlags, cfg *config.Config, st store.Store, token string, scope contracts.Scope, tenant string) (*auth.Principal, error) {
	if token == "" {
		token = env.getenv(operatorTokenEnv)
	}
	if token == "" {
		return osOperator(tenant, scope)
	}
	p, err := verifyOperatorToken(ctx, f, cfg, st, token)
	if err != nil {
		return nil, err
	}
	switch {
	case !p.HasScope(scope):
		return nil, fmt.Errorf("the access token (--token or PRAXA_OPERATOR_TOKEN) does not grant %s, which this command needs: use a token that does, "+
			"or run the command without one to act as the operating-system user", scope)
	case tenant != "" && tenant != p.Tenant:
		return nil, fmt.Errorf("the access token is of tenant %s, and --tenant names %s: an operator acts in its token's tenant (leave --tenant out, or use a token of %s)",
			p.Tenant, tenant, tenant)
	}
	return p, nil
}

// verifyOperatorToken verifies token as the gateway cfg describes verifies
// a bearer token: its issuers, or with --dev the dev issuer of the data
// directory, its audience, and the revocations of st.
func verifyOperatorToken(ctx context.Context, f serveFlags, cfg *config.Config, st store.Store, token string) (*auth.Principal, error) {
	statics, err := localTrust(f, cfg) // trust.go
	if err != nil {
		return nil, err
	}
	revs, err := gateway.NewRevocations(ctx, st, 0, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	v, err := auth.NewVerifier(ctx, cfg.Auth, &auth.Options{Revocations: revs, StaticIssuers: statics})
	if err != nil {
		return nil, err
	}
	p, err := v.Verify(ctx, token)
	if err != nil {
		why := "it does not verify"
		if re := (*auth.RefusalError)(nil); errors.As(err, &re) {
			why = re.Description()
		}
		return nil, fmt.Errorf("the access token (--token or PRAXA_OPERATOR_TOKEN) is refused: %s%s\n"+
			"Or unset PRAXA_OPERATOR_TOKEN and leave --token out to act as the operating-system user", why, refusalAdvice(err, f, cfg, v.Issuers()))
	}
	return p, nil
}

// configLabel names the configuration a command loaded, for a message.
func configLabel(cfg *config.Config) string {
	if cfg.Source != "" {
		return cfg.Source
	}
	return "the built-in configuration"
}

// osOperator is the principal of the operating-system account running the
// command, in tenant, granted scopes (the imports need none).
func osOperator(tenant string, scopes ...contracts.Scope) (*auth.Principal, error) {
	subject, uid, err := osAccount()
	if err != nil {
		return nil, err
	}
	return &auth.Principal{Subject: subject, ClientID: operatorClientID, Tenant: tenant, Scopes: auth.NewScopeSet(scopes...), LocalUID: uid}, nil
}

// osAccount names the operating-system account running the process:
// os:NAME, NAME looked up by the real uid in the account database (never
// $USER, which the caller sets), or os:uid:N for an account that has no
// name there (a container without /etc/passwd); and the uid.
func osAccount() (subject, uid string, err error) {
	id := os.Getuid()
	if id < 0 {
		// No uid (Windows): the account of the process's token.
		u, err := user.Current()
		if err != nil {
			return "", "", fmt.Errorf("the operating-system user running this command is not known (%v): pass an access token with --token", err)
		}
		return "os:" + u.Username, u.Uid, nil
	}
	uid = strconv.Itoa(id)
	if u, err := user.LookupId(uid); err == nil && u.Username != "" {
		return "os:" + u.Username, uid, nil
	}
	return "os:uid:" + uid, uid, nil
}
