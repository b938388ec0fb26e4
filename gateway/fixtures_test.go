package gateway

import (
	"os"
	"testing"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// compileFixture parses, as the configuration name, the files named (paths
// from this package's folder: testdata/, gatewaytest/testdata/) read one
// after the other, and compiles its workflows; it fails t on any error.
func compileFixture(t *testing.T, name string, files ...string) (*config.Config, *workflow.Registry) {
	t.Helper()
	var src []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	cfg, err := config.Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := workflow.Compile(cfg.Workflows)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, reg
}
