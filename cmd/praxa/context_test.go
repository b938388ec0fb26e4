package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/gatewaytest"
)

func strList(v any) []string {
	raw, _ := v.([]any)
	out := []string{}
	for _, x := range raw {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestContextCommandsDev: serve --dev prints a token allowing the example
// data's compartment and purpose, the import commands load the example
// files (idempotently), praxa token --compartments/--purposes mints tokens
// the context tools accept, and the four tools answer over REST.
func TestContextCommandsDev(t *testing.T) {
	app, dataDir, serveLog := startDevInProcess(t)
	printed := devToken(t, serveLog)
	claims := gatewaytest.JWTClaims(t, printed)
	if !slices.Equal(strList(claims["compartments"]), devCompartments) || !slices.Equal(strList(claims["purposes"]), devPurposes) {
		t.Errorf("the printed token's claims: %v", claims)
	}
	if !strings.Contains(serveLog.String(), "praxa memory import examples/memory.jsonl --tenant dev") {
		t.Errorf("serve --dev does not say how to load the example context:\n%s", serveLog.String())
	}

	ex := filepath.Join("..", "..", "examples")
	code, stdout, stderr := runCommand(t, "memory", "import", filepath.Join(ex, "memory.jsonl"), "--tenant", devTenant, "--data-dir", dataDir)
	if code != 0 || !strings.Contains(stdout, "6 added, 0 updated, 0 unchanged") {
		t.Fatalf("memory import: %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCommand(t, "memory", "import", "--tenant", devTenant, "--data-dir", dataDir, filepath.Join(ex, "memory.jsonl"))
	if code != 0 || !strings.Contains(stdout, "0 added, 0 updated, 6 unchanged") {
		t.Fatalf("memory import again: %d\n%s", code, stdout)
	}
	code, stdout, _ = runCommand(t, "goals", "import", filepath.Join(ex, "goals.jsonl"), "--tenant", devTenant, "--data-dir", dataDir, "--format", "json")
	var rep struct{ Added int }
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil || rep.Added != 5 {
		t.Fatalf("goals import: %d\n%s", code, stdout)
	}
	code, stdout, stderr = runCommand(t, "certificates", "import", filepath.Join(ex, "certificates.jsonl"), "--dev", "--data-dir", dataDir)
	if code != 0 || !strings.Contains(stdout, "cert-tool-use-2025 added (valid)") || !strings.Contains(stdout, "cert-tampered added (bad_signature)") {
		t.Fatalf("certificates import: %d\n%s%s", code, stdout, stderr)
	}

	code, tok, stderr := runCommand(t, "token", "--data-dir", dataDir, "--compartments", "payments", "--purposes", "incident-review, support")
	if code != 0 {
		t.Fatalf("token: %d %s", code, stderr)
	}
	if c := gatewaytest.JWTClaims(t, tok); !slices.Equal(strList(c["purposes"]), []string{"incident-review", "support"}) {
		t.Errorf("token claims %v", c)
	}
	_, plain, _ := runCommand(t, "token", "--data-dir", dataDir)
	if c := gatewaytest.JWTClaims(t, plain); c["compartments"] != nil || c["purposes"] != nil {
		t.Errorf("a token without the flags carries %v %v", c["compartments"], c["purposes"])
	}

	call := func(token, method, path, body string) (int, map[string]any) {
		t.Helper()
		r := gatewaytest.NewClient(app.url, nil).Do(t, method, path, body, gatewaytest.Bearer(strings.TrimSpace(token)))
		var m map[string]any
		_ = json.Unmarshal(r.Body, &m) // an answer that is no JSON object leaves m nil, which the checks report
		return r.Status, m
	}
	status, m := call(tok, http.MethodPost, "/v8/memory/query", `{"compartment":"payments","purpose":"incident-review","query":"deploy rollback"}`)
	if recs, _ := m["records"].([]any); status != 200 || len(recs) == 0 || recs[0].(map[string]any)["id"] != "mem-001" {
		t.Errorf("memory query: %d %v", status, m)
	}
	if status, m := call(plain, http.MethodPost, "/v8/memory/query", `{"compartment":"payments","purpose":"incident-review","query":""}`); status != 403 || m["code"] != "compartment-forbidden" {
		t.Errorf("memory query without claims: %d %v", status, m)
	}
	if status, m := call(printed, http.MethodGet, "/v8/context-twin/goals?compartment=payments&purpose=incident-review", ""); status != 200 || len(m["goals"].([]any)) != 3 {
		t.Errorf("goals with the printed token: %d %v", status, m)
	}
	if status, m := call(tok, http.MethodGet, "/v8/skills/deploy-checklist?version=1.1.0", ""); status != 200 || m["evidenceState"] != "validated" {
		t.Errorf("skill: %d %v", status, m)
	}
	if status, m := call(tok, http.MethodGet, "/v8/world-model/certificates", ""); status != 200 || len(m["certificates"].([]any)) != 5 {
		t.Errorf("certificates: %d %v", status, m)
	}
}

func TestContextCommandRefusals(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"id":"m1","compartment":"c","purposes":["p"],"content":"x"}`+"\n"+`{"id":"m2"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"memory", "import", bad, "--data-dir", dir}, 2, "Usage: praxa memory import FILE --tenant T"},
		{[]string{"memory"}, 2, "Usage: praxa memory import"},
		{[]string{"memory", "export"}, 2, "Usage: praxa memory import"},
		{[]string{"goals", "import", "--tenant", "t", "--data-dir", dir}, 2, "Usage: praxa goals import"},
		{[]string{"memory", "import", bad, "--tenant", "t", "--format", "xml", "--data-dir", dir}, 2, "Usage"},
		{[]string{"memory", "import", bad, "--tenant", "t", "--data-dir", dir}, 1, bad + ":2: compartment: is required"},
		{[]string{"memory", "import", filepath.Join(dir, "absent.jsonl"), "--tenant", "t", "--data-dir", dir}, 1, "no such file"},
		{[]string{"certificates", "import", bad, "--tenant", "t", "--data-dir", dir}, 2, "flag provided but not defined: -tenant"},
		{[]string{"token", "--data-dir", dir, "--purposes", "a,,b"}, 2, `--purposes: "" is not an identifier`},
	} {
		code, stdout, stderr := runCommand(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%v: exit %d, want %d; stderr lacks %q:\n%s%s", tc.args, code, tc.code, tc.stderr, stdout, stderr)
		}
	}
}

// TestConfigValidateSkills: praxa config validate checks the skills the
// file names, relative to the file, with file and line.
func TestConfigValidateSkills(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "praxec.yaml")
	os.WriteFile(cfg, []byte("skills:\n  dir: skills\n"), 0o600)
	skill := filepath.Join(dir, "skills", "s.md")
	os.WriteFile(skill, []byte("---\nid: s\nversion: 1.0.0\ntitle: S\nevidence:\n  state: approved\n---\nbody\n"), 0o600)
	code, _, stderr := runCommand(t, "config", "validate", cfg)
	if code != 1 || !strings.Contains(stderr, filepath.ToSlash(skill)+":6:10: evidence.state: must be one of draft, reviewed, validated, deprecated") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
	os.WriteFile(skill, []byte("---\nid: s\nversion: 1.0.0\ntitle: S\nevidence:\n  state: validated\n---\nbody\n"), 0o600)
	if code, stdout, stderr := runCommand(t, "config", "validate", cfg); code != 0 || stdout != cfg+": ok\n" {
		t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
	}
	os.WriteFile(cfg, []byte("skills:\n  dir: nowhere\n"), 0o600)
	if code, _, stderr := runCommand(t, "config", "validate", cfg); code != 1 || !strings.Contains(stderr, "nowhere") {
		t.Errorf("missing directory: exit %d:\n%s", code, stderr)
	}
	if code, stdout, stderr := runCommand(t, "config", "validate", filepath.Join("..", "..", "examples", "praxec.yaml")); code != 0 {
		t.Errorf("examples: exit %d:\n%s%s", code, stdout, stderr)
	}
}

