package openapi_test

import (
	"bytes"
	"testing"

	"github.com/praxa/praxa/internal/golden"
	"github.com/praxa/praxa/openapi"
)

const goldenFile = "openapi.json"

// TestDocumentGolden holds the checked-in openapi.json to what Build
// generates; run "go test ./openapi -run Golden -update" or
// "go generate ./openapi" to rewrite it.
func TestDocumentGolden(t *testing.T) {
	golden.Check(t, goldenFile, mustJSON(t), "go generate ./openapi")
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
					t.Fatalf("two builds differ:\n%s", golden.FirstDifference(a, b))
				}
			}
		})
	}
}
