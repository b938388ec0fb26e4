// Package golden holds a test's output to a checked-in file: one
// comparison, one -update flag and one report of where the texts differ
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
	check(t, path, got, regenerate, FirstDifference)
}

// CheckSections is Check for a text of sections, each headed by a line
// "=== name": it reports every section that differs, whole.
func CheckSections(t testing.TB, path string, got []byte, regenerate string) {
	t.Helper()
	check(t, path, got, regenerate, sectionDiff)
}

func check(t testing.TB, path string, got []byte, regenerate string, diff func(want, got []byte) string) {
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
		t.Errorf("%s is out of date (run %s):\n%s", path, how, diff(want, got))
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

// sectionDiff shows the sections ("=== name" and the lines up to the
// next) that differ between want and got, and those got lost.
func sectionDiff(want, got []byte) string {
	split := func(s string) (names []string, text map[string]string) {
		text = map[string]string{}
		for _, sec := range strings.SplitAfter(s, "\n=== ") {
			name, _, _ := strings.Cut(strings.TrimPrefix(sec, "=== "), "\n")
			names = append(names, name)
			text[name] = "=== " + strings.TrimPrefix(strings.TrimSuffix(sec, "\n=== "), "=== ")
		}
		return names, text
	}
	wantNames, w := split(string(want))
	gotNames, g := split(string(got))
	var b strings.Builder
	for _, name := range gotNames {
		if w[name] != g[name] {
			b.WriteString("--- want\n" + w[name] + "\n+++ got\n" + g[name] + "\n")
		}
	}
	for _, name := range wantNames {
		if _, ok := g[name]; !ok {
			b.WriteString("--- want (gone)\n" + w[name] + "\n")
		}
	}
	return b.String()
}
