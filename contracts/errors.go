package contracts

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Code is a stable, machine-readable error code. Clients act on the code,
// never on the message.
type Code string

// The praxec codes (seeds/000) and the one status the seed treats as an
// interaction rather than an error.
const (
	CodeAmbiguousIntent        Code = "AMBIGUOUS_INTENT"
	CodeInvalidParams          Code = "INVALID_PARAMS"
	CodeGuardRejected          Code = "GUARD_REJECTED"
	CodeInvalidTransition      Code = "INVALID_TRANSITION"
	CodeVersionConflict        Code = "VERSION_CONFLICT"
	CodeRunIDAlreadyRunning    Code = "RUN_ID_ALREADY_RUNNING"
	CodeLexiconWritesDisabled  Code = "LEXICON_WRITES_DISABLED"
	CodeSubjectNeedsDefinition Code = "SUBJECT_NEEDS_DEFINITION"
)

// The gateway's own codes.
const (
	CodeUnauthenticated         Code = "unauthenticated"
	CodeInvalidToken            Code = "invalid-token"
	CodeInvalidRequest          Code = "invalid-request"
	CodeInsufficientScope       Code = "insufficient-scope"
	CodeToolNotAllowed          Code = "tool-not-allowed"
	CodeTenantForbidden         Code = "tenant-forbidden"
	CodeNotFound                Code = "not-found"
	CodeMethodNotAllowed        Code = "method-not-allowed"
	CodeNotAcceptable           Code = "not-acceptable"
	CodeIdempotencyKeyMissing   Code = "idempotency-key-missing"
	CodeIdempotencyKeyInvalid   Code = "idempotency-key-invalid"
	CodeIdempotencyKeyReused    Code = "idempotency-key-reused"
	CodeIdempotencyInProgress   Code = "idempotency-request-in-progress"
	CodeIdempotencyKeyExpired   Code = "idempotency-key-expired"
	CodeMalformedJSON           Code = "malformed-json"
	CodeRequestLimits           Code = "request-limits"
	CodeContentTooLarge         Code = "content-too-large"
	CodeUnsupportedMediaType    Code = "unsupported-media-type"
	CodeRateLimited             Code = "rate-limited"
	CodeDestructiveActionDenied Code = "destructive-action-denied"
	CodeMissionStateConflict    Code = "mission-state-conflict"
	CodeOutcomeUnknown          Code = "outcome-unknown"
	CodeUnavailable             Code = "unavailable"
	CodeNotImplemented          Code = "not-implemented"
	CodeOriginForbidden         Code = "origin-forbidden"
	CodeInternal                Code = "internal"
)

// The codes of purpose-filtered context reads (memory, goals): the request
// names a compartment or a purpose the token's claims do not allow. They
// are distinct from tenant-forbidden: the tenant is right, the token is
// narrower than the request, and the gateway never widens it.
const (
	CodeCompartmentForbidden Code = "compartment-forbidden"
	CodePurposeForbidden     Code = "purpose-forbidden"
)

// CodeUpstreamFailed answers a move whose executor reached an upstream
// (an MCP server, a command, a REST API) that answered with a failure: the
// move did not happen.
const CodeUpstreamFailed Code = "upstream-failed"

// CodePathForbidden answers a move of a command line capability whose
// working directory or a declared path argument resolves (symlinks
// followed) outside the roots the configuration grants its connection:
// the command was not run.
const CodePathForbidden Code = "path-forbidden"

// CodeSelfApproval refuses an approval by the principal that asked for it
// (its subject requested the move the approval waits for), unless the
// configuration allows it for the approval's queue.
const CodeSelfApproval Code = "self-approval-forbidden"

// CodeQuotaExceeded refuses a creation that would take the tenant past
// one of its quotas (server.quotas: open missions, pending approvals,
// memory records, goals): nothing was written and nothing was called. Its
// links list what the tenant holds open.
const CodeQuotaExceeded Code = "quota-exceeded"

// CodeCapabilityQuarantined refuses a call of a capability imported from
// an upstream MCP server whose definition no longer matches the one
// pinned (proxy.import, pin enforce): nothing was called. It stays
// refused until an operator accepts the new definition; its links say
// how.
const CodeCapabilityQuarantined Code = "capability-quarantined"

// CodeInfo is the registry entry of one code: how every surface reports it.
type CodeInfo struct {
	Code Code `json:"code"`
	// Status is the HTTP status REST answers with. It is 200 for
	// SUBJECT_NEEDS_DEFINITION, which is an interaction, not an error.
	Status int `json:"status"`
	// Retryable says whether the same request may succeed later unchanged.
	Retryable bool `json:"retryable"`
	// Title is the short, occurrence-independent summary (RFC 9457 title).
	Title string `json:"title"`
	// Stop says that an agent host must stop rather than let the model repair
	// and retry the call (seeds/003 "Map tool failures correctly").
	Stop bool `json:"stop"`
}

