// Package golden holds a test's output to a checked-in file: one
// comparison, one -update flag and one report of the first differing line
// for every golden-file test of the module.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// update rewrites golden files instead of comparing against them:
//
//	go test ./contracts -run Golden -update
var update = flag.Bool("update", false, "rewrite golden files from the code's output")

// Check compares got with the checked-in file at path, or rewrites the
// file when the test runs with -update. regenerate names the command that
// writes the file outside the tests ("go generate ./contracts"), if any.
func Check(t testing.TB, path string, got []byte, regenerate string) {
	t.Helper()
	how := "go test -update"
	if regenerate != "" {
		how = regenerate + ", or " + how
	}
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
		t.Fatalf("%v (run %s to create it)", err, how)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date (run %s):\n%s", path, how, FirstDifference(want, got))
	}
}

// FirstDifference describes where two texts first differ, line by line.
func FirstDifference(want, got []byte) string {
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
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return "(texts differ only in line endings)"
}
