package httpapi

import (
	"net/http"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/pins"
)

// acceptCapability serves POST /v8/capabilities/{name}/accept (scope
// capabilities:admin): the operator accepts the definition an imported
// capability's upstream now offers (pins.Pins.Accept),
// optionally only the one of the sha256 reviewed.
func (s *server) acceptCapability(w http.ResponseWriter, r *http.Request) {
	p, args, _, ok := s.operatorRequest(w, r, contracts.EndpointAcceptCapability)
	if !ok {
		return
	}
	name, _ := args["name"].(string)
	sum, _ := args["sha256"].(string)
	res, err := s.Service.Pins().Accept(r.Context(), p, pins.AcceptRequest{Name: name, SHA256: sum,
		RequestID: requestID(r.Context()), TraceID: traceID(r.Context())})
	if err != nil {
		s.writeResult(w, r, &gateway.Result{Err: contracts.AsError(err)})
		return
	}
	s.Logger.InfoContext(r.Context(), "capability accepted", "capability", name, "subject", p.Subject, "sha256", res.SHA256)
	writeJSON(w, http.StatusOK, res)
}
