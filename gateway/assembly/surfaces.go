package assembly

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/httpapi"
	"github.com/praxa/praxa/gateway/reload"
	"github.com/praxa/praxa/gateway/restclient"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/mcpadapter"
	"github.com/praxa/praxa/openapi"
)

// HTTPOptions say what one HTTP server adds to the gateway's handler.
type HTTPOptions struct {
	// AccessLog receives the one "request" line per request (nil: the
	// gateway's Logger); praxa serve gives it a buffered writer.
	AccessLog *slog.Logger
	// Mount adds further routes at the root (praxa serve: the dev issuer,
	// the console).
	Mount func(r chi.Router)
	// MCPSDKOnly serves /mcp with go-sdk's stateless handler alone
	// (mcpadapter.Options.SDKOnly), for the tests that compare the two.
	MCPSDKOnly bool
}

// openAPI is the OpenAPI document /openapi.json serves, built once per
// process.
var openAPI = sync.OnceValues(func() ([]byte, error) {
	doc, err := openapi.Build()
	if err != nil {
		return nil, err
	}
	return openapi.MarshalJSON(doc)
})

// HTTPHandler returns the gateway's HTTP handler (httpapi.New): the REST
// API under /v8, MCP at /mcp, the OpenAPI document, the protected resource
// metadata, health, readiness and metrics, and the reload endpoint; o may
// be nil.
func (g *Gateway) HTTPHandler(o *HTTPOptions) (http.Handler, error) {
	if o == nil {
		o = &HTTPOptions{}
	}
	doc, err := openAPI()
	if err != nil {
		return nil, err
	}
	limits := g.Config.Server.Limits
	mcpOpts, err := g.mcpOptions()
	if err != nil {
		return nil, err
	}
	mcpOpts.CallTimeout, mcpOpts.MaxBodyBytes, mcpOpts.SDKOnly = time.Duration(limits.RequestTimeout), limits.MaxBodyBytes, o.MCPSDKOnly
	mcpHandler, err := mcpadapter.NewHTTPHandler(g.local(), mcpOpts)
	if err != nil {
		return nil, err
	}
	return httpapi.New(httpapi.Options{
		MCP:     mcpHandler,
		MCPTool: mcpOpts.Registers,
		OpenAPI: doc,
		Service: g.Service, Knowledge: g.Knowledge, Auth: g.Verifier, Config: g.Config, Metrics: g.Metrics, Logger: g.Logger, Limiter: g.Limiter,
		AccessLog: o.AccessLog, Revocations: g.Revocations, Issuers: g.IssuerURLs(), Now: g.opts.Now,
		Ready: func(ctx context.Context) error {
			_, err := g.Store.RevokedSince(ctx, time.Now())
			return err
		},
		Mount:  o.Mount,
		Reload: func(ctx context.Context, by reload.Trigger) (any, error) { return g.Reloader.Reload(ctx, by) },
	}), nil
}

// StdioCredential is the credential a stdio server acts with.
type StdioCredential struct {
	// Token gives the access token every call is verified from
	// (restclient.StaticToken for a fixed one). A restclient.Renewer
	// renews a token the verifier refuses (expired, revoked), once per
	// call; a restclient.Renewing source checks each token it obtains
	// with CheckToken and keeps the principal from switching.
	Token restclient.TokenSource
	// Renewal is how the operator renews it, which the refusal of a
	// credential no longer accepted says (nil: restart with a fresh
	// token).
	Renewal *mcpadapter.Renewal
}

// StdioServer returns the MCP server praxa mcp serves on stdio, for one
// client acting as the principal of the credential c: its token is
// obtained and verified now (the principal is returned, or the refusal)
// and again on every call, so that an expired or revoked token stops
// working unless c renews it; the moves a call runs act with the token
// it was verified from (token exchange); tools/list shows the tools the
// token allows; the tools MCP lists directly are the gateway's, and the
// session is told when a reload changes them. Every request is
// instrumented as over HTTP (mcpadapter.Instrument: ids, recovery, the
// request metrics under route "stdio", the request line).
func (g *Gateway) StdioServer(ctx context.Context, c StdioCredential) (*mcp.Server, *auth.Principal, error) {
	bind := func(ctx context.Context) (*auth.Principal, *auth.Credential, error) {
		tok, err := c.Token.Token(ctx)
		if err != nil {
			return nil, nil, err
		}
		p, err := g.Verifier.Verify(ctx, tok)
		if r, ok := c.Token.(restclient.Renewer); ok && errors.Is(err, auth.ErrInvalidToken) {
			fresh, rerr := r.Renew(ctx, tok)
			if rerr != nil {
				return nil, nil, errors.Join(err, rerr)
			}
			tok = fresh
			p, err = g.Verifier.Verify(ctx, tok)
		}
		if err != nil {
			return nil, nil, err
		}
		return p, auth.NewCredential(tok, p), nil
	}
	p, _, err := bind(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("the credential is not accepted: %w", err)
	}
	o, err := g.mcpOptions()
	if err != nil {
		return nil, nil, err
	}
	local := g.local()
	local.Bind, local.Renewal = bind, c.Renewal
	o.Allowed = func(ctx context.Context, tool string) bool {
		p, _, err := bind(ctx)
		return err == nil && p.AllowsTool(tool)
	}
	o.ToolListChanged = true
	srv, err := mcpadapter.New(local, o)
	if err != nil {
		return nil, nil, err
	}
	srv.AddReceivingMiddleware(mcpadapter.Instrument(telemetry.NewRecorder(g.Metrics.Requests(), g.Logger, o.Registers), g.Logger))
	return srv, p, nil
}

// CheckToken verifies tok as the gateway verifies every token, and says
// whose it is and when it expires: the check of a restclient.Renewing
// source that a stdio server acts with. A refusal's reason is the
// verifier's.
func (g *Gateway) CheckToken(ctx context.Context, tok string) (restclient.Checked, error) {
	p, err := g.Verifier.Verify(ctx, tok)
	if err != nil {
		reason := auth.Reason(err)
		if reason == "" {
			reason = "it could not be verified"
		}
		return restclient.Checked{}, &restclient.RenewError{Reason: "the new token is not accepted: " + reason, Err: err}
	}
	return restclient.Checked{Identity: restclient.Identity{Issuer: p.Issuer, Subject: p.Subject, Tenant: p.Tenant, ClientID: p.ClientID},
		Expiry: p.Expiry}, nil
}

// mcpOptions are the options of every MCP server over the gateway: the
// tool set, the tools listed directly, the trace a request's _meta joins,
// and the input requests' requestState codec and approval pages.
func (g *Gateway) mcpOptions() (*mcpadapter.Options, error) {
	states, err := g.requestState()
	if err != nil {
		return nil, err
	}
	return &mcpadapter.Options{Logger: g.Logger, ToolSet: g.opts.ToolSet, DirectSet: g.Direct, JoinTrace: telemetry.JoinTrace,
		RequestState: states, PublicURL: g.Config.Server.PublicURL}, nil
}

// local is the in-process MCP backend on the gateway's service: the
// configured argument limits, and the ids of the request the call is in.
func (g *Gateway) local() *mcpadapter.Local {
	limits := g.Config.Server.Limits
	return &mcpadapter.Local{Service: g.Service, MaxDepth: limits.MaxDepth, MaxElements: limits.MaxElements, ToolSet: g.opts.ToolSet,
		IDs: func(ctx context.Context) (string, string) { return telemetry.RequestID(ctx), telemetry.TraceID(ctx) }}
}
