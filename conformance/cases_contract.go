package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/restclient"
)

// openAPIPath is where a gateway serves its OpenAPI document.
const openAPIPath = "/openapi.json"

// allOperations returns every operationId of the contract's tools.
func allOperations() []string {
	var out []string
	for t := range contracts.All() {
		out = append(out, t.OperationID)
	}
	return out
}

func contractCases() []Case {
	return []Case{
		{ID: "CON-001", Group: GroupContract, Proves: "issue 7: the served OpenAPI document agrees with contracts",
			Title:      "The served OpenAPI document declares every contract operation with its method, path and scope",
			Operations: allOperations(), Run: conOpenAPIOperations},
		{ID: "CON-002", Group: GroupContract, Proves: "seeds/003 idempotency: required; DESIGN.md: the key travels in Idempotency-Key",
			Title:      "The OpenAPI document requires the Idempotency-Key header exactly on the idempotency-required operations",
			Operations: requiredOperations(), Run: conOpenAPIKeys},
		{ID: "CON-003", Group: GroupContract, Proves: "issue 7: every contract tool is in tools/list with the contract's schema; standards #87 names",
			Title:      "tools/list lists every contract tool with the contract's input and output schemas",
			Operations: allOperations(), Run: conToolsList},
		{ID: "CON-004", Group: GroupContract, Proves: "seeds/003 annotations; standards #87",
			Title:      "tools/list annotations follow the contract (read-only, destructive, idempotent, open world)",
			Operations: allOperations(), Run: conAnnotations},
		{ID: "CON-005", Group: GroupContract, Proves: "standards #19 (RFC 9728 protected resource metadata)",
			Title: "The protected resource metadata names the resource, its issuers, header-only bearer tokens and the contract's scopes",
			Run:   conResourceMetadata},
		{ID: "CON-006", Group: GroupContract, Proves: "DESIGN.md: every tool's real successful responses match its output schema",
			Title:      "Successful answers match the contract's output schemas",
			Operations: []string{"submitIntent", "praxecQuery", "getCoverage", "createMission", "getMission"}, Run: conOutputSchemas},
		{ID: "CON-007", Group: GroupContract, Proves: "seeds/003 aura_get_coverage: coverage is not a measure of production readiness",
			Title:      "aura_get_coverage lists every contract operation and says coverage is not a measure of production readiness",
			Operations: []string{"getCoverage"}, Run: conCoverage},
		{ID: "CON-008", Group: GroupContract, Proves: "seeds/003 purpose-filtered context; DESIGN.md: the principal carries its allowed compartments",
			Title:      "Memory and goal reads naming a compartment the token does not allow answer 403 compartment-forbidden",
			Operations: []string{"queryMemory", "listGoals"}, Run: conCompartments},
		{ID: "CON-009", Group: GroupContract, Proves: "seeds/003 aura_list_world_certificates and aura_get_skill",
			Title:      "World certificates answer their output schema; an unknown skill answers 404 not-found",
			Operations: []string{"listWorldCertificates", "getSkill"}, Run: conCertificatesAndSkills},
	}
}

// conCompartments reads memory and goals with a token that grants no
// compartment: the suite's tokens carry none, so any compartment named is
// one the token does not allow, and the model cannot widen it.
func conCompartments(t *T) {
	tok := t.token(TenantA)
	args := map[string]any{"compartment": "conformance-private", "purpose": "conformance-review"}
	resp := t.call(tok, contracts.ToolListGoals, args)
	t.expectProblem("aura_list_goals on an ungranted compartment", resp, http.StatusForbidden, contracts.CodeCompartmentForbidden)
	t.problemShape("aura_list_goals on an ungranted compartment", resp)
	args["query"] = "incident"
	resp = t.call(tok, contracts.ToolQueryMemory, args)
	t.expectProblem("aura_query_memory on an ungranted compartment", resp, http.StatusForbidden, contracts.CodeCompartmentForbidden)
	t.problemShape("aura_query_memory on an ungranted compartment", resp)
}

func conCertificatesAndSkills(t *T) {
	tok := t.token(TenantA)
	resp := t.call(tok, contracts.ToolListWorldCertificates, map[string]any{})
	t.expectStatus("aura_list_world_certificates", resp, http.StatusOK)
	t.validOutput(contracts.ToolListWorldCertificates, resp)
	resp = t.call(tok, contracts.ToolGetSkill, map[string]any{"skillId": "conformance-no-such-skill"})
	t.expectProblem("aura_get_skill of an unknown skill", resp, http.StatusNotFound, contracts.CodeNotFound)
	t.problemShape("aura_get_skill of an unknown skill", resp)
}

func requiredOperations() []string {
	var out []string
	for t := range contracts.All() {
		if t.Idempotency == contracts.IdempotencyRequired {
			out = append(out, t.OperationID)
		}
	}
	return out
}

// openAPIDoc is the part of an OpenAPI document the suite compares.
type openAPIDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Parameters map[string]openAPIParam `json:"parameters"`
	} `json:"components"`
}

