package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// TestServeExpiresIdleRuns: praxa serve runs the run sweeper on
// proxy.runRetention and counts what it expires on /metrics. A
// proxy_default run idle for an hour (written straight into the data
// directory's store) moves to expired without any request, with its
// workflow.expired event; a run of another workflow as old stays.
func TestServeExpiresIdleRuns(t *testing.T) {
	dataDir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	if err := os.WriteFile(cfgPath, []byte("proxy: {runRetention: 2s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	env := &environment{stdin: strings.NewReader(""), stdout: &log, stderr: &log, getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app, err := startGateway(ctx, env, serveFlags{addr: "127.0.0.1:0", dataDir: dataDir, config: cfgPath, dev: true, tools: contracts.SetAll})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.close() })

	st, err := sqlitestore.Open(ctx, dataPath(dataDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	doc := []byte(`{"context":{},"input":{"capability":"x"},"evidence":[]}`)
	idle := store.Mission{Tenant: devTenant, ID: "wf_idle", RunID: "wf_idle", DefinitionID: "proxy_default", DefinitionVersion: 1,
		State: "running", Version: 2, Status: "active", Doc: doc, CreatedAt: past, UpdatedAt: past}
	other := idle
	other.ID, other.RunID, other.DefinitionID, other.State = "wf_other", "wf_other", "deploy_pipeline", "lint"
	err = st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertMission(ctx, idle); err != nil {
			return err
		}
		return tx.InsertMission(ctx, other)
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	expired := regexp.MustCompile(`(?m)^praxa_runs_expired_total (\S+)$`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get(app.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := expired.FindSubmatch(body)
		if m == nil {
			t.Fatalf("/metrics has no praxa_runs_expired_total:\n%s", body)
		}
		if string(m[1]) == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run sweeper expired nothing in 10s (praxa_runs_expired_total %s)", m[1])
		}
		time.Sleep(200 * time.Millisecond)
	}
	st, err = sqlitestore.Open(ctx, dataPath(dataDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
