package openapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/internal/golden"
	"github.com/praxa/praxa/openapi"
)

// marshal builds the document and renders it with m.
func marshal(m func(*openapi3.T) ([]byte, error)) ([]byte, error) {
	doc, err := openapi.Build()
	if err != nil {
		return nil, err
	}
	return m(doc)
}

func mustJSON(tb testing.TB) []byte {
	tb.Helper()
	b, err := marshal(openapi.MarshalJSON)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// mustLoad reloads a rendered document through kin-openapi's loader, which
// resolves every $ref, and validates it.
func mustLoad(tb testing.TB, data []byte) *openapi3.T {
	tb.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		tb.Fatalf("LoadFromData: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		tb.Fatalf("Validate: %v", err)
	}
	return doc
}

func TestDocumentLoads(t *testing.T) {
	for _, tt := range []struct {
		name    string
		marshal func(*openapi3.T) ([]byte, error)
	}{
		{"JSON", openapi.MarshalJSON},
		{"YAML", openapi.MarshalYAML},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := marshal(tt.marshal)
			if err != nil {
				t.Fatal(err)
			}
			doc := mustLoad(t, b)
			if doc.OpenAPI != openapi.Version || doc.JSONSchemaDialect != contracts.SchemaDialect {
				t.Errorf("openapi %q, dialect %q; want %q, %q", doc.OpenAPI, doc.JSONSchemaDialect, openapi.Version, contracts.SchemaDialect)
			}
			if doc.Info.Title != openapi.Title || doc.Info.Version != contracts.ServerVersion {
				t.Errorf("info = %q %q, want %q %q", doc.Info.Title, doc.Info.Version, openapi.Title, contracts.ServerVersion)
			}
			if got, want := len(allOperations(doc)), len(contracts.Tools())+len(contracts.OperatorEndpoints()); got != want {
				t.Errorf("%d operations, want %d (tools and operator endpoints)", got, want)
			}
		})
	}
}

func TestYAMLAndJSONAgree(t *testing.T) {
	j, err := marshal(openapi.MarshalJSON)
	if err != nil {
		t.Fatal(err)
	}
	y, err := marshal(openapi.MarshalYAML)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := openapi.MarshalJSON(mustLoad(t, j))
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := openapi.MarshalJSON(mustLoad(t, y))
	if err != nil {
		t.Fatal(err)
	}
	if string(fromJSON) != string(fromYAML) {
		t.Errorf("the YAML rendering reloads to another document:\n%s", golden.FirstDifference(fromJSON, fromYAML))
	}
}

func TestInfoStatesIdempotencyRetention(t *testing.T) {
	doc, err := openapi.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"24 hours", "Idempotent-Replayed: true", "422", "409", "Retry-After", "configurable"} {
		if !strings.Contains(doc.Info.Description, want) {
			t.Errorf("info.description does not mention %q", want)
		}
	}
}

type located struct {
	method, path string
	op           *openapi3.Operation
}

func allOperations(doc *openapi3.T) []located {
	var out []located
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			out = append(out, located{method, path, op})
		}
	}
	return out
}

func TestToolNamesUnique(t *testing.T) {
	seen := map[string]string{}
	for _, tool := range contracts.Tools() {
		for _, name := range []string{tool.Name, strings.ReplaceAll(tool.Name, ".", "_")} {
			if prev, dup := seen[name]; dup && prev != tool.Name {
				t.Errorf("tool %s collides with %s as %q", tool.Name, prev, name)
			}
			seen[name] = tool.Name
		}
	}
}

// declared is one operation as the contract declares it: a tool, or an
// operator endpoint (tool empty, no idempotency class).
type declared struct {
	tool          string
	operationID   string
	method, path  string
	summary       string
	description   string
	scope         contracts.Scope
	idempotency   contracts.Idempotency
	pathArgument  string
	bodyOptional  bool
	successStatus int
	input, output json.RawMessage
	errorCodes    []contracts.Code
}

// name names d in subtests: the tool name, or the endpoint's operationId.
func (d declared) name() string {
	if d.tool != "" {
		return d.tool
	}
	return d.operationID
}

