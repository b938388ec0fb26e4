package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// createMission starts a deploy_pipeline mission with runId over REST,
// under the idempotency key backup-drill-key-KEY, and reports the status.
func createMission(t *testing.T, base, tok, runID, key string) int {
	t.Helper()
	body := fmt.Sprintf(`{"goal":"backup drill","definitionId":"deploy_pipeline","runId":%q}`, runID)
	r, err := gatewaytest.NewClient(base, nil).Send(http.MethodPost, "/v8/missions", body,
		gatewaytest.Bearer(tok), gatewaytest.IdempotencyKey("backup-drill-key-"+key))
	if err != nil {
		t.Errorf("POST /v8/missions %s: %v", runID, err)
		return 0
	}
	return r.Status
}

func missionStatus(t *testing.T, base, tok, runID string) int {
	t.Helper()
	return gatewaytest.NewClient(base, nil).Get(t, "/v8/missions/"+runID, gatewaytest.Bearer(tok)).Status
}

// TestBackupRestoreDrill is the drill docs/deploy.md describes: praxa
// backup while praxa serve serves and writes, praxa restore into the data
// directory of a stopped (here: new) gateway, and that gateway serves every
// mission acknowledged before the backup began. A restore onto a store in
// use, and a backup of PostgreSQL, are refused with the way forward.
func TestBackupRestoreDrill(t *testing.T) {
	a, dataDir, serveLog := startDevInProcess(t)
	tok := devToken(t, serveLog)
	for i := range 10 {
		if code := createMission(t, a.url, tok, fmt.Sprintf("before-%d", i), fmt.Sprint(i)); code != http.StatusCreated {
			t.Fatalf("create mission before-%d: %d", i, code)
		}
	}

	// Missions keep being created while the backup runs.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if code := createMission(t, a.url, tok, fmt.Sprintf("during-%d", i), fmt.Sprintf("during-%d", i)); code != http.StatusCreated {
				t.Errorf("create mission during-%d while backing up: %d", i, code)
				return
			}
		}
	}()
	backup := filepath.Join(t.TempDir(), "praxa-backup.db")
	code, stdout, stderr := runCommand(t, "backup", backup, "--data-dir", dataDir)
	close(stop)
	wg.Wait()
	if code != 0 || !strings.Contains(stdout, "backed up "+dataPath(dataDir)+" to "+backup) {
		t.Fatalf("praxa backup: %d\n%s%s", code, stdout, stderr)
	}

	// praxa backup - writes the same kind of file to stdout.
	streamed := new(bytes.Buffer)
	errb := new(bytes.Buffer)
	if code := run(context.Background(), &environment{stdin: strings.NewReader(""), stdout: streamed, stderr: errb, getenv: func(string) string { return "" }},
		[]string{"backup", "-", "--data-dir", dataDir}); code != 0 || !bytes.HasPrefix(streamed.Bytes(), []byte("SQLite format 3\x00")) ||
		!strings.Contains(errb.String(), "to stdout") {
		t.Errorf("praxa backup -: %d, %d bytes, %s", code, streamed.Len(), errb.String())
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dataDir, ".praxa-backup-*")); len(leftovers) > 0 {
		t.Errorf("praxa backup - left %v", leftovers)
	}

	// A second backup to the same file, and a restore onto the serving
	// store, are refused.
	if code, _, stderr := runCommand(t, "backup", backup, "--data-dir", dataDir); code == 0 || !strings.Contains(stderr, "the destination exists") {
		t.Errorf("backup over an existing file: %d %s", code, stderr)
	}
	if code, _, stderr := runCommand(t, "restore", backup, "--data-dir", dataDir); code == 0 || !strings.Contains(stderr, "a gateway may be using "+dataPath(dataDir)+": stop it") {
		t.Errorf("restore onto the serving store: %d %s", code, stderr)
	}
	if code, _, stderr := runCommand(t, "backup", backup+"2", "--store", "postgres://praxa@127.0.0.1/praxa"); code != 2 || !strings.Contains(stderr, "pg_dump") {
		t.Errorf("backup of a PostgreSQL store: %d %s", code, stderr)
	}

	restoredDir := filepath.Join(t.TempDir(), "new") // restore makes it
	code, stdout, stderr = runCommand(t, "restore", backup, "--data-dir", restoredDir)
	if code != 0 || !strings.Contains(stdout, "restored "+backup+" as "+dataPath(restoredDir)) {
		t.Fatalf("praxa restore: %d\n%s%s", code, stdout, stderr)
	}
	// praxa restore - reads what praxa backup - wrote.
	fromStdin := filepath.Join(t.TempDir(), "praxa.db")
	errb.Reset()
	var out bytes.Buffer
	if code := run(context.Background(), &environment{stdin: streamed, stdout: &out, stderr: errb, getenv: func(string) string { return "" }},
		[]string{"restore", "-", "--store", fromStdin}); code != 0 || !strings.Contains(out.String(), "as "+fromStdin) {
		t.Errorf("praxa restore -: %d %s%s", code, out.String(), errb.String())
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(fromStdin), ".praxa-restore-*")); len(leftovers) > 0 {
		t.Errorf("praxa restore - left %v", leftovers)
	}

	r := serveInProcess(t, serveFlags{dataDir: restoredDir, dev: true, tools: contracts.SetAll})
	rtok := devToken(t, r.log)
	for i := range 10 {
		if code := missionStatus(t, r.url, rtok, fmt.Sprintf("before-%d", i)); code != http.StatusOK {
			t.Errorf("the restored gateway answers %d for mission before-%d", code, i)
		}
	}
	// The restored gateway goes on: a new mission, and a runId already
	// used before the backup stays used.
	if code := createMission(t, r.url, rtok, "after-restore", "after-restore"); code != http.StatusCreated {
		t.Errorf("create a mission on the restored gateway: %d", code)
	}
	if code := createMission(t, r.url, rtok, "before-0", "reuse-before-0"); code != http.StatusConflict {
		t.Errorf("reuse of runId before-0 on the restored gateway: %d, want 409", code)
	}
	if entries, _ := os.ReadDir(filepath.Dir(backup)); len(entries) != 1 {
		t.Errorf("the backup's folder holds %d entries, want the backup alone", len(entries))
	}
}
