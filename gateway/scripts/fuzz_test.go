package scripts

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/workflow"
	"github.com/praxa/praxa/internal/testkit"
)

// FuzzRun feeds untrusted arguments (any JSON object a move may carry) to
// a script that walks them: a run never panics, stays within its limits,
// answers JSON, and answers the same twice.
func FuzzRun(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": 1, "b": [1, 2.5, "x", null, true]}`, `{"m": {"z": 1, "a": {"k": []}}}`,
		`{"n": 9007199254740993, "f": 1e308, "g": -0.0}`, `{"s": "` + strings.Repeat("ab", 100) + `"}`} {
		f.Add(s)
	}
	c, err := compileOne(`{
  "keys": arguments.map(k, k),
  "strings": arguments.filter(k, type(arguments[k]) == string).map(k, arguments[k] + arguments[k]),
  "echo": arguments,
}`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string) {
		args, err := testkit.DecodeObject(data)
		if err != nil || args == nil {
			return
		}
		lim := DefaultLimits
		lim.Cost = 100_000
		out1, err1 := c.Run(context.Background(), workflow.Scope{Arguments: args}, lim)
		out2, err2 := c.Run(context.Background(), workflow.Scope{Arguments: args}, lim)
		if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(out1, out2) {
			t.Fatalf("two runs differ: %v, %v / %v, %v", out1, err1, out2, err2)
		}
		if err1 != nil {
			return
		}
		if _, err := json.Marshal(out1); err != nil {
			t.Fatalf("the output is not JSON: %v", err)
		}
	})
}

// FuzzCompile compiles any source: it never panics, and what compiles
// runs over empty inputs without panicking.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": arguments.x + 1}`, `[1, 2].map(x, x * 2)`, `{"a": {"b": 1}.map(k, k)}`,
		`timestamp("2020-01-01T00:00:00Z").getHours("UTC")`, `{"x": 1 +}`, strings.Repeat("(", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := compileOne(src)
		if err != nil {
			return
		}
		lim := DefaultLimits
		lim.Cost = 10_000
		_, _ = s.Run(context.Background(), workflow.Scope{}, lim)
	})
}

// compileOne compiles src as the script fuzz.
func compileOne(src string) (*Script, error) {
	s, problems := compile("fuzz", "fuzz.cel", src)
	if len(problems) > 0 {
		return nil, errors.New(problems[0].Message)
	}
	return s, nil
}
