package openapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/praxa/praxa/contracts"
)

// Names of the shared components.
const (
	// ProblemSchemaName names the RFC 9457 problem schema in
	// components.schemas.
	ProblemSchemaName = "Problem"

	paramIdempotencyKey         = "IdempotencyKey"
	paramIdempotencyKeyOptional = "IdempotencyKeyOptional"
)

// components returns the shared components: the problem schema, the
// Idempotency-Key parameters, the response headers and the security scheme.
func components() *openapi3.Components {
	return &openapi3.Components{
		Schemas: openapi3.Schemas{
			ProblemSchemaName: &openapi3.SchemaRef{Value: problemSchema()},
		},
		Parameters: openapi3.ParametersMap{
			paramIdempotencyKey: &openapi3.ParameterRef{Value: idempotencyKeyParameter(true,
				"One stable key per logical mutation, reused unchanged for every retry of that mutation and never for another one (a UUID v4 is a valid choice). "+
					"It may be sent bare or as an RFC 8941 sf-string in double quotes (\"key\"); the value inside the quotes must match the pattern.")},
			paramIdempotencyKeyOptional: &openapi3.ParameterRef{Value: idempotencyKeyParameter(false,
				"Optional: when sent, the request is deduplicated by this key as required operations are; without it, starts are deduplicated by runId and transitions by expectedVersion. "+
					"It may be sent bare or as an RFC 8941 sf-string in double quotes (\"key\"); the value inside the quotes must match the pattern.")},
		},
		Headers: openapi3.Headers{
			headerLocation: {Value: header(
				"The URL of the created resource.",
				openapi3.NewStringSchema().WithFormat("uri-reference"), true)},
			headerIdempotentReplayed: {Value: header(
				"true when this response is the stored response of an earlier request with the same Idempotency-Key, replayed; absent on a first execution.",
				openapi3.NewBoolSchema(), false)},
			headerRetryAfter: {Value: header(
				"Seconds to wait before retrying the same request (with the same Idempotency-Key for a mutation).",
				openapi3.NewIntegerSchema().WithMin(0), false)},
			headerCacheControl: {Value: header(
				"no-store: problem responses are never cached.",
				openapi3.NewStringSchema(), false)},
		},
		SecuritySchemes: openapi3.SecuritySchemes{
			SecuritySchemeName: {Value: securityScheme()},
		},
	}
}

func idempotencyKeyParameter(required bool, description string) *openapi3.Parameter {
	s := openapi3.NewStringSchema().
		WithMinLength(16).
		WithMaxLength(128).
		WithPattern(contracts.IdempotencyKeyPattern)
	return openapi3.NewHeaderParameter(headerIdempotencyKey).
		WithRequired(required).
		WithDescription(description).
		WithSchema(s)
}

func header(description string, s *openapi3.Schema, required bool) *openapi3.Header {
	return &openapi3.Header{Parameter: openapi3.Parameter{
		Description: description,
		Required:    required,
		Schema:      &openapi3.SchemaRef{Value: s},
	}}
}

func securityScheme() *openapi3.SecurityScheme {
	scopes := map[string]string{}
	for _, s := range contracts.Scopes() {
		scopes[string(s)] = s.Description()
	}
	return &openapi3.SecurityScheme{
		Type: "oauth2",
		Description: "OAuth 2 bearer access tokens (JWT) issued by a configured authorization server for this gateway's resource identifier. " +
			"The token URL below is an example: the real authorization servers are announced in the protected resource metadata (RFC 9728) at /.well-known/oauth-protected-resource. " +
			"A request without credentials answers 401, a token without the operation's scope 403 insufficient_scope.",
		Flows: &openapi3.OAuthFlows{
			ClientCredentials: &openapi3.OAuthFlow{TokenURL: tokenURL, Scopes: scopes},
		},
	}
}

