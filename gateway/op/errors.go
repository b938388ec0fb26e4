package op

import (
	"context"
	"errors"
	"fmt"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/store"
)

// AsError is the one conversion of an operation's error into the answer's:
// a contract error stays as it is, store.ErrNotFound is not-found,
// store.ErrClosed and a deadline are unavailable, and anything else is an
// internal error (its cause logged, never shown).
func AsError(err error) *contracts.Error {
	var ce *contracts.Error
	switch {
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, store.ErrNotFound):
		return contracts.Errorf(contracts.CodeNotFound, "not found")
	case errors.Is(err, store.ErrClosed), errors.Is(err, context.DeadlineExceeded):
		return &contracts.Error{Code: contracts.CodeUnavailable, Message: "the gateway cannot serve this request now", Cause: err}
	default:
		return &contracts.Error{Code: contracts.CodeInternal, Message: "internal error", Cause: err}
	}
}

// RequireScope is the one scope check: nil when p holds scope, else the
// insufficient-scope refusal, which names the scope and links where to ask
// for a token that has it.
func RequireScope(p *auth.Principal, scope contracts.Scope) *contracts.Error {
	if p.HasScope(scope) {
		return nil
	}
	return &contracts.Error{Code: contracts.CodeInsufficientScope,
		Message: fmt.Sprintf("this call requires the scope %s", scope),
		Hint:    "Ask the authorization server for a token that includes " + string(scope) + ".",
		Fields:  []contracts.FieldError{{Pointer: "", Keyword: "scope", Detail: string(scope)}},
		Links:   []contracts.Link{AuthorizationLink("a token that includes the scope " + string(scope))}}
}

// ResourceMetadataPath is where the gateway's protected resource metadata
// (RFC 9728) names its authorization servers and scopes.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// AuthorizationLink is the next move of a refusal that only another token
// lifts: read which authorization servers issue tokens for this gateway
// (the protected resource metadata) and ask one for what.
func AuthorizationLink(what string) contracts.Link {
	return contracts.Link{Rel: "authorization", Title: "Ask an authorization server of this gateway for " + what,
		Method: "GET " + ResourceMetadataPath, Args: map[string]any{},
		Hint: "The protected resource metadata names the authorization servers and the scopes; a person or the application asks one for the token, not the model."}
}
