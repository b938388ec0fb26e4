package certs

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
)

// testKey is the key of RFC 8032's first test vector (its private half is
// public knowledge: tests only).
func testKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	seed, err := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	if err != nil {
		t.Fatal(err)
	}
	return ed25519.NewKeyFromSeed(seed)
}

func sample() Certificate {
	return Certificate{ID: "cert-2025-001", Issuer: "example-evals", Subject: "example-model-1",
		Capabilities: []string{"tool-use"}, IssuedAt: "2025-01-01T00:00:00Z", ExpiresAt: "2026-01-01T00:00:00Z"}
}

func TestResultsMatchTheContract(t *testing.T) {
	if got, want := contracts.CertificateVerifications(), []string{Valid, BadSignature, UnknownIssuer, Expired, NotYetValid}; !slices.Equal(got, want) {
		t.Errorf("contracts.CertificateVerifications() = %v, the constants %v", got, want)
	}
}

func TestCanonical(t *testing.T) {
	want := `{"capabilities":["tool-use"],"expiresAt":"2026-01-01T00:00:00Z","id":"cert-2025-001","issuedAt":"2025-01-01T00:00:00Z","issuer":"example-evals","subject":"example-model-1"}`
	c := sample()
	c.Signature = "ignored"
	if got := string(Canonical(c)); got != want {
		t.Errorf("Canonical =\n%s\nwant\n%s", got, want)
	}
	// The RFC 8785 string rules, for values the format would refuse but
	// Canonical must still serialize unambiguously.
	var b bytes.Buffer
	writeString(&b, "a\"\\\b\t\n\f\r\x01\x1f/<é\u2028")
	if got, want := b.String(), `"a\"\\\b\t\n\f\r\u0001\u001f/<é`+"\u2028"+`"`; got != want {
		t.Errorf("writeString = %s, want %s", got, want)
	}
}

func TestSignVerify(t *testing.T) {
	key := testKey(t)
	issuers := Issuers{"example-evals": key.Public().(ed25519.PublicKey)}
	c := sample()
	Sign(&c, key)
	// RFC 8032 Ed25519 is deterministic: the signature of the canonical
	// form above under the test key is fixed.
	if len(c.Signature) != 88 {
		t.Fatalf("signature %q", c.Signature)
	}
	mid := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	if r, d := Verify(c, issuers, mid); r != Valid || d != "" {
		t.Errorf("Verify = %s %q", r, d)
	}
	// Round trip through JSON.
	back, err := Parse(Marshal(c))
	if err != nil || !slices.Equal(back.Capabilities, c.Capabilities) || back.Signature != c.Signature {
		t.Fatalf("Parse(Marshal) = %+v, %v", back, err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Certificate)
		at   time.Time
		want string
	}{
		{"another capability", func(c *Certificate) { c.Capabilities = append(c.Capabilities, "admin") }, mid, BadSignature},
		{"another subject", func(c *Certificate) { c.Subject = "other-model" }, mid, BadSignature},
		{"extended expiry", func(c *Certificate) { c.ExpiresAt = "2030-01-01T00:00:00Z" }, mid, BadSignature},
		{"the same instant written otherwise", func(c *Certificate) { c.IssuedAt = "2025-01-01T00:00:00+00:00" }, mid, BadSignature},
		{"garbage signature", func(c *Certificate) { c.Signature = "AAAA" }, mid, BadSignature},
		{"unknown issuer", func(c *Certificate) { c.Issuer = "someone-else" }, mid, UnknownIssuer},
		{"expired", func(*Certificate) {}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Expired},
		{"not yet valid", func(*Certificate) {}, time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC), NotYetValid},
		{"issued this instant", func(*Certificate) {}, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Valid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := c
			x.Capabilities = slices.Clone(c.Capabilities)
			tc.edit(&x)
			if r, d := Verify(x, issuers, tc.at); r != tc.want || (r != Valid && d == "") {
				t.Errorf("Verify = %s %q, want %s", r, d, tc.want)
			}
		})
	}
	// Another issuer's key under the same id: bad signature.
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	if r, _ := Verify(c, Issuers{"example-evals": other.Public().(ed25519.PublicKey)}, mid); r != BadSignature {
		t.Errorf("another key: %s", r)
	}
}

func TestParseRefuses(t *testing.T) {
	c := sample()
	Sign(&c, testKey(t))
	good := string(Marshal(c))
	for _, tc := range []struct {
		name, doc, pointer string
		code               contracts.Code
	}{
		{"not JSON", `{"id":`, "", contracts.CodeMalformedJSON},
		{"duplicate member", strings.Replace(good, `{"id"`, `{"id":"x","id"`, 1), "", contracts.CodeMalformedJSON},
		{"unknown member", strings.Replace(good, `{"id"`, `{"grants":["admin"],"id"`, 1), "/grants", contracts.CodeInvalidParams},
		{"missing member", strings.Replace(good, `"subject":"example-model-1",`, ``, 1), "/subject", contracts.CodeInvalidParams},
		{"bad time", strings.Replace(good, `"2025-01-01T00:00:00Z"`, `"2025-01-01"`, 1), "/issuedAt", contracts.CodeInvalidParams},
		{"expires first", strings.Replace(good, `"2026-01-01T00:00:00Z"`, `"2024-01-01T00:00:00Z"`, 1), "/expiresAt", contracts.CodeInvalidParams},
		{"no capabilities", strings.Replace(good, `["tool-use"]`, `[]`, 1), "/capabilities", contracts.CodeInvalidParams},
		{"repeated capability", strings.Replace(good, `["tool-use"]`, `["a","a"]`, 1), "/capabilities", contracts.CodeInvalidParams},
		{"bad id", strings.Replace(good, `"cert-2025-001"`, `"cert 1"`, 1), "/id", contracts.CodeInvalidParams},
		{"short signature", strings.Replace(good, c.Signature, "AAAA", 1), "/signature", contracts.CodeInvalidParams},
		{"array", `[` + good + `]`, "", contracts.CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil {
				t.Fatal("parsed")
			}
			ce := contracts.AsError(err)
			if ce.Code != tc.code {
				t.Fatalf("code %s, want %s: %v", ce.Code, tc.code, err)
			}
			if tc.pointer != "" && !slices.ContainsFunc(ce.Fields, func(f contracts.FieldError) bool { return f.Pointer == tc.pointer }) {
				t.Errorf("no field error at %s: %+v", tc.pointer, ce.Fields)
			}
		})
	}
}