// declarations lists every tool, then every operator endpoint.
func declarations() []declared {
	var out []declared
	for _, t := range contracts.Tools() {
		out = append(out, declared{
			tool: t.Name, operationID: t.OperationID, method: t.Method, path: t.Path,
			summary: t.Title, description: t.Description, scope: t.RequiredScope, idempotency: t.Idempotency,
			pathArgument: t.PathArgument, successStatus: t.SuccessStatus,
			input: t.InputSchema, output: t.OutputSchema, errorCodes: t.ErrorCodes(),
		})
	}
	for _, e := range contracts.OperatorEndpoints() {
		out = append(out, declared{
			operationID: e.OperationID, method: e.Method, path: e.Path,
			summary: e.Summary, description: e.Description, scope: e.RequiredScope,
			pathArgument: e.PathArgument, bodyOptional: e.BodyOptional, successStatus: e.SuccessStatus,
			input: e.InputSchema, output: e.OutputSchema, errorCodes: e.ErrorCodes(),
		})
	}
	return out
}

// TestOperationsMatchContract checks the document against the contract,
// tool by tool and operator endpoint by operator endpoint, on the reloaded
// JSON (every $ref resolved by the loader): each has exactly one operation
// and the document holds nothing else.
func TestOperationsMatchContract(t *testing.T) {
	doc := mustLoad(t, mustJSON(t))
	byID := map[string][]located{}
	for _, l := range allOperations(doc) {
		byID[l.op.OperationID] = append(byID[l.op.OperationID], l)
	}
	decls := declarations()
	if want := len(contracts.Tools()) + len(contracts.OperatorEndpoints()); len(decls) != want || len(byID) != want {
		t.Errorf("%d distinct operationIds for %d declarations, want %d", len(byID), len(decls), want)
	}
	for _, d := range decls {
		t.Run(d.name(), func(t *testing.T) {
			ls := byID[d.operationID]
			if len(ls) != 1 {
				t.Fatalf("%d operations with operationId %s, want 1", len(ls), d.operationID)
			}
			l := ls[0]
			op := l.op
			if l.method != d.method || l.path != d.path {
				t.Errorf("operation at %s %s, want %s %s", l.method, l.path, d.method, d.path)
			}
			if op.Summary != d.summary || op.Description == "" || !strings.HasPrefix(op.Description, d.description) {
				t.Errorf("summary %q or description does not come from the declaration", op.Summary)
			}
			if len(op.Tags) != 1 {
				t.Errorf("tags = %v, want one", op.Tags)
			}
			if d.tool != "" {
				if op.Extensions[openapi.ExtensionTool] != d.tool || op.Extensions[openapi.ExtensionIdempotency] != string(d.idempotency) {
					t.Errorf("extensions = %v", op.Extensions)
				}
				if len(op.Tags) == 1 && op.Tags[0] == openapi.OperatorTag {
					t.Errorf("tool %s is tagged %s", d.tool, openapi.OperatorTag)
				}
			} else {
				if _, ok := op.Extensions[openapi.ExtensionTool]; ok {
					t.Errorf("operator endpoint claims an MCP tool: %v", op.Extensions)
				}
				if _, ok := op.Extensions[openapi.ExtensionIdempotency]; ok {
					t.Errorf("operator endpoint carries an idempotency class: %v", op.Extensions)
				}
				if !slices.Equal(op.Tags, []string{openapi.OperatorTag}) {
					t.Errorf("tags = %v, want [%s]", op.Tags, openapi.OperatorTag)
				}
				if !d.scope.Operator() {
					t.Errorf("operator endpoint with the agent scope %s", d.scope)
				}
			}
			checkSecurity(t, op, d)
			checkPathArgument(t, op, d)
			checkIdempotencyKey(t, op, d)
			checkInput(t, op, d)
			checkResponses(t, op, d)
		})
	}
	if doc.Tags.Get(openapi.OperatorTag) == nil {
		t.Errorf("the %s tag is not declared", openapi.OperatorTag)
	}
}

func checkSecurity(t *testing.T, op *openapi3.Operation, tool declared) {
	t.Helper()
	want := openapi3.SecurityRequirements{{openapi.SecuritySchemeName: {string(tool.scope)}}}
	if op.Security == nil || !reflect.DeepEqual(*op.Security, want) {
		t.Errorf("security = %v, want %v", op.Security, want)
	}
	if rows := contracts.DispatchTable(tool.tool); rows != nil {
		for _, r := range rows {
			if !strings.Contains(op.Description, "`"+string(r.Operation)+"`") || !strings.Contains(op.Description, "`"+string(r.Scope)+"`") {
				t.Errorf("description does not list dispatch row %s with scope %s", r.Operation, r.Scope)
			}
		}
		if _, ok := op.Extensions[openapi.ExtensionDispatch]; !ok {
			t.Errorf("no %s extension", openapi.ExtensionDispatch)
		}
	}
}

