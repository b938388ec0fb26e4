package canonjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCanonicalNumber: numbers equal as exact decimals have one form;
// distinct decimals never share it, however close as doubles.
func TestCanonicalNumber(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1", "1e0"}, {"1.0", "1e0"}, {"10e-1", "1e0"}, {"0.1e1", "1e0"}, {"1E0", "1e0"}, {"1e+0", "1e0"},
		{"100", "1e2"}, {"1e2", "1e2"}, {"1.50", "15e-1"}, {"-2.5", "-25e-1"},
		{"0", "0"}, {"-0", "0"}, {"0.000", "0"}, {"0e10", "0"},
		{"9007199254740993", "9007199254740993e0"}, {"9007199254740992", "9007199254740992e0"},
		{"1e400", "1e400"}, {"123456789012345678901234567890e-30", "12345678901234567890123456789e-29"},
	} {
		got, err := Number(c.in)
		if err != nil || got != c.want {
			t.Errorf("Number(%s) = %q, %v, want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "-", "1e", "1.2.3", "0x10", "1e1.5"} {
		if got, err := Number(bad); err == nil {
			t.Errorf("Number(%q) = %q, want an error", bad, got)
		}
	}
}

// TestWrite: members sorted, numbers in their one form, strings as
// encoding/json writes them; a value JSON cannot hold is an error.
func TestWrite(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(`{"b":[1.0,"x<y",null,true],"a":{"d":10e-1,"c":-0}}`))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Write(&b, v); err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{"c":0,"d":1e0},"b":[1e0,"x\u003cy",null,true]}`; b.String() != want {
		t.Errorf("Write = %s, want %s", b.String(), want)
	}
	if err := Write(&b, map[string]any{"f": func() {}}); err == nil {
		t.Errorf("Write(a func) = nil, want an error")
	}
}
