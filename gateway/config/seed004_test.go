package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeed004Blocks loads every configuration block of seeds/004, kept
// verbatim under testdata/seed004. A block that refers to connections (or
// a workflow) the seed declares elsewhere is loaded followed by
// testdata/seed004/context.yaml, which declares them; an executor fragment
// is loaded as the executor of a proxy.expose entry. Each loads, except the
// blocks whose evidence guard requires tests_passed while nothing of the
// file produces it: those are refused at the guard with the fix.
func TestSeed004Blocks(t *testing.T) {
	const refusal = "requires the evidence tests_passed, which no capability of this configuration produces, so every call would be refused GUARD_REJECTED; " +
		"declare produces: [tests_passed] on the capability that earns it"
	context, err := os.ReadFile(filepath.Join("testdata", "seed004", "context.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file     string
		context  bool
		fragment bool
		// refused is the FILE:LINE:COLUMN: FIELD of the one problem, without
		// the file; "" when the block loads.
		refused string
		// message is the problem's message, when it is not the refusal of
		// a guard nothing feeds.
		message string
	}{
		{file: "01-intro-expose.yaml", context: true, refused: "7:22: proxy.expose[0].guards[0].requires[0]"},
		{file: "02-mcp-stdio.yaml"},
		{file: "03-mcp-http.yaml"},
		{file: "04-cli.yaml"},
		{file: "05-rest.yaml"},
		{file: "06-import.yaml", context: true},
		{file: "07-import-and-expose.yaml", context: true, refused: "12:22: proxy.expose[0].guards[0].requires[0]"},
		{file: "08-expose-inline.yaml", context: true},
		{file: "09-capability-reference.yaml", context: true, refused: `13:20: capabilities["safe.create_pr"].guards[0].requires[0]`},
		{file: "10-executor-mcp.yaml", context: true, fragment: true},
		// The seed hands $.arguments.project to dotnet unchecked: refused
		// with the fix (a path under roots, or unconfinedArguments).
		{file: "11-executor-cli.yaml", context: true, fragment: true, refused: "9:13: proxy.expose[0].executor.args[1]",
			message: "hands the command $.arguments.project, a value the caller controls, unchecked: " +
				"list it under paths.read or paths.write (checked against the connection's roots; the command gets the absolute path checked), " +
				"or set unconfinedArguments: true on this executor if it is never a path"},
		{file: "12-executor-cli-exit-code.yaml", context: true, fragment: true},
		{file: "13-executor-rest.yaml", context: true, fragment: true},
		{file: "14-executor-human.yaml", context: true, fragment: true},
		{file: "15-executor-noop.yaml", context: true, fragment: true},
		{file: "16-executor-workflow.yaml", context: true, fragment: true},
		{file: "17-putting-it-together.yaml", refused: "50:22: proxy.expose[1].guards[0].requires[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			block, err := os.ReadFile(filepath.Join("testdata", "seed004", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			data := block
			if tc.fragment {
				// proxy.expose[0].executor: indented by six spaces, under
				// three lines, so the fragment's line N is the file's N+3.
				var b strings.Builder
				b.WriteString("proxy:\n  expose:\n    - name: fragment\n")
				for line := range strings.Lines(string(block)) {
					b.WriteString("      " + line)
				}
				data = []byte(b.String())
			}
			if tc.context {
				data = append(append(data, '\n'), context...)
			}
			cfg, err := Parse(tc.file, data)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused:\n%v", err)
				}
				if len(cfg.Warnings()) > 0 && tc.file != "16-executor-workflow.yaml" {
					t.Errorf("warnings: %q", cfg.Warnings())
				}
				return
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Parse = %v, want a *LoadError", err)
			}
			msg := refusal
			if tc.message != "" {
				msg = tc.message
			}
			if want := tc.file + ":" + tc.refused + ": " + msg; le.Error() != want {
				t.Errorf("refused with\n%s\nwant\n%s", le.Error(), want)
			}
		})
	}
}

// TestSeed004CompleteWithProduces: the seed's complete configuration with
// the one line the refusal asks for, produces: [tests_passed] on
// run_tests, loads; its version and audit sink are read.
func TestSeed004CompleteWithProduces(t *testing.T) {
	block, err := os.ReadFile(filepath.Join("testdata", "seed004", "17-putting-it-together.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "    - name: run_tests\n"
	if !strings.Contains(string(block), anchor) {
		t.Fatal("the complete configuration has no run_tests entry")
	}
	data := strings.Replace(string(block), anchor, anchor+"      produces: [tests_passed]\n", 1)
	cfg, err := Parse("complete.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Version != "1.0.0" || cfg.Audit.Sink != AuditSinkStderr || cfg.AuditSinkFile() != "" {
		t.Errorf("version %q, audit %+v", cfg.Version, cfg.Audit)
	}
}

// TestVersion: the versions a file may declare.
func TestVersion(t *testing.T) {
	tests := []struct {
		value, problem string
	}{
		{`"1"`, ""},
		{`"1.4"`, ""},
		{`"1.0.0"`, ""},
		{`1.0.0`, ""}, // a plain scalar with two dots is a string
		{`"2.0.0"`, `version: declares the configuration format 2.0.0, which this gateway does not read: it reads 1.x; write the file for one of them (version: "1.0.0") or run a gateway that reads 2.x`},
		{`"0.9"`, `version: declares the configuration format 0.9, which this gateway does not read`},
		{`1`, `version: must be a string: quote it, as in version: "1.0.0"`},
		{`"v1"`, `version: must match the pattern`},
		{`"1.0.0-beta"`, `version: must match the pattern`},
	}
	for _, tc := range tests {
		_, err := Parse("v.yaml", []byte("version: "+tc.value+"\n"))
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("version: %s refused: %v", tc.value, err)
		case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), "v.yaml:1:10: "+tc.problem)):
			t.Errorf("version: %s: got %v, want %q", tc.value, err, tc.problem)
		}
	}
}

// TestAuditSinkFile: a relative sink path is relative to the
// configuration file's directory; stderr and store are not files.
func TestAuditSinkFile(t *testing.T) {
	for _, tc := range []struct{ source, sink, want string }{
		{"/etc/praxa/praxec.yaml", "audit.jsonl", "/etc/praxa/audit.jsonl"},
		{"/etc/praxa/praxec.yaml", "/var/log/praxa.jsonl", "/var/log/praxa.jsonl"},
		{"/etc/praxa/praxec.yaml", "stderr", ""},
		{"/etc/praxa/praxec.yaml", "store", ""},
		{"/etc/praxa/praxec.yaml", "", ""},
	} {
		c := &Config{Source: tc.source, Audit: Audit{Sink: tc.sink}}
		if got := c.AuditSinkFile(); got != tc.want {
			t.Errorf("sink %q in %s: %q, want %q", tc.sink, tc.source, got, tc.want)
		}
	}
}

// TestDocGuardSnippet: the guard snippet of docs/connections.md loads as
// it is printed.
func TestDocGuardSnippet(t *testing.T) {
	cfg, err := Parse("docs/connections.md", docSnippet(t, "connections.md", "- **Guard them.**", "  "))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, x := range cfg.Exposed() {
		for _, g := range x.Guards {
			kinds[g.Kind] = true
		}
	}
	if len(kinds) != 3 {
		t.Errorf("the snippet shows the guard kinds %v, want evidence, argument and schedule", kinds)
	}
}
