package httpapi

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/strictjson"
)

// listApprovals serves GET /v8/approvals (scope approvals:write): the
// tenant's approvals, pending ones by default.
func (s *server) listApprovals(w http.ResponseWriter, r *http.Request) {
	p, ok := s.authenticate(w, r, contracts.ScopeApprovalsWrite)
	if !ok {
		return
	}
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeResult(w, r, &gateway.Result{Err: contracts.AsError(err)})
		return
	}
	status := "pending"
	if v, ok := q["status"]; ok {
		status = v[0]
		if status == "all" {
			status = ""
		}
	}
	limit := 100
	if v, ok := q["limit"]; ok {
		if limit, err = strconv.Atoi(v[0]); err != nil || limit < 1 || limit > 500 {
			s.writeResult(w, r, &gateway.Result{Err: &contracts.Error{Code: contracts.CodeInvalidParams, Message: "limit must be an integer from 1 to 500",
				Fields: []contracts.FieldError{{Pointer: "/limit", Detail: "must be an integer from 1 to 500"}}}})
			return
		}
	}
	for k := range q {
		if k != "status" && k != "limit" {
			s.writeResult(w, r, &gateway.Result{Err: &contracts.Error{Code: contracts.CodeInvalidParams, Message: "unknown query parameter " + k,
				Fields: []contracts.FieldError{{Pointer: "/" + k, Detail: "is not a known parameter"}}}})
			return
		}
	}
	list, err := s.Service.ListApprovals(r.Context(), p, status, limit)
	if err != nil {
		s.writeResult(w, r, &gateway.Result{Err: contracts.AsError(err)})
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// resolveApproval serves POST /v8/approvals/{approvalId}/approve|reject
// (scope approvals:write), with an optional body {"note": "..."}.
func (s *server) resolveApproval(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rid := requestID(r.Context())
		if r.ContentLength != 0 && !isJSON(r.Header.Get("Content-Type")) {
			writeProblem(w, 0, contracts.Errorf(contracts.CodeUnsupportedMediaType, "send the body as application/json"), rid)
			return
		}
		p, ok := s.authenticate(w, r, contracts.ScopeApprovalsWrite)
		if !ok {
			return
		}
		note := ""
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.limits.MaxBodyBytes))
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeProblem(w, 0, contracts.Errorf(contracts.CodeContentTooLarge, "the body is too large"), rid)
			return
		}
		if len(body) > 0 {
			obj, err := strictjson.DecodeObject(body, s.limits.MaxDepth)
			if err != nil {
				writeProblem(w, 0, contracts.AsError(err), rid)
				return
			}
			for k, v := range obj {
				n, isString := v.(string)
				if k != "note" || !isString || len(n) > 2000 {
					writeProblem(w, 0, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the body may only hold note, a string of at most 2000 characters",
						Fields: []contracts.FieldError{{Pointer: "/" + k, Detail: "is not accepted here"}}}, rid)
					return
				}
				note = n
			}
		}
		res, err := s.Service.ResolveApproval(r.Context(), p, chi.URLParam(r, "approvalId"), approve, note, rid, TraceID(r.Context()))
		if err != nil {
			s.writeResult(w, r, &gateway.Result{Err: contracts.AsError(err)})
			return
		}
		writeJSON(w, http.StatusOK, res)
	}
}
