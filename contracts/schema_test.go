package contracts_test

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/praxa/praxa/contracts"
)

// decodeSchema decodes a schema as plain JSON, the way a host sees it.
func decodeSchema(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("schema is not a JSON object: %v", err)
	}
	return m
}

// inputKeywords are the only keywords contract input schemas (of tools and
// operator endpoints) use. A keyword
// outside this list is most likely a typo, which 2020-12 would silently
// ignore as an annotation.
var inputKeywords = []string{
	"$schema", "type", "description", "default",
	"properties", "required", "additionalProperties", "maxProperties",
	"minLength", "maxLength", "pattern", "format", "enum",
	"minimum", "maximum",
	"items", "minItems", "maxItems", "uniqueItems",
}

// walkInput checks one node of an input schema and recurses into it. It
// reports every rule a node breaks through t.Errorf, naming the node by its
// JSON Pointer inside the schema.
func walkInput(t *testing.T, tool, at string, s map[string]any) {
	t.Helper()
	for k := range s {
		if !slices.Contains(inputKeywords, k) {
			t.Errorf("%s %s: unexpected keyword %q", tool, at, k)
		}
	}
	if ref, ok := s["$ref"]; ok {
		t.Errorf("%s %s: $ref %v (input schemas are self-contained)", tool, at, ref)
	}
	typ, ok := s["type"].(string)
	if !ok {
		t.Errorf("%s %s: type %v, want a single type name", tool, at, s["type"])
		return
	}
	has := func(k string) bool { _, ok := s[k]; return ok }
	switch typ {
	case "string":
		if !has("maxLength") {
			t.Errorf("%s %s: string without maxLength", tool, at)
		}
	case "integer", "number":
		if !has("minimum") || !has("maximum") {
			t.Errorf("%s %s: %s without minimum and maximum", tool, at, typ)
		}
	case "array":
		if !has("maxItems") {
			t.Errorf("%s %s: array without maxItems", tool, at)
		}
		items, ok := s["items"].(map[string]any)
		if !ok {
			t.Errorf("%s %s: array without an items schema", tool, at)
			break
		}
		walkInput(t, tool, at+"/items", items)
	case "object":
		closed := s["additionalProperties"] == false
		if !closed && !has("maxProperties") {
			t.Errorf("%s %s: object neither closed (additionalProperties: false) nor bounded (maxProperties)", tool, at)
		}
		props, _ := s["properties"].(map[string]any)
		if closed && props == nil {
			t.Errorf("%s %s: closed object without properties", tool, at)
		}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := props[r.(string)]; !ok {
					t.Errorf("%s %s: required %q is not a declared property", tool, at, r)
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			p, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s %s/properties/%s: not a schema object", tool, at, name)
				continue
			}
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("%s %s/properties/%s: no description for the model", tool, at, name)
			}
			walkInput(t, tool, at+"/properties/"+name, p)
		}
	case "boolean":
	default:
		t.Errorf("%s %s: type %q is not allowed in input schemas", tool, at, typ)
	}
}

