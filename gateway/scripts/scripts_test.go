package scripts

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
	"github.com/praxa/praxa/internal/testkit"
)

// writeScripts writes files (path below the directory → text) into a new
// directory and returns it.
func writeScripts(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// load loads the scripts of files.
func load(t *testing.T, files map[string]string) *Catalog {
	t.Helper()
	dir := writeScripts(t, files)
	c, err := Load(os.DirFS(dir), ".", "scripts")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoad(t *testing.T) {
	c := load(t, map[string]string{
		"quote.cel": `// Quote an order: the total of its items.
// The discount is the context's, in percent.
// tags: pricing, quote
{"total": 1}`,
		"pricing/tax.cel":  `{"tax": 0}`,
		".hidden/skip.cel": `not a script`,
		"notes.txt":        `not a script either`,
	})
	if got, want := c.IDs(), []string{"pricing.tax", "quote"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("IDs = %v, want %v", got, want)
	}
	q, _ := c.Lookup("quote")
	if q.Title != "Quote an order: the total of its items." || q.Description != "The discount is the context's, in percent." ||
		!reflect.DeepEqual(q.Tags, []string{"pricing", "quote"}) || !strings.HasSuffix(q.Source, `{"total": 1}`) {
		t.Errorf("quote = %+v", q)
	}
	if tax, _ := c.Lookup("pricing.tax"); tax.Title != "pricing.tax" || tax.File != "scripts/pricing/tax.cel" {
		t.Errorf("pricing.tax = %+v", tax)
	}
}

func TestLoadProblems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"SyntaxError", map[string]string{"a.cel": "// A\n{\"x\": 1 +}"},
			[]string{"scripts/a.cel:2:10: Syntax error: mismatched input '}' expecting"}},
		{"UndeclaredClock", map[string]string{"a.cel": `{"at": now()}`},
			[]string{"scripts/a.cel:1:11: undeclared reference to 'now'"}},
		{"UndeclaredVariable", map[string]string{"a.cel": `{"x": env.HOME}`},
			[]string{"scripts/a.cel:1:7: undeclared reference to 'env'"}},
		{"TimeZone", map[string]string{"a.cel": "{\n \"h\": timestamp(arguments.at).getHours(\"Europe/Paris\")}"},
			[]string{"scripts/a.cel:2:39: a time zone reads the system's time-zone database"}},
		{"BadID", map[string]string{"my script.cel": `{}`},
			[]string{`scripts/my script.cel: "my script" is not a valid script id`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeScripts(t, tc.files)
			c, err := Load(os.DirFS(dir), ".", "scripts")
			if err == nil {
				t.Fatalf("Load = %v, want an error", c.IDs())
			}
			var le *config.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Load = %v, want a *config.LoadError", err)
			}
			lines := strings.Split(err.Error(), "\n")
			for i, w := range tc.want {
				if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
					t.Errorf("Load:\n%v\nwant lines starting with:\n%s", err, strings.Join(tc.want, "\n"))
					break
				}
			}
		})
	}
	if _, err := Load(os.DirFS(t.TempDir()), "missing", "cfg/missing"); err == nil || err.Error() != "scripts: the directory cfg/missing (scripts.dir) does not exist" {
		t.Errorf("Load of a missing directory = %v", err)
	}
}

func TestRun(t *testing.T) {
	c := load(t, map[string]string{
		"quote.cel": `// Quote an order.
{
  "total": arguments.items.map(i, double(i.price) * double(i.qty))
             .exists(x, x < 0.0) ? 0.0 : double(arguments.items.size()),
  "customer": context.customer,
  "region": input.region,
  "keys": arguments.tiers.map(k, k),
  "literal": {"b": 1, "a": 2, "c": 3}.filter(k, k != "c"),
  "big": 9007199254740993,
  "half": 0.5,
  "sums": [sum([1, 2, 3]), sum([1, 2.5]), sum([])],
  "when": timestamp("2026-01-02T03:04:05Z") + duration("90m"),
}`,
	})
	q, _ := c.Lookup("quote")
	scope := workflow.Scope{
		Arguments: testkit.MustDecodeObject(t, `{"items": [{"price": 2.5, "qty": 2}, {"price": 1, "qty": 3}],
			"tiers": {"gold": 1, "bronze": 3, "silver": 2, "a": 0, "z": 9, "m": 5, "k": 4, "b": 7}}`),
		Context: map[string]any{"customer": "acme"},
		Input:   map[string]any{"region": "eu"},
	}
	want := map[string]any{"total": json.Number("2"), "customer": "acme", "region": "eu",
		"keys":    []any{"a", "b", "bronze", "gold", "k", "m", "silver", "z"},
		"literal": []any{"a", "b"}, "big": json.Number("9007199254740993"), "half": json.Number("0.5"),
		"sums": []any{json.Number("6"), json.Number("3.5"), json.Number("0")},
		"when": "2026-01-02T04:34:05Z"}
	// Every run gives the same output: comprehensions walk maps in key
	// order, whatever order Go's maps iterate in.
	for range 20 {
		got, err := q.Run(context.Background(), scope, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Run = %#v\nwant %#v", got, want)
		}
	}
}

