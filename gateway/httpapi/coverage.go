package httpapi

import (
	"net/http"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
)

// recordCoverageRun serves POST /v8/coverage/runs (scope coverage:write),
// the operator endpoint through which praxa conformance --record stores a
// run's report as the coverage evidence aura_get_coverage serves. The
// checks are every operator endpoint's (operatorRequest).
func (s *server) recordCoverageRun(w http.ResponseWriter, r *http.Request) {
	p, args, _, ok := s.operatorRequest(w, r, contracts.OperationRecordCoverageRun)
	if !ok {
		return
	}
	if s.Knowledge == nil {
		s.writeResult(w, r, &gateway.Result{Err: contracts.Errorf(contracts.CodeNotImplemented, "%s is not available on this gateway yet", contracts.OperationRecordCoverageRun)})
		return
	}
	res, err := s.Knowledge.RecordCoverageRun(r.Context(), p, func() (map[string]any, error) { return args, nil },
		requestID(r.Context()), traceID(r.Context()))
	if err != nil {
		s.writeResult(w, r, &gateway.Result{Err: contracts.AsError(err)})
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, res)
}

// serveDocument serves a fixed JSON document (the OpenAPI document at
// /openapi.json), without authentication: it describes the API, not a
// tenant's data.
func serveDocument(doc []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write(doc)
	}
}