// checkOperationSchemas holds the input and output schemas of one operation,
// a tool or an operator endpoint, to the rules both follow: each compiles
// and is an object of the 2020-12 dialect; the input is closed, uses only
// inputKeywords, declares and requires its path argument as an identifier
// (safe in a path segment), takes only scalar query parameters on a GET, and
// every default it declares is valid.
func checkOperationSchemas(t *testing.T, name, method, pathArgument string, input, output json.RawMessage) {
	t.Helper()
	for _, s := range []struct {
		name string
		raw  json.RawMessage
	}{{"input", input}, {"output", output}} {
		if _, err := contracts.CompileSchema(name+"."+s.name, s.raw); err != nil {
			t.Errorf("%s schema: %v", s.name, err)
		}
		root := decodeSchema(t, s.raw)
		if root["$schema"] != contracts.SchemaDialect {
			t.Errorf("%s schema: $schema = %v, want %s", s.name, root["$schema"], contracts.SchemaDialect)
		}
		if root["type"] != "object" {
			t.Fatalf("%s schema: root type = %v, want object (go-sdk AddTool panics otherwise)", s.name, root["type"])
		}
	}
	in := decodeSchema(t, input)
	if in["additionalProperties"] != false {
		t.Errorf("root additionalProperties = %v, want false", in["additionalProperties"])
	}
	walkInput(t, name, "", in)

	props, req := properties(t, input)
	if pathArgument != "" {
		p, ok := props[pathArgument]
		if !ok || !slices.Contains(req, pathArgument) {
			t.Errorf("path argument %q must be a declared, required property", pathArgument)
		} else if p["type"] != "string" || p["pattern"] != contracts.IdentifierPattern {
			t.Errorf("path argument %q = %v, want an identifier (safe in a path segment)", pathArgument, p)
		}
	}
	// A GET carries its non-path arguments as query parameters, so those
	// must be flat scalars.
	if method == "GET" {
		for name, p := range props {
			switch p["type"] {
			case "string", "integer", "number", "boolean":
			default:
				t.Errorf("%s has type %v; GET arguments are scalar query parameters", name, p["type"])
			}
		}
	}
	for prop, p := range props {
		def, ok := p["default"]
		if !ok {
			continue
		}
		sub, _ := json.Marshal(p)
		s, err := contracts.CompileSchema(name+"."+prop, sub)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(def); err != nil {
			t.Errorf("the default of %s is invalid: %v", prop, err)
		}
	}
}

func TestToolSchemas(t *testing.T) {
	for _, tool := range contracts.Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			checkOperationSchemas(t, tool.Name, tool.Method, tool.PathArgument, tool.InputSchema, tool.OutputSchema)
		})
	}
}

// properties returns the root properties and required members of a schema.
func properties(t *testing.T, raw json.RawMessage) (map[string]map[string]any, []string) {
	t.Helper()
	s := decodeSchema(t, raw)
	props := map[string]map[string]any{}
	for k, v := range s["properties"].(map[string]any) {
		props[k] = v.(map[string]any)
	}
	var req []string
	for _, r := range asSlice(s["required"]) {
		req = append(req, r.(string))
	}
	return props, req
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func TestIdempotencyKeyProperty(t *testing.T) {
	for _, tool := range contracts.Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			props, req := properties(t, tool.InputSchema)
			key, has := props["idempotencyKey"]
			switch tool.Idempotency {
			case contracts.IdempotencyRequired:
				if !has || !slices.Contains(req, "idempotencyKey") {
					t.Fatalf("a required-class tool declares and requires idempotencyKey (has %v, required %v)", has, req)
				}
				if key["type"] != "string" || key["pattern"] != contracts.IdempotencyKeyPattern ||
					key["minLength"] != 16.0 || key["maxLength"] != 128.0 {
					t.Errorf("idempotencyKey schema = %v", key)
				}
			case contracts.IdempotencyVersioned:
				// praxec.command takes an optional key (DESIGN, amended
				// 2026-12-07: a retry_with_key link works copied verbatim).
				if !has || slices.Contains(req, "idempotencyKey") || key["pattern"] != contracts.IdempotencyKeyPattern {
					t.Errorf("a versioned tool takes an optional idempotencyKey (has %v, required %v)", has, req)
				}
			case contracts.IdempotencySafeRead:
				if has || slices.Contains(req, "idempotencyKey") {
					t.Errorf("a %s tool must not take an idempotencyKey", tool.Idempotency)
				}
			default:
				t.Errorf("unknown idempotency class %q", tool.Idempotency)
			}
		})
	}
	if contracts.IdempotencyKeyPattern != `^[A-Za-z0-9][A-Za-z0-9._:-]{15,127}$` {
		t.Errorf("IdempotencyKeyPattern = %s, not the seeds/003 pattern", contracts.IdempotencyKeyPattern)
	}
}

