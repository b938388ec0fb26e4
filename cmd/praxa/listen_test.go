package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBusyAddress: a listener whose address is taken names the setting
// that gave the address (the flag, server.addr, the environment variable)
// and an address free now on the same host, which can indeed be bound.
func TestBusyAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "praxec.yaml")
	if err := os.WriteFile(cfg, []byte("version: \"1.0.0\"\nserver:\n  addr: "+addr+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	for _, tc := range []struct {
		name  string
		args  []string
		env   map[string]string
		where string
		fix   string
	}{
		{"serve --addr", []string{"serve", "--addr", addr, "--data-dir", data}, nil, "(--addr)", "--addr "},
		{"serve server.addr", []string{"serve", "--config", cfg, "--data-dir", data}, nil, "(server.addr of " + cfg + "; --addr overrides it)", "--addr "},
		{"serve PRAXA_PPROF_ADDR", []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", data}, map[string]string{pprofEnv: addr}, "(" + pprofEnv + ")", pprofEnv + "="},
		{"mcp --metrics-addr", []string{"mcp", "--metrics-addr", addr, "--token", "x", "--data-dir", data}, nil, "(--metrics-addr)", "--metrics-addr "},
		{"conformance --issuer-addr", []string{"conformance", "http://127.0.0.1:1", "--issuer-addr", addr}, nil, "(--issuer-addr)", "--issuer-addr "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &environment{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return tc.env[k] }}
			if code := run(context.Background(), env, tc.args); code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, errb.String())
			}
			msg := errb.String()
			if !strings.Contains(msg, "listen on "+addr+" "+tc.where) || !strings.Contains(msg, "address already in use") {
				t.Errorf("does not name the address and where it came from %s:\n%s", tc.where, msg)
			}
			m := regexp.MustCompile(regexp.QuoteMeta(tc.fix) + `(127\.0\.0\.1:\d+) \(free now\)`).FindStringSubmatch(msg)
			if m == nil {
				t.Fatalf("suggests no free address as %q:\n%s", tc.fix, msg)
			}
			if m[1] == addr {
				t.Errorf("suggests the busy address itself: %s", msg)
			}
			ln, err := net.Listen("tcp", m[1])
			if err != nil {
				t.Errorf("the suggested address %s cannot be bound: %v", m[1], err)
			} else {
				ln.Close()
			}
		})
	}
}
