package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/config"
)

const manifestConfig = `connections:
  sh:
    kind: cli
    command: /bin/sh
workflows:
  flow:
    version: 1
    title: Flow
    initial: a
    states:
      a: {}
      b: { terminal: true }
    transitions:
      - { name: go, from: a, to: b }
manifests: [tools.json]
`

// writeManifest writes the configuration above and a manifest beside it,
// and loads the configuration.
func writeManifest(t *testing.T, manifest string) (*config.Config, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "praxec.yaml"), []byte(manifestConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools.json"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Load(filepath.Join(dir, "praxec.yaml"))
}

func TestManifestLoaded(t *testing.T) {
	cfg, err := writeManifest(t, `{
  "version": 1,
  "capabilities": [
    {
      "name": "notes.search",
      "description": "Search the notes.",
      "tags": ["notes"],
      "exposeDirectly": true,
      "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "properties": {"q": {"type": "string"}, "tree": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"type": "object"}}},
      "outputSchema": {"type": "object", "required": ["stdout"], "properties": {"stdout": {"type": "string"}}},
      "executor": {"kind": "cli", "connection": "sh", "args": ["-c", "echo", "$.arguments.q"], "unconfinedArguments": true}
    }
  ]
}`)
	if err != nil {
		t.Fatal(err)
	}
	var found *config.ExposedCapability
	for _, x := range cfg.Exposed() {
		if x.ID == "notes.search" {
			found = &x
		}
	}
	if found == nil {
		t.Fatalf("notes.search is not offered: %+v", cfg.Exposed())
	}
	if !found.ExposeDirectly || found.Executor == nil || found.Executor.Connection != "sh" || !strings.HasSuffix(found.Source, "tools.json:capabilities[0]") ||
		found.OutputSchema["required"] == nil {
		t.Errorf("notes.search = %+v", *found)
	}
}

