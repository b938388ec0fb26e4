package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// Coverage evidence is what a conformance run found, recorded through the
// operator endpoint (RecordCoverageRun) and served by aura_get_coverage.
// The gateway knows no conformance case itself: which cases cover which
// operation comes from the recorded reports, so any suite that speaks the
// report format can supply it.
//
// Each recording is merged with the previous one: a case the new report
// ran takes its new result; a case it did not run (a run restricted to a
// group, say) keeps the result and time of the run that last ran it. The
// latest stored run therefore holds the last recorded result of every case.

// CoverageRunInfo describes the last recorded run.
type CoverageRunInfo struct {
	RunID        string `json:"runId"`
	RecordedAt   string `json:"recordedAt"`
	Suite        string `json:"suite,omitempty"`
	SuiteVersion string `json:"suiteVersion,omitempty"`
	StartedAt    string `json:"startedAt,omitempty"`
	FinishedAt   string `json:"finishedAt,omitempty"`
	Passed       int    `json:"passed"`
	Failed       int    `json:"failed"`
	Skipped      int    `json:"skipped"`
}

// CaseCoverage is one case's last recorded result.
type CaseCoverage struct {
	ID     string `json:"id"`
	Title  string `json:"title,omitempty"`
	Group  string `json:"group,omitempty"`
	Proves string `json:"proves,omitempty"`
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
	At     string `json:"at"`
	RunID  string `json:"runId,omitempty"`
}

// OperationCoverage lists the cases that exercise one operation.
type OperationCoverage struct {
	OperationID string         `json:"operationId"`
	Tool        string         `json:"tool,omitempty"`
	Cases       []CaseCoverage `json:"cases"`
}

// Coverage is the answer of aura_get_coverage.
type Coverage struct {
	Statement  string              `json:"statement"`
	Run        *CoverageRunInfo    `json:"run,omitempty"`
	Operations []OperationCoverage `json:"operations"`
}

// CoverageRecorded is the answer of recording a run.
type CoverageRecorded struct {
	RunID      string `json:"runId"`
	RecordedAt string `json:"recordedAt"`
	Passed     int    `json:"passed"`
	Failed     int    `json:"failed"`
	Skipped    int    `json:"skipped"`
}

// coverageReport is a report as posted (the input schema of the recordCoverageRun endpoint in contracts).
type coverageReport struct {
	Suite        string           `json:"suite"`
	SuiteVersion string           `json:"suiteVersion"`
	Target       string           `json:"target"`
	StartedAt    string           `json:"startedAt"`
	FinishedAt   string           `json:"finishedAt"`
	Results      []coverageResult `json:"results"`
}

type coverageResult struct {
	ID         string   `json:"id"`
	Title      string   `json:"title,omitempty"`
	Group      string   `json:"group,omitempty"`
	Proves     string   `json:"proves,omitempty"`
	Operations []string `json:"operations,omitempty"`
	Result     string   `json:"result"`
	Reason     string   `json:"reason,omitempty"`
	At         string   `json:"at"`
	RunID      string   `json:"runId"`
}

// coverageDoc is what the store keeps of a run (store.CoverageRun.Doc).
type coverageDoc struct {
	Run     CoverageRunInfo  `json:"run"`
	Target  string           `json:"target,omitempty"`
	Results []coverageResult `json:"results"`
}

