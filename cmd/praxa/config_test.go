package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/config"
)

func TestConfigCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.yaml", "server:\n  addr: 127.0.0.1:9000\nauth:\n  issuers:\n    - issuer: https://login.example.com\n")
	bad := write("bad.yaml", "server:\n  limits:\n    maxDepth: 0\n    bogus: 1\nauth:\n  requireAtJwt: yes\n  issuers:\n    - issuer: https://login.example.com\n      algorithms: [HS256]\n")
	missing := filepath.Join(dir, "absent.yaml")
	slow := write("slow.yaml", "connections:\n  sh: {kind: cli, command: /bin/sh}\nproxy:\n  expose:\n    - name: run_tests\n"+
		"      executor: {kind: cli, connection: sh, args: [-c, 'true'], timeoutMs: 120000}\n")

	// The safety issue's case: a caller's value handed to cp with no path
	// declaration; then the same, declared not a path, which is warned.
	unchecked := write("unchecked.yaml", "connections:\n  files: {kind: cli, command: /bin/cat}\nproxy:\n  expose:\n    - name: files.read\n"+
		"      executor: {kind: cli, connection: files, args: [$.arguments.file]}\n")
	unconfined := write("unconfined.yaml", "connections:\n  files: {kind: cli, command: /bin/cat}\nproxy:\n  expose:\n    - name: files.read\n"+
		"      executor: {kind: cli, connection: files, args: [$.arguments.file], unconfinedArguments: true}\n")

	for _, tt := range []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr []string // lines that must appear, in order
	}{
		{name: "OK", args: []string{"config", "validate", good}, wantStdout: good + ": ok\n"},
		// Valid, with a warning: an executor that outlasts the request.
		{name: "Warning", args: []string{"config", "validate", slow}, wantStdout: slow + ": ok\n", wantStderr: []string{
			slow + ": warning: proxy.expose[0]: the executor may run for 2m0s, longer than server.limits.requestTimeout (30s)",
		}},
		{name: "UncheckedArgument", args: []string{"config", "validate", unchecked}, wantCode: 1, wantStderr: []string{
			unchecked + ":6:55: proxy.expose[0].executor.args[0]: hands the command $.arguments.file, a value the caller controls, unchecked: " +
				"list it under paths.read or paths.write (checked against the connection's roots; the command gets the absolute path checked), " +
				"or set unconfinedArguments: true on this executor if it is never a path",
		}},
		{name: "UnconfinedWarned", args: []string{"config", "validate", unconfined}, wantStdout: unconfined + ": ok\n", wantStderr: []string{
			unconfined + ": warning: proxy.expose[0].executor: unconfinedArguments: $.arguments.file reach the command of connection files with no path check",
		}},
		{name: "Problems", args: []string{"config", "validate", bad}, wantCode: 1, wantStderr: []string{
			bad + ":3:15: server.limits.maxDepth: must be at least 1",
			bad + `:4:5: server.limits.bogus: is not a known field; known fields: maxBodyBytes, maxDepth, maxElements, requestTimeout, ratePerSecond, burst`,
			bad + ":6:17: auth.requireAtJwt: must be of type boolean; yes, no, on and off are strings in YAML 1.2: write true or false",
			bad + ":9:20: auth.issuers[0].algorithms[0]: must be one of the allowed values (asymmetric JWS algorithms: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA)",
			"praxa config: " + bad + " is not valid",
		}},
		{name: "Several", args: []string{"config", "validate", good, bad, missing}, wantCode: 1,
			wantStdout: good + ": ok\n",
			wantStderr: []string{bad + ":3:15: ", missing + ": no such file or directory", "praxa config: 2 of 3 files are not valid"}},
		{name: "Missing", args: []string{"config", "validate", missing}, wantCode: 1,
			wantStderr: []string{missing + ": no such file or directory"}},
		{name: "NoFile", args: []string{"config", "validate"}, wantCode: 2},
		{name: "NoSubcommand", args: []string{"config"}, wantCode: 2},
		{name: "UnknownSubcommand", args: []string{"config", "check", good}, wantCode: 2},
		{name: "Help", args: []string{"config", "validate", "-h"}},
		{name: "SchemaExtraArgument", args: []string{"config", "schema", "x"}, wantCode: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := &environment{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			if code := run(context.Background(), env, tt.args); code != tt.wantCode {
				t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, &stdout, &stderr)
			}
			if tt.wantStdout != "" && stdout.String() != tt.wantStdout {
				t.Errorf("stdout = %q, want %q", stdout.String(), tt.wantStdout)
			}
			if tt.wantCode != 0 && stdout.Len() > 0 && tt.wantStdout == "" {
				t.Errorf("a failure wrote to stdout: %q", stdout.String())
			}
			rest := stderr.String()
			for _, line := range tt.wantStderr {
				i := strings.Index(rest, line)
				if i < 0 {
					t.Fatalf("stderr lacks %q (in order):\n%s", line, &stderr)
				}
				rest = rest[i+len(line):]
			}
		})
	}
}

func TestConfigSchemaCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := &environment{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	if code := run(context.Background(), env, []string{"config", "schema"}); code != 0 {
		t.Fatalf("exit status %d: %s", code, &stderr)
	}
	if !bytes.Equal(stdout.Bytes(), config.Schema()) {
		t.Error("praxa config schema does not print config.Schema()")
	}
	var doc map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", doc["$schema"])
	}
}
