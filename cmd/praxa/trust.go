package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
)

// This file is how a command that works on a gateway's store without
// serving it (praxa mcp on a local store, the operator commands) trusts
// tokens as that gateway does, and what it says when it refuses one.

// localTrust completes cfg, the configuration a command loaded, as the
// gateway of the data directory runs it (config.Defaults with --addr).
// With --dev it trusts the dev issuer praxa serve --dev made in the data
// directory, for the audience serve recorded there, and takes serve's
// public URL from it (https:// when serve terminates TLS) instead of one
// derived from --addr; the returned issuer goes to the verifier. Without
// --dev it returns none.
func localTrust(f serveFlags, cfg *config.Config) ([]auth.StaticIssuer, error) {
	if !f.dev {
		cfg.Defaults(f.addr)
		return nil, nil
	}
	info, is, err := loadDevIssuer(f.dataDir)
	if err != nil {
		return nil, err
	}
	if cfg.Server.PublicURL == "" {
		// serve --dev serves its issuer under its public URL.
		cfg.Server.PublicURL = strings.TrimSuffix(info.Issuer, devPathPrefix)
	}
	cfg.Defaults(f.addr)
	cfg.Auth.Resource = info.Audience
	return []auth.StaticIssuer{devStaticIssuer(info.Issuer, is)}, nil
}

// refusalAdvice says, on lines of its own, why a token given to a
// command was refused and what to do about it ("" when err is no token
// refusal): err is the verifier's refusal, trusted the issuers the
// command trusted, cfg its configuration (completed by localTrust) and f
// its flags.
func refusalAdvice(err error, f serveFlags, cfg *config.Config, trusted []string) string {
	var re *auth.RefusalError
	if !errors.As(err, &re) {
		return ""
	}
	var b strings.Builder
	mint := "praxa token --data-dir " + config.ShellQuote(f.dataDir)
	switch re.Reason {
	case auth.ReasonUntrustedIssuer:
		var ie *auth.IssuerError
		iss := ""
		if errors.As(err, &ie) {
			iss = ie.Issuer
			fmt.Fprintf(&b, "\nThe token was issued by %s; ", iss)
		} else {
			b.WriteString("\nThe token's issuer is not trusted; ")
		}
		if len(trusted) == 0 {
			fmt.Fprintf(&b, "this command trusts no issuer (%s names no auth.issuers).", configLabel(cfg))
		} else {
			fmt.Fprintf(&b, "this command trusts %s.", strings.Join(trusted, ", "))
		}
		switch {
		case strings.HasSuffix(iss, devPathPrefix) && !f.dev:
			b.WriteString("\nIt is a token of a gateway run with praxa serve --dev (praxa token mints them): add --dev, with the --data-dir of that gateway, to trust its dev issuer.")
		case f.dev:
			fmt.Fprintf(&b, "\nWith --dev the tokens of the dev issuer of %s are trusted: mint one with %s.", f.dataDir, mint)
		}
		fmt.Fprintf(&b, "\nTo trust another issuer, add it to auth.issuers of the gateway's configuration (%s); or use a token of an issuer it trusts.", configLabel(cfg))
	case auth.ReasonExpired, auth.ReasonUnknownKey, auth.ReasonBadSignature, auth.ReasonWrongAudience, auth.ReasonRevoked:
		if re.Reason == auth.ReasonWrongAudience {
			fmt.Fprintf(&b, "\nThis gateway's tokens name the audience %s.", cfg.Auth.Resource)
		}
		if f.dev {
			fmt.Fprintf(&b, "\nMint a fresh token of the dev issuer of %s with %s (a token of another data directory, or of its gateway on another address, is not its own).", f.dataDir, mint)
		} else {
			b.WriteString("\nUse a fresh token of an issuer the gateway trusts.")
		}
	}
	return b.String()
}