func inputProperties(t *testing.T, tool declared) (map[string]any, []any) {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal(tool.input, &in); err != nil {
		t.Fatal(err)
	}
	props, _ := in["properties"].(map[string]any)
	req, _ := in["required"].([]any)
	return props, req
}

func checkPathArgument(t *testing.T, op *openapi3.Operation, tool declared) {
	t.Helper()
	props, _ := inputProperties(t, tool)
	var pathParams []string
	for _, p := range op.Parameters {
		if p.Value.In == openapi3.ParameterInPath {
			pathParams = append(pathParams, p.Value.Name)
		}
	}
	if tool.pathArgument == "" {
		if len(pathParams) > 0 || strings.Contains(tool.path, "{") {
			t.Errorf("path parameters %v in %s without a path argument", pathParams, tool.path)
		}
		return
	}
	if !strings.Contains(tool.path, "{"+tool.pathArgument+"}") {
		t.Errorf("path %s does not hold {%s}", tool.path, tool.pathArgument)
	}
	if _, ok := props[tool.pathArgument]; !ok {
		t.Errorf("path argument %s is not a property of the input schema", tool.pathArgument)
	}
	if !slices.Equal(pathParams, []string{tool.pathArgument}) {
		t.Errorf("path parameters = %v, want [%s]", pathParams, tool.pathArgument)
	}
}

func checkIdempotencyKey(t *testing.T, op *openapi3.Operation, tool declared) {
	t.Helper()
	p := op.Parameters.GetByInAndName(openapi3.ParameterInHeader, "Idempotency-Key")
	if tool.idempotency == contracts.IdempotencySafeRead || tool.idempotency == "" {
		if p != nil {
			t.Errorf("a safe read or an operator endpoint documents Idempotency-Key")
		}
		return
	}
	if p == nil {
		t.Fatalf("no Idempotency-Key header")
	}
	if want := tool.idempotency == contracts.IdempotencyRequired; p.Required != want {
		t.Errorf("Idempotency-Key required = %v, want %v", p.Required, want)
	}
	s := p.Schema.Value
	if s.Pattern != contracts.IdempotencyKeyPattern || s.MinLength != 16 || s.MaxLength == nil || *s.MaxLength != 128 {
		t.Errorf("Idempotency-Key schema: pattern %q, length %d..%v", s.Pattern, s.MinLength, s.MaxLength)
	}
	if !strings.Contains(p.Description, "RFC 8941") {
		t.Errorf("Idempotency-Key description does not mention the RFC 8941 sf-string form")
	}
}

func checkInput(t *testing.T, op *openapi3.Operation, tool declared) {
	t.Helper()
	props, required := inputProperties(t, tool)
	switch tool.method {
	case http.MethodPost:
		if op.RequestBody == nil {
			t.Fatal("POST without a body")
		}
		if op.RequestBody.Value.Required == tool.bodyOptional {
			t.Errorf("body required = %v, declared optional = %v", op.RequestBody.Value.Required, tool.bodyOptional)
		}
		mt := op.RequestBody.Value.Content.Get("application/json")
		if mt == nil {
			t.Fatal("body is not application/json")
		}
		s := mt.Schema.Value
		// A versioned operation (praxec.command) takes its optional key as
		// a member too; a required key travels in the header only.
		if _, ok := s.Properties["idempotencyKey"]; (ok && tool.idempotency != contracts.IdempotencyVersioned) || slices.Contains(s.Required, "idempotencyKey") {
			t.Error("body holds idempotencyKey")
		}
		if tool.pathArgument != "" {
			if _, ok := s.Properties[tool.pathArgument]; ok || slices.Contains(s.Required, tool.pathArgument) {
				t.Errorf("body holds the path argument %s", tool.pathArgument)
			}
		}
		if s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
			t.Error("body schema admits additional properties")
		}
		if s.SchemaDialect != "" {
			t.Error("body schema keeps $schema")
		}
	case http.MethodGet:
		if op.RequestBody != nil {
			t.Error("GET with a body")
		}
		for name := range props {
			if name == tool.pathArgument {
				continue
			}
			p := op.Parameters.GetByInAndName(openapi3.ParameterInQuery, name)
			if p == nil {
				t.Errorf("input property %s is not a query parameter", name)
				continue
			}
			if want := slices.Contains(required, any(name)); p.Required != want {
				t.Errorf("query parameter %s required = %v, want %v", name, p.Required, want)
			}
		}
	default:
		t.Errorf("method %s", tool.method)
	}
}

