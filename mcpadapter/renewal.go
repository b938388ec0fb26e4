package mcpadapter

import (
	"errors"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/restclient"
)

// Renewal is how the operator renews the credential a stdio server acts
// with (praxa mcp's --token, --token-command, client credentials or
// refresh token). The refusal of a credential that is no longer
// accepted, in process (Local) or by a remote gateway (Remote), says it:
// as the hint, and as the operator command and an operator_path link when
// there is a command.
type Renewal struct {
	// Hint says what to do, naming the flags and commands.
	Hint string
	// Command is the command line that renews or tests the credential;
	// empty when there is none.
	Command string
}

// restartRenewal is the Renewal of a server that was told none.
var restartRenewal = Renewal{Hint: "Restart the MCP server with a fresh token."}

// apply gives e the renewal's hint, operator command and link.
func (r *Renewal) apply(e *contracts.Error) *contracts.Error {
	if r == nil {
		r = &restartRenewal
	}
	e.Hint = r.Hint
	if r.Command != "" {
		e.OperatorCommand = r.Command
		e.Links = append(e.Links, contracts.Link{Rel: "operator_path", Title: "Renew the server's credential", Method: "cli",
			Args: map[string]any{"command": r.Command}})
	}
	return e
}

// refusal is the answer to a call whose bound credential err refused or
// could not renew: invalid-token with why and how to renew, or
// unavailable when the credential could not be checked at all.
func (r *Renewal) refusal(err error) *contracts.Error {
	reason, renewal := auth.Reason(err), restclient.RenewalReason(err)
	code := contracts.CodeInvalidToken
	if !errors.Is(err, auth.ErrInvalidToken) && renewal == "" {
		code = contracts.CodeUnavailable
	}
	var msg string
	switch {
	case renewal == "":
		msg = "the server's credential is no longer accepted: " + reason
	case reason == "":
		msg = "the server's credential could not be renewed: " + renewal
	default:
		msg = "the server's credential is no longer accepted: " + reason + "; renewing it failed: " + renewal
	}
	return r.apply(&contracts.Error{Code: code, Message: msg, Cause: err})
}

// remoteRefusal amends a remote gateway's refusal of the token (401
// invalid-token) with why its renewal failed (renewErr, nil when none was
// tried) and how to renew; with no Renewal the gateway's answer stands.
func (r *Renewal) remoteRefusal(e *contracts.Error, renewErr error) *contracts.Error {
	if r == nil {
		return e
	}
	if reason := restclient.RenewalReason(renewErr); reason != "" {
		e.Message += "; renewing it failed: " + reason
	}
	return r.apply(e)
}
