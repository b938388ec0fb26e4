package openapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/praxa/praxa/contracts"
)

// Version is the OpenAPI version of the generated document.
const Version = "3.1.0"

// Title is the title of the generated document.
const Title = "Praxa gateway API"

// SecuritySchemeName names the OAuth 2 security scheme every operation
// requires.
const SecuritySchemeName = "oauth2"

// Extension names carried by every operation.
const (
	// ExtensionTool names the MCP tool an operation is the REST twin of.
	ExtensionTool = "x-mcp-tool"
	// ExtensionIdempotency holds the tool's idempotency class (required,
	// safe-read or versioned).
	ExtensionIdempotency = "x-idempotency"
	// ExtensionDispatch holds, on the praxec operations, the dispatch table
	// rows that decide the operation and its effective scope.
	ExtensionDispatch = "x-praxec-dispatch"
)

// HTTP header names the document describes.
const (
	headerIdempotencyKey     = "Idempotency-Key"
	headerIdempotentReplayed = "Idempotent-Replayed"
	headerLocation           = "Location"
	headerRetryAfter         = "Retry-After"
	headerWWWAuthenticate    = "WWW-Authenticate"
	headerCacheControl       = "Cache-Control"
)

// Media types.
const (
	mediaJSON    = "application/json"
	mediaProblem = "application/problem+json"
)

// tokenURL is an example token endpoint: the real one is the configured
// issuer's, announced in the protected resource metadata.
const tokenURL = "https://issuer.example/oauth/token"

// ErrDuplicateOperation is returned, wrapped, by Build when two tools claim
// the same operationId or the same method and path.
var ErrDuplicateOperation = errors.New("openapi: two tools declare the same operation")

// ErrUntagged is returned, wrapped, by Build for a tool that has no tag
// assigned in this package: a new tool must be placed in a tag group.
var ErrUntagged = errors.New("openapi: tool has no tag")

// tag groups the operations in the document.
type tag struct {
	name        string
	description string
	tools       []string
}

// tags lists the tag groups in document order.
var tags = []tag{
	{"missions", "Record intents and run missions: governed workflow runs toward a goal.", []string{
		contracts.ToolSubmitIntent, contracts.ToolCreateMission, contracts.ToolGetMission,
		contracts.ToolSignalMission, contracts.ToolCancelMission,
	}},
	{"discovery", "Find the workflows, capabilities and connections a caller may use, and read governed skills.", []string{
		contracts.ToolSearchCapabilities, contracts.ToolGetSkill,
	}},
	{"context", "Read memory and goals, bounded by the compartments and purposes the access token allows.", []string{
		contracts.ToolQueryMemory, contracts.ToolListGoals,
	}},
	{"evidence", "Read audit traces, model capability certificates and reference coverage evidence.", []string{
		contracts.ToolGetTrace, contracts.ToolListWorldCertificates, contracts.ToolGetCoverage,
	}},
	{"praxec", "The praxec two-tool surface: every read and every write, dispatched by the fields the body carries.", []string{
		contracts.ToolPraxecQuery, contracts.ToolPraxecCommand,
	}},
}

func tagOf(tool string) (string, bool) {
	for _, g := range tags {
		if slices.Contains(g.tools, tool) {
			return g.name, true
		}
	}
	return "", false
}

// description is the document's info.description.
const description = `The /v8 REST API of the Praxa gateway. It is generated from the same tool
declarations as the gateway's MCP tools and its tools.json: every operation is the REST twin
of one tool, named by ` + "`x-mcp-tool`" + `, with its mutation class in ` + "`x-idempotency`" + `.
Over REST the tool's path argument travels in the path, its idempotencyKey in the
` + "`Idempotency-Key`" + ` header, and its remaining arguments in the JSON body (POST) or the
query string (GET).

## Idempotency

Operations of class ` + "`required`" + ` take a mandatory ` + "`Idempotency-Key`" + ` header: one stable
key per logical mutation, reused unchanged for every retry of that mutation. The gateway
remembers each key, per caller, for a configurable retention period, 24 hours by default.
Within that period:

- a retry with the same key and the same request replays the stored response (its status,
  headers and body) with the header ` + "`Idempotent-Replayed: true`" + `, and does nothing again;
- the same key with a different request is refused with 422 ` + "`idempotency-key-reused`" + `;
- a retry while the first request is still in flight is answered with 409
  ` + "`idempotency-request-in-progress`" + ` and a ` + "`Retry-After`" + ` header: wait, then retry with the same key.

` + "`praxec.command`" + ` (class ` + "`versioned`" + `) deduplicates starts by runId and transitions by
expectedVersion; it honours an ` + "`Idempotency-Key`" + ` header the same way when one is sent.

## Errors

Errors are RFC 9457 problem details (` + "`application/problem+json`" + `) carrying a stable
` + "`code`" + `. Clients act on the status and the code, never on the wording of ` + "`title`" + ` or
` + "`detail`" + `. A 504 ` + "`outcome-unknown`" + ` means an upstream system may have acted: replay the
request with the same key, or read the resource back.`

