package strictjson_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/praxa/praxa/gateway/strictjson"
)

// TestPlain: Plain holds exactly for what encoding/json decodes into an
// any, which is what ViaJSON gives back.
func TestPlain(t *testing.T) {
	for _, c := range []struct {
		v     any
		plain bool
	}{
		{nil, true}, {true, true}, {"x", true}, {1.5, true},
		{map[string]any{"a": []any{1.0, "b", nil, map[string]any{}}}, true},
		{3, false}, {json.Number("3"), false}, {[]string{"a"}, false},
		{map[string]any{"n": 3}, false}, {struct{ A int }{1}, false},
		{math.NaN(), false}, {math.Inf(1), false},
	} {
		if got := strictjson.Plain(c.v); got != c.plain {
			t.Errorf("Plain(%#v) = %v, want %v", c.v, got, c.plain)
		}
		via, ok := strictjson.ViaJSON(c.v)
		if !ok {
			if f, isFloat := c.v.(float64); !isFloat || !(math.IsNaN(f) || math.IsInf(f, 0)) {
				t.Errorf("ViaJSON(%#v) failed", c.v)
			}
			continue
		}
		if !strictjson.Plain(via) || (c.plain && !reflect.DeepEqual(via, c.v)) {
			t.Errorf("ViaJSON(%#v) = %#v", c.v, via)
		}
	}
}
