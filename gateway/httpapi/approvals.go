package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
)

// listApprovals serves GET /v8/approvals (scope approvals:write): the
// tenant's approvals, pending ones by default.
func (s *server) listApprovals(w http.ResponseWriter, r *http.Request) {
	p, ok := s.authenticate(w, r, contracts.ScopeApprovalsWrite)
	if !ok {
		return
	}
	args, err := endpointQuery(r.URL.RawQuery, contracts.EndpointListApprovals)
	if err == nil {
		err = contracts.ValidateEndpointInput(contracts.EndpointListApprovals, args)
	}
	if err != nil {
		s.writeResult(w, r, &gateway.Result{Err: contracts.AsError(err)})
		return
	}
	status := "pending"
	if v, ok := args["status"].(string); ok {
		status = v
		if status == "all" {
			status = ""
		}
	}
	limit := 100
	if v, ok := args["limit"].(json.Number); ok {
		n, _ := v.Int64() // the schema bounds it to 1..500
		limit = int(n)
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
	operationID := contracts.EndpointRejectApproval
	if approve {
		operationID = contracts.EndpointApproveApproval
	}
	return func(w http.ResponseWriter, r *http.Request) {
		rid := requestID(r.Context())
		p, args, _, ok := s.operatorRequest(w, r, operationID)
		if !ok {
			return
		}
		id := args["approvalId"].(string)
		note, _ := args["note"].(string)
		res, err := s.Service.ResolveApproval(r.Context(), p, id, approve, note, rid, traceID(r.Context()))
		if err != nil {
			s.writeResult(w, r, &gateway.Result{Err: contracts.AsError(err)})
			return
		}
		writeJSON(w, http.StatusOK, res)
	}
}

// endpointQuery turns the query of a GET operator endpoint into arguments
// for its input schema: integer parameters become numbers, the rest stay
// strings. Unknown parameters are left for the schema to refuse; a
// parameter given twice is refused here.
func endpointQuery(raw, operationID string) (map[string]any, error) {
	q, err := parseQuery(raw)
	if err != nil {
		return nil, err
	}
	e, _ := contracts.LookupEndpoint(operationID)
	types := propertyTypes(e.InputSchema)
	args := map[string]any{}
	var fields []contracts.FieldError
	for name, vals := range q {
		switch {
		case len(vals) > 1:
			fields = append(fields, contracts.FieldError{Pointer: "/" + name, Detail: "must be given once"})
		case types[name] == "integer":
			if _, err := strconv.ParseInt(vals[0], 10, 64); err != nil {
				fields = append(fields, contracts.FieldError{Pointer: "/" + name, Keyword: "type", Detail: "must be of type integer"})
				continue
			}
			args[name] = json.Number(vals[0])
		default:
			args[name] = vals[0]
		}
	}
	if len(fields) > 0 {
		slices.SortFunc(fields, func(a, b contracts.FieldError) int { return strings.Compare(a.Pointer, b.Pointer) })
		return nil, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the query parameters do not match the input schema of " + operationID, Fields: fields}
	}
	return args, nil
}
