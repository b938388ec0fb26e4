package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/praxa/praxa/internal/golden"
)

// yamlCases reach every error the YAML library reports (each of the
// parser's messages, the scanner's, the reader's) and every refusal of the
// converter, at the first line and further down, where the line a message
// names is worked out differently. They are FuzzParse seeds too.
var yamlCases = []struct{ name, data string }{
	// The parser.
	{"flow sequence unclosed", "server:\n  addr: 127.0.0.1:8080\n  limits: [1, 2\nauth: {}\n"},
	{"flow sequence unclosed on line 1", "[1, 2\nb: 3\n"},
	{"flow sequence unclosed at the end", "a: 1\nb: [1, 2"},
	{"flow mapping unclosed", "a: 1\nb: {x: 1\nc: 2\n"},
	{"flow mapping unclosed on line 1", "a: {x: 1\nb: 2\n"},
	{"block sequence indicator", "x: 1\na:\n  - b\n  c: d\n"},
	{"block sequence indicator on line 1", "- - a\n  b: c\n"},
	{"directive without a document start", "%YAML 1.1\na: 1\n"},
	{"document start after an explicit end", "a: 1\n...\nb: 2\n"},
	{"document start after a directive and an end", "%YAML 1.1\n---\na: 1\n...\nb\n"},
	{"expected key", "a:\n  b: 1\n c: 2\n"},
	{"expected key on line 1", "a: [1, ]]\n"},
	{"expected node content", "x: 1\na: [b, , c]\n"},
	{"expected node content on line 1", "[a, , b]\n"},
	{"expected node content in a mapping", "{a: 1, : 2, ]}\n"},
	{"duplicate TAG directive", "%TAG ! tag:a,\n%TAG ! tag:b,\n---\na: 1\n"},
	{"duplicate YAML directive", "%YAML 1.1\n%YAML 1.1\n---\na: 1\n"},
	{"incompatible YAML document", "%YAML 2.0\n---\na: 1\n"},
	{"YAML 1.2 directive", "%YAML 1.2\n---\na: 1\n"},
	{"undefined tag handle", "x: 1\na: !x!y 1\n"},
	{"undefined tag handle on line 1", "a: !x!y 1\n"},
	{"directive after a document", "a: 1\n%YAML 1.1\n---\nb: 2\n"},
	{"directive after an ended document", "a: 1\n...\n%YAML 1.1\n---\nb: 2\n"},
	// The scanner.
	{"mapping value", "x: 1\ny: 2\na: b: c\n"},
	{"mapping value on line 1", "a: b: c\n"},
	{"block sequence entry", "x: 1\na: - b\n"},
	{"block sequence entry on line 1", "a: - b\n"},
	{"tab indentation", "x: 1\ny: 2\nz:\n\ta: 1\n"},
	{"character that cannot start a token", "x: 1\na: @b\n"},
	{"character that cannot start a token on line 1", "a: `b\n"},
	{"simple key without colon", "x: 1\na:\n  - 1\n  x\n"},
	{"simple key after a sequence", "- a\nb: 1\n"},
	{"double-quoted scalar unclosed", "a: \"abc\n\nb: 1\n"},
	{"single-quoted scalar unclosed", "x: 1\na: 'x\n"},
	{"single-quoted scalar unclosed on line 1", "a: 'x"},
	{"unknown escape", "a: 1\nb: \"\\q\"\n"},
	{"unknown escape on line 1", "b: \"\\q\"\n"},
	{"invalid Unicode escape", "a: 1\nb: \"\\uD800\"\n"},
	{"short hexadecimal escape", "a: 1\nb: \"\\xZZ\"\n"},
	{"document indicator in a quoted scalar", "a: 'x\n---\ny'\n"},
	{"indentation indicator zero", "x: 1\na: |0\n  b\n"},
	{"block scalar header", "x: 1\na: |x\n  b\n"},
	{"anchor without a name", "x: 1\na: & b\n"},
	{"alias without a name", "x: 1\na: * b\n"},
	{"verbatim tag unclosed", "x: 1\na: !<tag:x b\n"},
	{"tag URI escape", "x: 1\na: !e%zz b\n"},
	{"unknown directive", "%FOO bar\n---\na: 1\n"},
	{"YAML directive without a version", "%YAML\n---\na: 1\n"},
	{"YAML directive version too long", "%YAML 1.1234567890\n---\na: 1\n"},
	{"TAG directive without a prefix", "%TAG !x!\n---\na: 1\n"},
	{"mapping key in flow", "x: 1\na: [? b]\n? c\n"},
	{"plain scalar with a tab", "a:\n  b: 1\n\t  c: 2\n"},
	{"flow nested too deep", "a: " + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "\n"},
	{"block nested too deep", strings.Repeat("- ", 10001) + "a\n"},
	{"flow nested too deep on line 2", "x: 1\na: " + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "\n"},
	{"block nested too deep on line 2", "x:\n" + strings.Repeat("- ", 10001) + "a\n"},
	// The reader.
	{"invalid leading UTF-8 octet", "a: 1\nb: \xff\n"},
	{"invalid trailing UTF-8 octet", "a: \xc3\x28\n"},
	{"incomplete UTF-8 sequence", "a: \xe2\x82"},
	{"overlong UTF-8 sequence", "a: \xc0\xaf\n"},
	{"UTF-8 surrogate", "a: \xed\xa0\x80\n"},
	{"control character", "a: 1\nb: c\x01d\n"},
	{"DEL character", "a: c\x7fd\n"},
	{"DEL character in a comment", "a: 1 # c\x7fd\n"},
	{"C1 character", "a: 1\nb: \"c\u0080d\"\n"},
	{"C1 character after a syntax error", "a: b: c\n" + strings.Repeat("# padding\n", 60) + "d: \u009f\n"},
	{"syntax error after a C1 character", "a: \u009f\n" + strings.Repeat("# padding\n", 60) + "b: c: d\n"},
	{"C1 character across a read", strings.Repeat("#", 511) + "\u0080\n"},
	{"C1 character after invalid UTF-8", "a: \xff\u0080\n"},
	{"UTF-16LE", "\xff\xfea\x00:\x00 \x001\x00\n\x00"},
	{"UTF-16BE", "\xfe\xff\x00a\x00:\x00 \x001\x00\n"},
	{"UTF-16 incomplete character", "\xff\xfea\x00:"},
	{"UTF-16 low surrogate first", "\xff\xfea\x00:\x00 \x00\x00\xdc\n\x00"},
	{"UTF-16 surrogate pair incomplete", "\xff\xfea\x00:\x00 \x00\x00\xd8"},
	{"UTF-16 high surrogate without low", "\xff\xfea\x00:\x00 \x00\x00\xd8a\x00\n\x00"},
	{"UTF-8 byte order mark", "\ufeffa: 1\n"},
	// Documents.
	{"empty", ""},
	{"comments only", "# nothing\n\n# here\n"},
	{"document start only", "---\n"},
	{"document end only", "...\n"},
	{"null document", "~\n"},
	{"two documents", "a: 1\n---\nb: 2\n"},
	{"two document starts", "---\n---\n"},
	{"explicit documents", "--- a\n...\n--- b\n...\nc\n"},
	{"document with a directive", "%YAML 1.1\n---\nserver: {addr: x}\n"},
	{"scalar root", "--- |\n  text\n"},
	{"sequence root", "- a\n- b\n"},
	// Where go-yaml v4's scanner reads YAML 1.2 differently from v3's.
	{"escaped apostrophe", "a: 1\nb: \"don\\'t\"\n"},
	{"escaped slash", "a: 1\nb: \"https:\\/\\/x.example\"\n"},
	{"comment right after a flow sequence", "a: 1\nb: [1]# c\n"},
	{"comment right after a flow mapping", "a: 1\nb: {c: 1}# c\n"},
	{"comment right after a quoted scalar", "a: 1\nb: \"x\"# c\n"},
	{"tab on a blank line", "a:\n  b: 1\n\t\nc: 2\n"},
	{"tab on the last line", "a:\n  b: 1\n\t"},
	{"tab alone", "\t\n"},
	{"plain scalar starting with a colon in flow", "a: 1\nb: {c: :x}\n"},
	{"plain scalar starting with a question mark in flow", "a: 1\nb: [?x]\n"},
	{"colon before the end of a flow mapping", "a: 1\nb: {c:}\n"},
	{"colon before the end of a flow sequence", "a: 1\nb: [c:]\n"},
	{"simple key longer than 1024 characters", "a: 1\n" + strings.Repeat("k", 1100) + ": v\n"},
	{"empty key", "a: 1\n: v\n"},
	{"simple key continued on the next line", "a: 1\nx\n g: 1\n"},
	{"folded scalar root then text", ">\ny\n"},
	// The converter.
	{"anchor", "a: &x 1\nb: 2\n"},
	{"alias", "a: 1\nb: *x\n"},
	{"alias on line 1", "b: *x\n"},
	{"anchor and alias", "a: &x {c: 1}\nb: *x\n"},
	{"anchored key", "&k a: 1\n"},
	{"alias key", "a: &k b\n*k : 1\n"},
	{"merge key", "a: {c: 1}\nb:\n  <<: {c: 2}\n"},
	{"merge value", "a: <<\n"},
	{"complex key", "? [a]\n: b\n"},
	{"mapping key", "? {a: 1}\n: b\n"},
	{"integer key", "1: a\n"},
	{"null key", "~: a\n"},
	{"boolean key", "true: a\n"},
	{"float key", "1.5: a\n"},
	{"tagged string key", "!!str 1: a\n"},
	{"custom tag on a key", "!x a: 1\n"},
	{"duplicate key", "a: 1\nb: 2\na: 3\n"},
	{"duplicate key in flow", "x: {a: 1, a: 2}\n"},
	{"custom tag", "a: !foo b\n"},
	{"non-specific tag", "a: ! b\n"},
	{"non-specific tag on values", "a: ! 1\nb: ! true\nc: !\nd: ! ~\ne: ! 0x1F\nf: ! 2001-12-14\ng: ! <<\nh: ! 1.5\ni: ! yes\nj: ! \"1\"\nk: ! [1]\nl: ! {m: 1}\nn: ! a\n  b\n"},
	{"non-specific tag on a number key", "! 1: a\n"},
	{"non-specific tag on a merge key", "a: {b: 1}\nc:\n  ! <<: {b: 2}\n"},
	{"non-specific tag on an octal", "a: ! 0777\n"},
	{"non-specific tag on infinity", "a: ! .inf\n"},
	{"non-specific tag alone", "!\n"},
	{"binary tag", "a: !!binary aGVsbG8=\n"},
	{"set tag", "a: !!set {b: null}\n"},
	{"omap tag", "a: !!omap [b: 1]\n"},
	{"verbatim tag", "a: !<tag:yaml.org,2002:str> b\n"},
	{"verbatim custom tag", "a: !<tag:example.com,2000:x> b\n"},
	{"tag directive", "%TAG !e! tag:example.com,2000:\n---\na: !e!x b\n"},
	{"str tag on a mapping", "a: !!str {b: 1}\n"},
	{"map tag on a scalar", "a: !!map b\n"},
	{"seq tag on a mapping", "a: !!seq {b: 1}\n"},
	{"standard tags", "a: !!str 1\nb: !!int 2\nc: !!float 3\nd: !!bool true\ne: !!null ~\nf: !!timestamp 2001-12-14\ng: !!map {h: 1}\ni: !!seq [1]\n"},
	{"bad int tag", "a: !!int x\n"},
	{"bad float tag", "a: !!float x\n"},
	{"bad bool tag", "a: !!bool x\n"},
	{"bad null tag", "a: !!null x\n"},
	{"integers", "a: 0\nb: -1\nc: +7\nd: 0x1F\ne: -0x1f\nf: 0o17\ng: -0o7\nh: 123456789012345678901234567890\n"},
	{"octal", "a: 0777\n"},
	{"negative octal", "a: -012\n"},
	{"binary integer", "a: 0b101\n"},
	{"underscore integer", "a: 1_000\n"},
	{"sexagesimal", "a: 1:20\n"},
	{"floats", "a: 1.5\nb: -0.5\nc: 1e3\nd: 1E-7\ne: .5\nf: 5.\ng: 1e400\nh: 010.5\ni: 2.0\n"},
	{"infinity", "a: .inf\n"},
	{"negative infinity", "a: -.Inf\n"},
	{"not a number", "a: .nan\n"},
	{"leading-zero float", "a: 01e2\n"},
	{"booleans", "a: true\nb: False\nc: TRUE\nd: yes\ne: No\nf: on\ng: OFF\nh: y\ni: n\n"},
	{"nulls", "a:\nb: ~\nc: null\nd: Null\ne: NULL\nf: ''\n"},
	{"timestamps", "a: 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\n"},
	{"strings", "a: plain text\nb: 'single ''quoted'''\nc: \"double \\\"quoted\\\" \\u00e9 \\U0001F600\"\nd: \"\\t\\n\"\n"},
	{"block scalars", "a: |\n  line 1\n  line 2\nb: >\n  folded\n  text\nc: |-\n  kept\nd: >+\n  kept\n\ne: |2\n    indented\n"},
	{"multi-line plain", "a: one\n  two\n  three\nb: 'x\n\n  y'\n"},
	{"keys to escape", "a/b: 1\nc~d: 2\n\"e f\": 3\n\"\": 4\n1x: 5\n"},
	{"CRLF", "a: 1\r\nb:\r\n  - x\r\n  - y\r\n"},
	{"CR only", "a: 1\rb: 2\r"},
	{"line separator", "a: \"x\u2028y\"\nb: x\u2029y\n"},
	{"next line escape", "a: \"\\x85\"\n"},
	{"next line character", "a: x\u0085y\n"},
	{"next line in a key", "\"a\\x85\": 1\n"},
	{"C1 escape", "a: \"\\x80\"\n"},
	{"control escape in a key", "\"a\\x01\": 1\n"},
	{"noncharacter escape", "a: \"\\uFFFE\"\n"},
	{"noncharacter", "a: x\uffffy\n"},
	{"tab escape", "a: \"\\t\"\n"},
	{"invalid UTF-8 escape", "a: \"\\xff\"\n"},
	{"nested 64", strings.Repeat("[", 64) + strings.Repeat("]", 64) + "\n"},
	{"nested 65", "a: " + strings.Repeat("[", 65) + strings.Repeat("]", 65) + "\n"},
	{"nested block", "a:\n  b:\n    c:\n      - d:\n          e: [f, {g: h}]\n"},
	{"empty values", "a:\nb: []\nc: {}\nd:\n  -\n  - ~\n"},
	{"flow mapping with implicit nulls", "{a, b: , c: 1}\n"},
	{"flow sequence pairs", "[a: 1, b]\n"},
	{"comments", "# head\na: 1 # line\n# foot\nb:\n  # inside\n  c: 2\n"},
	{"trailing spaces and indentation", "a:   \n    b:    1   \n    c: 2\n"},
}