// Build generates the OpenAPI 3.1 document of the /v8 REST API from every
// tool of contracts.Tools and validates it with kin-openapi. The result is
// deterministic: two calls marshal to the same bytes.
func Build() (*openapi3.T, error) {
	doc := &openapi3.T{
		OpenAPI:           Version,
		JSONSchemaDialect: contracts.SchemaDialect,
		Info: &openapi3.Info{
			Title:       Title,
			Version:     contracts.ServerVersion,
			Description: description,
		},
		Servers:    openapi3.Servers{{URL: "/", Description: "The gateway itself; every path starts with /" + contracts.APIVersion + "."}},
		Paths:      openapi3.NewPaths(),
		Components: components(),
	}
	for _, g := range tags {
		doc.Tags = append(doc.Tags, &openapi3.Tag{Name: g.name, Description: g.description})
	}
	operationIDs := map[string]string{}
	for _, t := range contracts.Tools() {
		if prev, dup := operationIDs[t.OperationID]; dup {
			return nil, fmt.Errorf("%w: operationId %s of %s and %s", ErrDuplicateOperation, t.OperationID, prev, t.Name)
		}
		operationIDs[t.OperationID] = t.Name
		if item := doc.Paths.Value(t.Path); item != nil && item.GetOperation(t.Method) != nil {
			return nil, fmt.Errorf("%w: %s %s of %s", ErrDuplicateOperation, t.Method, t.Path, t.Name)
		}
		op, err := operation(t, doc.Components)
		if err != nil {
			return nil, fmt.Errorf("openapi: tool %s: %w", t.Name, err)
		}
		doc.AddOperation(t.Path, t.Method, op)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: the generated document is invalid: %w", err)
	}
	return doc, nil
}

// operation builds the operation of tool t.
func operation(t contracts.Tool, comp *openapi3.Components) (*openapi3.Operation, error) {
	tagName, ok := tagOf(t.Name)
	if !ok {
		return nil, ErrUntagged
	}
	input, err := decodeSchema(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	op := &openapi3.Operation{
		OperationID: t.OperationID,
		Summary:     t.Title,
		Description: t.Description,
		Tags:        []string{tagName},
		Extensions: map[string]any{
			ExtensionTool:        t.Name,
			ExtensionIdempotency: string(t.Idempotency),
		},
		Security: &openapi3.SecurityRequirements{
			openapi3.NewSecurityRequirement().Authenticate(SecuritySchemeName, string(t.RequiredScope)),
		},
		Responses: openapi3.NewResponses(),
	}
	if rows := contracts.DispatchTable(t.Name); rows != nil {
		op.Description += "\n\n" + dispatchDescription(t, rows)
		op.Extensions[ExtensionDispatch] = dispatchExtension(rows)
	}

	if err := addParameters(op, t, input, comp); err != nil {
		return nil, err
	}
	if err := addResponses(op, t, comp); err != nil {
		return nil, err
	}
	return op, nil
}

// addParameters adds the path argument, the Idempotency-Key header, and
// either the query parameters (GET) or the request body (POST) of t.
func addParameters(op *openapi3.Operation, t contracts.Tool, input jsonObject, comp *openapi3.Components) error {
	props, _ := input["properties"].(map[string]any)
	if t.PathArgument != "" {
		if !strings.Contains(t.Path, "{"+t.PathArgument+"}") {
			return fmt.Errorf("path %s does not hold {%s}", t.Path, t.PathArgument)
		}
		prop, ok := props[t.PathArgument].(map[string]any)
		if !ok {
			return fmt.Errorf("path argument %s is not a property of the input schema", t.PathArgument)
		}
		s, err := toSchema(prop)
		if err != nil {
			return fmt.Errorf("path argument %s: %w", t.PathArgument, err)
		}
		p := openapi3.NewPathParameter(t.PathArgument).WithSchema(s)
		p.Description = s.Description
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: p})
	}
	switch t.Idempotency {
	case contracts.IdempotencyRequired:
		op.Parameters = append(op.Parameters, parameterRef(comp, paramIdempotencyKey))
	case contracts.IdempotencyVersioned:
		op.Parameters = append(op.Parameters, parameterRef(comp, paramIdempotencyKeyOptional))
	}

	switch t.Method {
	case http.MethodGet:
		required, _ := input["required"].([]any)
		names := sortedKeys(props)
		for _, name := range names {
			if name == t.PathArgument {
				continue
			}
			if name == idempotencyKeyProperty {
				return fmt.Errorf("GET operation with an %s property", idempotencyKeyProperty)
			}
			prop, _ := props[name].(map[string]any)
			if !scalar(prop) {
				return fmt.Errorf("query parameter %s is not a scalar", name)
			}
			s, err := toSchema(prop)
			if err != nil {
				return fmt.Errorf("query parameter %s: %w", name, err)
			}
			p := openapi3.NewQueryParameter(name).WithSchema(s).WithRequired(slices.Contains(required, any(name)))
			p.Description = s.Description
			op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: p})
		}
	case http.MethodPost:
		body := withoutProperties(input, idempotencyKeyProperty, t.PathArgument)
		s, err := toSchema(body)
		if err != nil {
			return fmt.Errorf("request body: %w", err)
		}
		op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().
			WithRequired(true).
			WithDescription(bodyDescription(t)).
			WithContent(openapi3.NewContentWithSchema(s, []string{mediaJSON}))}
	default:
		return fmt.Errorf("unsupported method %s", t.Method)
	}
	return nil
}