// The praxec pair reproduces the seeds/000 field lists exactly, every field
// optional.
func TestPraxecSchemasFollowTheSeed(t *testing.T) {
	tests := []struct {
		tool   string
		fields map[string]string // name -> JSON type
		open   []string          // open objects
	}{
		{contracts.ToolPraxecQuery, map[string]string{
			"query": "string", "kind": "string", "subject": "string", "workflowId": "string",
			"transition": "string", "limit": "integer",
		}, nil},
		{contracts.ToolPraxecCommand, map[string]string{
			"definitionId": "string", "input": "object", "workflowId": "string", "expectedVersion": "integer",
			"transition": "string", "arguments": "object", "subject": "string", "definition": "object",
			"summary": "string", "traceId": "string", "runId": "string", "intent": "string", "unknown_subject": "string",
			// Not a field of seeds/000: DESIGN's amendment of 2026-12-07
			// (seeds/003's pattern, so retry_with_key links work).
			"idempotencyKey": "string",
		}, []string{"input", "arguments", "definition"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			tool, _ := contracts.Lookup(tt.tool)
			props, req := properties(t, tool.InputSchema)
			if got, want := slices.Sorted(maps.Keys(props)), slices.Sorted(maps.Keys(tt.fields)); !slices.Equal(got, want) {
				t.Errorf("fields %v\nwant   %v", got, want)
			}
			if len(req) != 0 {
				t.Errorf("required %v; every praxec field is optional", req)
			}
			for name, typ := range tt.fields {
				if props[name]["type"] != typ {
					t.Errorf("%s has type %v, want %s", name, props[name]["type"], typ)
				}
			}
			for _, name := range tt.open {
				p := props[name]
				if _, has := p["properties"]; has || p["additionalProperties"] == false {
					t.Errorf("%s must stay an open object: %v", name, p)
				}
				if _, has := p["maxProperties"]; !has {
					t.Errorf("%s is open but unbounded", name)
				}
			}
		})
	}
	q, _ := contracts.Lookup(contracts.ToolPraxecQuery)
	props, _ := properties(t, q.InputSchema)
	kind := props["kind"]
	if _, has := kind["enum"]; has {
		t.Error("praxec.query kind must be a free string (flag-gated kinds answer INVALID_PARAMS)")
	}
	if _, has := kind["pattern"]; has {
		t.Error("praxec.query kind must be a free string")
	}
	if err := contracts.ValidateInput(contracts.ToolPraxecQuery, decodeArgs(t, `{"query":"x","kind":"skill"}`)); err != nil {
		t.Errorf("kind skill is refused by the schema, not by the dispatcher: %v", err)
	}
}