func TestManifestRefused(t *testing.T) {
	cases := []struct{ name, manifest, want string }{
		{"not JSON", "version: 1\ncapabilities: []\n", "a manifest is a JSON file"},
		{"extra root field", `{"version": 1, "capabilities": [], "addon": "x"}`, `tools.json:1:36: addon: is not a known field of a manifest`},
		{"wrong version", `{"version": 2, "capabilities": []}`, "version: must be 1"},
		{"extra capability field", `{"version": 1, "capabilities": [
  {"name": "a.b", "handler": "x"}]}`, "tools.json:2:19: capabilities[0].handler: is not a known field"},
		{"reference", `{"version": 1, "capabilities": [{"name": "a.b", "capability": "c"}]}`, "capabilities[0].capability: is not accepted in a manifest"},
		{"no name", `{"version": 1, "capabilities": [{"title": "x"}]}`, "needs a name"},
		{"array root schema", `{"version": 1, "capabilities": [{"name": "a.b", "inputSchema": {"type": "array"}}]}`, "capabilities[0].inputSchema"},
		{"remote ref", `{"version": 1, "capabilities": [{"name": "a.b", "inputSchema": {"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}}}]}`, "only local references"},
		{"draft-07", `{"version": 1, "capabilities": [{"name": "a.b", "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}}]}`, "only JSON Schema 2020-12 is accepted"},
		{"recursiveRef", `{"version": 1, "capabilities": [{"name": "a.b", "inputSchema": {"type": "object", "properties": {"x": {"$recursiveRef": "#"}}}}]}`, "$recursiveRef is not accepted"},
		{"$id", `{"version": 1, "capabilities": [{"name": "a.b", "inputSchema": {"type": "object", "$id": "https://example.com/x"}}]}`, "$id is not accepted"},
		{"array root output schema", `{"version": 1, "capabilities": [{"name": "a.b", "outputSchema": {"type": "array"}}]}`, "capabilities[0].outputSchema: the schema's root must be an object schema"},
		{"draft-07 output schema", `{"version": 1, "capabilities": [{"name": "a.b", "outputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}}]}`, "capabilities[0].outputSchema: the schema declares the dialect"},
		{"unknown connection", `{"version": 1, "capabilities": [{"name": "a.b", "executor": {"kind": "cli", "connection": "nope"}}]}`, "capabilities[0].executor.connection: names no declared connection"},
		{"workflow id taken", `{"version": 1, "capabilities": [{"name": "flow"}]}`, "capabilities[0].name: is already the id of the workflow at workflows.flow"},
		{"duplicate in manifest", `{"version": 1, "capabilities": [{"name": "a.b"}, {"name": "a.b"}]}`, "is already the id"},
		{"duplicate key", `{"version": 1, "version": 1, "capabilities": []}`, "tools.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := writeManifest(t, c.manifest)
			var le *config.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a *LoadError", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "tools.json") {
				t.Errorf("err = %v\nwant it to say %q and name tools.json", err, c.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "praxec.yaml"), []byte("manifests: [nope.json]\n"), 0o600)
		_, err := config.Load(filepath.Join(dir, "praxec.yaml"))
		if err == nil || !strings.Contains(err.Error(), "praxec.yaml:1:13: manifests[0]: the manifest cannot be read") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("closed config member", func(t *testing.T) {
		_, err := config.Parse("x.yaml", []byte("manifests: notalist\n"))
		if err == nil {
			t.Errorf("manifests: notalist accepted")
		}
	})
}

// TestManifestReliability: a manifest's capability declares retries and
// fallback executors as proxy.expose does, under the same checks.
func TestManifestReliability(t *testing.T) {
	cfg, err := writeManifest(t, `{"version": 1, "capabilities": [
  {"name": "notes.sync", "executor": {"kind": "cli", "connection": "sh", "args": ["-c", "true"], "timeoutMs": 1000},
   "reliability": {"retries": 2, "backoffMs": 50, "fallback": {"executors": [{"kind": "cli", "connection": "sh", "args": ["-c", "true"]}]}}}
]}`)
	if err != nil {
		t.Fatal(err)
	}
	x := cfg.Exposed()[0]
	if x.Reliability == nil || *x.Reliability.Retries != 2 || len(x.Reliability.Fallback.Executors) != 1 {
		t.Fatalf("reliability %+v", x.Reliability)
	}
	_, err = writeManifest(t, `{"version": 1, "capabilities": [
  {"name": "notes.sync", "executor": {"kind": "cli", "connection": "sh"},
   "reliability": {"fallback": {"executors": [{"kind": "workflow", "definitionId": "flow"}]}}}
]}`)
	if err == nil || !strings.Contains(err.Error(), "tools.json:3:56: capabilities[0].reliability.fallback.executors[0].kind: is workflow, which cannot be a fallback executor") {
		t.Fatalf("err %v", err)
	}
}

// A manifest capability's annotations are in force as proxy.expose's are:
// one it declares destructive is destructive (so policy.denyDestructive
// refuses it), one it declares read-only is read-only.
func TestManifestAnnotations(t *testing.T) {
	cfg, err := writeManifest(t, `{"version": 1, "capabilities": [
  {"name": "notes.drop", "annotations": {"title": "Drop the notes", "destructiveHint": true}},
  {"name": "notes.count", "executor": {"kind": "cli", "connection": "sh", "args": ["-c", "true"]},
   "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}}
]}`)
	if err != nil {
		t.Fatal(err)
	}
	hints := map[string]config.Hints{}
	for _, x := range cfg.Exposed() {
		hints[x.ID] = x.Hints()
	}
	if h := hints["notes.drop"]; !h.Destructive || h.ReadOnly || h.Title != "Drop the notes" {
		t.Errorf("notes.drop hints %+v, want destructive, not read-only, titled", h)
	}
	if h := hints["notes.count"]; !h.ReadOnly || h.Destructive || !h.Idempotent || h.OpenWorld {
		t.Errorf("notes.count hints %+v, want read-only, idempotent, closed-world", h)
	}
}
