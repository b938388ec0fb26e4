package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// A fingerprint identifies a request: the operation and the canonical JSON
// of its arguments without the idempotency key, hashed with SHA-256. The
// same mutation sent over REST and over MCP has the same fingerprint.
//
// Canonical JSON here: object members sorted by key, strings as
// encoding/json writes them, and numbers as exact decimals in one form
// (digits without leading or trailing zeros, then the exponent: 1, 1.0
// and 10e-1 are all "1e0"; -0 is "0"). Numbers are never rounded to
// IEEE-754 doubles, as RFC 8785 would: 9007199254740993 and
// 9007199254740992 are different requests.
//
// Version 2 fingerprints carry the prefix "v2:"; a stored fingerprint
// without it is version 1 (numbers compared as sent), which
// sameFingerprint still accepts, so records made before the change
// replay.

// fingerprintV2 prefixes the fingerprints of this version.
const fingerprintV2 = "v2:"

// fingerprint returns the fingerprint of a call of operationID with args.
func fingerprint(operationID string, args map[string]any) (string, error) {
	var b strings.Builder
	if err := canonical(&b, withoutKey(args)); err != nil {
		return "", err
	}
	return fingerprintV2 + hashOf(operationID, []byte(b.String())), nil
}

// legacyFingerprint is the version 1 fingerprint: encoding/json's
// encoding, numbers as sent.
func legacyFingerprint(operationID string, args map[string]any) (string, error) {
	b, err := json.Marshal(withoutKey(args))
	if err != nil {
		return "", err
	}
	return hashOf(operationID, b), nil
}

// sameFingerprint reports whether stored, a fingerprint of any version,
// identifies the call of operationID with args, whose current fingerprint
// is fp.
func sameFingerprint(stored, fp, operationID string, args map[string]any) bool {
	if strings.HasPrefix(stored, fingerprintV2) {
		return stored == fp
	}
	old, err := legacyFingerprint(operationID, args)
	return err == nil && stored == old
}

func withoutKey(args map[string]any) map[string]any {
	rest := make(map[string]any, len(args))
	for k, v := range args {
		if k != "idempotencyKey" {
			rest[k] = v
		}
	}
	return rest
}

func hashOf(operationID string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(operationID))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// canonical writes v, a decoded JSON value, in the canonical form above.
func canonical(b *strings.Builder, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		s, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(s)
	case json.Number:
		n, err := canonicalNumber(string(v))
		if err != nil {
			return err
		}
		b.WriteString(n)
	case float64:
		n, err := canonicalNumber(strconv.FormatFloat(v, 'g', -1, 64))
		if err != nil {
			return err
		}
		b.WriteString(n)
	case int:
		return canonical(b, json.Number(strconv.Itoa(v)))
	case int64:
		return canonical(b, json.Number(strconv.FormatInt(v, 10)))
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canonical(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canonical(b, k); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := canonical(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		// Anything else (a typed value built in process): its JSON.
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var back any
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		if err := dec.Decode(&back); err != nil {
			return err
		}
		return canonical(b, back)
	}
	return nil
}

// canonicalNumber writes a JSON number as an exact decimal in one form:
// an optional minus, the significant digits without leading or trailing
// zeros, "e" and the exponent of the last digit ("0" for zero).
func canonicalNumber(s string) (string, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", fmt.Errorf("fingerprint: %q is not a JSON number", s)
	}
	e := new(big.Int)
	if hasExp {
		if _, ok := e.SetString(strings.TrimPrefix(exp, "+"), 10); !ok {
			return "", fmt.Errorf("fingerprint: %q is not a JSON number", s)
		}
	}
	e.Sub(e, big.NewInt(int64(len(frac))))
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0", nil
	}
	trimmed := strings.TrimRight(digits, "0")
	e.Add(e, big.NewInt(int64(len(digits)-len(trimmed))))
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + e.String(), nil
}