func TestCompileSchemaRefusesExternalReferences(t *testing.T) {
	tests := []struct {
		name, schema string
	}{
		{"https", `{"$ref":"https://example.com/s.json"}`},
		{"http", `{"type":"object","properties":{"a":{"$ref":"http://example.com/a.json#/x"}}}`},
		{"file", `{"$ref":"file:///etc/passwd"}`},
		{"file relative", `{"$ref":"file:s.json"}`},
		{"$id elsewhere", `{"$id":"https://example.com/root.json","$ref":"other.json"}`},
		{"dynamicRef", `{"$dynamicRef":"https://example.com/s.json#meta"}`},
		{"unknown metaschema", `{"$schema":"https://example.com/meta.json","type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := contracts.CompileSchema("probe", []byte(tt.schema))
			if err == nil {
				t.Fatal("compiled a schema with an external reference")
			}
			if !errors.Is(err, contracts.ErrRemoteReference) {
				t.Errorf("errors.Is(err, ErrRemoteReference) = false for %v (%T)", err, err)
			}
			// The compiler's own error stays reachable too.
			var lue *jsonschema.LoadURLError
			if !errors.As(err, &lue) {
				t.Errorf("error %v does not carry *jsonschema.LoadURLError", err)
			}
		})
	}
}

func TestCompileSchemaLocalReferences(t *testing.T) {
	ok := `{"$defs":{"id":{"type":"string","maxLength":8}},"type":"object","properties":{"a":{"$ref":"#/$defs/id"}}}`
	s, err := contracts.CompileSchema("local", []byte(ok))
	if err != nil {
		t.Fatalf("a local $ref is refused: %v", err)
	}
	if err := s.Validate(map[string]any{"a": "123456789"}); err == nil {
		t.Error("the local $ref was not applied")
	}
	// A meta-schema of a known draft is embedded and never fetched.
	if _, err := contracts.CompileSchema("meta", []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`)); err != nil {
		t.Errorf("the 2020-12 meta-schema is refused: %v", err)
	}
	// Malformed and invalid schemas are errors too, but not reference errors.
	for _, bad := range []string{`{`, `{"type":"objekt"}`, `{"minLength":-1}`} {
		_, err := contracts.CompileSchema("bad", []byte(bad))
		if err == nil {
			t.Errorf("CompileSchema(%s) succeeded", bad)
		} else if errors.Is(err, contracts.ErrRemoteReference) {
			t.Errorf("CompileSchema(%s) reported a remote reference: %v", bad, err)
		}
	}
	// Formats are asserted, not merely annotated.
	f, err := contracts.CompileSchema("format", []byte(`{"type":"string","format":"date-time"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate("yesterday"); err == nil {
		t.Error("format date-time is not asserted")
	}
}

// decodeArgs decodes JSON the way a surface decodes a request body.
func decodeArgs(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

const validKey = `"k-0123456789abcdef"`

// fe is a compact FieldError expectation: pointer and keyword.
type fe struct{ pointer, keyword string }

// inputCase is one case of an input validation table: the arguments of
// the tool or endpoint key, and the field errors they answer (nil: valid).
type inputCase struct {
	key  string
	name string
	args string
	want []fe
}

// checkInputCases runs every case through validate, the function named
// fn, as one subtest, holds its answer to the case with checkFieldErrors
// (what names the input: arguments, a request), and fails unless every key
// of keys has cases.
func checkInputCases(t *testing.T, cases []inputCase, validate func(string, any) error, keys []string, fn, what string) {
	t.Helper()
	covered := map[string]bool{}
	for _, tt := range cases {
		covered[tt.key] = true
		t.Run(tt.key+"/"+tt.name, func(t *testing.T) {
			checkFieldErrors(t, validate(tt.key, decodeArgs(t, tt.args)), tt.want, what)
		})
	}
	for _, k := range keys {
		if !covered[k] {
			t.Errorf("no %s cases for %s", fn, k)
		}
	}
}

// checkFieldErrors holds the answer of validating what (arguments, a
// request) to want: no error when want is nil, else INVALID_PARAMS with
// exactly the field errors want lists, each with a detail, sorted by pointer.
func checkFieldErrors(t *testing.T, err error, want []fe, what string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("valid %s refused: %v", what, err)
		}
		return
	}
	if err == nil {
		t.Fatalf("invalid %s accepted", what)
	}
	var ce *contracts.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %T is not a *contracts.Error", err)
	}
	if ce.Code != contracts.CodeInvalidParams {
		t.Errorf("code %s, want INVALID_PARAMS", ce.Code)
	}
	var got []fe
	for _, f := range ce.Fields {
		got = append(got, fe{f.Pointer, f.Keyword})
		if f.Detail == "" {
			t.Errorf("%s: empty detail", f.Pointer)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("field errors %v\nwant         %v\n(%v)", got, want, ce.Fields)
	}
	if !slices.IsSortedFunc(ce.Fields, func(a, b contracts.FieldError) int { return strings.Compare(a.Pointer, b.Pointer) }) {
		t.Errorf("field errors are not sorted by pointer: %v", ce.Fields)
	}
}

func TestValidateInput(t *testing.T) {
	long := func(n int) string { return `"` + strings.Repeat("a", n) + `"` }
	tests := []inputCase{
		// aura_submit_intent
		{"aura_submit_intent", "minimal", `{"idempotencyKey":` + validKey + `,"intent":"ship it"}`, nil},
		{"aura_submit_intent", "with tags", `{"idempotencyKey":` + validKey + `,"intent":"ship it","tags":["a","b"]}`, nil},
		{"aura_submit_intent", "unknown field", `{"idempotencyKey":` + validKey + `,"intent":"x","zzz":1}`, []fe{{"/zzz", "additionalProperties"}}},
		{"aura_submit_intent", "missing key", `{"intent":"x"}`, []fe{{"/idempotencyKey", "required"}}},
		{"aura_submit_intent", "missing both", `{}`, []fe{{"/idempotencyKey", "required"}, {"/intent", "required"}}},
		{"aura_submit_intent", "duplicate tags", `{"idempotencyKey":` + validKey + `,"intent":"x","tags":["a","a"]}`, []fe{{"/tags", "uniqueItems"}}},
		{"aura_submit_intent", "too many tags", `{"idempotencyKey":` + validKey + `,"intent":"x","tags":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"]}`, []fe{{"/tags", "maxItems"}}},
		{"aura_submit_intent", "intent too long", `{"idempotencyKey":` + validKey + `,"intent":` + long(4001) + `}`, []fe{{"/intent", "maxLength"}}},
		{"aura_submit_intent", "intent at bound", `{"idempotencyKey":` + validKey + `,"intent":` + long(4000) + `}`, nil},
		{"aura_submit_intent", "not an object", `["x"]`, []fe{{"", "type"}}},
		{"aura_submit_intent", "null", `null`, []fe{{"", "type"}}},

		// aura_create_mission
		{"aura_create_mission", "minimal", `{"idempotencyKey":` + validKey + `,"goal":"deploy"}`, nil},
		{"aura_create_mission", "full", `{"idempotencyKey":` + validKey + `,"goal":"deploy","definitionId":"deploy_pipeline","input":{"service":"payments","nested":{"a":[1,2]}},"runId":"r-abc123"}`, nil},
		{"aura_create_mission", "input not an object", `{"idempotencyKey":` + validKey + `,"goal":"g","input":[1]}`, []fe{{"/input", "type"}}},
		{"aura_create_mission", "bad runId", `{"idempotencyKey":` + validKey + `,"goal":"g","runId":"../etc"}`, []fe{{"/runId", "pattern"}}},
		{"aura_create_mission", "key too short", `{"idempotencyKey":"short","goal":"g"}`, []fe{{"/idempotencyKey", "minLength"}, {"/idempotencyKey", "pattern"}}},

		// aura_get_mission
		{"aura_get_mission", "minimal", `{"runId":"wf_a1b2c3d4e5f6"}`, nil},
		{"aura_get_mission", "missing runId", `{}`, []fe{{"/runId", "required"}}},
		{"aura_get_mission", "runId number", `{"runId":7}`, []fe{{"/runId", "type"}}},
		{"aura_get_mission", "key on a read", `{"runId":"r","idempotencyKey":` + validKey + `}`, []fe{{"/idempotencyKey", "additionalProperties"}}},

		// aura_signal_mission
		{"aura_signal_mission", "minimal", `{"idempotencyKey":` + validKey + `,"runId":"r","signal":"deploy","expectedVersion":4}`, nil},
		{"aura_signal_mission", "version zero", `{"idempotencyKey":` + validKey + `,"runId":"r","signal":"deploy","expectedVersion":0,"arguments":{"confirm":true}}`, nil},
		{"aura_signal_mission", "negative version", `{"idempotencyKey":` + validKey + `,"runId":"r","signal":"deploy","expectedVersion":-1}`, []fe{{"/expectedVersion", "minimum"}}},
		{"aura_signal_mission", "fractional version", `{"idempotencyKey":` + validKey + `,"runId":"r","signal":"deploy","expectedVersion":1.5}`, []fe{{"/expectedVersion", "type"}}},
		{"aura_signal_mission", "version too large", `{"idempotencyKey":` + validKey + `,"runId":"r","signal":"deploy","expectedVersion":9007199254740992}`, []fe{{"/expectedVersion", "maximum"}}},
		{"aura_signal_mission", "several violations", `{"zzz":1,"expectedVersion":-1,"runId":"","signal":"ok"}`, []fe{
			{"/expectedVersion", "minimum"}, {"/idempotencyKey", "required"}, {"/runId", "minLength"}, {"/runId", "pattern"}, {"/zzz", "additionalProperties"}}},

		// aura_cancel_mission
		{"aura_cancel_mission", "minimal", `{"idempotencyKey":` + validKey + `,"runId":"r"}`, nil},
		{"aura_cancel_mission", "with reason", `{"idempotencyKey":` + validKey + `,"runId":"r","reason":"no longer needed"}`, nil},
		{"aura_cancel_mission", "empty reason", `{"idempotencyKey":` + validKey + `,"runId":"r","reason":""}`, []fe{{"/reason", "minLength"}}},

		// aura_search_capabilities
		{"aura_search_capabilities", "empty query", `{"query":""}`, nil},
		{"aura_search_capabilities", "full", `{"query":"deploy","kind":"workflow","limit":5}`, nil},
		{"aura_search_capabilities", "missing query", `{"kind":"workflow"}`, []fe{{"/query", "required"}}},
		{"aura_search_capabilities", "limit zero", `{"query":"","limit":0}`, []fe{{"/limit", "minimum"}}},
		{"aura_search_capabilities", "limit too large", `{"query":"","limit":101}`, []fe{{"/limit", "maximum"}}},
		{"aura_search_capabilities", "limit string", `{"query":"","limit":"5"}`, []fe{{"/limit", "type"}}},
		{"aura_search_capabilities", "query too long", `{"query":` + long(513) + `}`, []fe{{"/query", "maxLength"}}},

		// aura_query_memory
		{"aura_query_memory", "minimal", `{"compartment":"ops","purpose":"incident-review","query":""}`, nil},
		{"aura_query_memory", "missing purpose", `{"compartment":"ops","query":""}`, []fe{{"/purpose", "required"}}},
		{"aura_query_memory", "tags not strings", `{"compartment":"ops","purpose":"p","query":"","tags":[1]}`, []fe{{"/tags/0", "type"}}},

		// aura_get_skill
		{"aura_get_skill", "minimal", `{"skillId":"incident-triage"}`, nil},
		{"aura_get_skill", "version", `{"skillId":"incident-triage","version":"1.2.0"}`, nil},
		{"aura_get_skill", "bad version", `{"skillId":"s","version":"v 1"}`, []fe{{"/version", "pattern"}}},

		// aura_get_trace
		{"aura_get_trace", "minimal", `{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736"}`, nil},
		{"aura_get_trace", "slash", `{"traceId":"a/b"}`, []fe{{"/traceId", "pattern"}}},

		// aura_list_goals
		{"aura_list_goals", "minimal", `{"compartment":"ops","purpose":"planning"}`, nil},
		{"aura_list_goals", "missing compartment", `{"purpose":"planning","limit":3}`, []fe{{"/compartment", "required"}}},

		// aura_list_world_certificates
		{"aura_list_world_certificates", "empty", `{}`, nil},
		{"aura_list_world_certificates", "issuer", `{"issuer":"acme","limit":100}`, nil},
		{"aura_list_world_certificates", "unknown", `{"subject":"x"}`, []fe{{"/subject", "additionalProperties"}}},

		// aura_get_coverage
		{"aura_get_coverage", "empty", `{}`, nil},
		{"aura_get_coverage", "operation", `{"operationId":"getMission"}`, nil},
		{"aura_get_coverage", "operation bool", `{"operationId":true}`, []fe{{"/operationId", "type"}}},

		// praxec.query
		{"praxec.query", "home", `{}`, nil},
		{"praxec.query", "search", `{"query":"deploy","kind":"workflow","limit":5}`, nil},
		{"praxec.query", "lexicon", `{"subject":"lexicon:evidence-pack"}`, nil},
		{"praxec.query", "explain", `{"workflowId":"wf_a1b2c3d4e5f6","transition":"deploy"}`, nil},
		{"praxec.query", "unknown", `{"zzz":true}`, []fe{{"/zzz", "additionalProperties"}}},
		{"praxec.query", "two unknown", `{"zzz":true,"aaa":1}`, []fe{{"/aaa", "additionalProperties"}, {"/zzz", "additionalProperties"}}},
		{"praxec.query", "empty kind", `{"query":"","kind":""}`, []fe{{"/kind", "minLength"}}},

		// praxec.command
		{"praxec.command", "start", `{"definitionId":"deploy_pipeline","input":{"service":"payments","environment":"staging"}}`, nil},
		{"praxec.command", "submit", `{"workflowId":"wf_a1b2c3d4e5f6","expectedVersion":4,"transition":"deploy","arguments":{"confirm":true}}`, nil},
		{"praxec.command", "define", `{"subject":"lexicon:evidence-pack","definition":{"definition_short":"A set.","boundedContext":"swe-agent","refs":["a"],"governance":"human-only"}}`, nil},
		{"praxec.command", "cancel pending", `{"intent":"cancel_pending_subject","unknown_subject":"evidence-foo"}`, nil},
		{"praxec.command", "idempotencyKey", `{"definitionId":"d","idempotencyKey":` + validKey + `}`, nil},
		{"praxec.command", "short idempotencyKey", `{"definitionId":"d","idempotencyKey":"short"}`, []fe{{"/idempotencyKey", "minLength"}, {"/idempotencyKey", "pattern"}}},
		{"praxec.command", "version string", `{"workflowId":"w","expectedVersion":"4","transition":"t"}`, []fe{{"/expectedVersion", "type"}}},
		{"praxec.command", "definition array", `{"subject":"lexicon:x","definition":[]}`, []fe{{"/definition", "type"}}},
	}
	checkInputCases(t, tests, contracts.ValidateInput, contracts.Names(), "ValidateInput", "arguments")
}

// Validation messages must never echo a value: an argument may be a secret.
func TestValidationNeverEchoesValues(t *testing.T) {
	const secret = "secret-value-123!"
	cases := []struct{ tool, args string }{
		{"aura_create_mission", `{"idempotencyKey":"` + secret + `","goal":"g"}`},
		{"aura_get_mission", `{"runId":"` + secret + `"}`},
		{"aura_search_capabilities", `{"query":"","kind":"` + secret + `"}`},
		{"aura_get_skill", `{"skillId":"s","version":"` + secret + `"}`},
		{"praxec.command", `{"workflowId":"` + secret + `","expectedVersion":"` + secret + `","transition":"t"}`},
		{"praxec.query", `{"limit":"` + secret + `"}`},
		{"aura_submit_intent", `{"idempotencyKey":` + validKey + `,"intent":"` + strings.Repeat(secret, 300) + `"}`},
		{"aura_submit_intent", `{"idempotencyKey":` + validKey + `,"intent":"x","tags":["` + secret + `","` + secret + `"]}`},
	}
	for _, c := range cases {
		err := contracts.ValidateInput(c.tool, decodeArgs(t, c.args))
		if err == nil {
			t.Errorf("%s %s: accepted", c.tool, c.args)
			continue
		}
		ce := contracts.AsError(err)
		env, _ := json.Marshal(ce.Envelope())
		if strings.Contains(ce.Message, secret) || strings.Contains(ce.Hint, secret) || strings.Contains(string(env), secret) {
			t.Errorf("%s: the error shown to the caller repeats the value: %s", c.tool, env)
		}
		for _, f := range ce.Fields {
			if strings.Contains(f.Detail, secret) || strings.Contains(f.Pointer, secret) {
				t.Errorf("%s: field error repeats the value: %+v", c.tool, f)
			}
		}
	}
}

func TestValidateUnknownTool(t *testing.T) {
	if err := contracts.ValidateInput("AURA_GET_MISSION", map[string]any{}); err == nil {
		t.Error("ValidateInput accepted an unknown tool")
	}
	if err := contracts.ValidateOutput("nope", map[string]any{}); err == nil {
		t.Error("ValidateOutput accepted an unknown tool")
	}
}

// missionProjection is a realistic aura_get_mission answer: the seeds/000 get
// shape plus runId.
const missionProjection = `{
  "runId": "wf_a1b2c3d4e5f6",
  "workflow": {
    "id": "wf_a1b2c3d4e5f6",
    "definitionId": "deploy_pipeline",
    "definitionVersion": 1,
    "state": "ready_to_deploy",
    "version": 4
  },
  "result": { "status": "waiting_for_action" },
  "context": {
    "lintPassed": true,
    "testsPassed": true,
    "coverage": 87.5,
    "artifactId": "art_xyz789"
  },
  "links": [
    {
      "rel": "deploy",
      "title": "Deploy to environment",
      "description": null,
      "method": "aura_signal_mission",
      "actor": "agent",
      "args": {
        "runId": "wf_a1b2c3d4e5f6",
        "expectedVersion": 4,
        "signal": "deploy",
        "idempotencyKey": "k-0123456789abcdef"
      },
      "inputSchema": { "type": "object" }
    },
    {
      "rel": "abort",
      "title": "Abort deployment",
      "description": null,
      "method": "aura_signal_mission",
      "actor": "agent",
      "args": {
        "runId": "wf_a1b2c3d4e5f6",
        "expectedVersion": 4,
        "signal": "abort",
        "idempotencyKey": "k-fedcba9876543210"
      },
      "inputSchema": { "type": "object" }
    }
  ],
  "evidence": []
}`

func TestValidateOutput(t *testing.T) {
	for _, tool := range []string{contracts.ToolGetMission, contracts.ToolCreateMission, contracts.ToolSignalMission, contracts.ToolCancelMission} {
		if err := contracts.ValidateOutput(tool, decodeArgs(t, missionProjection)); err != nil {
			t.Errorf("%s: a realistic mission projection is refused: %v", tool, err)
		}
	}
	// The terminal shape: completed with empty links.
	terminal := decodeArgs(t, missionProjection).(map[string]any)
	terminal["result"] = map[string]any{"status": "completed"}
	terminal["links"] = []any{}
	if err := contracts.ValidateOutput(contracts.ToolGetMission, terminal); err != nil {
		t.Errorf("a terminal mission is refused: %v", err)
	}

	bad := []struct {
		name   string
		mutate func(m map[string]any)
		want   string
	}{
		{"no runId", func(m map[string]any) { delete(m, "runId") }, "/runId"},
		{"unknown status", func(m map[string]any) { m["result"] = map[string]any{"status": "done"} }, "/result/status"},
		{"version string", func(m map[string]any) { m["workflow"].(map[string]any)["version"] = "4" }, "/workflow/version"},
		{"link without args", func(m map[string]any) { delete(m["links"].([]any)[0].(map[string]any), "args") }, "/links/0/args"},
	}
	for _, b := range bad {
		m := decodeArgs(t, missionProjection).(map[string]any)
		b.mutate(m)
		err := contracts.ValidateOutput(contracts.ToolGetMission, m)
		if err == nil {
			t.Errorf("%s: accepted", b.name)
			continue
		}
		ce := contracts.AsError(err)
		if len(ce.Fields) != 1 || ce.Fields[0].Pointer != b.want {
			t.Errorf("%s: field errors %v, want one at %s", b.name, ce.Fields, b.want)
		}
	}

	// The praxec error envelope links fit the link output schema.
	for _, tool := range []string{contracts.ToolPraxecQuery, contracts.ToolPraxecCommand} {
		env, _ := json.Marshal(contracts.AmbiguousIntent(tool).Envelope())
		if err := contracts.ValidateOutput(tool, decodeArgs(t, string(env))); err != nil {
			t.Errorf("%s: the AMBIGUOUS_INTENT links do not fit the output schema: %v", tool, err)
		}
	}
}

func TestValidateWithCompiledSchema(t *testing.T) {
	s, err := contracts.CompileSchema("probe", []byte(`{"type":"object","properties":{"a/b":{"type":"string"},"c~d":{"type":"string"}},"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	err = contracts.Validate(s, map[string]any{"a/b": 1.0, "c~d": 2.0}, "probe failed")
	ce := contracts.AsError(err)
	if ce.Message != "probe failed" || ce.Code != contracts.CodeInvalidParams {
		t.Errorf("error = %v", ce)
	}
	var ptrs []string
	for _, f := range ce.Fields {
		ptrs = append(ptrs, f.Pointer)
	}
	if want := []string{"/a~1b", "/c~0d"}; !slices.Equal(ptrs, want) {
		t.Errorf("pointers %v, want RFC 6901 escapes %v", ptrs, want)
	}
	if contracts.Validate(s, map[string]any{}, "x") != nil {
		t.Error("a valid value is refused")
	}
}
