package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/praxa/praxa/contracts"
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

	// OperatorCommand is contracts.Error.OperatorCommand: the command an
	// operator runs instead (MCP answers it as error.operatorCommand).
	OperatorCommand string `json:"operatorCommand,omitempty"`
}

// problemFor renders err as a problem. Internal errors show a generic
// detail; their cause goes to the log only.
func problemFor(err *contracts.Error, requestID string) Problem {
	info, _ := err.Code.Info()
	p := Problem{
		Type: info.Code.TypeURI(), Title: info.Title, Status: info.Status, Detail: err.Message,
		Code: info.Code, RequestID: requestID, Retryable: info.Retryable, Hint: err.Hint,
		Errors: err.Fields, Links: err.Links, OperatorCommand: err.OperatorCommand,
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
// the code's own status.
func writeProblem(w http.ResponseWriter, status int, err *contracts.Error, requestID string) {
	p := problemFor(err, requestID)
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