type openAPIOperation struct {
	OperationID string                `json:"operationId"`
	Security    []map[string][]string `json:"security"`
	Parameters  []openAPIParam        `json:"parameters"`
}

type openAPIParam struct {
	Ref      string `json:"$ref"`
	Name     string `json:"name"`
	In       string `json:"in"`
	Required bool   `json:"required"`
}

func (t *T) openAPI() openAPIDoc {
	resp := t.get(openAPIPath, "")
	t.expectStatus("GET "+openAPIPath+" (without credentials)", resp, http.StatusOK)
	var doc openAPIDoc
	if err := json.Unmarshal(resp.Body, &doc); err != nil || doc.Paths == nil {
		t.Fatalf("%s is not an OpenAPI document with paths: %s", openAPIPath, snippet(resp.Body))
	}
	return doc
}

func (doc openAPIDoc) operation(tool contracts.Tool) (openAPIOperation, bool) {
	var op openAPIOperation
	raw, ok := doc.Paths[tool.Path][strings.ToLower(tool.Method)]
	if !ok || json.Unmarshal(raw, &op) != nil {
		return op, false
	}
	return op, true
}

func conOpenAPIOperations(t *T) {
	doc := t.openAPI()
	var problems []string
	for tool := range contracts.All() {
		op, ok := doc.operation(tool)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s %s (%s) is missing", tool.Method, tool.Path, tool.Name))
			continue
		}
		if op.OperationID != tool.OperationID {
			problems = append(problems, fmt.Sprintf("%s %s: operationId %q, want %q", tool.Method, tool.Path, op.OperationID, tool.OperationID))
		}
		scoped := false
		for _, req := range op.Security {
			for _, scopes := range req {
				scoped = scoped || slices.Contains(scopes, string(tool.RequiredScope))
			}
		}
		if !scoped {
			problems = append(problems, fmt.Sprintf("%s: the security requirement does not name %s", tool.OperationID, tool.RequiredScope))
		}
	}
	t.check(len(problems) == 0, "%s", strings.Join(problems, "; "))
}

func conOpenAPIKeys(t *T) {
	doc := t.openAPI()
	var problems []string
	for tool := range contracts.All() {
		op, ok := doc.operation(tool)
		if !ok {
			problems = append(problems, tool.OperationID+" is missing")
			continue
		}
		required := false
		for _, p := range op.Parameters {
			if name, found := strings.CutPrefix(p.Ref, "#/components/parameters/"); found {
				p = doc.Components.Parameters[name]
			}
			if p.In == "header" && strings.EqualFold(p.Name, "Idempotency-Key") {
				required = p.Required
			}
		}
		if want := tool.Idempotency == contracts.IdempotencyRequired; required != want {
			problems = append(problems, fmt.Sprintf("%s (idempotency %s): Idempotency-Key required=%t", tool.OperationID, tool.Idempotency, required))
		}
	}
	t.check(len(problems) == 0, "%s", strings.Join(problems, "; "))
}

// listTools reads every page of tools/list.
func (t *T) listTools(cs *mcp.ClientSession) map[string]*mcp.Tool {
	out := map[string]*mcp.Tool{}
	params := &mcp.ListToolsParams{}
	for {
		res, err := cs.ListTools(t.ctx, params)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		for _, tool := range res.Tools {
			if _, dup := out[tool.Name]; dup {
				t.Fatalf("tools/list lists %s twice", tool.Name)
			}
			out[tool.Name] = tool
		}
		if res.NextCursor == "" {
			return out
		}
		params.Cursor = res.NextCursor
	}
}

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

func conToolsList(t *T) {
	listed := t.listTools(t.session(t.token(TenantA)))
	var problems []string
	for name := range listed {
		if !toolNameRE.MatchString(name) {
			problems = append(problems, fmt.Sprintf("tool name %q is not [A-Za-z0-9_.-]{1,128}", name))
		}
	}
	for tool := range contracts.All() {
		got, ok := listed[tool.Name]
		if !ok {
			problems = append(problems, tool.Name+" is not listed")
			continue
		}
		for _, s := range []struct {
			what      string
			got       any
			want      []byte
			mandatory bool
		}{{"inputSchema", got.InputSchema, tool.InputSchema, true}, {"outputSchema", got.OutputSchema, tool.OutputSchema, true}} {
			b, _ := json.Marshal(s.got)
			if s.got == nil || !jsonEqual(b, s.want) {
				problems = append(problems, fmt.Sprintf("%s: %s differs from the contract's", tool.Name, s.what))
			}
		}
	}
	t.check(len(problems) == 0, "%s", strings.Join(problems, "; "))
}

