package gateway

import (
	"maps"
	"slices"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/store"
)

// TestNextMoves: a refusal of the request's own arguments links its next
// moves on the caller's surface, and nothing else changes.
func TestNextMoves(t *testing.T) {
	invalid := func() *contracts.Error { return contracts.Errorf(contracts.CodeInvalidParams, "bad") }
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
		err  *contracts.Error
		rels []string
	}{
		{"praxec submit", contracts.ToolPraxecCommand, map[string]any{"workflowId": "wf_1", "transition": "x"}, invalid(), []string{"get", "home"}},
		{"praxec start", contracts.ToolPraxecCommand, map[string]any{"definitionId": "deploy_pipeline", "input": "x"}, invalid(), []string{"describe", "home"}},
		{"praxec query", contracts.ToolPraxecQuery, map[string]any{"bogus": 1}, invalid(), []string{"home"}},
		{"praxec arguments never read", contracts.ToolPraxecQuery, nil, invalid(), []string{"home"}},
		{"praxec malformed key", contracts.ToolPraxecCommand, map[string]any{"definitionId": "d"},
			contracts.CheckIdempotencyKey("short").(*contracts.Error), []string{"describe", "home", "retry_with_key"}},
		{"aura signal", contracts.ToolSignalMission, map[string]any{"runId": "run-1"}, invalid(), []string{"get", "retry"}},
		{"aura get", contracts.ToolGetMission, map[string]any{"runId": 7}, invalid(), []string{"retry"}},
		{"aura missing key", contracts.ToolSubmitIntent, map[string]any{"intent": "x"},
			contracts.CheckIdempotencyKey("").(*contracts.Error), []string{"retry", "retry_with_key"}},
		{"another code is left alone", contracts.ToolGetMission, nil, contracts.Errorf(contracts.CodeNotFound, "none"), nil},
		{"links of its own are kept", contracts.ToolPraxecQuery, nil,
			&contracts.Error{Code: contracts.CodeInvalidParams, Links: []contracts.Link{catalogue.SearchLink("x")}}, []string{"search"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool := tools[c.tool]
			before := len(c.err.Links)
			got := WithNextMoves(c.err, tool, c.args)
			if len(c.err.Links) != before {
				t.Errorf("the refusal given was changed")
			}
			var rels []string
			for _, l := range got.Links {
				rels = append(rels, l.Rel)
				if praxecTool(tool) && l.Method != contracts.ToolPraxecQuery && l.Method != contracts.ToolPraxecCommand {
					t.Errorf("link %s names %s on the praxec surface", l.Rel, l.Method)
				}
				if l.Rel == "retry" && c.err.Code == contracts.CodeInvalidParams && (l.Method != c.tool || l.InputSchema == nil) {
					t.Errorf("retry link %+v, want %s with its inputSchema", l, c.tool)
				}
				if l.Rel == "retry_with_key" && !contracts.ValidIdempotencyKey(l.Args["idempotencyKey"].(string)) {
					t.Errorf("retry_with_key proposes %v", l.Args)
				}
			}
			if !slices.Equal(rels, c.rels) {
				t.Errorf("links %v, want %v", rels, c.rels)
			}
		})
	}
}

