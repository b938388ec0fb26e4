package contracts_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
)

var updateDoc = flag.Bool("update-doc", false, "rewrite docs/errors.md's table of error codes from the registry")

// The markers around docs/errors.md's table of error codes.
const (
	codesBegin = "<!-- error codes: generated from contracts.Codes(); go test ./contracts -run TestDocErrorCodes -update-doc -->\n"
	codesEnd   = "<!-- end of error codes -->\n"
)

// codeTable renders the registry as docs/errors.md shows it.
func codeTable() string {
	var b strings.Builder
	b.WriteString("| code | from | HTTP status | problem type slug | retryable | stop | title |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return ""
	}
	for _, info := range contracts.Codes() {
		from := "gateway"
		if info.Code.FromSeed() {
			from = "seeds/000"
		}
		slug := strings.TrimPrefix(info.Code.TypeURI(), "https://praxa.dev/problems/")
		fmt.Fprintf(&b, "| `%s` | %s | %d | `%s` | %s | %s | %s |\n", info.Code, from, info.Status, slug, yes(info.Retryable), yes(info.Stop), info.Title)
	}
	return b.String()
}

// TestDocErrorCodes: docs/errors.md's table of error codes is the
// registry's (every code the gateway answers, with its status and problem
// type), so the documentation cannot drift from the code.
func TestDocErrorCodes(t *testing.T) {
	path := filepath.Join("..", "docs", "errors.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	begin := strings.Index(doc, codesBegin)
	end := strings.Index(doc, codesEnd)
	if begin < 0 || end < begin {
		t.Fatalf("docs/errors.md has no table of error codes between %q and %q", codesBegin, codesEnd)
	}
	got, want := doc[begin+len(codesBegin):end], codeTable()
	if got == want {
		return
	}
	if *updateDoc {
		if err := os.WriteFile(path, []byte(doc[:begin+len(codesBegin)]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/errors.md's table of error codes is not the registry's; run go test ./contracts -run TestDocErrorCodes -update-doc. Want:\n%s", want)
}

// TestCodeSpelling: the codes seeds/000 defines are spelled as the seed
// spells them (upper snake case); the gateway's own are the slugs of their
// problem types (lower kebab case).
func TestCodeSpelling(t *testing.T) {
	seed := regexp.MustCompile(`^[A-Z]+(_[A-Z]+)*$`)
	own := regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	seeds := 0
	for _, info := range contracts.Codes() {
		c := info.Code
		switch {
		case c.FromSeed():
			seeds++
			if !seed.MatchString(string(c)) {
				t.Errorf("seed code %s is not upper snake case", c)
			}
		case !own.MatchString(string(c)) || !strings.HasSuffix(c.TypeURI(), "/"+string(c)):
			t.Errorf("the gateway's code %s is not its problem type's slug (%s)", c, c.TypeURI())
		}
	}
	// AMBIGUOUS_INTENT, INVALID_PARAMS, GUARD_REJECTED, INVALID_TRANSITION,
	// VERSION_CONFLICT, RUN_ID_ALREADY_RUNNING, LEXICON_WRITES_DISABLED and
	// SUBJECT_NEEDS_DEFINITION.
	if seeds != 8 {
		t.Errorf("%d seed codes registered, want the 8 of seeds/000", seeds)
	}
}
