package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestSIGHUPDuringShutdown: a SIGHUP that arrives while serve drains the
// requests in flight after SIGTERM is ignored (logged), not the end of the
// process: the call in flight is answered and serve exits cleanly.
func TestSIGHUPDuringShutdown(t *testing.T) {
	bin := buildPraxa(t)
	dir := t.TempDir()
	started := filepath.Join(t.TempDir(), "started")
	cfg := `connections:
  sh: {kind: cli, command: /bin/sh}
proxy:
  expose:
    - name: slow.job
      description: Takes two seconds.
      executor: {kind: cli, connection: sh, args: [-c, "touch ` + started + `; sleep 2"], timeoutMs: 20000}
`
	_, gw := serveConfig(t, bin, dir, cfg)
	tok := mintToken(t, bin, dir)

	type answer struct {
		status int
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		b, _ := json.Marshal(map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "slow.job"}})
		req, _ := http.NewRequest(http.MethodPost, gw.url+"/v8/praxec/command", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		answered <- answer{status: res.StatusCode, body: body}
	}()
	var err error
	if !gatewaytest.Poll(30*time.Second, func() bool {
		_, err = os.Stat(started)
		return err == nil || !errors.Is(err, os.ErrNotExist)
	}) || err != nil {
		t.Fatalf("the slow call never started: %v\n%s", err, gw.stderr())
	}

	must(t, gw.cmd.Process.Signal(syscall.SIGTERM), "SIGTERM")
	waitFor(t, gw, "shutting down")
	must(t, gw.cmd.Process.Signal(syscall.SIGHUP), "SIGHUP")
	select {
	case <-gw.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not exit after SIGTERM:\n%s", gw.stderr())
	}
	if ws, ok := gw.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("serve was ended by %v during its shutdown:\n%s", ws.Signal(), gw.stderr())
	}
	if !gw.cmd.ProcessState.Success() {
		t.Errorf("serve exited %v:\n%s", gw.cmd.ProcessState, gw.stderr())
	}
	waitFor(t, gw, "SIGHUP ignored: the gateway is shutting down")
	a := <-answered
	if a.err != nil || a.status != http.StatusOK {
		t.Fatalf("the call in flight: %d %s %v", a.status, a.body, a.err)
	}
}
