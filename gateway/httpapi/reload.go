package httpapi

import (
	"errors"
	"net/http"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/reload"
)

// reloadConfig serves POST /v8/config/reload (scope config:write), the
// operator endpoint that does what SIGHUP does: read the configuration
// file again and swap it in, or refuse it with its problems and keep the
// running one. The body is optional; when sent it is an empty object.
func (s *server) reloadConfig(w http.ResponseWriter, r *http.Request) {
	rid := requestID(r.Context())
	p, _, _, ok := s.operatorRequest(w, r, contracts.EndpointReloadConfig)
	if !ok {
		return
	}
	if s.Reload == nil {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeNotImplemented, "this gateway does not reload its configuration"), rid)
		return
	}
	res, err := s.Reload(r.Context(), reload.Trigger{Via: reload.ViaEndpoint, Principal: p,
		RequestID: rid, TraceID: traceID(r.Context())})
	if err != nil {
		s.Logger.WarnContext(r.Context(), "configuration reload refused", "subject", p.Subject, "err", err)
		writeProblem(w, 0, reloadError(err), rid)
		return
	}
	s.Logger.InfoContext(r.Context(), "configuration reloaded", "subject", p.Subject)
	writeJSON(w, http.StatusOK, res)
}

// reloadError answers a refused reload: a configuration that does not
// load lists its problems, one field error each; so does one whose
// proxy.import connections cannot be listed now, and a reload asked for
// while the gateway shuts down, both answered unavailable (the file may
// be right: try again later).
func reloadError(err error) *contracts.Error {
	var ie *connect.ImportError
	if errors.As(err, &ie) {
		ce := &contracts.Error{Code: contracts.CodeUnavailable,
			Message: "a proxy.import connection could not be listed, so the reload would drop the capabilities it offers; the running configuration stays",
			Hint:    "Bring the connection up (or remove its proxy.import entry) and reload again."}
		for _, line := range reload.Problems(err) {
			ce.Fields = append(ce.Fields, contracts.FieldError{Pointer: "", Detail: line})
		}
		return ce
	}
	if errors.Is(err, reload.ErrClosed) {
		return &contracts.Error{Code: contracts.CodeUnavailable, Message: err.Error()}
	}
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
