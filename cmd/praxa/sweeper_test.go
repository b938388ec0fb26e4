package main

import (
	"bytes"
	"context"
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

// TestServeSweepsExpiredLeases: praxa serve runs the lease sweeper on the
// configured TTL and counts its resolutions on /metrics. A start lease left
// by a gateway that stopped mid-call (written straight into the data
// directory's store, past its deadline) is resolved without any request.
func TestServeSweepsExpiredLeases(t *testing.T) {
	dataDir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	if err := os.WriteFile(cfgPath, []byte("server: {leaseTTL: 2s}\n"), 0o600); err != nil {
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
	past := time.Now().Add(-time.Minute)
	err = st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertStartLease(ctx, store.StartLease{Tenant: devTenant, Ref: "run:run-stranded", DefinitionID: "deploy_pipeline",
			Fingerprint: "fp", Owner: "gw_stopped/st_1", CreatedAt: past, Deadline: past.Add(time.Second)})
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	swept := regexp.MustCompile(`(?m)^praxa_leases_swept_total (\S+)$`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get(app.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := swept.FindSubmatch(body)
		if m == nil {
			t.Fatalf("/metrics has no praxa_leases_swept_total:\n%s", body)
		}
		if string(m[1]) == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweeper resolved nothing in 10s (praxa_leases_swept_total %s)", m[1])
		}
		time.Sleep(200 * time.Millisecond)
	}
	st, err = sqlitestore.Open(ctx, dataPath(dataDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		l, err := tx.GetStartLease(ctx, devTenant, "run:run-stranded")
		if err != nil || l.Status != http.StatusGatewayTimeout {
			t.Errorf("the stranded start lease: %+v, %v; want it resolved as 504", l, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