func bodyDescription(t contracts.Tool) string {
	var moved []string
	if t.PathArgument != "" {
		moved = append(moved, t.PathArgument+" (in the path)")
	}
	if t.Idempotency == contracts.IdempotencyRequired {
		moved = append(moved, idempotencyKeyProperty+" (in the "+headerIdempotencyKey+" header)")
	}
	if len(moved) == 0 {
		return "The arguments of " + t.Name + "."
	}
	return "The arguments of " + t.Name + ", except " + strings.Join(moved, " and ") + "."
}

// addResponses adds the success response and one problem response per
// status of t's error codes.
func addResponses(op *openapi3.Operation, t contracts.Tool, comp *openapi3.Components) error {
	output, err := decodeSchema(t.OutputSchema)
	if err != nil {
		return fmt.Errorf("output schema: %w", err)
	}
	s, err := toSchema(output)
	if err != nil {
		return fmt.Errorf("output schema: %w", err)
	}
	if t.SuccessStatus < 200 || t.SuccessStatus > 299 {
		return fmt.Errorf("success status %d is not a 2xx status", t.SuccessStatus)
	}
	ok := openapi3.NewResponse().
		WithDescription(successDescription(t)).
		WithContent(openapi3.NewContentWithSchema(s, []string{mediaJSON}))
	ok.Headers = openapi3.Headers{}
	if t.SuccessStatus == http.StatusCreated {
		ok.Headers[headerLocation] = headerRef(comp, headerLocation)
	}
	if t.Idempotency != contracts.IdempotencySafeRead {
		ok.Headers[headerIdempotentReplayed] = headerRef(comp, headerIdempotentReplayed)
	}
	if len(ok.Headers) == 0 {
		ok.Headers = nil
	}
	op.Responses.Set(fmt.Sprint(t.SuccessStatus), &openapi3.ResponseRef{Value: ok})

	for _, g := range groupByStatus(t.ErrorCodes()) {
		if g.status < 400 {
			return fmt.Errorf("error code %s answers status %d", g.codes[0], g.status)
		}
		op.Responses.Set(fmt.Sprint(g.status), &openapi3.ResponseRef{Value: problemResponse(g, comp)})
	}
	return nil
}

func successDescription(t contracts.Tool) string {
	d := "Success: the result of " + t.Name + ", as its MCP output schema describes it."
	if t.SuccessStatus == http.StatusCreated {
		d += " Location names the created resource."
	}
	if t.Idempotency != contracts.IdempotencySafeRead {
		d += " A replay of a stored response carries Idempotent-Replayed: true."
	}
	return d
}

// dispatchDescription explains the effective scope of a praxec operation.
func dispatchDescription(t contracts.Tool, rows []contracts.DispatchRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The effective scope is decided by the dispatch row the body matches, after the body is read; "+
		"the scope listed under security is the %s row's. Only which keys are present selects a row, never their values. Rows:\n", rows[0].Operation)
	for _, r := range rows {
		keys := "no keys"
		if len(r.Keys) > 0 {
			keys = "`" + strings.Join(r.Keys, "` + `") + "`"
		}
		fmt.Fprintf(&b, "\n- `%s`: %s", r.Operation, keys)
		if len(r.Optional) > 0 {
			fmt.Fprintf(&b, " (optional `%s`)", strings.Join(r.Optional, "`, `"))
		}
		if len(r.Modifiers) > 0 {
			fmt.Fprintf(&b, "; modifiers `%s`", strings.Join(r.Modifiers, "`, `"))
		}
		fmt.Fprintf(&b, "; scope `%s`", r.Scope)
	}
	if t.Name == contracts.ToolPraxecQuery {
		fmt.Fprintf(&b, "\n\nA `%s` with kind `%s` is a lexicon search; a `%s` of a subject starting with `%s` is a lexicon lookup.",
			contracts.OpSearch, contracts.LexiconKind, contracts.OpDescribe, contracts.LexiconPrefix)
	}
	fmt.Fprintf(&b, "\n\nAny other combination answers 400 `%s` with example links.", contracts.CodeAmbiguousIntent)
	return b.String()
}

// dispatchExtension renders the dispatch rows as plain JSON values, so that
// both the JSON and the YAML encoders render them the same way.
func dispatchExtension(rows []contracts.DispatchRow) []any {
	out := make([]any, 0, len(rows))
	for _, r := range rows {
		row := map[string]any{"operation": string(r.Operation), "keys": stringsToAny(r.Keys), "scope": string(r.Scope)}
		if len(r.Optional) > 0 {
			row["optional"] = stringsToAny(r.Optional)
		}
		if len(r.Modifiers) > 0 {
			row["modifiers"] = stringsToAny(r.Modifiers)
		}
		out = append(out, row)
	}
	return out
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
