package strictjson

import (
	"errors"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// FuzzBuild: on any text, Check's verdict aside, build never panics and
// fails only with malformed-json (where it loses its way) or the element
// bound's request-limits.
func FuzzBuild(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,"\u00e9",{"b":null}]}`, `{"a" 1}`, `[1}`, `{"a":tru}`, `"\`, `"\"`, `[1,`, `{"a":1,"b"`, `-`, `{1:2}`, `"x" 1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := build(data, 1<<30, false)
		if err == nil {
			return
		}
		var ce *contracts.Error
		if !errors.As(err, &ce) || ce.Code != contracts.CodeMalformedJSON {
			t.Fatalf("build(%q): %v", data, err)
		}
	})
}
