package gateway

import (
	"context"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/store"
)

// IntentResult is the answer of aura_submit_intent.
type IntentResult struct {
	IntentID   string           `json:"intentId"`
	Status     string           `json:"status"`
	TraceID    string           `json:"traceId"`
	Candidates []Candidate      `json:"candidates"`
	Links      []contracts.Link `json:"links"`
}

// Candidate is a workflow that may fulfil an intent.
type Candidate struct {
	DefinitionID string           `json:"definitionId"`
	Title        string           `json:"title"`
	Description  string           `json:"description,omitempty"`
	Score        float64          `json:"score"`
	Links        []contracts.Link `json:"links"`
}

// submitIntent records an intent durably. It acts on nothing: the answer
// lists the configured workflows that could fulfil it, best first, each with
// a link that creates the mission, and a link to read the trace.
func (ms *missions) submitIntent(ctx context.Context, tx store.Tx, e *env) (any, error) {
	in := store.Intent{
		ID:        newID("int"),
		Tenant:    e.Principal.Tenant,
		Subject:   e.Principal.Subject,
		Text:      stringArg(e.Args, "intent"),
		Tags:      stringsArg(e.Args, "tags"),
		TraceID:   e.TraceID,
		CreatedAt: e.Now,
	}
	if err := tx.InsertIntent(ctx, in); err != nil {
		return nil, err
	}
	// The intent's text may hold personal data: the event names the intent,
	// it does not copy it.
	e.Event("intent.submitted", map[string]any{"intentId": in.ID, "tags": in.Tags})
	cands := ms.candidates(in.Text)
	for i := range cands {
		cands[i].Links = []contracts.Link{{Rel: "create_mission", Title: "Create a mission with " + cands[i].Title,
			Method: contracts.ToolCreateMission,
			Args:   map[string]any{"goal": in.Text, "definitionId": cands[i].DefinitionID, "idempotencyKey": NewIdempotencyKey()}}}
	}
	if cands == nil {
		cands = []Candidate{}
	}
	return IntentResult{
		IntentID:   in.ID,
		Status:     "recorded",
		TraceID:    e.TraceID,
		Candidates: cands,
		Links: []contracts.Link{{
			Rel: "trace", Title: "Read the audit trace of this intent", Method: contracts.ToolGetTrace,
			Args: map[string]any{"traceId": e.TraceID},
		}},
	}, nil
}
