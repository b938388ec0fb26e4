package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCapabilityAudit: a capability's audit block reaches its exposed
// capability; a capability that wraps it and an exposure of that add
// their records and sinks to it (innermost first, a sink named twice
// kept once); an inline exposure and a manifest's capability carry their
// own; an imported capability has none. File paths resolve against the
// configuration's directory.
func TestCapabilityAudit(t *testing.T) {
	dir := t.TempDir()
	yaml := `
capabilities:
  raw.create_pr:
    executor: { kind: noop }
    audit:
      record: [$.arguments.title]
      sinks: [{ kind: file, path: prs.jsonl }]
  safe.create_pr:
    wraps: raw.create_pr
    audit:
      record: [$.arguments.head, $.output.url]
      sinks:
        - { kind: file, path: prs.jsonl }
        - { kind: http, url: "https://siem.example.com/ingest", headers: { Authorization: "Bearer ${SIEM_TOKEN}" }, retries: 0, queue: 10 }
  plain: { executor: { kind: noop } }
proxy:
  expose:
    - capability: safe.create_pr
      as: pr.create
      audit: { record: [$.arguments.title, $.arguments.body], sinks: [{ kind: stderr }] }
    - name: inline.ping
      audit: { record: [$.arguments] }
manifests: [tools.json]
`
	if err := os.WriteFile(filepath.Join(dir, "praxec.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := `{"version": 1, "capabilities": [{"name": "notes.add", "audit": {"record": ["$.output"], "sinks": [{"kind": "stderr"}]}}]}`
	if err := os.WriteFile(filepath.Join(dir, "tools.json"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(filepath.Join(dir, "praxec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.SetImported([]ExposedCapability{{ID: "gh.create_pull_request", Upstream: &UpstreamTool{Connection: "gh", Tool: "create_pull_request"}}})
	zero := 0
	file := AuditHookSink{Kind: AuditHookFile, Path: "prs.jsonl"}
	http := AuditHookSink{Kind: AuditHookHTTP, URL: "https://siem.example.com/ingest", Headers: map[string]string{"Authorization": "Bearer ${SIEM_TOKEN}"}, Retries: &zero, Queue: 10}
	want := map[string]CapabilityAudit{
		"pr.create": {Record: []string{"$.arguments.title", "$.arguments.head", "$.output.url", "$.arguments.body"},
			Sinks: []AuditHookSink{file, http, {Kind: AuditSinkStderr}}},
		"inline.ping":            {Record: []string{"$.arguments"}},
		"plain":                  {},
		"notes.add":              {Record: []string{"$.output"}, Sinks: []AuditHookSink{{Kind: AuditSinkStderr}}},
		"gh.create_pull_request": {},
	}
	got := map[string]CapabilityAudit{}
	for _, x := range cfg.Exposed() {
		got[x.ID] = x.Audit
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("%s is not exposed", id)
			continue
		}
		if w.IsZero() != g.IsZero() || (!w.IsZero() && !reflect.DeepEqual(g, w)) {
			t.Errorf("%s: audit %+v, want %+v", id, g, w)
		}
	}
	if p := cfg.Path("prs.jsonl"); p != filepath.Join(dir, "prs.jsonl") {
		t.Errorf("Path(prs.jsonl) = %s", p)
	}
	if p := cfg.Path("/var/log/prs.jsonl"); p != "/var/log/prs.jsonl" {
		t.Errorf("Path of an absolute path = %s", p)
	}
	if s := (AuditHookSink{Kind: AuditHookHTTP}); s.RetryCount() != DefaultAuditHTTPRetries || s.QueueSize() != DefaultAuditHTTPQueue ||
		s.Timeout() != DefaultAuditHTTPTimeout || s.Backoff() != DefaultAuditHTTPBackoff || http.RetryCount() != 0 || http.QueueSize() != 10 {
		t.Errorf("http sink defaults: %+v", s)
	}
}

// TestCapabilityAuditProblems: what a capability's audit block may not
// say, each problem at its line with its fix.
func TestCapabilityAuditProblems(t *testing.T) {
	for _, tc := range []struct {
		name, audit, want string
	}{
		{"secret record", `{ record: [$.arguments.db.password] }`,
			`a.yaml:5:16: capabilities.c.audit.record[0]: names password, a member whose name marks it secret: the audit event would only ever record [redacted]; remove the path (secrets are never recorded)`},
		{"context path", `{ record: [$.context.branch] }`,
			`a.yaml:5:16: capabilities.c.audit.record[0]: must be a path into the call's arguments or output: $.arguments or $.output, then .MEMBER steps of letters, digits, '_' and '-' (such as $.arguments.title or $.output.url)`},
		{"jsonpath", `{ record: ["$.arguments.items[0]"] }`,
			`a.yaml:5:16: capabilities.c.audit.record[0]: must be a path into the call's arguments or output`},
		{"member of another kind", `{ sinks: [{ kind: file, path: a.jsonl, url: "https://x.example" }] }`,
			`a.yaml:5:44: capabilities.c.audit.sinks[0].url: is not a known field of a file audit sink (url belongs to http audit sinks); known fields: kind, path`},
		{"stderr takes nothing", `{ sinks: [{ kind: stderr, queue: 3 }] }`,
			`a.yaml:5:31: capabilities.c.audit.sinks[0].queue: is not a known field of a stderr audit sink (queue belongs to http audit sinks), which has no field but kind`},
		{"http needs url", `{ sinks: [{ kind: http }] }`,
			`a.yaml:5:15: capabilities.c.audit.sinks[0].url: is required`},
		{"not http", `{ sinks: [{ kind: http, url: "ftp://logs.example.com/x" }] }`,
			`a.yaml:5:34: capabilities.c.audit.sinks[0].url: must be an absolute http or https URL, such as https://siem.example.com/ingest`},
		{"credentials in url", `{ sinks: [{ kind: http, url: "https://u:p@logs.example.com/x" }] }`,
			`capabilities.c.audit.sinks[0].url: holds credentials (user:password@): send them in headers instead`},
		{"unknown kind", `{ sinks: [{ kind: syslog }] }`,
			`capabilities.c.audit.sinks[0].kind: must be one of stderr, file, http`},
		{"unknown member", `{ records: [$.output] }`,
			`capabilities.c.audit.records: is not a known field; did you mean "record"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("a.yaml", []byte("capabilities:\n  c:\n    executor: { kind: noop }\n    audit:\n      "+strings.TrimPrefix(strings.TrimSuffix(tc.audit, " }"), "{ ")+"\n"))
			var le *LoadError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
