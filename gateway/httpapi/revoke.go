package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
)

// revokeToken serves POST /v8/tokens/revocations (scope tokens:write), the
// operator endpoint that revokes an access token by jti for every replica.
func (s *server) revokeToken(w http.ResponseWriter, r *http.Request) {
	rid := requestID(r.Context())
	p, _, body, ok := s.operatorRequest(w, r, contracts.EndpointRevokeToken)
	if !ok {
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
	req.RequestID, req.TraceID = rid, traceID(r.Context())
	if err := s.Service.RevokeToken(r.Context(), p, req, s.Revocations); err != nil {
		s.writeResult(w, r, &gateway.Result{Err: contracts.AsError(err)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"jti": req.JTI, "revoked": true, "at": s.Now().UTC().Format(time.RFC3339)})
}