func checkResponses(t *testing.T, op *openapi3.Operation, tool declared) {
	t.Helper()
	ok := op.Responses.Status(tool.successStatus)
	if ok == nil {
		t.Fatalf("no %d response", tool.successStatus)
	}
	mt := ok.Value.Content.Get("application/json")
	if mt == nil || mt.Schema.Value.SchemaDialect != "" {
		t.Errorf("success response: no JSON schema, or one with $schema")
	}
	if (ok.Value.Headers["Location"] != nil) != (tool.successStatus == http.StatusCreated) {
		t.Errorf("Location documented = %v for status %d", ok.Value.Headers["Location"] != nil, tool.successStatus)
	}
	if tool.idempotency == contracts.IdempotencyRequired && ok.Value.Headers["Idempotent-Replayed"] == nil {
		t.Error("no Idempotent-Replayed response header")
	}
	if tool.idempotency == "" && ok.Value.Headers["Idempotent-Replayed"] != nil {
		t.Error("an operator endpoint takes no key, yet documents Idempotent-Replayed")
	}
	statuses := map[int][]contracts.Code{}
	for _, c := range tool.errorCodes {
		statuses[c.Status()] = append(statuses[c.Status()], c)
	}
	for status, codes := range statuses {
		r := op.Responses.Status(status)
		if r == nil {
			t.Errorf("no %d response for %v", status, codes)
			continue
		}
		pt := r.Value.Content.Get("application/problem+json")
		if pt == nil || pt.Schema.Ref != "#/components/schemas/"+openapi.ProblemSchemaName {
			t.Errorf("%d response is not a Problem", status)
		}
		for _, c := range codes {
			if !strings.Contains(*r.Value.Description, "`"+string(c)+"`") {
				t.Errorf("%d response description does not list %s", status, c)
			}
		}
		header := func(name string) bool { return r.Value.Headers[name] != nil }
		switch {
		case status == 401 || status == 403:
			if !header("WWW-Authenticate") {
				t.Errorf("%d response without WWW-Authenticate", status)
			}
		case status == 429 || status == 503 || status == 504 || (status == 409 && slices.Contains(codes, contracts.CodeIdempotencyInProgress)):
			if !header("Retry-After") {
				t.Errorf("%d response without Retry-After", status)
			}
		}
	}
	// Nothing beyond the success and the error statuses.
	for code := range op.Responses.Map() {
		n, err := strconv.Atoi(code)
		if err != nil {
			t.Errorf("response %q is not a status", code)
			continue
		}
		if _, ok := statuses[n]; !ok && n != tool.successStatus {
			t.Errorf("response %d belongs to none of the operation's codes", n)
		}
	}
}

// TestEmbeddedSchemasMatchContract proves that embedding loses nothing:
// each documented schema is the contract's, minus $schema and the members
// that travel elsewhere over REST.
func TestEmbeddedSchemasMatchContract(t *testing.T) {
	doc := mustLoad(t, mustJSON(t))
	for _, tool := range declarations() {
		t.Run(tool.name(), func(t *testing.T) {
			item := doc.Paths.Value(tool.path)
			op := item.GetOperation(tool.method)
			in := decode(t, tool.input)
			props := in["properties"].(map[string]any)
			if tool.method == http.MethodPost {
				want := without(in, tool.pathArgument)
				if tool.idempotency == contracts.IdempotencyRequired {
					want = without(want, "idempotencyKey")
				}
				assertSameSchema(t, "request body", want, op.RequestBody.Value.Content.Get("application/json").Schema.Value)
			}
			for _, p := range op.Parameters {
				if p.Value.In == openapi3.ParameterInHeader {
					continue
				}
				assertSameSchema(t, "parameter "+p.Value.Name, props[p.Value.Name].(map[string]any), p.Value.Schema.Value)
			}
			out := decode(t, tool.output)
			assertSameSchema(t, "success response", out, op.Responses.Status(tool.successStatus).Value.Content.Get("application/json").Schema.Value)
		})
	}
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "$schema")
	return m
}

