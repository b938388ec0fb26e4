package mcpadapter

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	keyOld = bytes.Repeat([]byte("o"), MinRequestStateKey)
	keyNew = bytes.Repeat([]byte("n"), MinRequestStateKey)
)

func sampleState() RequestState {
	return RequestState{Kind: stateInput, Subject: "alice", Tenant: "acme", Tool: "aura_signal_mission",
		RunID: "wf_1", Version: 3, Signal: "request_release", Asked: []string{"version"}}
}

func TestRequestStateCodec(t *testing.T) {
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	oldOnly, err := NewRequestStateCodec([][]byte{keyOld}, clock)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := NewRequestStateCodec([][]byte{keyNew, keyOld}, clock)
	if err != nil {
		t.Fatal(err)
	}
	newOnly, err := NewRequestStateCodec([][]byte{keyNew}, clock)
	if err != nil {
		t.Fatal(err)
	}
	signedOld, err := oldOnly.Seal(sampleState())
	if err != nil {
		t.Fatal(err)
	}
	signedNew, err := rotated.Seal(sampleState())
	if err != nil {
		t.Fatal(err)
	}
	want := sampleState()
	want.Expires = now.Add(RequestStateTTL).Unix()
	tests := []struct {
		name  string
		codec *RequestStateCodec
		state string
		err   error
	}{
		{"same key", oldOnly, signedOld, nil},
		{"rotation: the old key still verifies", rotated, signedOld, nil},
		{"rotation: the new key signs", newOnly, signedNew, nil},
		{"the old key dropped", newOnly, signedOld, ErrStateTampered},
		{"signed by a key not held", oldOnly, signedNew, ErrStateTampered},
		{"empty", oldOnly, "", ErrStateTampered},
		{"no prefix", oldOnly, strings.TrimPrefix(signedOld, requestStatePrefix), ErrStateTampered},
		{"no MAC", oldOnly, signedOld[:strings.LastIndexByte(signedOld, '.')], ErrStateTampered},
		{"MAC cut", oldOnly, signedOld[:len(signedOld)-2], ErrStateTampered},
		{"too long", oldOnly, signedOld + strings.Repeat("A", maxRequestState), ErrStateTampered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.codec.Open(tt.state)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Open: %v, want %v", err, tt.err)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("Open: %+v, want %+v", got, want)
			}
		})
	}

	// Every single-byte change of the payload is refused.
	for i := len(requestStatePrefix); i < strings.LastIndexByte(signedOld, '.'); i++ {
		b := []byte(signedOld)
		b[i] ^= 0x01
		if _, err := oldOnly.Open(string(b)); !errors.Is(err, ErrStateTampered) {
			t.Fatalf("byte %d changed: %v", i, err)
		}
	}

	// Expiry.
	now = now.Add(RequestStateTTL)
	if _, err := oldOnly.Open(signedOld); !errors.Is(err, ErrStateExpired) {
		t.Errorf("Open at expiry: %v, want %v", err, ErrStateExpired)
	}
}

func TestRequestStateCheck(t *testing.T) {
	s := sampleState()
	tests := []struct {
		name string
		edit func(*RequestState)
		err  error
	}{
		{"the same call", func(*RequestState) {}, nil},
		{"another principal", func(w *RequestState) { w.Subject = "bob" }, ErrStateForeign},
		{"another tenant", func(w *RequestState) { w.Tenant = "globex" }, ErrStateForeign},
		{"another mission", func(w *RequestState) { w.RunID = "wf_2" }, ErrStateForeign},
		{"another move", func(w *RequestState) { w.Signal = "withdraw" }, ErrStateForeign},
		{"another tool", func(w *RequestState) { w.Tool = "aura_create_mission" }, ErrStateForeign},
		{"another kind", func(w *RequestState) { w.Kind = stateApproval }, ErrStateForeign},
		{"a version moved on", func(w *RequestState) { w.Version = 4 }, ErrStateReplayed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := sampleState()
			tt.edit(&want)
			if err := s.Check(want); !errors.Is(err, tt.err) {
				t.Errorf("Check: %v, want %v", err, tt.err)
			}
		})
	}
}

func TestRequestStateKeys(t *testing.T) {
	if _, err := NewRequestStateCodec(nil, nil); err == nil {
		t.Error("a codec without keys")
	}
	if _, err := NewRequestStateCodec([][]byte{[]byte("short")}, nil); err == nil {
		t.Error("a codec with a short key")
	}
	env := map[string]string{"PRAXA_STATE_KEY": string(keyNew)}
	c, err := RequestStateCodecFor([]string{"${PRAXA_STATE_KEY}"}, func(k string) string { return env[k] }, false)
	if err != nil || c == nil || !bytes.Equal(c.keys[0], keyNew) {
		t.Errorf("a key from the environment: %v", err)
	}
	if _, err := RequestStateCodecFor([]string{"${PRAXA_UNSET}"}, func(string) string { return "" }, false); err == nil || !strings.Contains(err.Error(), "PRAXA_UNSET") {
		t.Errorf("an unset variable: %v", err)
	}
	if c, err := RequestStateCodecFor(nil, nil, false); c != nil || err != nil {
		t.Errorf("no keys, no dev: %v, %v (want no input requests)", c, err)
	}
	if c, err := RequestStateCodecFor(nil, nil, true); c == nil || err != nil {
		t.Errorf("no keys, dev: %v", err)
	}
}

// FuzzRequestStateOpen: a requestState comes back from the client, so
// Open parses untrusted input. It never panics; what it accepts verifies
// under the key, binds what was sealed, and reads back the same.
func FuzzRequestStateOpen(f *testing.F) {
	c, err := NewRequestStateCodec([][]byte{keyOld}, func() time.Time { return time.Unix(1_800_000_000, 0) })
	if err != nil {
		f.Fatal(err)
	}
	good, err := c.Seal(sampleState())
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{good, "", requestStatePrefix, requestStatePrefix + ".", requestStatePrefix + "e30.", good + "x",
		strings.Replace(good, ".", "..", 1), requestStatePrefix + "bnVsbA." + "AAAA", "prs1.%%%.%%%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, state string) {
		got, err := c.Open(state)
		if err != nil {
			if !errors.Is(err, ErrStateTampered) && !errors.Is(err, ErrStateExpired) {
				t.Fatalf("Open(%q): unexpected error %v", state, err)
			}
			return
		}
		// Accepted: only a state this codec sealed (the fuzzer cannot
		// forge a MAC), which binds what was sealed.
		want := sampleState()
		want.Expires = got.Expires
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Open(%q) accepted %+v", state, got)
		}
	})
}
