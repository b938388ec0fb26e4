package openapi

import (
	"context"
	"encoding/json"
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

// ErrDuplicateOperation is returned, wrapped, by Build when two tools or
// operator endpoints claim the same operationId or the same method and path.
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

// OperatorTag is the tag of every operator endpoint (contracts.Endpoint):
// the operations that are not the twin of an MCP tool.
const OperatorTag = "operator"

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
	{OperatorTag, "Operator endpoints: revoke access tokens and resolve human approvals. They are not MCP tools, are not listed in tools.json, and require operator scopes.", nil},
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

The operations tagged ` + "`" + OperatorTag + "`" + ` are the exception: operator endpoints, declared beside the
tools in the same contract, that have no MCP twin and require an operator scope. They take no
` + "`Idempotency-Key`" + `.

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
expectedVersion; it honours an idempotency key the same way when one is sent, as the
` + "`Idempotency-Key`" + ` header or the ` + "`idempotencyKey`" + ` body member (both must then agree), so a
` + "`retry_with_key`" + ` link's arguments work when copied verbatim.

## Errors

Errors are RFC 9457 problem details (` + "`application/problem+json`" + `) carrying a stable
` + "`code`" + `. Clients act on the status and the code, never on the wording of ` + "`title`" + ` or
` + "`detail`" + `. A 504 ` + "`outcome-unknown`" + ` means an upstream system may have acted: replay the
request with the same key, or read the resource back.`

// Build generates the OpenAPI 3.1 document of the /v8 REST API from every
// tool of contracts.Tools and every operator endpoint of
// contracts.OperatorEndpoints, and validates it with kin-openapi. The result is
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
	var specs []spec
	for _, t := range contracts.Tools() {
		specs = append(specs, toolSpec(t))
	}
	for _, e := range contracts.OperatorEndpoints() {
		specs = append(specs, endpointSpec(e))
	}
	operationIDs := map[string]string{}
	for _, sp := range specs {
		if prev, dup := operationIDs[sp.operationID]; dup {
			return nil, fmt.Errorf("%w: operationId %s of %s and %s", ErrDuplicateOperation, sp.operationID, prev, sp.what())
		}
		operationIDs[sp.operationID] = sp.what()
		if item := doc.Paths.Value(sp.path); item != nil && item.GetOperation(sp.method) != nil {
			return nil, fmt.Errorf("%w: %s %s of %s", ErrDuplicateOperation, sp.method, sp.path, sp.what())
		}
		op, err := operation(sp, doc.Components)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", sp.what(), err)
		}
		doc.AddOperation(sp.path, sp.method, op)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: the generated document is invalid: %w", err)
	}
	return doc, nil
}

// spec is what one operation of the document is generated from: a tool of
// the contract or an operator endpoint, reduced to the members both share.
type spec struct {
	// tool is the MCP tool name; empty for an operator endpoint.
	tool          string
	operationID   string
	method, path  string
	summary       string
	description   string
	scope         contracts.Scope
	idempotency   contracts.Idempotency // empty for an operator endpoint
	pathArgument  string
	bodyOptional  bool
	successStatus int
	input, output json.RawMessage
	errorCodes    []contracts.Code
}

func toolSpec(t contracts.Tool) spec {
	return spec{
		tool: t.Name, operationID: t.OperationID, method: t.Method, path: t.Path,
		summary: t.Title, description: t.Description, scope: t.RequiredScope,
		idempotency: t.Idempotency, pathArgument: t.PathArgument, successStatus: t.SuccessStatus,
		input: t.InputSchema, output: t.OutputSchema, errorCodes: t.ErrorCodes(),
	}
}

func endpointSpec(e contracts.Endpoint) spec {
	return spec{
		operationID: e.OperationID, method: e.Method, path: e.Path,
		summary: e.Summary, description: e.Description, scope: e.RequiredScope,
		pathArgument: e.PathArgument, bodyOptional: e.BodyOptional, successStatus: e.SuccessStatus,
		input: e.InputSchema, output: e.OutputSchema, errorCodes: e.ErrorCodes(),
	}
}

// what names the source of sp in errors and descriptions.
func (sp spec) what() string {
	if sp.tool != "" {
		return "tool " + sp.tool
	}
	return "operator endpoint " + sp.operationID
}

// operation builds the operation of sp.
func operation(sp spec, comp *openapi3.Components) (*openapi3.Operation, error) {
	tagName := OperatorTag
	if sp.tool != "" {
		var ok bool
		if tagName, ok = tagOf(sp.tool); !ok {
			return nil, ErrUntagged
		}
	}
	input, err := decodeSchema(sp.input)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	op := &openapi3.Operation{
		OperationID: sp.operationID,
		Summary:     sp.summary,
		Description: sp.description,
		Tags:        []string{tagName},
		Security: &openapi3.SecurityRequirements{
			openapi3.NewSecurityRequirement().Authenticate(SecuritySchemeName, string(sp.scope)),
		},
		Responses: openapi3.NewResponses(),
	}
	if sp.tool != "" {
		op.Extensions = map[string]any{
			ExtensionTool:        sp.tool,
			ExtensionIdempotency: string(sp.idempotency),
		}
		if rows := contracts.DispatchTable(sp.tool); rows != nil {
			op.Description += "\n\n" + dispatchDescription(sp.tool, rows)
			op.Extensions[ExtensionDispatch] = dispatchExtension(rows)
		}
	}

	if err := addParameters(op, sp, input, comp); err != nil {
		return nil, err
	}
	if err := addResponses(op, sp, comp); err != nil {
		return nil, err
	}
	return op, nil
}

// addParameters adds the path argument, the Idempotency-Key header, and
// either the query parameters (GET) or the request body (POST) of sp.
func addParameters(op *openapi3.Operation, sp spec, input jsonObject, comp *openapi3.Components) error {
	props, _ := input["properties"].(map[string]any)
	if sp.pathArgument != "" {
		if !strings.Contains(sp.path, "{"+sp.pathArgument+"}") {
			return fmt.Errorf("path %s does not hold {%s}", sp.path, sp.pathArgument)
		}
		prop, ok := props[sp.pathArgument].(map[string]any)
		if !ok {
			return fmt.Errorf("path argument %s is not a property of the input schema", sp.pathArgument)
		}
		s, err := toSchema(prop)
		if err != nil {
			return fmt.Errorf("path argument %s: %w", sp.pathArgument, err)
		}
		p := openapi3.NewPathParameter(sp.pathArgument).WithSchema(s)
		p.Description = s.Description
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: p})
	}
	switch sp.idempotency {
	case contracts.IdempotencyRequired:
		op.Parameters = append(op.Parameters, parameterRef(comp, paramIdempotencyKey))
	case contracts.IdempotencyVersioned:
		op.Parameters = append(op.Parameters, parameterRef(comp, paramIdempotencyKeyOptional))
	}

	switch sp.method {
	case http.MethodGet:
		required, _ := input["required"].([]any)
		names := sortedKeys(props)
		for _, name := range names {
			if name == sp.pathArgument {
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
		body := withoutProperties(input, sp.pathArgument)
		if sp.idempotency == contracts.IdempotencyRequired {
			body = withoutProperties(body, idempotencyKeyProperty)
		}
		s, err := toSchema(body)
		if err != nil {
			return fmt.Errorf("request body: %w", err)
		}
		op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().
			WithRequired(!sp.bodyOptional).
			WithDescription(bodyDescription(sp)).
			WithContent(openapi3.NewContentWithSchema(s, []string{mediaJSON}))}
	default:
		return fmt.Errorf("unsupported method %s", sp.method)
	}
	return nil
}

func bodyDescription(sp spec) string {
	var moved []string
	if sp.pathArgument != "" {
		moved = append(moved, sp.pathArgument+" (in the path)")
	}
	if sp.idempotency == contracts.IdempotencyRequired {
		moved = append(moved, idempotencyKeyProperty+" (in the "+headerIdempotencyKey+" header)")
	}
	name := sp.tool
	if name == "" {
		name = sp.operationID
	}
	d := "The arguments of " + name
	if len(moved) > 0 {
		d += ", except " + strings.Join(moved, " and ")
	}
	d += "."
	if sp.bodyOptional {
		d += " The body may be left out entirely."
	}
	return d
}

// addResponses adds the success response and one problem response per
// status of sp's error codes.
func addResponses(op *openapi3.Operation, sp spec, comp *openapi3.Components) error {
	output, err := decodeSchema(sp.output)
	if err != nil {
		return fmt.Errorf("output schema: %w", err)
	}
	s, err := toSchema(output)
	if err != nil {
		return fmt.Errorf("output schema: %w", err)
	}
	if sp.successStatus < 200 || sp.successStatus > 299 {
		return fmt.Errorf("success status %d is not a 2xx status", sp.successStatus)
	}
	ok := openapi3.NewResponse().
		WithDescription(successDescription(sp)).
		WithContent(openapi3.NewContentWithSchema(s, []string{mediaJSON}))
	ok.Headers = openapi3.Headers{}
	if sp.successStatus == http.StatusCreated {
		ok.Headers[headerLocation] = headerRef(comp, headerLocation)
	}
	if sp.idempotency != "" && sp.idempotency != contracts.IdempotencySafeRead {
		ok.Headers[headerIdempotentReplayed] = headerRef(comp, headerIdempotentReplayed)
	}
	if len(ok.Headers) == 0 {
		ok.Headers = nil
	}
	op.Responses.Set(fmt.Sprint(sp.successStatus), &openapi3.ResponseRef{Value: ok})

	for _, g := range groupByStatus(sp.errorCodes) {
		if g.status < 400 {
			return fmt.Errorf("error code %s answers status %d", g.codes[0], g.status)
		}
		op.Responses.Set(fmt.Sprint(g.status), &openapi3.ResponseRef{Value: problemResponse(g, comp)})
	}
	return nil
}

func successDescription(sp spec) string {
	if sp.tool == "" {
		return "Success: the result of " + sp.operationID + "."
	}
	d := "Success: the result of " + sp.tool + ", as its MCP output schema describes it."
	if sp.successStatus == http.StatusCreated {
		d += " Location names the created resource."
	}
	if sp.idempotency != contracts.IdempotencySafeRead {
		d += " A replay of a stored response carries Idempotent-Replayed: true."
	}
	return d
}

// dispatchDescription explains the effective scope of a praxec operation.
func dispatchDescription(tool string, rows []contracts.DispatchRow) string {
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
	if tool == contracts.ToolPraxecQuery {
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
