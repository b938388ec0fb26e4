package op_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/praxa/praxa"

// features are the feature packages: each imports op, never the service,
// and the service imports none of them.
var features = []string{module + "/gateway/knowledge"}

// TestImportDirection: op imports neither the service nor a feature; a
// feature does not import the service; the service imports no feature
// (the runtimes wire them, in gateway/assembly); the pipeline's parts in
// packages of their own (the audit trail, the pins, canonical JSON, the
// catalogue) import
// neither.
func TestImportDirection(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not available")
	}
	// parts are pipeline parts the service imports; like op, they import
	// neither the service nor a feature.
	parts := []string{module + "/gateway/audit", module + "/gateway/pins", module + "/gateway/canonjson", module + "/gateway/catalogue"}
	pkgs := append(append([]string{module + "/gateway", module + "/gateway/op"}, parts...), features...)
	out, err := exec.Command(gobin, append([]string{"list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[f[0]] = map[string]bool{}
		for _, imp := range f[1:] {
			imports[f[0]][imp] = true
		}
	}
	forbidden := map[string][]string{
		module + "/gateway/op": append([]string{module + "/gateway"}, features...),
		module + "/gateway":    features,
	}
	for _, p := range parts {
		forbidden[p] = append([]string{module + "/gateway"}, features...)
	}
	for _, f := range features {
		forbidden[f] = []string{module + "/gateway"}
		if !imports[f][module+"/gateway/op"] {
			t.Errorf("%s does not import gateway/op: is it a feature package?", f)
		}
	}
	for pkg, not := range forbidden {
		if imports[pkg] == nil {
			t.Errorf("go list did not list %s", pkg)
		}
		for _, imp := range not {
			if imports[pkg][imp] {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}
