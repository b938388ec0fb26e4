package knowledge

import (
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/op"
)

// TestContextRefusalLinks: a read the token's compartments and purposes
// claims do not allow links the same read where they do, and where to ask
// for a token that allows more; never links: [].
func TestContextRefusalLinks(t *testing.T) {
	p := &auth.Principal{Tenant: "acme", Compartments: []string{"payments"}, Purposes: []string{"incident-review"}}
	for _, tc := range []struct {
		compartment, purpose string
		want                 contracts.Code
	}{
		{"payments", "marketing", contracts.CodePurposeForbidden},
		{"hr", "incident-review", contracts.CodeCompartmentForbidden},
	} {
		args := map[string]any{"compartment": tc.compartment, "purpose": tc.purpose, "query": "x"}
		ce := contextScope(p, contracts.ToolQueryMemory, args)
		if ce == nil || ce.Code != tc.want || len(ce.Links) != 2 {
			t.Fatalf("%s/%s: %+v, want %s with two links", tc.compartment, tc.purpose, ce, tc.want)
		}
		if r := ce.Links[0]; r.Rel != "retry" || r.Method != contracts.ToolQueryMemory || r.Args["compartment"] != "payments" ||
			r.Args["purpose"] != "incident-review" || r.Args["query"] != "x" || contextScope(p, r.Method, r.Args) != nil {
			t.Errorf("retry link %+v", r)
		}
		if a := ce.Links[1]; a.Rel != "authorization" || a.Method != "GET "+op.ResourceMetadataPath {
			t.Errorf("authorization link %+v", a)
		}
	}
	if ce := contextScope(&auth.Principal{Tenant: "acme"}, contracts.ToolListGoals, map[string]any{"compartment": "a", "purpose": "b"}); ce == nil ||
		len(ce.Links) != 1 || ce.Links[0].Rel != "authorization" {
		t.Errorf("a token that allows nothing: %+v, want the authorization link alone", ce)
	}
}
