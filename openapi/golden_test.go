package openapi_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/praxa/praxa/openapi"
)

var update = flag.Bool("update", false, "rewrite openapi.json from Build")

const goldenFile = "openapi.json"

// TestDocumentGolden holds the checked-in openapi.json to what Build
// generates; run "go test ./openapi -run Golden -update" or
// "go generate ./openapi" to rewrite it.
func TestDocumentGolden(t *testing.T) {
	got := mustJSON(t)
	if *update {
		if err := os.WriteFile(goldenFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (run go generate ./openapi)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale (run go generate ./openapi); first difference:\n%s", goldenFile, firstDiff(want, got))
	}
}

func TestBuildDeterministic(t *testing.T) {
	for _, tt := range []struct {
		name    string
		marshal func() ([]byte, error)
	}{
		{"JSON", func() ([]byte, error) { return marshal(openapi.MarshalJSON) }},
		{"YAML", func() ([]byte, error) { return marshal(openapi.MarshalYAML) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := tt.marshal()
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				b, err := tt.marshal()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a, b) {
					t.Fatalf("two builds differ:\n%s", firstDiff(a, b))
				}
			}
		})
	}
}

// firstDiff shows the first differing line of want and got.
func firstDiff(want, got []byte) string {
	wl := strings.Split(string(want), "\n")
	gl := strings.Split(string(got), "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n-want %s\n+got  %s", i+1, w, g)
		}
	}
	return "(no line differs)"
}
