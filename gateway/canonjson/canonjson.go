// Package canonjson writes decoded JSON values in one canonical form, so
// that two encodings of the same value hash the same: object members
// sorted by key, strings as encoding/json writes them, and numbers as
// exact decimals in one form (digits without leading or trailing zeros,
// then the exponent: 1, 1.0 and 10e-1 are all "1e0"; -0 is "0"). Numbers
// are never rounded to IEEE-754 doubles, as RFC 8785 would:
// 9007199254740993 and 9007199254740992 are different values.
//
// The idempotency fingerprints (gateway) and the pins of imported
// capabilities (gateway/pins) hash this form.
package canonjson

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Write writes v, a decoded JSON value, to b in the canonical form.
func Write(b *strings.Builder, v any) error {
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
		n, err := Number(string(v))
		if err != nil {
			return err
		}
		b.WriteString(n)
	case float64:
		n, err := Number(strconv.FormatFloat(v, 'g', -1, 64))
		if err != nil {
			return err
		}
		b.WriteString(n)
	case int:
		return Write(b, json.Number(strconv.Itoa(v)))
	case int64:
		return Write(b, json.Number(strconv.FormatInt(v, 10)))
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := Write(b, x); err != nil {
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
			if err := Write(b, k); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := Write(b, v[k]); err != nil {
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
		return Write(b, back)
	}
	return nil
}

// Number returns the JSON number s as an exact decimal in one form:
// an optional minus, the significant digits without leading or trailing
// zeros, "e" and the exponent of the last digit ("0" for zero).
func Number(s string) (string, error) {
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