// problemSchema is the RFC 9457 problem object the gateway answers errors
// with, including its extension members.
func problemSchema() *openapi3.Schema {
	var codes []any
	for _, info := range contracts.Codes() {
		if info.Status >= 400 {
			codes = append(codes, string(info.Code))
		}
	}
	str := func(d string) *openapi3.Schema {
		s := openapi3.NewStringSchema()
		s.Description = d
		return s
	}
	fieldError := openapi3.NewObjectSchema().
		WithProperty("pointer", str("RFC 6901 JSON Pointer of the offending value in the arguments (empty for the root).")).
		WithProperty("keyword", str("The JSON Schema keyword that failed, when a schema decided.")).
		WithProperty("detail", str("What is wrong, without echoing the value.")).
		WithRequired([]string{"pointer", "detail"})
	nullableString := openapi3.NewSchema().WithTypes(openapi3.TypeString, openapi3.TypeNull)
	link := openapi3.NewObjectSchema().
		WithProperty("rel", str("What following the link does.")).
		WithProperty("title", openapi3.NewStringSchema()).
		WithProperty("description", nullableString).
		WithProperty("method", str("The tool to call with args, or \"cli\" for an informational operator path.")).
		WithProperty("args", openapi3.NewObjectSchema()).
		WithProperty("inputSchema", openapi3.NewObjectSchema()).
		WithProperty("hint", openapi3.NewStringSchema()).
		WithRequired([]string{"rel", "method", "args"})
	link.Properties["args"].Value.Description = "Arguments to send verbatim."
	link.Description = "A pre-filled next call; copy its args verbatim to follow it."

	s := openapi3.NewObjectSchema().
		WithProperty("type", str("A stable URI identifying the problem type; it ends in the code's slug.").WithFormat("uri")).
		WithProperty("title", str("A short summary of the problem type, the same for every occurrence.")).
		WithProperty("status", openapi3.NewIntegerSchema().WithMin(400).WithMax(599)).
		WithProperty("detail", str("What went wrong in this occurrence, for humans; do not parse it.")).
		WithProperty("instance", str("Identifies this occurrence.").WithFormat("uri-reference")).
		WithProperty("code", str("The stable, machine-readable error code to act on.").WithEnum(codes...)).
		WithProperty("requestId", str("The request identifier to quote when reporting a problem.")).
		WithProperty("retryable", openapi3.NewBoolSchema()).
		WithProperty("hint", str("How to repair the call, when the gateway knows.")).
		WithProperty("operatorCommand", str("The command line an operator runs to do what the call was refused, when there is one (LEXICON_WRITES_DISABLED: praxa lexicon define).")).
		WithProperty("errors", openapi3.NewArraySchema().WithItems(fieldError)).
		WithProperty("links", openapi3.NewArraySchema().WithItems(link)).
		WithProperty("traceId", str("The W3C trace id of the answer, as its Traceparent header carries it (a replayed refusal names the original request's); read the trace with aura_get_trace.").WithPattern("^[0-9a-f]{32}$")).
		WithRequired([]string{"type", "title", "status", "code"})
	s.Properties["status"].Value.Description = "The HTTP status of the response."
	s.Properties["retryable"].Value.Description = "Whether the same request may succeed later unchanged."
	s.Properties["errors"].Value.Description = "The individual violations, for a validation failure."
	s.Properties["links"].Value.Description = "Pre-filled next calls; copy a link's args verbatim to follow it."
	s.Description = "An RFC 9457 problem detail with the gateway's extension members. Further members may appear and must be ignored."
	return s
}

// statusGroup is the set of codes one status answers for an operation.
type statusGroup struct {
	status int
	codes  []contracts.Code
}

// groupByStatus groups codes by their HTTP status, in ascending status
// order, keeping the codes' order within a group.
func groupByStatus(codes []contracts.Code) []statusGroup {
	var out []statusGroup
	for _, c := range codes {
		st := c.Status()
		i := slices.IndexFunc(out, func(g statusGroup) bool { return g.status == st })
		if i < 0 {
			out = append(out, statusGroup{status: st})
			i = len(out) - 1
		}
		out[i].codes = append(out[i].codes, c)
	}
	slices.SortFunc(out, func(a, b statusGroup) int { return a.status - b.status })
	return out
}

// problemResponse documents one error status of an operation.
func problemResponse(g statusGroup, comp *openapi3.Components) *openapi3.Response {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: a problem with one of these codes:\n", http.StatusText(g.status))
	for _, c := range g.codes {
		info, _ := c.Info()
		fmt.Fprintf(&b, "\n- `%s`: %s.", c, info.Title)
	}
	r := openapi3.NewResponse().
		WithDescription(b.String()).
		WithContent(openapi3.NewContentWithSchemaRef(schemaRef(comp, ProblemSchemaName), []string{mediaProblem}))
	r.Headers = openapi3.Headers{headerCacheControl: headerRef(comp, headerCacheControl)}
	switch g.status {
	case http.StatusUnauthorized:
		r.Headers[headerWWWAuthenticate] = &openapi3.HeaderRef{Value: header(
			"The Bearer challenge: realm, resource_metadata (the protected resource metadata URL) and scope; error=\"invalid_token\" when a token was sent but refused.",
			openapi3.NewStringSchema(), true)}
	case http.StatusForbidden:
		r.Headers[headerWWWAuthenticate] = &openapi3.HeaderRef{Value: header(
			"With insufficient-scope: a Bearer challenge with error=\"insufficient_scope\" and scope listing every scope the call needs.",
			openapi3.NewStringSchema(), false)}
	case http.StatusBadRequest:
		if slices.Contains(g.codes, contracts.CodeInvalidRequest) {
			r.Headers[headerWWWAuthenticate] = &openapi3.HeaderRef{Value: header(
				"With invalid-request: a Bearer challenge with error=\"invalid_request\".",
				openapi3.NewStringSchema(), false)}
		}
	}
	if retryAfter(g) {
		r.Headers[headerRetryAfter] = headerRef(comp, headerRetryAfter)
	}
	return r
}

// retryAfter reports whether a status group documents Retry-After: rate
// limits, unavailability, unknown outcomes and requests in flight.
func retryAfter(g statusGroup) bool {
	switch g.status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusConflict:
		return slices.Contains(g.codes, contracts.CodeIdempotencyInProgress)
	}
	return false
}

// Reference helpers: each returns a reference to a component that also
// carries the component's value, so the in-memory document validates and
// routes without a loader pass.

func schemaRef(comp *openapi3.Components, name string) *openapi3.SchemaRef {
	return &openapi3.SchemaRef{Ref: "#/components/schemas/" + name, Value: comp.Schemas[name].Value}
}

func parameterRef(comp *openapi3.Components, name string) *openapi3.ParameterRef {
	return &openapi3.ParameterRef{Ref: "#/components/parameters/" + name, Value: comp.Parameters[name].Value}
}

func headerRef(comp *openapi3.Components, name string) *openapi3.HeaderRef {
	return &openapi3.HeaderRef{Ref: "#/components/headers/" + name, Value: comp.Headers[name].Value}
}
