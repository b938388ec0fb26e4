package certs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCertificatesReachNoDecision holds the code to what the package
// documentation promises: certificates grant no authority. Outside its
// tests, only the files that list, import and configure certificates may
// import this package or read stored certificates, so no authentication,
// scope, tenancy, compartment, purpose or policy code can consult one.
// (gateway/contextrest proves the same from the outside: the same calls
// answer the same with and without a valid certificate.)
func TestCertificatesReachNoDecision(t *testing.T) {
	root := filepath.Join("..", "..")
	allowedImporters := []string{
		"examples/internal/gencerts/main.go", // signs the example certificates
		"gateway/gatewaytest/example.go",     // tests' harness: the example's issuers, for the knowledge tests
		"gateway/knowledge/certificates.go",  // aura_list_world_certificates
		"gateway/knowledge/imports.go",       // praxa certificates import
		"gateway/knowledge/knowledge.go",     // the knowledge's state holds the configured issuers; a reload stages them
	}
	allowedReaders := []string{"gateway/knowledge/certificates.go", "gateway/knowledge/imports.go"}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "gateway/certs/") || strings.HasPrefix(rel, "gateway/store/") {
			return nil // the package itself, and the drivers that store certificates
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/praxa/praxa/gateway/certs" && !slices.Contains(allowedImporters, rel) {
				t.Errorf("%s imports gateway/certs: certificates must not reach a decision", rel)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if ok && (sel.Sel.Name == "ListCertificates" || sel.Sel.Name == "GetCertificate") && !slices.Contains(allowedReaders, rel) {
				t.Errorf("%s: %s reads stored certificates", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
