package auth

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/praxa/praxa/contracts"
)

func TestPrincipalMethods(t *testing.T) {
	p := &Principal{
		Subject: "alice", ClientID: "cli", Tenant: "acme", Issuer: "https://idp.test",
		Scopes: NewScopeSet(contracts.ScopeMissionsRead, contracts.ScopeMemoryRead),
	}
	if !p.HasScope(contracts.ScopeMissionsRead) || p.HasScope(contracts.ScopeMissionsWrite) {
		t.Error("HasScope")
	}
	if got := p.MissingScopes(contracts.ScopeMissionsRead); got != nil {
		t.Errorf("MissingScopes = %v", got)
	}
	if got := p.Scopes.String(); got != "memory:read missions:read" {
		t.Errorf("String = %q", got)
	}
	if !p.AllowsTool("anything") {
		t.Error("nil allowlist must allow every tool")
	}
	var nilP *Principal
	if nilP.HasScope(contracts.ScopeMissionsRead) || nilP.AllowsTool("x") || nilP.Clone() != nil {
		t.Error("nil principal grants nothing")
	}
	if got := nilP.MissingScopes(contracts.ScopeMissionsRead); !slices.Equal(got, []contracts.Scope{contracts.ScopeMissionsRead}) {
		t.Errorf("nil MissingScopes = %v", got)
	}

	ns := p.Namespace()
	if len(ns) != 64 {
		t.Fatalf("Namespace %q", ns)
	}
	if ns != (&Principal{Subject: "alice", ClientID: "cli", Tenant: "acme", Issuer: "https://idp.test"}).Namespace() {
		t.Error("Namespace depends on more than tenant, issuer, subject and client")
	}
	for name, q := range map[string]*Principal{
		"tenant":  {Subject: "alice", ClientID: "cli", Tenant: "globex", Issuer: "https://idp.test"},
		"issuer":  {Subject: "alice", ClientID: "cli", Tenant: "acme", Issuer: "https://other.test"},
		"subject": {Subject: "bob", ClientID: "cli", Tenant: "acme", Issuer: "https://idp.test"},
		"client":  {Subject: "alice", ClientID: "cli2", Tenant: "acme", Issuer: "https://idp.test"},
		"shifted": {Subject: "alicecli", ClientID: "", Tenant: "acme", Issuer: "https://idp.test"},
	} {
		if q.Namespace() == ns {
			t.Errorf("Namespace ignores the %s", name)
		}
	}
	// Pinned: changing the encoding orphans every stored idempotency record.
	const golden = "e215c114538322ad8b287c15ddedecca9e664799ad4f4b6ad5e7781d31d099fc"
	if ns != golden {
		t.Errorf("Namespace = %s, pinned %s", ns, golden)
	}

	ctx := NewContext(context.Background(), p)
	if got, ok := FromContext(ctx); !ok || got != p {
		t.Error("FromContext")
	}
	if _, ok := FromContext(context.Background()); ok {
		t.Error("FromContext on an empty context")
	}
}

func TestRefusalError(t *testing.T) {
	cause := errors.New("go-oidc said so")
	err := error(invalidToken(ReasonMissingClaim, "sub", cause))
	if err.Error() != "invalid token: missing claim: sub" {
		t.Errorf("Error() = %q", err.Error())
	}
	if !errors.Is(err, ErrInvalidToken) || !errors.Is(err, cause) || errors.Is(err, ErrInvalidRequest) {
		t.Error("Is")
	}
	if Reason(err) != ReasonMissingClaim || Reason(errors.New("x")) != "" {
		t.Error("Reason")
	}
	if got := invalidRequest(ReasonTokenInQuery).Error(); got != "invalid request: token in query string" {
		t.Errorf("Error() = %q", got)
	}
}
