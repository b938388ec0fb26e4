package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// sweptServe is a praxa serve --dev started in process on a configuration
// of its own, for the tests of its background sweepers.
type sweptServe struct {
	app     *app
	dataDir string
}

// startSwept starts praxa serve --dev with the configuration yaml on a new
// data directory, and stops it when t ends.
func startSwept(t *testing.T, yaml string) *sweptServe {
	t.Helper()
	dataDir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := serveInProcess(t, serveFlags{dataDir: dataDir, config: cfgPath, dev: true, tools: contracts.SetAll})
	return &sweptServe{app: s.app, dataDir: dataDir}
}

// store opens the data directory's store beside the running gateway (a
// second handle on the same SQLite file), closed when t ends.
func (s *sweptServe) store(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), dataPath(s.dataDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// waitMetric waits, at most 10 s, until the counter name on /metrics
// reads want.
func (s *sweptServe) waitMetric(t *testing.T, name, want string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`)
	var got string
	if !gatewaytest.Poll(10*time.Second, func() bool {
		body := gatewaytest.NewClient(s.app.url, nil).Get(t, "/metrics").Body
		m := re.FindSubmatch(body)
		if m == nil {
			t.Fatalf("/metrics has no %s:\n%s", name, body)
		}
		got = string(m[1])
		return got == want
	}) {
		t.Fatalf("%s is %s after 10s, want %s", name, got, want)
	}
}
