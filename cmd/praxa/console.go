package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/praxa/praxa/console"
	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/issuer"
)

// devConsoleClient is the console's client id at the dev issuer unless
// console.clientId names another.
const devConsoleClient = "praxa-console"

// devConsoleAccounts are the people the dev issuer's sign-in page offers:
// an approver (who is also the operator accepting changed upstream tools),
// a read-only viewer and a requester (who may ask for moves and approve
// others' requests, not their own), all of tenant dev.
func devConsoleAccounts(cfg *config.Config) []issuer.Account {
	extra := contextClaims(cfg.Auth.Claims.Compartments, cfg.Auth.Claims.Purposes, devCompartments, devPurposes)
	read := []string{string(contracts.ScopeMissionsRead), string(contracts.ScopeTracesRead), string(contracts.ScopeCapabilitiesRead)}
	return []issuer.Account{
		{Subject: "alice", Label: "Alice, approver", Tenant: devTenant, Extra: extra,
			Scopes: append(slices.Clone(read), string(contracts.ScopeApprovalsWrite), string(contracts.ScopeCapabilitiesAdmin))},
		{Subject: "victor", Label: "Victor, viewer (read only)", Tenant: devTenant, Extra: extra, Scopes: read},
		{Subject: "rita", Label: "Rita, requester", Tenant: devTenant, Extra: extra,
			Scopes: append(slices.Clone(read), string(contracts.ScopeMissionsWrite), string(contracts.ScopeApprovalsWrite))},
	}
}

// newConsole builds the operator console when the configuration (or
// --dev) asks for it: nil when it is off. With --dev and no other issuer
// named it signs people in with the dev issuer, whose authorization
// endpoint it turns on (loopback listeners only).
func newConsole(cfg *config.Config, dev *issuer.Issuer, svc *gateway.Service, aud *audit.Auditor, verifier *auth.Verifier, log *slog.Logger) (*console.Console, error) {
	enabled := dev != nil
	if cfg.Console.Enabled != nil {
		enabled = *cfg.Console.Enabled
	}
	if !enabled {
		return nil, nil
	}
	clientID := cfg.Console.ClientID
	if clientID == "" && dev != nil {
		clientID = devConsoleClient
	}
	if clientID == "" {
		return nil, fmt.Errorf("console: console.clientId is required to serve the console (the console's public client at the issuer)")
	}
	known := []string{}
	for _, is := range cfg.Auth.Issuers {
		known = append(known, is.Issuer)
	}
	iss := cfg.Console.Issuer
	switch {
	case iss == "" && dev != nil:
		iss = dev.Issuer()
	case iss == "" && len(known) > 0:
		iss = known[0]
	case iss == "":
		return nil, fmt.Errorf("console: no issuer to sign in with: add auth.issuers (or use --dev)")
	}
	if dev != nil {
		known = append(known, dev.Issuer())
	}
	if !slices.Contains(known, iss) {
		return nil, fmt.Errorf("console: console.issuer %s is not one of auth.issuers (%s)", iss, strings.Join(known, ", "))
	}
	if dev != nil && iss == dev.Issuer() {
		dev.EnableAuthorization(issuer.AuthorizationOptions{Audience: cfg.Auth.Resource, Accounts: devConsoleAccounts(cfg),
			Clients: map[string][]string{clientID: {strings.TrimRight(cfg.Server.PublicURL, "/") + console.CallbackPath}}, TTL: time.Hour})
	}
	return console.New(console.Options{Service: svc, Auditor: aud, Verifier: verifier, Issuer: iss, ClientID: clientID, PublicURL: cfg.Server.PublicURL,
		Logger: log, IDs: func(ctx context.Context) (string, string) { return telemetry.RequestID(ctx), telemetry.TraceID(ctx) }})
}
