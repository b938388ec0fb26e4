package contracts_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/internal/golden"
)

// marshalGolden renders v as indented JSON ending in a newline.
func marshalGolden(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestToolsJSONGolden holds the checked-in tools.json, the list MCP hosts
// register, to the declarations. go generate ./contracts writes the same
// bytes.
func TestToolsJSONGolden(t *testing.T) {
	got, err := contracts.MarshalToolList(contracts.Tools())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "tools.json", got, "go generate ./contracts")

	// The file is a JSON array of the 14 tools in catalogue order.
	var decoded []map[string]any
	if err := json.Unmarshal(got, &decoded); err != nil {
		t.Fatalf("tools.json is not a JSON array of objects: %v", err)
	}
	names := contracts.Names()
	if len(decoded) != len(names) {
		t.Fatalf("tools.json holds %d tools, want %d", len(decoded), len(names))
	}
	for i, d := range decoded {
		if d["name"] != names[i] {
			t.Errorf("tools.json[%d].name = %v, want %s", i, d["name"], names[i])
		}
	}
}

// TestMarshalToolListDeterministic renders the list twice and from a fresh
// copy: the bytes never change.
func TestMarshalToolListDeterministic(t *testing.T) {
	a, err := contracts.MarshalToolList(contracts.Tools())
	if err != nil {
		t.Fatal(err)
	}
	b, err := contracts.MarshalToolList(contracts.Tools())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("MarshalToolList is not deterministic")
	}
	if !bytes.HasSuffix(a, []byte("]\n")) {
		t.Error("the tool list does not end in a newline after the array")
	}
}
