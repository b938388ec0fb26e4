package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/strictjson"
)

// recordCoverageRun serves POST /v8/coverage/runs (scope coverage:write),
// the operator endpoint through which praxa conformance --record stores a
// run's report as the coverage evidence aura_get_coverage serves. The
// order of checks is a tool's: size and media type, authentication, scope,
// then the body.
func (s *server) recordCoverageRun(w http.ResponseWriter, r *http.Request) {
	rid := requestID(r.Context())
	if r.ContentLength > s.limits.MaxBodyBytes {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeContentTooLarge, "the body exceeds %d bytes", s.limits.MaxBodyBytes), rid)
		return
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeUnsupportedMediaType, "send the body as application/json"), rid)
		return
	}
	p, ok := s.authenticate(w, r, contracts.ScopeCoverageWrite)
	if !ok {
		return
	}
	load := func() (map[string]any, error) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.limits.MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, contracts.Errorf(contracts.CodeContentTooLarge, "the body exceeds %d bytes", s.limits.MaxBodyBytes)
			}
			return nil, contracts.Errorf(contracts.CodeMalformedJSON, "the body could not be read")
		}
		return strictjson.DecodeObject(body, s.limits.MaxDepth)
	}
	res, err := s.Service.RecordCoverageRun(r.Context(), p, load, rid, TraceID(r.Context()))
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
