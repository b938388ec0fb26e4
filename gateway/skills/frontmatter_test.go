package skills

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/internal/golden"
)

// frontMatterCases reach the YAML library's errors inside front matter
// (whose lines are the file's lines less one) and every refusal of the
// front matter reader.
var frontMatterCases = []struct{ name, src string }{
	{"good", good},
	{"flow sequence unclosed", "---\nid: a\ntags: [a, b\nversion: 1.0.0\n---\nbody\n"},
	{"flow sequence unclosed on line 1", "---\nid: [a\n---\nbody\n"},
	{"flow mapping unclosed", "---\nid: a\nevidence: {state: draft\ntitle: t\n---\nbody\n"},
	{"block sequence indicator", "---\nid: a\ntags:\n  - a\n  b: c\n---\nbody\n"},
	{"expected key", "---\nid: a\nevidence:\n  state: draft\n x: 1\n---\nbody\n"},
	{"expected node content", "---\nid: a\ntags: [a, , b]\n---\nbody\n"},
	{"expected node content on line 1", "---\n[a, , b]\n---\nbody\n"},
	{"undefined tag handle", "---\nid: a\ntitle: !x!y t\n---\nbody\n"},
	{"directive", "---\n%YAML 1.1\nid: a\n---\nbody\n"},
	{"mapping value", "---\nid: a\ntitle: a: b\n---\nbody\n"},
	{"mapping value on line 1", "---\nid: a: b\n---\nbody\n"},
	{"tab indentation", "---\nid: a\nevidence:\n\tstate: draft\n---\nbody\n"},
	{"quoted scalar unclosed", "---\nid: a\ntitle: 'x\n---\nbody\n"},
	{"unknown escape", "---\nid: a\ntitle: \"\\q\"\n---\nbody\n"},
	{"control character", "---\nid: a\ntitle: x\x01y\n---\nbody\n"},
	{"C1 character", "---\nid: a\nversion: 1.0.0\ntitle: x\u0080y\nevidence: {state: draft}\n---\nbody\n"},
	{"DEL character in a comment", "---\nid: a # \x7f\nversion: 1.0.0\ntitle: t\nevidence: {state: draft}\n---\nbody\n"},
	{"invalid escape", "---\nid: a\ntitle: \"\\xZZ\"\n---\nbody\n"},
	{"escaped apostrophe", "---\nid: a\nversion: 1.0.0\ntitle: \"don\\'t\"\nevidence: {state: draft}\n---\nbody\n"},
	{"comment right after a flow sequence", "---\nid: a\nversion: 1.0.0\ntitle: t\ntags: [a]# c\nevidence: {state: draft}\n---\nbody\n"},
	{"tab on a blank line", "---\nid: a\nversion: 1.0.0\n\t\ntitle: t\nevidence: {state: draft}\n---\nbody\n"},
	{"alias", "---\nid: a\ntitle: *x\n---\nbody\n"},
	{"two documents", "---\nid: a\n...\ntitle: t\n---\nbody\n"},
	{"not a mapping", "---\n- a\n---\nbody\n"},
	{"scalar", "---\njust text\n---\nbody\n"},
	{"null", "---\n~\n---\nbody\n"},
	{"comments only", "---\n# nothing\n---\nbody\n"},
	{"missing fields", "---\ndescription: d\n---\nbody\n"},
	{"bad values", "---\nid: not an id\nversion: 1.02\ntitle: ''\ntags: [a, a]\nevidence:\n  state: approved\n  reviewedAt: yesterday\n  extra: 1\nowner: me\n---\nbody\n"},
	{"types", "---\nid: a\nversion: 1.0.0\ntitle: yes\ntags: x\nevidence: draft\n---\nbody\n"},
	{"booleans and nulls", "---\nid: a\nversion: 1.0.0\ntitle: true\ndescription:\nevidence: {state: draft}\n---\nbody\n"},
	{"duplicate key", "---\nid: a\nid: b\nversion: 1.0.0\ntitle: t\nevidence: {state: draft}\n---\nbody\n"},
	{"anchor and tag", "---\nid: &x a\nversion: !!str 1.0.0\ntitle: t\nevidence: {state: draft}\n---\nbody\n"},
	{"anchored key and alias key", "---\n&k id: a\n*k : b\nversion: 1.0.0\ntitle: t\nevidence: {state: draft}\n---\nbody\n"},
	{"non-string keys", "---\n1: a\n[x]: b\n? {y: 1}\n: c\nid: a\nversion: 1.0.0\ntitle: t\nevidence: {state: draft}\n---\nbody\n"},
	{"numbers and dates", "---\nid: 7\nversion: 1.2\ntitle: 2025-05-02\ndescription: 1e3\ntags: [0x1F, 0o17, .inf]\nevidence: {state: draft, reviewedAt: 2025-05-02}\n---\nbody\n"},
	{"non-specific tags", "---\nid: ! a\nversion: ! 1.0\ntitle: ! true\ndescription: !\ntags: ! [! x, ! 7]\nevidence: ! {state: ! draft}\n---\nbody\n"},
	{"custom tags", "---\nid: !x a\nversion: !!int 1\ntitle: t\nevidence: {state: draft}\n---\nbody\n"},
	{"CRLF", "---\r\nid: a\r\nversion: 1.0.0\r\ntitle: t\r\nevidence:\r\n  state: draft\r\n---\r\nbody\r\n"},
	{"byte order mark", "\ufeff---\nid: a\nversion: 1.0.0\ntitle: t\nevidence: {state: draft}\n---\nbody\n"},
	{"closed with dots", "---\nid: a\nversion: 1.0.0\ntitle: t\nevidence: {state: draft}\n...\nbody\n"},
	{"empty body", "---\nid: a\nversion: 1.0.0\ntitle: t\nevidence: {state: draft}\n---\n\n  \n"},
	{"block scalars", "---\nid: a\nversion: 1.0.0\ntitle: |\n  two\n  lines\ndescription: >-\n  folded\n  text\nevidence: {state: draft}\n---\nbody\n"},
}

// TestParseFileGolden holds the front matter reader to
// testdata/frontmatter.golden: for the example skills and every
// frontMatterCases input, either what was read or the problems as they are
// printed (FILE:LINE:COLUMN: FIELD: MESSAGE).
func TestParseFileGolden(t *testing.T) {
	type input struct {
		name string
		data []byte
	}
	var inputs []input
	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "skills", "*.md"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no example skills: %v", err)
	}
	for _, path := range examples {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{"examples/skills/" + filepath.Base(path), data})
	}
	for _, c := range frontMatterCases {
		inputs = append(inputs, input{c.name, []byte(c.src)})
	}
	var b bytes.Buffer
	for _, in := range inputs {
		fmt.Fprintf(&b, "=== %s\n", in.name)
		v, problems := parseFile(in.name, in.data)
		if len(problems) > 0 {
			b.WriteString((&config.LoadError{File: in.name, Problems: problems}).Error() + "\n")
			continue
		}
		read, err := json.Marshal(struct {
			ID, Version, Title, Description string
			Tags                            []string
			Evidence                        Evidence
			VersionAt                       string
		}{v.ID, v.Version, v.Title, v.Description, v.Tags, v.Evidence, fmt.Sprintf("%d:%d", v.versionLine, v.versionColumn)})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n", read)
	}
	golden.CheckSections(t, filepath.Join("testdata", "frontmatter.golden"), b.Bytes(), "")
}
