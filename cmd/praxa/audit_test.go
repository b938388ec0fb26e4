package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// exportLines runs praxa audit export with args and decodes its lines.
func exportLines(t *testing.T, args ...string) []audit.SinkLine {
	t.Helper()
	code, stdout, stderr := runCommand(t, append([]string{"audit", "export"}, args...)...)
	if code != 0 {
		t.Fatalf("praxa audit export %v: %d %s", args, code, stderr)
	}
	var out []audit.SinkLine
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var l audit.SinkLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// TestAuditExportAndRetention: praxa audit export prints a gateway's
// audit events as JSON lines, filtered by run, type, tenant and time, in
// append order; a gateway started with audit.retention deletes the events
// older than it; bad filters are usage errors.
func TestAuditExportAndRetention(t *testing.T) {
	dataDir := t.TempDir()
	a := serveInProcess(t, serveFlags{dataDir: dataDir, dev: true, tools: contracts.SetAll})
	tok := devToken(t, a.log)
	for _, run := range []string{"audit-1", "audit-2"} {
		if code := createMission(t, a.url, tok, run, run); code != 201 {
			t.Fatalf("create mission %s: %d", run, code)
		}
	}
	if err := a.stop(); err != nil { // flushes the audit batches
		t.Fatal(err)
	}

	all := exportLines(t, "--data-dir", dataDir)
	run1 := exportLines(t, "--data-dir", dataDir, "--run", "audit-1")
	if len(run1) == 0 || len(all) <= len(run1) {
		t.Fatalf("%d events in all, %d of run audit-1", len(all), len(run1))
	}
	for i, l := range run1 {
		if l.RunID != "audit-1" || l.Tenant != devTenant || l.Seq == 0 || (i > 0 && l.Seq <= run1[i-1].Seq) {
			t.Errorf("line %d of run audit-1: %+v", i, l)
		}
	}
	typ := run1[0].Type
	for _, l := range exportLines(t, "--data-dir", dataDir, "--type", typ+",no.such.type", "--tenant", devTenant) {
		if l.Type != typ {
			t.Errorf("--type %s exported a %s", typ, l.Type)
		}
	}
	if got := exportLines(t, "--data-dir", dataDir, "--since", "1h", "--limit", "1"); len(got) != 1 {
		t.Errorf("--since 1h --limit 1: %d lines", len(got))
	}
	if got := exportLines(t, "--data-dir", dataDir, "--until", "2000-01-01T00:00:00Z"); len(got) != 0 {
		t.Errorf("--until 2000: %d lines", len(got))
	}
	subj, tool := run1[0].Subject, run1[0].Tool
	if got := exportLines(t, "--data-dir", dataDir, "--subject", subj, "--outcome", "allowed", "--capability", tool); len(got) == 0 {
		t.Errorf("--subject %s --outcome allowed --capability %s: no lines", subj, tool)
	}
	for _, f := range [][]string{{"--subject", "nobody"}, {"--outcome", "failed"}, {"--capability", "no.such.capability"}} {
		if got := exportLines(t, append([]string{"--data-dir", dataDir}, f...)...); len(got) != 0 {
			t.Errorf("%v: %d lines", f, len(got))
		}
	}
	if got := exportLines(t, "--data-dir", dataDir, "--tenant", "nobody"); len(got) != 0 {
		t.Errorf("--tenant nobody: %d lines", len(got))
	}
	for _, bad := range [][]string{{"--since", "yesterday"}, {"--limit", "-1"}, {"stray"}} {
		if code, _, stderr := runCommand(t, append([]string{"audit", "export", "--data-dir", dataDir}, bad...)...); code != 2 || stderr == "" {
			t.Errorf("audit export %v: %d %s", bad, code, stderr)
		}
	}

	// A gateway with a retention shorter than the events' age deletes
	// them at start.
	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	if err := os.WriteFile(cfgPath, []byte("version: \"1\"\naudit:\n  retention: 1ms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := serveInProcess(t, serveFlags{dataDir: dataDir, config: cfgPath, dev: true, tools: contracts.SetAll})
	log := b.log
	// The sweep runs at start, in the background: look until it is done
	// (bounded), then stop the gateway.
	left := -1
	gatewaytest.Poll(5*time.Second, func() bool {
		left = len(exportLines(t, "--data-dir", dataDir, "--run", "audit-1"))
		return left == 0
	})
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("after the retention, run audit-1 still has %d events; the gateway's log:\n%s", left, log.String())
	}
}