func without(s map[string]any, names ...string) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	props := map[string]any{}
	for k, v := range s["properties"].(map[string]any) {
		if !slices.Contains(names, k) {
			props[k] = v
		}
	}
	delete(out, "properties")
	if len(props) > 0 { // an empty properties is not written (reloadConfig)
		out["properties"] = props
	}
	var req []any
	for _, r := range asSlice(s["required"]) {
		if !slices.Contains(names, r.(string)) {
			req = append(req, r)
		}
	}
	delete(out, "required")
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func assertSameSchema(t *testing.T, what string, want map[string]any, got *openapi3.Schema) {
	t.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	normalize(want)
	normalize(g)
	if !reflect.DeepEqual(want, g) {
		wb, _ := json.Marshal(want)
		t.Errorf("%s schema differs from the contract:\nwant %s\ngot  %s", what, wb, b)
	}
}

// normalize drops keywords whose value is the JSON Schema default, which
// kin-openapi omits when it marshals.
func normalize(v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range []string{"minLength", "minItems", "minProperties"} {
			if n, ok := v[k].(float64); ok && n == 0 {
				delete(v, k)
			}
		}
		if b, ok := v["uniqueItems"].(bool); ok && !b {
			delete(v, "uniqueItems")
		}
		for _, e := range v {
			normalize(e)
		}
	case []any:
		for _, e := range v {
			normalize(e)
		}
	}
}

func TestUnembeddableSchemaRefused(t *testing.T) {
	for _, tt := range []struct {
		name   string
		schema string
		ok     bool
	}{
		{"OK", `{"$schema":"x","type":"object","properties":{"a":{"type":"string"}}}`, true},
		{"OKPropertyNamedLikeKeyword", `{"type":"object","properties":{"$id":{"type":"string"},"$defs":{"type":"object"}}}`, true},
		{"OKEnumHoldsKeyword", `{"enum":[{"$ref":"#/x"}],"default":{"$id":"y"}}`, true},
		{"ErrDefs", `{"type":"object","$defs":{"a":{"type":"string"}}}`, false},
		{"ErrID", `{"$id":"urn:x","type":"object"}`, false},
		{"ErrNestedRef", `{"type":"object","properties":{"a":{"items":{"$ref":"#/$defs/a"}}}}`, false},
		{"ErrRefInAllOf", `{"allOf":[{"type":"object"},{"$ref":"#/$defs/a"}]}`, false},
		{"ErrAnchorInAdditionalProperties", `{"additionalProperties":{"$anchor":"a"}}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := openapi.DecodeSchema(json.RawMessage(tt.schema))
			if tt.ok {
				if err != nil {
					t.Fatalf("DecodeSchema = %v, want nil", err)
				}
				if _, has := s["$schema"]; has {
					t.Error("$schema kept")
				}
				return
			}
			if !errors.Is(err, openapi.ErrUnembeddableSchema) {
				t.Fatalf("DecodeSchema = %v, want ErrUnembeddableSchema", err)
			}
		})
	}
}

func TestScopesDocumented(t *testing.T) {
	doc, err := openapi.Build()
	if err != nil {
		t.Fatal(err)
	}
	flow := doc.Components.SecuritySchemes[openapi.SecuritySchemeName].Value.Flows.ClientCredentials
	if len(flow.Scopes) != len(contracts.Scopes()) {
		t.Errorf("%d scopes, want %d", len(flow.Scopes), len(contracts.Scopes()))
	}
	for _, s := range contracts.Scopes() {
		if got := flow.Scopes[string(s)]; got != s.Description() || got == "" {
			t.Errorf("scope %s: description %q, want %q", s, got, s.Description())
		}
	}
}

func TestProblemCodesAreTheRegistry(t *testing.T) {
	doc, err := openapi.Build()
	if err != nil {
		t.Fatal(err)
	}
	enum := doc.Components.Schemas[openapi.ProblemSchemaName].Value.Properties["code"].Value.Enum
	var want []any
	for _, info := range contracts.Codes() {
		if info.Status >= 400 {
			want = append(want, string(info.Code))
		}
	}
	if fmt.Sprint(enum) != fmt.Sprint(want) {
		t.Errorf("Problem code enum = %v, want %v", enum, want)
	}
}
