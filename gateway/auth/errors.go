package auth

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. Every refusal wraps exactly one of ErrInvalidToken and
// ErrInvalidRequest in a *RefusalError; ErrNoToken stands alone.
var (
	// ErrNoToken means the request carries no bearer credentials: no
	// Authorization header, another scheme, or an empty bearer token. The
	// edge answers 401 with a challenge and no error code (RFC 6750 §3).
	ErrNoToken = errors.New("no bearer token")
	// ErrInvalidToken means a bearer token was presented and refused: the
	// edge answers 401 error="invalid_token".
	ErrInvalidToken = errors.New("invalid token")
	// ErrInvalidRequest means the request carries credentials incorrectly
	// (token in the query string or a form body, Authorization sent twice,
	// an oversized header): the edge answers 400 error="invalid_request".
	ErrInvalidRequest = errors.New("invalid request")
)

// Refusal reasons. They are short, safe to show to the caller and few, so
// they also serve as metric labels.
const (
	ReasonMalformed         = "malformed token"
	ReasonTooLarge          = "token too large"
	ReasonUnsupportedAlg    = "unsupported algorithm"
	ReasonUntrustedIssuer   = "untrusted issuer"
	ReasonIssuerUnavailable = "issuer unavailable"
	ReasonUnknownKey        = "unknown key"
	ReasonBadSignature      = "bad signature"
	ReasonWrongAudience     = "wrong audience"
	ReasonExpired           = "expired"
	ReasonNotYetValid       = "not yet valid"
	ReasonIssuedInFuture    = "issued in the future"
	ReasonWrongType         = "wrong token type"
	ReasonMissingClaim      = "missing claim"
	ReasonMalformedClaim    = "malformed claim"
	ReasonRevoked           = "revoked"

	ReasonTokenInQuery   = "token in query string"
	ReasonTokenInBody    = "token in form body"
	ReasonRepeatedHeader = "repeated authorization header"
)

// RefusalError is a refused credential. errors.Is(err, ErrInvalidToken) (or
// ErrInvalidRequest) selects the answer; Reason labels metrics; Description
// is safe to show as an RFC 6750 error_description. Cause, when set, is for
// logs only.
type RefusalError struct {
	// Err is ErrInvalidToken or ErrInvalidRequest.
	Err error
	// Reason is one of the Reason constants.
	Reason string
	// Detail narrows the reason without revealing token contents, e.g. the
	// name of a missing claim.
	Detail string
	// Cause is the underlying error, if any; it may name values from the
	// token or the identity provider and is not meant for the caller.
	Cause error
}

// Description is Reason, followed by Detail when there is one.
func (e *RefusalError) Description() string {
	if e.Detail == "" {
		return e.Reason
	}
	return e.Reason + ": " + e.Detail
}

// Error implements error: the sentinel's text and the description.
func (e *RefusalError) Error() string { return e.Err.Error() + ": " + e.Description() }

// Unwrap returns the sentinel and the cause.
func (e *RefusalError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// Reason returns the refusal reason of err, or "" when err is not a
// refusal.
func Reason(err error) string {
	var r *RefusalError
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}

// invalidToken returns a token refusal.
func invalidToken(reason, detail string, cause error) *RefusalError {
	return &RefusalError{Err: ErrInvalidToken, Reason: reason, Detail: detail, Cause: cause}
}

// IssuerError is the Cause of an untrusted-issuer refusal: the issuer the
// token names, unverified (at most maxIssuerShown bytes of it). It is for
// logs and for the command-line tools that explain a refusal to the
// token's own holder (praxa mcp, the operator commands), never for a
// decision.
type IssuerError struct {
	Issuer string
}

// maxIssuerShown bounds the issuer an IssuerError keeps.
const maxIssuerShown = 256

func (e *IssuerError) Error() string { return "the token names the issuer " + strconv.Quote(e.Issuer) }

// untrustedIssuer is the cause of the refusal of a token naming iss.
func untrustedIssuer(iss string) *IssuerError {
	if len(iss) > maxIssuerShown {
		iss = strings.ToValidUTF8(iss[:maxIssuerShown], "") + "…"
	}
	return &IssuerError{Issuer: iss}
}

// invalidRequest returns a request refusal.
func invalidRequest(reason string) *RefusalError {
	return &RefusalError{Err: ErrInvalidRequest, Reason: reason}
}
