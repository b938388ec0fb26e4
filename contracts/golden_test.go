package contracts_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// update rewrites golden files instead of comparing against them:
//
//	go test ./contracts -run Golden -update
var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with the checked-in file at path, or rewrites the file
// when -update is set.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./contracts -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date (run go generate ./contracts, or go test ./contracts -update):\n%s",
			path, firstDifference(want, got))
	}
}

// firstDifference describes where two texts first differ, line by line.
func firstDifference(want, got []byte) string {
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
			return "line " + strconv.Itoa(i+1) + ":\n  file: " + w + "\n  code: " + g
		}
	}
	return "(texts differ only in line endings)"
}

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
	golden(t, "tools.json", got)

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