var codeRegistry = map[Code]CodeInfo{
	CodeAmbiguousIntent:        {Status: 400, Title: "The arguments match no dispatch shape"},
	CodeInvalidParams:          {Status: 400, Title: "The arguments do not satisfy the input schema"},
	CodeGuardRejected:          {Status: 409, Title: "A guard refused the transition"},
	CodeInvalidTransition:      {Status: 409, Title: "The transition is not legal in the current state"},
	CodeVersionConflict:        {Status: 409, Title: "The expected version is stale"},
	CodeRunIDAlreadyRunning:    {Status: 409, Title: "An instance already exists with this runId"},
	CodeLexiconWritesDisabled:  {Status: 403, Title: "Lexicon writes are disabled", Stop: true},
	CodeSubjectNeedsDefinition: {Status: 200, Title: "A subject needs a lexicon definition"},

	CodeUnauthenticated:         {Status: 401, Title: "Authentication required", Stop: true},
	CodeInvalidToken:            {Status: 401, Title: "The access token is invalid", Stop: true},
	CodeInvalidRequest:          {Status: 400, Title: "The request carries credentials incorrectly", Stop: true},
	CodeInsufficientScope:       {Status: 403, Title: "The access token lacks a required scope", Stop: true},
	CodeToolNotAllowed:          {Status: 403, Title: "The tool is outside the caller's allowed tool set", Stop: true},
	CodeTenantForbidden:         {Status: 403, Title: "The request names another tenant", Stop: true},
	CodeNotFound:                {Status: 404, Title: "Not found", Stop: true},
	CodeMethodNotAllowed:        {Status: 405, Title: "Method not allowed"},
	CodeNotAcceptable:           {Status: 406, Title: "No acceptable representation"},
	CodeIdempotencyKeyMissing:   {Status: 400, Title: "An idempotency key is required"},
	CodeIdempotencyKeyInvalid:   {Status: 400, Title: "The idempotency key is malformed"},
	CodeIdempotencyKeyReused:    {Status: 422, Title: "The idempotency key was used for another request", Stop: true},
	CodeIdempotencyInProgress:   {Status: 409, Title: "A request with this idempotency key is in progress", Retryable: true},
	CodeIdempotencyKeyExpired:   {Status: 409, Title: "The idempotency key already answered this request and its answer is no longer kept", Stop: true},
	CodeMalformedJSON:           {Status: 400, Title: "The body is not well-formed JSON"},
	CodeRequestLimits:           {Status: 400, Title: "The body exceeds a structural limit"},
	CodeContentTooLarge:         {Status: 413, Title: "The body is too large"},
	CodeUnsupportedMediaType:    {Status: 415, Title: "Unsupported media type"},
	CodeRateLimited:             {Status: 429, Title: "Too many requests", Retryable: true},
	CodeQuotaExceeded:           {Status: 429, Title: "A tenant quota is exhausted", Retryable: true},
	CodeCapabilityQuarantined:   {Status: 409, Title: "The capability is quarantined until an operator accepts its changed upstream definition", Stop: true},
	CodeDestructiveActionDenied: {Status: 403, Title: "Policy denies this destructive action", Stop: true},
	CodeMissionStateConflict:    {Status: 409, Title: "The mission's state does not allow this", Stop: true},
	CodeSelfApproval:            {Status: 409, Title: "The approver asked for this approval", Stop: true},
	CodeUpstreamFailed:          {Status: 502, Title: "An upstream answered the call with a failure"},
	CodePathForbidden:           {Status: 403, Title: "A path lies outside the roots granted to the command"},
	CodeOutcomeUnknown:          {Status: 504, Title: "The outcome is unknown; replay with the same key or read back", Retryable: true, Stop: true},
	CodeUnavailable:             {Status: 503, Title: "Temporarily unavailable", Retryable: true},
	CodeOriginForbidden:         {Status: 403, Title: "Requests from this origin are not allowed", Stop: true},
	CodeCompartmentForbidden:    {Status: 403, Title: "The access token does not allow this compartment", Stop: true},
	CodePurposeForbidden:        {Status: 403, Title: "The access token does not allow this purpose", Stop: true},
	CodeNotImplemented:          {Status: 501, Title: "This operation is not available on this gateway yet", Stop: true},
	CodeInternal:                {Status: 500, Title: "Internal error", Retryable: true},
}

// seedCodes are the codes seeds/000 defines.
var seedCodes = map[Code]bool{
	CodeAmbiguousIntent: true, CodeInvalidParams: true, CodeGuardRejected: true, CodeInvalidTransition: true,
	CodeVersionConflict: true, CodeRunIDAlreadyRunning: true, CodeLexiconWritesDisabled: true, CodeSubjectNeedsDefinition: true,
}

