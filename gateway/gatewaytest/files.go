package gatewaytest

import (
	"os"
	"strings"
	"testing"
)

// FileCount is how many times s stands in the file at path (0 while there
// is no such file): the runs of a command that appends s to a marker file
// each time it runs. An error reading an existing file fails t.
func FileCount(t testing.TB, path, s string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), s)
}
