package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// TestServeExpiresIdleRuns: praxa serve runs the run sweeper on
// proxy.runRetention and counts what it expires on /metrics. A
// proxy_default run idle for an hour (written straight into the data
// directory's store) moves to expired without any request, with its
// workflow.expired event; a run of another workflow as old stays.
func TestServeExpiresIdleRuns(t *testing.T) {
	s := startSwept(t, "proxy: {runRetention: 2s}\n")
	st := s.store(t)
	ctx := context.Background()
	past := time.Now().Add(-time.Hour)
	doc := []byte(`{"context":{},"input":{"capability":"x"},"evidence":[]}`)
	idle := store.Mission{Tenant: devTenant, ID: "wf_idle", RunID: "wf_idle", DefinitionID: "proxy_default", DefinitionVersion: 1,
		State: "running", Version: 2, Status: "active", Doc: doc, CreatedAt: past, UpdatedAt: past}
	other := idle
	other.ID, other.RunID, other.DefinitionID, other.State = "wf_other", "wf_other", "deploy_pipeline", "lint"
	err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertMission(ctx, idle); err != nil {
			return err
		}
		return tx.InsertMission(ctx, other)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.waitMetric(t, "praxa_runs_expired_total", "1")
	err = st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		m, err := tx.GetMission(ctx, devTenant, "wf_idle")
		if err != nil || m.State != "expired" || m.Status != "expired" || m.Version != 3 {
			t.Errorf("the idle run: %+v, %v; want it expired at version 3", m, err)
			return nil
		}
		var doc struct {
			Context map[string]map[string]any `json:"context"`
		}
		if err := json.Unmarshal(m.Doc, &doc); err != nil {
			return err
		}
		trace, _ := doc.Context["expired"]["traceId"].(string)
		evs, err := tx.TraceEvents(ctx, devTenant, trace, 10)
		if err != nil || len(evs) != 1 || evs[0].Type != "workflow.expired" || evs[0].WorkflowID != "wf_idle" || evs[0].Subject != "run-sweeper" {
			t.Errorf("the trace of the expiry (%q): %+v, %v", trace, evs, err)
		}
		if m, err := tx.GetMission(ctx, devTenant, "wf_other"); err != nil || m.State != "lint" || m.Status != "active" {
			t.Errorf("the other workflow's mission: %+v, %v; want it untouched", m, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
