package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestOpenAPICommand(t *testing.T) {
	golden, err := os.ReadFile("../../openapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		check    func(t *testing.T, stdout []byte)
	}{
		{name: "OKDefaultJSON", args: []string{"openapi"}, check: func(t *testing.T, out []byte) {
			if !bytes.Equal(out, golden) {
				t.Error("praxa openapi does not print openapi/openapi.json")
			}
		}},
		{name: "OKYAML", args: []string{"openapi", "--format", "yaml"}, check: func(t *testing.T, out []byte) {
			if bytes.HasPrefix(out, []byte("{")) {
				t.Error("--format yaml printed JSON")
			}
			if _, err := openapi3.NewLoader().LoadFromData(out); err != nil {
				t.Errorf("the YAML does not load: %v", err)
			}
		}},
		{name: "ErrUnknownFormat", args: []string{"openapi", "--format", "xml"}, wantCode: 2},
		{name: "ErrExtraArgument", args: []string{"openapi", "extra"}, wantCode: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := &environment{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			if code := run(context.Background(), env, tt.args); code != tt.wantCode {
				t.Fatalf("run(%q) = %d, want %d; stderr: %s", tt.args, code, tt.wantCode, stderr.String())
			}
			if tt.check != nil {
				tt.check(t, stdout.Bytes())
			}
		})
	}
}