// FromSeed reports whether c is one of the codes seeds/000 defines. The
// spelling rule of codes follows: a seed code is answered as the seed
// spells it (upper snake case, GUARD_REJECTED); every other code is the
// gateway's own and is spelled as the slug of its registered problem type
// (lower kebab case, idempotency-key-reused). Both are answered as REST's
// problem member code and MCP's error.code; the problem type of either is
// TypeURI.
func (c Code) FromSeed() bool { return seedCodes[c] }

// problemTypeBase prefixes every problem type URI.
const problemTypeBase = "https://praxa.dev/problems/"

// Info returns the registry entry of c. An unknown code reports as internal
// with ok false.
func (c Code) Info() (CodeInfo, bool) {
	info, ok := codeRegistry[c]
	if !ok {
		info = codeRegistry[CodeInternal]
		info.Code = CodeInternal
		return info, false
	}
	info.Code = c
	return info, true
}

// Status is the HTTP status of c (500 for an unknown code).
func (c Code) Status() int {
	info, _ := c.Info()
	return info.Status
}

// TypeURI is the RFC 9457 problem type of c: a stable URI ending in the
// code's kebab-case slug.
func (c Code) TypeURI() string {
	return problemTypeBase + strings.ReplaceAll(strings.ToLower(string(c)), "_", "-")
}

// Codes returns every registered code, sorted.
func Codes() []CodeInfo {
	out := make([]CodeInfo, 0, len(codeRegistry))
	for c := range codeRegistry {
		info, _ := c.Info()
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b CodeInfo) int { return strings.Compare(string(a.Code), string(b.Code)) })
	return out
}

// FieldError locates one violation inside the arguments.
type FieldError struct {
	// Pointer is the RFC 6901 JSON Pointer of the offending value ("" for the root).
	Pointer string `json:"pointer"`
	// Keyword is the JSON Schema keyword that failed, when a schema decided.
	Keyword string `json:"keyword,omitempty"`
	// Detail says what is wrong without echoing the value.
	Detail string `json:"detail"`
}

// Error is a contract error: a code from the registry, a message safe to show
// to the caller, an optional hint, the links a model may follow next and,
// for validation failures, the individual field errors. The cause, if any, is
// kept for logs and never shown.
type Error struct {
	Code    Code
	Message string
	Hint    string
	Links   []Link
	Fields  []FieldError
	Cause   error

	// OperatorCommand is the command line an operator runs to do what the
	// caller was refused (LEXICON_WRITES_DISABLED: praxa lexicon define),
	// where the seed's hint and links name a command that does not exist
	// under that name. REST answers it as the problem member
	// operatorCommand, MCP as error.operatorCommand, beside the hint.
	OperatorCommand string
}

// Errorf returns an *Error with code c and a formatted message.
func Errorf(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

// Error implements error.
func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Status is the HTTP status of the error's code.
func (e *Error) Status() int { return e.Code.Status() }

// AsError finds the first *Error in err's chain. Any other error is reported
// as CodeInternal with a generic message and err as its cause.
func AsError(err error) *Error {
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	return &Error{Code: CodeInternal, Message: "internal error", Cause: err}
}

// ErrorBody is the inner object of the seeds/000 error envelope.
type ErrorBody struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`

	OperatorCommand string `json:"operatorCommand,omitempty"`
}

// ErrorEnvelope is the seeds/000 error shape, {error:{code,message,hint}, links}.
// MCP error results carry it as text; REST problems embed the same members.
// TraceID is the W3C trace id of the answer (the trace whose audit events
// record the refusal), empty where the surface has none.
type ErrorEnvelope struct {
	Error   ErrorBody    `json:"error"`
	Links   []Link       `json:"links"`
	Fields  []FieldError `json:"errors,omitempty"`
	TraceID string       `json:"traceId,omitempty"`
}

// Err is the reverse of Error.Envelope: the error env renders (a
// stored answer read back). Cause is not kept.
func (env ErrorEnvelope) Err() *Error {
	return &Error{Code: env.Error.Code, Message: env.Error.Message, Hint: env.Error.Hint, OperatorCommand: env.Error.OperatorCommand,
		Links: env.Links, Fields: env.Fields}
}

// Envelope renders e in the seeds/000 error shape. Links is never nil.
func (e *Error) Envelope() ErrorEnvelope {
	links := cloneLinks(e.Links)
	if links == nil {
		links = []Link{}
	}
	return ErrorEnvelope{
		Error:  ErrorBody{Code: e.Code, Message: e.Message, Hint: e.Hint, OperatorCommand: e.OperatorCommand},
		Links:  links,
		Fields: slices.Clone(e.Fields),
	}
}
