package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/strictjson"
)

// reloadConfig serves POST /v8/config/reload (scope config:write), the
// operator endpoint that does what SIGHUP does: read the configuration
// file again and swap it in, or refuse it with its problems and keep the
// running one. The body is optional; when sent it is an empty object.
func (s *server) reloadConfig(w http.ResponseWriter, r *http.Request) {
	rid := requestID(r.Context())
	if r.ContentLength != 0 && !isJSON(r.Header.Get("Content-Type")) {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeUnsupportedMediaType, "send the body as application/json"), rid)
		return
	}
	p, ok := s.authenticate(w, r, contracts.ScopeConfigWrite)
	if !ok {
		return
	}
	if !p.HasScope(contracts.ScopeConfigWrite) {
		s.writeResult(w, r, &gateway.Result{Err: &contracts.Error{Code: contracts.CodeInsufficientScope,
			Message: "this call requires the scope config:write",
			Fields:  []contracts.FieldError{{Keyword: "scope", Detail: string(contracts.ScopeConfigWrite)}}}})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.limits.MaxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeContentTooLarge, "the body is too large"), rid)
		return
	}
	args := map[string]any{}
	if len(body) > 0 {
		if args, err = strictjson.DecodeObject(body, s.limits.MaxDepth); err != nil {
			writeProblem(w, 0, contracts.AsError(err), rid)
			return
		}
	}
	if err := contracts.ValidateEndpointInput(contracts.EndpointReloadConfig, args); err != nil {
		writeProblem(w, 0, contracts.AsError(err), rid)
		return
	}
	if s.Reload == nil {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeNotImplemented, "this gateway does not reload its configuration"), rid)
		return
	}
	res, err := s.Reload(r.Context())
	if err != nil {
		s.Logger.WarnContext(r.Context(), "configuration reload refused", "subject", p.Subject, "request_id", rid, "err", err)
		writeProblem(w, 0, reloadError(err), rid)
		return
	}
	s.Logger.InfoContext(r.Context(), "configuration reloaded", "subject", p.Subject, "request_id", rid)
	writeJSON(w, http.StatusOK, res)
}

// reloadError answers a refused reload: a configuration that does not
// load lists its problems, one field error each.
func reloadError(err error) *contracts.Error {
	var le *config.LoadError
	if errors.As(err, &le) {
		ce := &contracts.Error{Code: contracts.CodeInvalidParams,
			Message: "the configuration file is not valid; the running configuration stays",
			Hint:    "Fix the problems listed in errors and reload again."}
		for _, line := range le.Lines() {
			ce.Fields = append(ce.Fields, contracts.FieldError{Pointer: "", Detail: line})
		}
		return ce
	}
	var ce *contracts.Error
	if errors.As(err, &ce) {
		return ce
	}
	return &contracts.Error{Code: contracts.CodeInvalidParams,
		Message: "the configuration could not be reloaded; the running configuration stays: " + err.Error(),
		Fields:  []contracts.FieldError{{Pointer: "", Detail: err.Error()}}}
}
