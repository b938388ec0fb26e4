package contracts_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
)

func TestIdempotencyKey(t *testing.T) {
	rep := strings.Repeat
	tests := []struct {
		name  string
		key   string
		valid bool
	}{
		{"16 characters", "a" + rep("b", 15), true},
		{"128 characters", "a" + rep("b", 127), true},
		{"15 characters", "a" + rep("b", 14), false},
		{"129 characters", "a" + rep("b", 128), false},
		{"uuid v4", "3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f", true},
		{"every allowed character", "A0z9._:-Zaaaaaaaaaaa", true},
		{"digit first", "0123456789abcdef", true},
		{"dash first", "-123456789abcdef", false},
		{"dot first", ".123456789abcdef", false},
		{"colon first", ":123456789abcdef", false},
		{"underscore first", "_123456789abcdef", false},
		{"space", "abcdefgh ijklmnop", false},
		{"slash", "abcdefgh/ijklmnop", false},
		{"plus", "abcdefgh+ijklmnop", false},
		{"equals", "abcdefghijklmnop=", false},
		{"non-ASCII letter", "abcdefghijklmnopé", false},
		{"non-ASCII digit", "abcdefghijklmnop٣", false},
		{"trailing newline", "abcdefghijklmnop\n", false},
		{"NUL", "abcdefgh\x00ijklmnop", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := contracts.ValidIdempotencyKey(tt.key); got != tt.valid {
				t.Errorf("ValidIdempotencyKey(%q) = %v, want %v", tt.key, got, tt.valid)
			}
			err := contracts.CheckIdempotencyKey(tt.key)
			if tt.valid {
				if err != nil {
					t.Errorf("CheckIdempotencyKey: %v", err)
				}
				return
			}
			ce := contracts.AsError(err)
			want := contracts.CodeIdempotencyKeyInvalid
			if tt.key == "" {
				want = contracts.CodeIdempotencyKeyMissing
			}
			if ce.Code != want || ce.Status() != 400 {
				t.Errorf("code %s (%d), want %s (400)", ce.Code, ce.Status(), want)
			}
			if ce.Message == "" {
				t.Error("no message")
			}
			// The key is never repeated to the caller.
			if tt.key != "" {
				shown, _ := json.Marshal(ce.Envelope())
				if strings.Contains(string(shown), tt.key) || strings.Contains(err.Error(), tt.key) {
					t.Errorf("the error repeats the key: %s", shown)
				}
			}
			if want == contracts.CodeIdempotencyKeyInvalid {
				if len(ce.Fields) != 1 || ce.Fields[0].Pointer != "/idempotencyKey" {
					t.Errorf("fields %v, want one at /idempotencyKey", ce.Fields)
				}
			}
		})
	}
	// Both checks agree with the schema every keyed tool declares.
	for _, tt := range tests {
		args := map[string]any{"idempotencyKey": tt.key, "intent": "x"}
		err := contracts.ValidateInput(contracts.ToolSubmitIntent, args)
		if (err == nil) != tt.valid {
			t.Errorf("%s: the schema says valid=%v, ValidIdempotencyKey says %v", tt.name, err == nil, tt.valid)
		}
	}
}

// A secret-looking key is never echoed by either check.
func TestIdempotencyKeyNotEchoed(t *testing.T) {
	const key = "secret-value-123!"
	err := contracts.CheckIdempotencyKey(key)
	if err == nil {
		t.Fatal("accepted")
	}
	ce := contracts.AsError(err)
	if strings.Contains(ce.Message, key) || strings.Contains(ce.Hint, key) || strings.Contains(err.Error(), key) {
		t.Errorf("the key is repeated: %v", err)
	}
	for _, f := range ce.Fields {
		if strings.Contains(f.Detail, key) {
			t.Errorf("the key is repeated in %+v", f)
		}
	}
}
