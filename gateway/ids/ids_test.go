package ids

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		name string
		mint func() string
		re   *regexp.Regexp
	}{
		{"New", func() string { return New("run") }, regexp.MustCompile(`^run_[a-z2-7]{26}$`)},
		{"Request", Request, regexp.MustCompile(`^[0-9a-f]{24}$`)},
		{"Trace", Trace, regexp.MustCompile(`^[0-9a-f]{32}$`)},
		{"Span", Span, regexp.MustCompile(`^[0-9a-f]{16}$`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]bool{}
			for range 1000 {
				id := tc.mint()
				if !tc.re.MatchString(id) {
					t.Fatalf("%q does not match %s", id, tc.re)
				}
				if seen[id] {
					t.Fatalf("%q minted twice", id)
				}
				seen[id] = true
			}
		})
	}
}

func BenchmarkRequest(b *testing.B) {
	for b.Loop() {
		Request()
	}
}

// TestTraceIsTimeOrdered checks the UUIDv7-like layout: trace ids minted
// later never sort before earlier ones once the millisecond has changed,
// and the random tail differs within one millisecond.
func TestTraceIsTimeOrdered(t *testing.T) {
	first := Trace()
	deadline := time.Now().Add(5 * time.Second)
	second := Trace()
	for second[:12] == first[:12] {
		if time.Now().After(deadline) {
			t.Fatal("the time prefix never changed")
		}
		time.Sleep(time.Millisecond) // Trace reads the wall clock: its millisecond must really change
		second = Trace()
	}
	if second < first {
		t.Fatalf("%s minted after %s sorts before it", second, first)
	}
	ms, err := strconv.ParseUint(second[:12], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(time.UnixMilli(int64(ms))); d < 0 || d > time.Minute {
		t.Fatalf("the prefix %s is not the current time (off by %v)", second[:12], d)
	}
}

// TestNewSharesAPrefixWithinAMillisecondRange: object ids minted close in
// time share their leading letters (the time), and differ in their random
// tail.
func TestNewSharesAPrefixWithinAMillisecondRange(t *testing.T) {
	a, b := New("int"), New("int")
	// 8 letters are 40 bits: the top of a 48-bit millisecond count, which
	// changes every 256 ms; allow one change between the two calls.
	if a[:4+8] != b[:4+8] {
		a, b = New("int"), New("int")
	}
	if a[:4+8] != b[:4+8] {
		t.Errorf("%s and %s, minted together, share no time prefix", a, b)
	}
	if a == b || a[4+10:] == b[4+10:] {
		t.Errorf("%s and %s share their random tail", a, b)
	}
}

// traceparentRE is the W3C traceparent of version 00's layout; oracle
// applies the rules ParseTraceparent adds to it.
var traceparentRE = regexp.MustCompile(`^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$`)

func oracle(h string) (string, bool) {
	m := traceparentRE.FindStringSubmatch(h)
	if m == nil || m[1] == "ff" || m[2] == "00000000000000000000000000000000" || m[3] == "0000000000000000" {
		return "", false
	}
	return m[2], true
}

func TestParseTraceparent(t *testing.T) {
	const trace, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"00-" + trace + "-" + parent + "-01", trace},
		{"01-" + trace + "-" + parent + "-00", trace},
		{"ff-" + trace + "-" + parent + "-01", ""},
		{"00-00000000000000000000000000000000-" + parent + "-01", ""},
		{"00-" + trace + "-0000000000000000-01", ""},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-" + parent + "-01", ""},
		{"00-" + trace + "-" + parent + "-01-extra", ""},
		{"00-" + trace + "-" + parent, ""},
		{"", ""},
		{"garbage", ""},
	} {
		got, ok := ParseTraceparent(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("ParseTraceparent(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

func FuzzParseTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Fuzz(func(t *testing.T, h string) {
		got, ok := ParseTraceparent(h)
		want, wantOK := oracle(h)
		if got != want || ok != wantOK {
			t.Errorf("ParseTraceparent(%q) = %q, %v; the expression says %q, %v", h, got, ok, want, wantOK)
		}
	})
}

// TestTraceparent: a minted traceparent carries its trace and reads back.
func TestTraceparent(t *testing.T) {
	trace := Trace()
	for range 100 {
		if got, ok := ParseTraceparent(Traceparent(trace)); !ok || got != trace {
			t.Fatalf("ParseTraceparent(Traceparent(%q)) = %q, %v", trace, got, ok)
		}
	}
}
