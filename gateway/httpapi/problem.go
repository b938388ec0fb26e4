package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
)

// Problem is an RFC 9457 problem document with the gateway's extensions.
type Problem struct {
	Type      string                 `json:"type"`
	Title     string                 `json:"title"`
	Status    int                    `json:"status"`
	Detail    string                 `json:"detail,omitempty"`
	Instance  string                 `json:"instance,omitempty"`
	Code      contracts.Code         `json:"code"`
	RequestID string                 `json:"requestId,omitempty"`
	Retryable bool                   `json:"retryable"`
	Hint      string                 `json:"hint,omitempty"`
	Errors    []contracts.FieldError `json:"errors,omitempty"`
	Links     []contracts.Link       `json:"links"`
	// TraceID is the W3C trace id of the answer: the one its Traceparent
	// header carries, or for a replayed refusal the original request's.
	TraceID string `json:"traceId,omitempty"`

	// OperatorCommand is contracts.Error.OperatorCommand: the command an
	// operator runs instead (MCP answers it as error.operatorCommand).
	OperatorCommand string `json:"operatorCommand,omitempty"`
}

// problemFor renders err as a problem. Internal errors show a generic
// detail; their cause goes to the log only.
func problemFor(err *contracts.Error, requestID, traceID string) Problem {
	info, _ := err.Code.Info()
	p := Problem{
		Type: info.Code.TypeURI(), Title: info.Title, Status: info.Status, Detail: err.Message,
		Code: info.Code, RequestID: requestID, Retryable: info.Retryable, Hint: err.Hint,
		Errors: err.Fields, Links: err.Links, OperatorCommand: err.OperatorCommand, TraceID: traceID,
	}
	if requestID != "" {
		p.Instance = "urn:praxa:request:" + requestID
	}
	if info.Code == contracts.CodeInternal {
		p.Detail, p.Hint, p.OperatorCommand, p.Errors = "internal error", "", "", nil
	}
	if p.Links == nil {
		p.Links = []contracts.Link{}
	}
	return p
}

// writeProblem is the one function that writes a REST error. status 0 means
// the code's own status. The body's traceId is the trace of the answer's
// Traceparent header (observe sets it on every request).
func writeProblem(w http.ResponseWriter, status int, err *contracts.Error, requestID string) {
	writeProblemIn(w, status, err, requestID, "")
}

// writeProblemIn writes a REST error whose body names traceID ("" for the
// trace of the answer's Traceparent header): a replayed refusal names the
// trace of the request answered first.
func writeProblemIn(w http.ResponseWriter, status int, err *contracts.Error, requestID, traceID string) {
	if traceID == "" {
		traceID = answerTrace(w.Header())
	}
	p := problemFor(err, requestID, traceID)
	if status != 0 {
		p.Status = status
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if retryAfter := retryAfterFor(p.Code); retryAfter != "" && h.Get("Retry-After") == "" {
		h.Set("Retry-After", retryAfter)
	}
	w.WriteHeader(p.Status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(p)
}

// answerTrace is the trace id of the Traceparent header observe answers
// with (version-traceid-parentid-flags), "" when there is none.
func answerTrace(h http.Header) string {
	v := h.Get("Traceparent")
	if len(v) != 55 || v[2] != '-' || v[35] != '-' {
		return ""
	}
	return v[3:35]
}

func retryAfterFor(c contracts.Code) string {
	switch c {
	case contracts.CodeIdempotencyInProgress, contracts.CodeUnavailable:
		return "1"
	case contracts.CodeOutcomeUnknown:
		return "2"
	}
	return ""
}

// challenge builds a WWW-Authenticate value (RFC 6750, RFC 9728): errCode
// empty for a request without credentials.
func challenge(metadataURL, errCode, description string, scopes []string) string {
	parts := []string{`Bearer realm="praxa"`}
	if errCode != "" {
		parts = append(parts, `error="`+errCode+`"`)
		if description != "" {
			parts = append(parts, `error_description=`+strconv.Quote(description))
		}
	}
	if len(scopes) > 0 {
		parts = append(parts, `scope="`+strings.Join(scopes, " ")+`"`)
	}
	parts = append(parts, `resource_metadata="`+metadataURL+`"`)
	return strings.Join(parts, ", ")
}

// invalidTokenHint is the next move after a refused token, by the refusal's
// reason: a token that lapsed is renewed at its issuer (and a host's stdio
// bridge can do that itself), one the gateway can never accept is replaced
// by a token of an issuer and audience the resource metadata names.
func invalidTokenHint(reason string) string {
	switch reason {
	case auth.ReasonExpired, auth.ReasonRevoked:
		return "Obtain a new access token from its issuer and send it again. An MCP host running praxa mcp renews its own: " +
			"give it --token-command, or --client-id with --client-secret-env or --refresh-token-env (docs/mcp-hosts-credentials.md)."
	case auth.ReasonIssuerUnavailable:
		return "The issuer's keys could not be fetched; send the same token again shortly."
	case auth.ReasonNotYetValid, auth.ReasonIssuedInFuture:
		return "The token's time claims lie ahead of the gateway's clock; check the issuer's clock, or send it again once it is valid."
	default:
		return "Send an access token issued for this gateway (its audience) by an issuer the resource metadata in WWW-Authenticate names."
	}
}
