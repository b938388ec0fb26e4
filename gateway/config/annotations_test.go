package config

import (
	"errors"
	"strings"
	"testing"
)

// TestHints: a capability's annotations are those the configuration sets
// (on the capability, on what it wraps, on its exposure, the nearer
// winning), the others derived from the executor: a REST GET reads, a PUT
// or DELETE is idempotent, cli and mcp may destroy.
func TestHints(t *testing.T) {
	cfg, err := Parse("a.yaml", []byte(`
connections:
  api: { kind: rest, baseUrl: "https://api.example.com" }
  sh: { kind: cli, command: /bin/true }
  up: { kind: mcp, url: "https://mcp.example.com/mcp" }
capabilities:
  raw.delete:
    executor: { kind: rest, connection: api, method: DELETE, path: /x }
    annotations: { title: Delete an item, openWorldHint: false }
  safe.delete:
    wraps: raw.delete
    annotations: { idempotentHint: false }
proxy:
  expose:
    - name: api.read
      executor: { kind: rest, connection: api, method: GET, path: /x }
    - name: api.put
      executor: { kind: rest, connection: api, method: PUT, path: /x }
    - name: api.post
      executor: { kind: rest, connection: api, method: POST, path: /x }
    - name: sh.status
      title: Status
      executor: { kind: cli, connection: sh }
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false }
    - name: up.wipe
      executor: { kind: mcp, connection: up, tool: wipe }
    - name: up.lookup
      executor: { kind: mcp, connection: up, tool: lookup }
      annotations: { destructiveHint: false }
    - capability: safe.delete
      as: items.delete
      annotations: { title: Remove an item }
    - name: notes.ping
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Hints{
		"api.read":     {ReadOnly: true, Idempotent: true, OpenWorld: true},
		"api.put":      {Destructive: true, Idempotent: true, OpenWorld: true},
		"api.post":     {Destructive: true, OpenWorld: true},
		"sh.status":    {Title: "Status", ReadOnly: true, Idempotent: true},
		"up.wipe":      {Destructive: true, OpenWorld: true},
		"up.lookup":    {OpenWorld: true},
		"items.delete": {Title: "Remove an item", Destructive: true},
		"notes.ping":   {ReadOnly: true, Idempotent: true},
	}
	for _, x := range cfg.Exposed() {
		w, ok := want[x.ID]
		if !ok {
			t.Errorf("unexpected capability %s", x.ID)
			continue
		}
		if got := x.Hints(); got != w {
			t.Errorf("%s: %+v, want %+v", x.ID, got, w)
		}
		delete(want, x.ID)
	}
	for id := range want {
		t.Errorf("%s is not exposed", id)
	}
}

// TestAnnotationsChecked: readOnlyHint and destructiveHint cannot both be
// true; an unknown member or a value of the wrong type is refused by the
// schema, with its line.
func TestAnnotationsChecked(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"read-only and destructive", "proxy:\n  expose:\n    - name: a.b\n      annotations: { readOnlyHint: true, destructiveHint: true }\n",
			"proxy.expose[0].annotations.destructiveHint"},
		{"on a capability", "capabilities:\n  a.b:\n    annotations:\n      readOnlyHint: true\n      destructiveHint: true\n",
			`capabilities["a.b"].annotations.destructiveHint`},
		{"unknown member", "proxy:\n  expose:\n    - name: a.b\n      annotations: { safe: true }\n", "safe"},
		{"not a boolean", "proxy:\n  expose:\n    - name: a.b\n      annotations: { readOnlyHint: yes please }\n", "readOnlyHint"},
	} {
		_, err := Parse("a.yaml", []byte(c.yaml))
		var le *LoadError
		if !errors.As(err, &le) {
			t.Errorf("%s: %v, want a *LoadError", c.name, err)
			continue
		}
		if msg := strings.Join(le.Lines(), "\n"); !strings.Contains(msg, c.want) {
			t.Errorf("%s: %s, want a problem at %s", c.name, msg, c.want)
		}
	}
	if _, err := Parse("a.yaml", []byte("proxy:\n  expose:\n    - name: a.b\n      annotations: { readOnlyHint: true, destructiveHint: false, title: A }\n")); err != nil {
		t.Errorf("consistent annotations refused: %v", err)
	}
}