// RecordCoverageRun stores a conformance run's report as coverage evidence
// (scope coverage:write), merged with the last recorded run. The scope is
// checked before load reads the body; the recording and its audit event
// commit together.
func (k *Knowledge) RecordCoverageRun(ctx context.Context, p *auth.Principal, load func() (map[string]any, error), requestID, traceID string) (CoverageRecorded, error) {
	if err := op.RequireScope(p, contracts.ScopeCoverageWrite); err != nil {
		return CoverageRecorded{}, err
	}
	args, err := load()
	if err != nil {
		return CoverageRecorded{}, contracts.AsError(err)
	}
	if err := contracts.ValidateCoverageRun(args); err != nil {
		return CoverageRecorded{}, err
	}
	var rep coverageReport
	if b, err := json.Marshal(args); err != nil || json.Unmarshal(b, &rep) != nil {
		return CoverageRecorded{}, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the report could not be read"}
	}
	now := k.now().UTC()
	id := ids.New("cov")
	doc := coverageDoc{
		Run: CoverageRunInfo{RunID: id, RecordedAt: now.Format(time.RFC3339Nano), Suite: rep.Suite, SuiteVersion: rep.SuiteVersion,
			StartedAt: rep.StartedAt, FinishedAt: rep.FinishedAt},
		Target: rep.Target,
	}
	ran := map[string]bool{}
	for _, r := range rep.Results {
		if ran[r.ID] {
			return CoverageRecorded{}, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the report names case " + r.ID + " twice",
				Fields: []contracts.FieldError{{Pointer: "/results", Keyword: "uniqueItems", Detail: "must name each case once"}}}
		}
		ran[r.ID] = true
		if r.At == "" {
			r.At = rep.FinishedAt
		}
		r.RunID = id
		switch r.Result {
		case contracts.CoveragePass:
			doc.Run.Passed++
		case contracts.CoverageFail:
			doc.Run.Failed++
		default:
			doc.Run.Skipped++
		}
		doc.Results = append(doc.Results, r)
	}
	out := CoverageRecorded{RunID: id, RecordedAt: doc.Run.RecordedAt, Passed: doc.Run.Passed, Failed: doc.Run.Failed, Skipped: doc.Run.Skipped}
	by := op.Actor{Principal: p, Tool: "coverage", Operation: contracts.OperationRecordCoverageRun}
	err = k.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		merged := doc
		prev, err := tx.LatestCoverageRun(ctx)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		default:
			var old coverageDoc
			if err := json.Unmarshal(prev.Doc, &old); err != nil {
				return err
			}
			for _, r := range old.Results {
				if !ran[r.ID] {
					merged.Results = append(slices.Clip(merged.Results), r)
				}
			}
		}
		b, err := op.Marshal(merged)
		if err != nil {
			return err
		}
		if err := tx.PutCoverageRun(ctx, store.CoverageRun{ID: id, Tenant: p.Tenant, Subject: p.Subject, RecordedAt: now, Doc: b}); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, []store.Event{op.EventSpec{Actor: by, Type: "coverage.recorded", Outcome: "allowed",
			RequestID: requestID, TraceID: traceID, At: now,
			Attributes: map[string]any{"coverageRunId": id, "suite": rep.Suite, "passed": out.Passed, "failed": out.Failed, "skipped": out.Skipped}}.Build()})
	})
	if err != nil {
		return CoverageRecorded{}, op.AsError(err)
	}
	return out, nil
}

// getCoverage serves aura_get_coverage: every operation of the contract, in
// the contract's order, then any other operation a recorded case names,
// each with the cases that exercise it; a case's result and time are those
// of the last recorded run that ran it.
func (k *Knowledge) getCoverage(ctx context.Context, tx store.ReadTx, e *op.Request) (any, error) {
	only := op.StringArg(e.Args, "operationId")
	out := Coverage{Statement: contracts.CoverageStatement, Operations: []OperationCoverage{}}
	var doc coverageDoc
	switch run, err := tx.LatestCoverageRun(ctx); {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(run.Doc, &doc); err != nil {
			return nil, err
		}
		out.Run = &doc.Run
	}
	byOp := map[string][]CaseCoverage{}
	var extra []string
	for _, r := range doc.Results {
		for _, op := range r.Operations {
			if _, isTool := contracts.ByOperationID(op); !isTool && byOp[op] == nil {
				extra = append(extra, op)
			}
			byOp[op] = append(byOp[op], CaseCoverage{ID: r.ID, Title: r.Title, Group: r.Group, Proves: r.Proves,
				Result: r.Result, Reason: r.Reason, At: r.At, RunID: r.RunID})
		}
	}
	slices.Sort(extra)
	add := func(op, tool string) {
		if only != "" && op != only {
			return
		}
		cases := byOp[op]
		if cases == nil {
			cases = []CaseCoverage{}
		}
		slices.SortFunc(cases, func(a, b CaseCoverage) int { return strings.Compare(a.ID, b.ID) })
		out.Operations = append(out.Operations, OperationCoverage{OperationID: op, Tool: tool, Cases: cases})
	}
	for t := range contracts.All() {
		add(t.OperationID, t.Name)
	}
	for _, op := range extra {
		add(op, "")
	}
	if only != "" && len(out.Operations) == 0 {
		return nil, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "there is no operation " + only + " in the contract or the recorded coverage",
			Hint:   "Leave operationId out to list every operation.",
			Fields: []contracts.FieldError{{Pointer: "/operationId", Detail: "names no known operation"}}}
	}
	e.Event("coverage.read", map[string]any{"operationId": only})
	return out, nil
}
