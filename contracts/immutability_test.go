package contracts_test

import (
	"encoding/json"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// contractSnapshot renders everything the package hands out, so a test can
// prove that changing what a caller received changed nothing inside.
func contractSnapshot(t *testing.T) string {
	t.Helper()
	tools, err := contracts.MarshalToolList(contracts.Tools())
	if err != nil {
		t.Fatal(err)
	}
	var errs [][]contracts.Code
	for _, tool := range contracts.Tools() {
		errs = append(errs, tool.Errors, tool.ErrorCodes())
	}
	for _, e := range contracts.OperatorEndpoints() {
		errs = append(errs, e.Errors, e.ErrorCodes())
	}
	b, err := json.Marshal(map[string]any{
		"tools":     string(tools),
		"endpoints": contracts.OperatorEndpoints(),
		"names":     contracts.Names(),
		"errors":    errs,
		"toolSets":  contracts.ToolSets(),
		"query":     contracts.DispatchTable(contracts.ToolPraxecQuery),
		"command":   contracts.DispatchTable(contracts.ToolPraxecCommand),
		"ambQ":      contracts.AmbiguousIntent(contracts.ToolPraxecQuery).Envelope(),
		"ambC":      contracts.AmbiguousIntent(contracts.ToolPraxecCommand).Envelope(),
		"codes":     contracts.Codes(),
		"scopes":    contracts.Scopes(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// scribble overwrites every byte of b in place.
func scribble(b []byte) {
	for i := range b {
		b[i] = 'X'
	}
}

// mutateOperation scribbles over the schemas and the error list an
// operation (a tool or an endpoint) was handed out with.
func mutateOperation(input, output json.RawMessage, errs *[]contracts.Code) {
	scribble(input)
	scribble(output)
	for i := range *errs {
		(*errs)[i] = "zzz"
	}
	if len(*errs) > 0 {
		*errs = append((*errs)[:0], "yyy")
	}
}

func mutateTool(tool *contracts.Tool) {
	mutateOperation(tool.InputSchema, tool.OutputSchema, &tool.Errors)
	tool.Name = "mutated"
	tool.RequiredScope = "admin"
	tool.Annotations.DestructiveHint = !tool.Annotations.DestructiveHint
}

func mutateEndpoint(e *contracts.Endpoint) {
	mutateOperation(e.InputSchema, e.OutputSchema, &e.Errors)
	e.OperationID = "mutated"
	e.Path = "/mutated"
	e.RequiredScope = "admin"
	e.BodyOptional = !e.BodyOptional
}

func mutateRow(r *contracts.DispatchRow) {
	for _, s := range [][]string{r.Keys, r.Optional, r.Modifiers} {
		for i := range s {
			s[i] = "zzz"
		}
	}
	r.Scope = "admin"
}

func mutateLinks(links []contracts.Link) {
	for i := range links {
		scribble(links[i].InputSchema)
		for k, v := range links[i].Args {
			if m, ok := v.(map[string]any); ok {
				m["definition_short"] = "mutated"
				m["extra"] = true
			}
			links[i].Args[k] = "mutated"
		}
		links[i].Args["zzz"] = 1
		links[i].Rel = "mutated"
	}
}

func TestAccessorsReturnDetachedCopies(t *testing.T) {
	before := contractSnapshot(t)

	tools := contracts.Tools()
	for i := range tools {
		mutateTool(&tools[i])
	}
	tools[0] = contracts.Tool{}

	for tool := range contracts.All() {
		mutateTool(&tool)
	}
	for _, name := range contracts.Names() {
		tool, _ := contracts.Lookup(name)
		clone := tool.Clone()
		mutateTool(&tool)
		mutateTool(&clone)
		byOp, _ := contracts.ByOperationID(clone.OperationID)
		mutateTool(&byOp)
		codes := tool.ErrorCodes()
		for i := range codes {
			codes[i] = "zzz"
		}
	}
	names := contracts.Names()
	names[0] = "mutated"

	eps := contracts.OperatorEndpoints()
	for i := range eps {
		id := eps[i].OperationID
		mutateEndpoint(&eps[i])
		e, _ := contracts.LookupEndpoint(id)
		clone := e.Clone()
		mutateEndpoint(&e)
		mutateEndpoint(&clone)
		codes := e.ErrorCodes()
		for i := range codes {
			codes[i] = "zzz"
		}
	}
	eps[0] = contracts.Endpoint{}
	for e := range contracts.AllEndpoints() {
		mutateEndpoint(&e)
	}

	for _, s := range contracts.ToolSets() {
		s.Tools[0] = "mutated"
		s.Fingerprint = "mutated"
		set, _ := contracts.LookupToolSet(s.Name)
		for i := range set.Tools {
			set.Tools[i] = "mutated"
		}
	}

	for _, tool := range []string{contracts.ToolPraxecQuery, contracts.ToolPraxecCommand} {
		rows := contracts.DispatchTable(tool)
		for i := range rows {
			mutateRow(&rows[i])
		}
		d, err := contracts.Classify(tool, map[string]any{})
		if err == nil {
			mutateRow(&d.Row)
		}
		amb := contracts.AmbiguousIntent(tool)
		env := amb.Envelope()
		mutateLinks(env.Links)
		mutateLinks(amb.Links)
		amb.Links[0] = contracts.Link{}
	}
	if d, err := contracts.Classify(contracts.ToolPraxecCommand, map[string]any{"definitionId": "d"}); err == nil {
		mutateRow(&d.Row)
	}
	if _, err := contracts.Classify(contracts.ToolPraxecCommand, map[string]any{"definitionId": "d", "workflowId": "w"}); err != nil {
		mutateLinks(contracts.AsError(err).Links)
	}

	codes := contracts.Codes()
	for i := range codes {
		codes[i].Status = 0
		codes[i].Title = "mutated"
	}
	scopes := contracts.Scopes()
	scopes[0] = "mutated"

	if after := contractSnapshot(t); after != before {
		t.Fatalf("changing returned values changed the contract:\nbefore %s\nafter  %s", before, after)
	}

	// The schemas still compile and validate after the scribbling.
	if err := contracts.ValidateInput(contracts.ToolGetMission, map[string]any{"runId": "r-1"}); err != nil {
		t.Errorf("aura_get_mission no longer validates: %v", err)
	}
	if err := contracts.ValidateEndpointInput(contracts.EndpointApproveApproval, map[string]any{"approvalId": "ap-1"}); err != nil {
		t.Errorf("approveApproval no longer validates: %v", err)
	}
}

func TestEnvelopeDetachesLinksAndFields(t *testing.T) {
	e := &contracts.Error{
		Code:    contracts.CodeInvalidParams,
		Message: "bad",
		Links:   []contracts.Link{{Rel: "home", Method: contracts.ToolPraxecQuery, Args: map[string]any{"nested": map[string]any{"a": 1.0}}, InputSchema: json.RawMessage(`{"type":"object"}`)}},
		Fields:  []contracts.FieldError{{Pointer: "/a", Detail: "is required"}},
	}
	env := e.Envelope()
	mutateLinks(env.Links)
	env.Fields[0].Pointer = "/mutated"
	if e.Links[0].Rel != "home" || e.Links[0].Args["nested"].(map[string]any)["a"] != 1.0 || string(e.Links[0].InputSchema) != `{"type":"object"}` {
		t.Errorf("Envelope shares links with the error: %+v", e.Links[0])
	}
	if e.Fields[0].Pointer != "/a" {
		t.Error("Envelope shares field errors with the error")
	}
	if got := (&contracts.Error{Code: contracts.CodeInternal}).Envelope().Links; got == nil || len(got) != 0 {
		t.Errorf("Envelope().Links = %#v, want an empty, non-nil slice", got)
	}
}
