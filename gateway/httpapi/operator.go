package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/strictjson"
)

// operatorRequest runs the checks every POST operator endpoint shares, in
// a tool's order: the declared size, media type, authentication, the
// endpoint's scope,
// the size-limited strict body (optional where the contract says so), then
// the endpoint's input schema with the path argument merged in. It returns
// the principal, the arguments and the raw body; on a refusal it has
// already answered and ok is false.
func (s *server) operatorRequest(w http.ResponseWriter, r *http.Request, operationID string) (p *auth.Principal, args map[string]any, body []byte, ok bool) {
	e, found := contracts.LookupEndpoint(operationID)
	if !found {
		panic("httpapi: no operator endpoint " + operationID) // a wiring mistake
	}
	rid := requestID(r.Context())
	if r.ContentLength > s.limits.MaxBodyBytes {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeContentTooLarge, "the body exceeds %d bytes", s.limits.MaxBodyBytes), rid)
		return nil, nil, nil, false
	}
	if (!e.BodyOptional || r.ContentLength != 0) && !isJSON(r.Header.Get("Content-Type")) {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeUnsupportedMediaType, "send the body as application/json"), rid)
		return nil, nil, nil, false
	}
	if p, ok = s.authenticate(w, r, e.RequiredScope); !ok {
		return nil, nil, nil, false
	}
	if err := gateway.RequireScope(p, e.RequiredScope); err != nil {
		s.writeResult(w, r, &gateway.Result{Err: err})
		return nil, nil, nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.limits.MaxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeContentTooLarge, "the body is too large"), rid)
		return nil, nil, nil, false
	}
	args = map[string]any{}
	if len(body) > 0 || !e.BodyOptional {
		if args, err = strictjson.DecodeObjectWith(body, strictjson.Limits{MaxDepth: s.limits.MaxDepth, MaxElements: s.limits.MaxElements}); err != nil {
			writeProblem(w, 0, contracts.AsError(err), rid)
			return nil, nil, nil, false
		}
	}
	if e.PathArgument != "" {
		if _, inBody := args[e.PathArgument]; inBody {
			writeProblem(w, 0, &contracts.Error{Code: contracts.CodeInvalidParams, Message: e.PathArgument + " travels in the path, not in the body",
				Fields: []contracts.FieldError{{Pointer: "/" + e.PathArgument, Detail: "is not a body field; send it in the path"}}}, rid)
			return nil, nil, nil, false
		}
		args[e.PathArgument] = chi.URLParam(r, e.PathArgument)
	}
	// The contract's input schema decides what the request may hold; the
	// same schema is the operation's request in the OpenAPI document.
	if err := contracts.ValidateEndpointInput(operationID, args); err != nil {
		writeProblem(w, 0, contracts.AsError(err), rid)
		return nil, nil, nil, false
	}
	return p, args, body, true
}
