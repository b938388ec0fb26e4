package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/strictjson"
)

// revokeToken serves POST /v8/tokens/revocations (scope tokens:write), the
// operator endpoint that revokes an access token by jti for every replica.
func (s *server) revokeToken(w http.ResponseWriter, r *http.Request) {
	rid := requestID(r.Context())
	if !isJSON(r.Header.Get("Content-Type")) {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeUnsupportedMediaType, "send the body as application/json"), rid)
		return
	}
	p, ok := s.authenticate(w, r, contracts.ScopeTokensWrite)
	if !ok {
		return
	}
	if !p.HasScope(contracts.ScopeTokensWrite) {
		s.writeResult(w, r, &gateway.Result{Err: &contracts.Error{Code: contracts.CodeInsufficientScope,
			Message: "this call requires the scope tokens:write",
			Fields:  []contracts.FieldError{{Keyword: "scope", Detail: string(contracts.ScopeTokensWrite)}}}})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.limits.MaxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeContentTooLarge, "the body is too large"), rid)
		return
	}
	obj, derr := strictjson.DecodeObject(body, s.limits.MaxDepth)
	if derr != nil {
		writeProblem(w, 0, contracts.AsError(derr), rid)
		return
	}
	// The contract's input schema of revokeToken decides what the body may
	// hold; the same schema is the request body of the OpenAPI operation.
	if err := contracts.ValidateEndpointInput(contracts.EndpointRevokeToken, obj); err != nil {
		writeProblem(w, 0, contracts.AsError(err), rid)
		return
	}
	var req gateway.RevokeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		// Only an expiresAt the schema's date-time format allows but
		// time.Time refuses (a leap second, for one) gets here.
		writeProblem(w, 0, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "expiresAt is not a usable date-time",
			Fields: []contracts.FieldError{{Pointer: "/expiresAt", Keyword: "format", Detail: "must be a valid date-time"}}}, rid)
		return
	}
	req.RequestID, req.TraceID = rid, TraceID(r.Context())
	if err := s.Service.RevokeToken(r.Context(), p, req, s.Revocations); err != nil {
		s.writeResult(w, r, &gateway.Result{Err: contracts.AsError(err)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"jti": req.JTI, "revoked": true, "at": s.Now().UTC().Format(time.RFC3339)})
}
