package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
)

// traceRE finds the trace a SIGHUP reload line names.
var traceRE = regexp.MustCompile(`\(trace ([0-9a-f]{32})\)`)

// lastTrace is the trace of the last line of out that contains prefix.
func lastTrace(t *testing.T, out, prefix string) string {
	t.Helper()
	trace := ""
	for line := range strings.Lines(out) {
		if strings.Contains(line, prefix) {
			if m := traceRE.FindStringSubmatch(line); m != nil {
				trace = m[1]
			}
		}
	}
	if trace == "" {
		t.Fatalf("no line %q names a trace:\n%s", prefix, out)
	}
	return trace
}

// storedReloadEvent reads the reload event of a SIGHUP's trace (no
// tenant: a signal has none) from the data directory's store, which the
// running gateway writes it to before it reports the reload.
func storedReloadEvent(t *testing.T, dataDir, trace string) store.Event {
	t.Helper()
	events := storedTrace(t, dataDir, "", trace, 100)
	if len(events) != 1 {
		t.Fatalf("trace %s holds %d events, want the reload's: %+v", trace, len(events), events)
	}
	return events[0]
}

// wantTraceLines checks that out holds one JSON log line of each msg in
// trace, carrying its trace_id once and no request_id: the log handler
// writes a SIGHUP reload's trace (telemetry.WithTrace), no call attaches
// it.
func wantTraceLines(t *testing.T, out, trace string, msgs ...string) {
	t.Helper()
	for _, msg := range msgs {
		var found []string
		for line := range strings.Lines(out) {
			if strings.Contains(line, `"msg":"`+msg+`"`) && strings.Contains(line, trace) {
				found = append(found, line)
			}
		}
		if len(found) != 1 {
			t.Errorf("%d lines %q in trace %s, want 1:\n%s", len(found), msg, trace, out)
			continue
		}
		if l := found[0]; strings.Count(l, `"trace_id":"`+trace+`"`) != 1 || strings.Count(l, `"trace_id"`) != 1 || strings.Contains(l, `"request_id"`) {
			t.Errorf("line %q does not carry its trace_id once and no request_id: %s", msg, l)
		}
	}
}

func fileDigest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err, "read %s", path)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestSIGHUPReloadAudited: a SIGHUP reload of the running binary,
// accepted or refused, is an audit event in the store naming the signal,
// the file and its digest.
func TestSIGHUPReloadAudited(t *testing.T) {
	bin := buildPraxa(t)
	dir := t.TempDir()
	cfgPath, gw := serveExample(t, bin, dir)

	must(t, os.WriteFile(cfgPath, []byte(exampleConfig(t, gatewaytest.RotateKeysWorkflowYAML)), 0o600), "write the configuration")
	must(t, gw.cmd.Process.Signal(syscall.SIGHUP), "SIGHUP")
	waitFor(t, gw, "praxa: configuration reloaded from "+cfgPath)
	trace := lastTrace(t, gw.stderr(), "praxa: configuration reloaded from")
	wantTraceLines(t, gw.stderr(), trace, "SIGHUP: configuration reloaded", "configuration reloaded")
	e := storedReloadEvent(t, dir, trace)
	if e.Type != "config.reloaded" || e.Outcome != "allowed" || e.Subject != "signal" || e.Attributes["via"] != "signal" ||
		e.Attributes["source"] != cfgPath || e.Attributes["sha256"] != fileDigest(t, cfgPath) || e.Attributes["workflows"] == nil {
		t.Errorf("SIGHUP reload event %+v", e)
	}

	bad := strings.Replace(exampleConfig(t, gatewaytest.RotateKeysWorkflowYAML), "    initial: start\n", "    initial: nowhere\n", 1)
	must(t, os.WriteFile(cfgPath, []byte(bad), 0o600), "write the configuration")
	must(t, gw.cmd.Process.Signal(syscall.SIGHUP), "SIGHUP")
	waitFor(t, gw, "praxa: reload refused, the running configuration stays (trace ")
	trace = lastTrace(t, gw.stderr(), "praxa: reload refused")
	wantTraceLines(t, gw.stderr(), trace, "SIGHUP: configuration reload refused; the running configuration stays")
	e = storedReloadEvent(t, dir, trace)
	problems, _ := e.Attributes["problems"].([]any)
	if e.Type != "config.reload_refused" || e.Outcome != "refused" || e.Subject != "signal" || len(problems) == 0 ||
		!strings.Contains(problems[0].(string), "workflows.rotate_keys.initial") || e.Attributes["sha256"] != fileDigest(t, cfgPath) {
		t.Errorf("refused SIGHUP reload event %+v", e)
	}
}

// TestMCPCommandReloadsDirectTools: `praxa mcp` on a local store reloads
// its configuration on SIGHUP, and its session sees the new direct tools
// (it is told the list changed): added ones appear, removed ones
// disappear.
func TestMCPCommandReloadsDirectTools(t *testing.T) {
	bin, dir, _, tok := devGateway(t)
	cfgPath := filepath.Join(t.TempDir(), "direct.yaml")
	write := func(names ...string) {
		t.Helper()
		var b strings.Builder
		b.WriteString("proxy:\n  expose:\n")
		for _, n := range names {
			b.WriteString("    - name: " + n + "\n      description: A direct tool.\n      exposeDirectly: true\n")
		}
		must(t, os.WriteFile(cfgPath, []byte(b.String()), 0o600), "write the configuration")
	}
	write("notes.ping", "notes.gone")

	changed := make(chan struct{}, 8)
	cs, cmd, stderr := startStdio(t, bin, childEnv(), stdioChanges(changed), "mcp", "--dev", "--data-dir", dir, "--config", cfgPath, "--token", tok)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer func() {
		if err := cs.Close(); err != nil || cmd.ProcessState == nil || !cmd.ProcessState.Success() {
			t.Errorf("praxa mcp did not exit cleanly on EOF: %v %v\nstderr:\n%s", err, cmd.ProcessState, stderr.String())
		}
	}()
	names := func() []string {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		must(t, err, "tools/list")
		var out []string
		for _, tl := range res.Tools {
			if strings.HasPrefix(tl.Name, "notes.") {
				out = append(out, tl.Name)
			}
		}
		slices.Sort(out)
		return out
	}
	if got := names(); !slices.Equal(got, []string{"notes.gone", "notes.ping"}) {
		t.Fatalf("direct tools before the reload: %v", got)
	}

	write("notes.ping", "notes.added")
	must(t, cmd.Process.Signal(syscall.SIGHUP), "SIGHUP")
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatalf("the session was not told the tool list changed\nstderr:\n%s", stderr.String())
	}
	if got := names(); !slices.Equal(got, []string{"notes.added", "notes.ping"}) {
		t.Errorf("direct tools after the reload: %v\nstderr:\n%s", got, stderr.String())
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes.gone", Arguments: map[string]any{}}); err == nil {
		t.Error("a call of the removed notes.gone succeeded")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes.added", Arguments: map[string]any{}})
	must(t, err, "tools/call notes.added")
	if res.IsError {
		t.Errorf("notes.added answered an error: %+v", res.Content)
	}
}
