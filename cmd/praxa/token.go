package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
)

func init() {
	register(command{name: "token", summary: "mint a development token (for a gateway run with --dev)", run: runToken})
	register(command{name: "tokens", summary: "manage access tokens: tokens revoke JTI", run: runTokens, verbs: []string{"revoke"}})
}

func runToken(_ context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "token", "")
	scope := fs.String("scope", strings.Join(allScopes(), " "), "space-separated `\"SCOPE SCOPE\"`")
	tenant := fs.String("tenant", devTenant, "tenant of the token")
	subject := fs.String("subject", devSubject, "subject (sub) of the token")
	ttl := fs.Duration("ttl", time.Hour, "lifetime of the token, a `DURATION` (90m, 12h)")
	dataDir := fs.String("data-dir", defaultDataDir(env), "data directory of the gateway run with --dev")
	compartmentsFlag := fs.String("compartments", "", "comma-separated memory compartments `A,B` the token allows (none by default)")
	purposesFlag := fs.String("purposes", "", "comma-separated purposes `A,B` the token allows (none by default)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	compartments, err := commaList(env, "token", "compartments", *compartmentsFlag)
	if err != nil {
		return err
	}
	purposes, err := commaList(env, "token", "purposes", *purposesFlag)
	if err != nil {
		return err
	}
	if *ttl <= 0 || *ttl > 30*24*time.Hour {
		fmt.Fprintln(env.stderr, "praxa token: --ttl must be between 1s and 720h")
		return errUsage
	}
	scopes := strings.Fields(*scope)
	for _, s := range scopes {
		if !contracts.Scope(s).Known() {
			fmt.Fprintf(env.stderr, "praxa token: unknown scope %q (known: %s)\n", s, strings.Join(allScopes(), " "))
			return errUsage
		}
	}
	info, is, err := loadDevIssuer(*dataDir)
	if err != nil {
		return err
	}
	tok, err := is.Mint(info.Issuer, info.Audience, *subject, *tenant, scopes, *ttl,
		contextClaims(info.CompartmentsClaim, info.PurposesClaim, compartments, purposes))
	if err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, tok)
	return nil
}

// runTokens is praxa tokens revoke JTI: the revocation every replica
// reads, with its token.revoked audit event (to the configured audit.sink
// too), by the operator (the principal of --token, or the
// operating-system user: operator.go).
func runTokens(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "tokens", "revoke JTI")
	reason := fs.String("reason", "", "why the token is revoked (kept in the audit trail)")
	token := operatorToken(fs)
	var f serveFlags
	f.registerFor(env, fs, true, false)
	if len(args) == 0 || args[0] != "revoke" {
		return verbUsage(fs, args)
	}
	jti, err := parseVerbFlags(fs, args[1:], true)
	if err != nil {
		return err
	}
	if jti == "" && fs.NArg() == 1 {
		jti = fs.Arg(0)
	}
	if jti == "" {
		fmt.Fprintln(env.stderr, "praxa tokens revoke: name the token id (jti) to revoke")
		return errUsage
	}
	cfg, _, st, err := openOperatorStore(ctx, env, f)
	if err != nil {
		return err
	}
	defer st.Close()
	operator, err := operatorPrincipal(ctx, env, f, cfg, st, *token, contracts.ScopeTokensWrite, "")
	if err != nil {
		return err
	}
	svc := gateway.New(st, nil)
	defer svc.Close(ctx)
	if err := svc.RevokeToken(ctx, operator, gateway.RevokeRequest{JTI: jti, Reason: *reason}, nil); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "revoked %s (running gateways refuse it within seconds)\n", jti)
	return nil
}
