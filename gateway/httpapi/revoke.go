package httpapi

import (
	"bytes"
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
	var req gateway.RevokeRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || len(obj) > 3 {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeInvalidParams, "the body must be {jti, reason?, expiresAt?}"), rid)
		return
	}
	if err := s.Service.RevokeToken(r.Context(), p, req, s.Revocations); err != nil {
		s.writeResult(w, r, &gateway.Result{Err: contracts.AsError(err)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"jti": req.JTI, "revoked": true, "at": s.Now().UTC().Format(time.RFC3339)})
}