func TestRunLimits(t *testing.T) {
	c := load(t, map[string]string{
		"square.cel":   `{"n": arguments.items.map(i, arguments.items.map(j, i * j).size()).size()}`,
		"concat.cel":   `{"s": arguments.s + arguments.s + arguments.s + arguments.s}`,
		"echo.cel":     `{"items": arguments.items}`,
		"list.cel":     `[1, 2]`,
		"fails.cel":    `{"x": arguments.n / 0}`,
		"sum.cel":      `{"x": sum(arguments.items)}`,
		"overflow.cel": `{"x": sum([9223372036854775807, 1])}`,
	})
	items := make([]any, 2000)
	for i := range items {
		items[i] = json.Number("1")
	}
	big := map[string]any{"items": items}
	for _, tc := range []struct {
		name, script string
		args         map[string]any
		lim          Limits
		reason, msg  string
	}{
		// 2000 × 2000 steps: the default budget of a million ends it (a
		// time limit of a minute leaves the budget to end it, however
		// slow the machine).
		{"Steps", "square", big, Limits{Cost: DefaultLimits.Cost, Timeout: time.Minute, OutputValues: 100, OutputBytes: 100},
			ReasonCost, "script square: exceeded its cost budget of 1000000"},
		// Four steps, but each concatenation costs a tenth of the bytes it
		// copies: the budget bounds what a script allocates.
		{"Memory", "concat", map[string]any{"s": strings.Repeat("x", 10_000)},
			Limits{Cost: 1000, Timeout: time.Second, OutputValues: 100, OutputBytes: 1 << 20}, ReasonCost,
			"script concat: exceeded its cost budget of 1000"},
		{"Time", "square", big, Limits{Cost: 1 << 40, Timeout: time.Nanosecond, OutputValues: 100, OutputBytes: 100},
			ReasonTimeout, "script square: ran longer than its time limit of 1ns"},
		{"OutputValues", "echo", big, Limits{Cost: 1 << 20, Timeout: time.Second, OutputValues: 100, OutputBytes: 1 << 20},
			ReasonOutput, "script echo: its value is larger than a script's output may be"},
		{"OutputBytes", "concat", map[string]any{"s": "xyz"}, Limits{Cost: 1 << 20, Timeout: time.Second, OutputValues: 100, OutputBytes: 10},
			ReasonOutput, "script concat: its value is larger than a script's output may be"},
		{"NotAnObject", "list", nil, DefaultLimits, ReasonFailed, "script list: its value is a list, not a map"},
		{"Failure", "fails", map[string]any{"n": json.Number("1")}, DefaultLimits, ReasonFailed, "script fails: division by zero"},
		{"SumOfStrings", "sum", map[string]any{"items": []any{"a"}}, DefaultLimits, ReasonFailed, "script sum: sum: string is not a number"},
		{"SumOverflow", "overflow", nil, DefaultLimits, ReasonFailed, "script overflow: sum: integer overflow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := c.Lookup(tc.script)
			out, err := s.Run(context.Background(), workflow.Scope{Arguments: tc.args}, tc.lim)
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Run = %d members, %v; want an *Error", len(out), err)
			}
			if se.Reason != tc.reason || !strings.HasPrefix(err.Error(), tc.msg) || out != nil {
				t.Errorf("Run = %d members, %v (reason %s); want reason %s, %q…", len(out), err, se.Reason, tc.reason, tc.msg)
			}
		})
	}
}

// TestCatalogRun runs scripts as the engine does (workflow.Runner): a
// failure is a contract error with a link to the script.
func TestCatalogRun(t *testing.T) {
	c := load(t, map[string]string{"half.cel": `{"half": arguments.n / 2}`})
	var r workflow.Runner = c
	out, err := r.Run(context.Background(), config.Executor{Kind: config.ExecutorScript, Script: "half"},
		workflow.Scope{Arguments: map[string]any{"n": json.Number("8")}})
	if err != nil || !reflect.DeepEqual(out, map[string]any{"half": json.Number("4")}) {
		t.Fatalf("Run = %v, %v", out, err)
	}
	_, err = r.Run(context.Background(), config.Executor{Kind: config.ExecutorScript, Script: "half"},
		workflow.Scope{Arguments: map[string]any{"n": "eight"}})
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeUpstreamFailed || len(ce.Links) != 1 || ce.Links[0].Args["subject"] != "half" ||
		!strings.Contains(ce.Message, "no such overload") || !strings.HasSuffix(ce.Message, "the move did not happen") {
		t.Errorf("Run with a string = %#v", err)
	}
	_, err = r.Run(context.Background(), config.Executor{Kind: config.ExecutorScript, Script: "gone"}, workflow.Scope{})
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, `there is no script "gone"`) {
		t.Errorf("Run of an unknown script = %v", err)
	}
}

func TestFromConfig(t *testing.T) {
	dir := writeScripts(t, map[string]string{"scripts/quote.cel": `{}`})
	cfgPath := filepath.Join(dir, "praxec.yaml")
	yaml := `scripts: {dir: scripts}
workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {terminal: true}}
    transitions:
      - {name: ok, from: a, to: b, executor: {kind: script, script: quote}}
      - {name: typo, from: a, to: b, executor: {kind: script, script: qoute}}
proxy:
  expose:
    - name: c
      executor: {kind: script, script: tax}
`
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	_, err = FromConfig(cfg)
	scripts := filepath.ToSlash(filepath.Join(dir, "scripts"))
	want := cfgPath + ": workflows.w.transitions[1].executor.script: names no script of " + scripts + " (a file qoute.cel); its scripts: quote\n" +
		cfgPath + ": proxy.expose[0].executor.script: names no script of " + scripts + " (a file tax.cel); its scripts: quote"
	if err == nil || err.Error() != want {
		t.Errorf("FromConfig:\n%v\nwant:\n%s", err, want)
	}
}