// TestParseYAMLGolden holds parseYAML, the loader's one way into YAML, to
// testdata/parseyaml.golden: for every example configuration, every file
// under testdata, every FuzzParse seed and kept input, and every yamlCases
// input, either the value and the position of every JSON Pointer in it, or
// the problems as praxa config validate prints them (FILE:LINE:COLUMN:
// FIELD: MESSAGE). Problems are positioned from the document value and
// positions alone, so this also pins every later problem's line and
// column.
func TestParseYAMLGolden(t *testing.T) {
	type input struct {
		name string
		data []byte
	}
	var inputs []input
	add := func(t *testing.T, path, name string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{name, data})
	}
	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, path := range examples {
		add(t, path, "examples/"+filepath.Base(path))
	}
	err = filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			add(t, path, filepath.ToSlash(path))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzParse", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range corpus {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data, err := fuzzCorpusBytes(raw)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		inputs = append(inputs, input{filepath.ToSlash(path), data})
	}
	for i, seed := range parseSeeds {
		inputs = append(inputs, input{"seed " + strconv.Itoa(i), []byte(seed)})
	}
	for _, c := range yamlCases {
		inputs = append(inputs, input{c.name, []byte(c.data)})
	}

	var b bytes.Buffer
	for _, in := range inputs {
		fmt.Fprintf(&b, "=== %s\n", in.name)
		doc, problems := parseYAML(in.data)
		if len(problems) > 0 {
			b.WriteString(newLoadError(in.name, problems).Error() + "\n")
			continue
		}
		v, err := json.Marshal(doc.value)
		if err != nil {
			t.Fatalf("%s: %v", in.name, err)
		}
		fmt.Fprintf(&b, "value %s\n", v)
		for _, p := range slices.Sorted(maps.Keys(doc.positions)) {
			pos := doc.positions[p]
			fmt.Fprintf(&b, "%q %d:%d", p, pos.Line, pos.Column)
			if pos.KeyLine != 0 || pos.KeyColumn != 0 {
				fmt.Fprintf(&b, " key %d:%d", pos.KeyLine, pos.KeyColumn)
			}
			if pos.implicitNull {
				b.WriteString(" implicit-null")
			}
			if pos.yaml11Bool {
				b.WriteString(" yaml11-bool")
			}
			b.WriteString("\n")
		}
	}
	golden.CheckSections(t, filepath.Join("testdata", "parseyaml.golden"), b.Bytes(), "")
}

// fuzzCorpusBytes decodes a kept fuzz input of one []byte argument (the
// "go test fuzz v1" file format).
func fuzzCorpusBytes(raw []byte) ([]byte, error) {
	lines := strings.SplitN(strings.TrimSpace(string(raw)), "\n", 2)
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		return nil, fmt.Errorf("not a go test fuzz v1 file")
	}
	arg, prefixed := strings.CutPrefix(lines[1], "[]byte(")
	arg, suffixed := strings.CutSuffix(arg, ")")
	if !prefixed || !suffixed {
		return nil, fmt.Errorf("not a single []byte argument: %s", lines[1])
	}
	s, err := strconv.Unquote(arg)
	return []byte(s), err
}
