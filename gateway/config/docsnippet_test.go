package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docSnippet is the first yaml block after marker in docs/page, its lines
// less indent (the block's indentation in a list item): the configuration
// a reader copies from the page.
func docSnippet(t *testing.T, page, marker, indent string) []byte {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), marker)
	if !ok {
		t.Fatalf("docs/%s has no %q", page, marker)
	}
	_, rest, ok = strings.Cut(rest, indent+"```yaml\n")
	block, _, ok2 := strings.Cut(rest, indent+"```\n")
	if !ok || !ok2 {
		t.Fatalf("docs/%s has no yaml block after %q", page, marker)
	}
	var b strings.Builder
	for line := range strings.Lines(block) {
		b.WriteString(strings.TrimPrefix(line, indent))
	}
	return []byte(b.String())
}