func conAnnotations(t *T) {
	listed := t.listTools(t.session(t.token(TenantA)))
	var problems []string
	for tool := range contracts.All() {
		got, ok := listed[tool.Name]
		if !ok {
			problems = append(problems, tool.Name+" is not listed")
			continue
		}
		if got.Annotations == nil {
			problems = append(problems, tool.Name+" has no annotations")
			continue
		}
		a := got.Annotations
		// The MCP defaults: destructiveHint and openWorldHint are true
		// when absent.
		destructive, openWorld := a.DestructiveHint == nil || *a.DestructiveHint, a.OpenWorldHint == nil || *a.OpenWorldHint
		want := tool.Annotations
		if a.ReadOnlyHint != want.ReadOnlyHint || a.IdempotentHint != want.IdempotentHint || openWorld != want.OpenWorldHint ||
			(!want.ReadOnlyHint && destructive != want.DestructiveHint) {
			problems = append(problems, fmt.Sprintf("%s: readOnly=%t destructive=%t idempotent=%t openWorld=%t, want %+v",
				tool.Name, a.ReadOnlyHint, destructive, a.IdempotentHint, openWorld, want))
		}
	}
	t.check(len(problems) == 0, "%s", strings.Join(problems, "; "))
}

func conResourceMetadata(t *T) {
	resp := t.get("/.well-known/oauth-protected-resource", "")
	t.expectStatus("protected resource metadata", resp, http.StatusOK)
	var meta restclient.ResourceMetadata
	if err := json.Unmarshal(resp.Body, &meta); err != nil {
		t.Fatalf("the metadata is not JSON: %s", snippet(resp.Body))
	}
	u, err := url.Parse(meta.Resource)
	t.check(err == nil && u.IsAbs() && u.Fragment == "" && u.Host != "", "resource %q is not an absolute URL without fragment", meta.Resource)
	t.check(len(meta.AuthorizationServers) > 0, "authorization_servers is empty")
	t.check(slices.Equal(meta.BearerMethodsSupported, []string{"header"}), "bearer_methods_supported = %q, want [header]", meta.BearerMethodsSupported)
	var missing []string
	for tool := range contracts.All() {
		if s := string(tool.RequiredScope); !slices.Contains(meta.ScopesSupported, s) && !slices.Contains(missing, s) {
			missing = append(missing, s)
		}
	}
	t.check(len(missing) == 0, "scopes_supported lacks %q", missing)
	// RFC 9728 §3.1: the metadata of a resource lives at its host, the
	// well-known prefix inserted before the resource's path; challenges
	// point there.
	want := u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + strings.TrimRight(u.Path, "/")
	c := t.expectChallenge("a request without credentials", t.get(missionPath(randomID("run")), ""), "", "")
	t.check(c.params["resource_metadata"] == want, "the challenge's resource_metadata is %q, want %q (derived from resource %q)",
		c.params["resource_metadata"], want, meta.Resource)
}

// validOutput fails unless resp is a success whose body matches tool's
// output schema.
func (t *T) validOutput(tool string, resp *response) map[string]any {
	m := t.object(resp)
	if err := contracts.ValidateOutput(tool, m); err != nil {
		t.Fatalf("%s: the answer does not match the output schema: %v %s", tool, err, fieldErrors(err))
	}
	return m
}

func fieldErrors(err error) string {
	ce := contracts.AsError(err)
	var parts []string
	for _, f := range ce.Fields {
		parts = append(parts, f.Pointer+" "+f.Detail)
	}
	return strings.Join(parts, ", ")
}

func conOutputSchemas(t *T) {
	tok := t.token(TenantA)
	resp, _ := t.submitIntent(tok, newKey(), intentBody())
	t.validOutput(contracts.ToolSubmitIntent, resp)

	resp = t.call(tok, contracts.ToolPraxecQuery, map[string]any{})
	t.expectStatus("praxec.query home", resp, http.StatusOK)
	t.validOutput(contracts.ToolPraxecQuery, resp)

	resp = t.call(tok, contracts.ToolGetCoverage, map[string]any{})
	t.expectStatus("aura_get_coverage", resp, http.StatusOK)
	t.validOutput(contracts.ToolGetCoverage, resp)

	if !t.deployAvailable() {
		return // the mission answers are checked where a workflow exists
	}
	resp, m := t.createMission(tok)
	t.validOutput(contracts.ToolCreateMission, resp)
	resp = t.call(tok, contracts.ToolGetMission, map[string]any{"runId": runID(m)})
	t.expectStatus("aura_get_mission", resp, http.StatusOK)
	t.validOutput(contracts.ToolGetMission, resp)
}

func conCoverage(t *T) {
	resp := t.call(t.token(TenantA), contracts.ToolGetCoverage, map[string]any{})
	t.expectStatus("aura_get_coverage", resp, http.StatusOK)
	m := t.validOutput(contracts.ToolGetCoverage, resp)
	statement, _ := m["statement"].(string)
	t.check(strings.Contains(strings.ToLower(statement), "not a measure of production readiness"),
		"the statement %q does not say that coverage is not a measure of production readiness", statement)
	listed := map[string]bool{}
	ops, _ := m["operations"].([]any)
	for _, o := range ops {
		if om, ok := o.(map[string]any); ok {
			id, _ := om["operationId"].(string)
			listed[id] = true
		}
	}
	var missing []string
	for _, op := range allOperations() {
		if !listed[op] {
			missing = append(missing, op)
		}
	}
	t.check(len(missing) == 0, "the coverage lists no entry for %q", missing)
}