// TestImportQuotas: praxa memory import and goals import apply the
// tenant quotas of --config (server.quotas): an import that would add
// records past the tenant's limit is refused with quota-exceeded and
// writes nothing; records it updates or leaves unchanged need no room; a
// tenant's override lifts the limit.
func TestImportQuotas(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "praxec.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  quotas:\n    memoryRecords: 4\n    goals: 1\n    tenants:\n      big: {memoryRecords: 0}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ex := filepath.Join("..", "..", "examples")
	four := filepath.Join(dir, "four.jsonl")
	all, err := os.ReadFile(filepath.Join(ex, "memory.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(all)), "\n")
	if len(lines) != 6 {
		t.Fatalf("examples/memory.jsonl holds %d records, want 6", len(lines))
	}
	if err := os.WriteFile(four, []byte(strings.Join(lines[:4], "")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	imp := func(noun, file, tenant string) (int, string, string) {
		return runCommand(t, noun, "import", file, "--tenant", tenant, "--config", cfg, "--data-dir", dir)
	}
	if code, stdout, stderr := imp("memory", filepath.Join(ex, "memory.jsonl"), "small"); code != 1 || !strings.Contains(stderr, "quota-exceeded") ||
		!strings.Contains(stderr, "holds 0 memory records and its quota is 4") {
		t.Fatalf("six records for a tenant of four: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := imp("memory", four, "small"); code != 0 || !strings.Contains(stdout, "4 added, 0 updated, 0 unchanged") {
		t.Fatalf("four records (nothing written before): exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := imp("memory", filepath.Join(ex, "memory.jsonl"), "small"); code != 1 || !strings.Contains(stderr, "holds 4 memory records") {
		t.Fatalf("two more records at the limit: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := imp("memory", four, "small"); code != 0 || !strings.Contains(stdout, "0 added, 0 updated, 4 unchanged") {
		t.Fatalf("the same four again at the limit: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := imp("memory", filepath.Join(ex, "memory.jsonl"), "big"); code != 0 || !strings.Contains(stdout, "6 added") {
		t.Fatalf("a tenant whose override lifts the limit: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := imp("goals", filepath.Join(ex, "goals.jsonl"), "small"); code != 1 || !strings.Contains(stderr, "its quota is 1") {
		t.Fatalf("five goals for a tenant of one: exit %d\n%s%s", code, stdout, stderr)
	}
}