// TestKeyRefusalLinks: a key in flight links the same request with the same
// key; a reused key reads back what the key answered, on the caller's
// surface, and offers a new key.
func TestKeyRefusalLinks(t *testing.T) {
	const key = "in-flight-key-000001"
	busy := keyInFlight(tools[contracts.ToolCreateMission], key)
	if len(busy.Links) != 1 || busy.Links[0].Method != contracts.ToolCreateMission || busy.Links[0].Args["idempotencyKey"] != key {
		t.Errorf("in flight: %+v", busy.Links)
	}
	created := store.IdempotencyRecord{Status: 201, Body: []byte(`{"runId":"run-9","workflow":{"id":"wf_9"}}`)}
	refused := store.IdempotencyRecord{Status: 409, Body: []byte(`{"error":{"code":"VERSION_CONFLICT"}}`)}
	for _, c := range []struct {
		name string
		tool string
		rec  store.IdempotencyRecord
		get  map[string]any
	}{
		{"aura", contracts.ToolCreateMission, created, map[string]any{"runId": "run-9"}},
		{"praxec", contracts.ToolPraxecCommand, created, map[string]any{"workflowId": "wf_9"}},
		{"a refusal names nothing to read", contracts.ToolCreateMission, refused, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := keyReused(tools[c.tool], c.rec)
			last := err.Links[len(err.Links)-1]
			if err.Code != contracts.CodeIdempotencyKeyReused || last.Rel != "retry_with_key" || last.Method != c.tool {
				t.Fatalf("%+v", err)
			}
			if c.get == nil {
				if len(err.Links) != 1 {
					t.Errorf("links %+v", err.Links)
				}
				return
			}
			want := contracts.ToolGetMission
			if c.tool == contracts.ToolPraxecCommand {
				want = contracts.ToolPraxecQuery
			}
			if g := err.Links[0]; g.Rel != "get" || g.Method != want || len(g.Args) != len(c.get) || g.Args[firstKey(c.get)] != c.get[firstKey(c.get)] {
				t.Errorf("get link %+v, want %s %v", g, want, c.get)
			}
		})
	}
}

func firstKey(m map[string]any) string {
	for k := range m {
		return k
	}
	return ""
}

// TestKeyExpiredLinks: the refusal of a late retry links the object its
// key's tombstone keeps, as the caller's surface reads it, and offers no
// new key; the object of an answer is what keyExpired then links.
func TestKeyExpiredLinks(t *testing.T) {
	object := keyObject(&Result{value: Projection{RunID: "run-9", Workflow: WorkflowRef{ID: "wf_9"}}})
	if object != "workflow:wf_9 run:run-9" {
		t.Fatalf("keyObject of an aura projection = %q", object)
	}
	refusal := &Result{Err: &contracts.Error{Code: contracts.CodeOutcomeUnknown, Links: []contracts.Link{
		{Rel: "deploy", Method: contracts.ToolPraxecCommand, Args: map[string]any{"workflowId": "wf_other"}},
		{Rel: "get", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": "wf_8"}}}}}
	if o := keyObject(refusal); o != "workflow:wf_8" {
		t.Errorf("keyObject of a refusal = %q, want its get link's workflow", o)
	}
	if o := keyObject(&Result{value: IntentResult{IntentID: "int_1"}}); o != "" {
		t.Errorf("keyObject of an intent = %q, want none", o)
	}
	tomb := store.IdempotencyRecord{Expired: true, Object: object}
	for _, c := range []struct {
		tool string
		rec  store.IdempotencyRecord
		get  string
		arg  map[string]any
	}{
		{contracts.ToolCreateMission, tomb, contracts.ToolGetMission, map[string]any{"runId": "run-9"}},
		{contracts.ToolPraxecCommand, tomb, contracts.ToolPraxecQuery, map[string]any{"workflowId": "wf_9"}},
		{contracts.ToolCreateMission, store.IdempotencyRecord{Expired: true, Object: "workflow:wf_9"}, "", nil},
		{contracts.ToolSubmitIntent, store.IdempotencyRecord{Expired: true}, "", nil},
	} {
		err := keyExpired(tools[c.tool], c.rec)
		if err.Code != contracts.CodeIdempotencyKeyExpired || err.Status() != 409 {
			t.Fatalf("%s: %+v", c.tool, err)
		}
		switch {
		case c.get == "" && len(err.Links) != 0:
			t.Errorf("%s, %q: links %+v, want none", c.tool, c.rec.Object, err.Links)
		case c.get != "" && (len(err.Links) != 1 || err.Links[0].Method != c.get || !maps.Equal(err.Links[0].Args, c.arg)):
			t.Errorf("%s: links %+v, want one get of %s %v", c.tool, err.Links, c.get, c.arg)
		}
	}
}
