// Package certs reads, signs and verifies model capability certificates: a
// statement by an issuer that a model (the subject) has shown some
// capabilities, valid for a period, signed with the issuer's Ed25519 key.
// aura_list_world_certificates lists them with the result of verifying
// each.
//
// Certificates are information for people and agents. They grant no
// authority anywhere in the gateway: no scope, tool, tenant, compartment or
// policy decision reads them.
//
// # Format
//
// A certificate is a JSON object with exactly these members, all required:
//
//	{
//	  "id": "cert-2025-001",                  identifier (1-128 of A-Z a-z 0-9 . _ : -)
//	  "issuer": "example-evals",              identifier: the configured issuer's id
//	  "subject": "example-model-1",           the model: 1-256 of A-Z a-z 0-9 . _ : / @ + -
//	  "capabilities": ["tool-use"],           1-64 distinct names (1-128 of A-Z a-z 0-9 . _ : / -)
//	  "issuedAt": "2025-01-01T00:00:00Z",     RFC 3339 time
//	  "expiresAt": "2026-01-01T00:00:00Z",    RFC 3339 time, after issuedAt
//	  "signature": "…"                        standard base64 of the 64-byte Ed25519 signature
//	}
//
// # What is signed
//
// The signature is Ed25519 (RFC 8032, pure, no pre-hash) over the
// certificate's canonical form: the object without its signature member,
// serialized with the JSON Canonicalization Scheme (RFC 8785): members
// sorted by name, no white space, strings escaped minimally. Every value is
// a string or an array of strings from the restricted alphabets above, so
// the canonical form is simply
//
//	{"capabilities":["tool-use"],"expiresAt":"2026-01-01T00:00:00Z","id":"cert-2025-001","issuedAt":"2025-01-01T00:00:00Z","issuer":"example-evals","subject":"example-model-1"}
//
// with the times exactly as written in the certificate (they are not
// normalized). Canonical returns these bytes.
//
// # Verification
//
// Verify decides, in this order: an issuer the gateway is not configured
// with gives unknown_issuer; a signature that does not verify with the
// issuer's key gives bad_signature; a certificate whose issuedAt is still
// ahead gives not_yet_valid; one whose expiresAt has passed gives expired;
// otherwise valid. Verification happens when the certificate is listed, so
// the answer follows the clock and the configured issuers.
package certs

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/strictjson"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The verification results.
const (
	Valid         = "valid"
	BadSignature  = "bad_signature"
	UnknownIssuer = "unknown_issuer"
	Expired       = "expired"
	NotYetValid   = "not_yet_valid"
)

// Certificate is one model capability certificate.
type Certificate struct {
	ID           string   `json:"id"`
	Issuer       string   `json:"issuer"`
	Subject      string   `json:"subject"`
	Capabilities []string `json:"capabilities"`
	IssuedAt     string   `json:"issuedAt"`
	ExpiresAt    string   `json:"expiresAt"`
	Signature    string   `json:"signature"`
}

// Issuers maps a trusted issuer's id to its Ed25519 public key.
type Issuers map[string]ed25519.PublicKey

// schemaJSON is the JSON Schema of a certificate.
const schemaJSON = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["id", "issuer", "subject", "capabilities", "issuedAt", "expiresAt", "signature"],
  "properties": {
    "id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"},
    "issuer": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"},
    "subject": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,255}$"},
    "capabilities": {
      "type": "array", "minItems": 1, "maxItems": 64, "uniqueItems": true,
      "items": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$"}
    },
    "issuedAt": {"type": "string", "format": "date-time", "maxLength": 64},
    "expiresAt": {"type": "string", "format": "date-time", "maxLength": 64},
    "signature": {"type": "string", "pattern": "^[A-Za-z0-9+/]{86}==$"}
  }
}`

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	return contracts.CompileSchema("certificate", []byte(schemaJSON))
})

// MaxSize bounds the JSON of one certificate.
const MaxSize = 64 << 10

// Parse reads one certificate from its JSON: strictly (duplicate members,
// unknown members and invalid UTF-8 are refused) and against the format.
// A problem is a *contracts.Error whose Fields locate it.
func Parse(data []byte) (Certificate, error) {
	var c Certificate
	if len(data) > MaxSize {
		return c, contracts.Errorf(contracts.CodeInvalidParams, "the certificate is larger than %d bytes", MaxSize)
	}
	obj, err := strictjson.DecodeObject(data, 8)
	if err != nil {
		return c, err
	}
	return FromValue(obj)
}

// FromValue checks a decoded JSON value (as strictjson returns it) against
// the format and returns the certificate.
func FromValue(v any) (Certificate, error) {
	var c Certificate
	s, err := compiled()
	if err != nil {
		return c, err
	}
	if err := contracts.Validate(s, v, "the certificate does not match the certificate format"); err != nil {
		return c, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, err
	}
	issued, _ := time.Parse(time.RFC3339, c.IssuedAt)
	expires, _ := time.Parse(time.RFC3339, c.ExpiresAt)
	if !expires.After(issued) {
		return c, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the certificate does not match the certificate format",
			Fields: []contracts.FieldError{{Pointer: "/expiresAt", Detail: "must be after issuedAt"}}}
	}
	return c, nil
}

// Canonical returns the bytes the signature covers (see the package
// documentation).
func Canonical(c Certificate) []byte {
	var b bytes.Buffer
	b.WriteString(`{"capabilities":[`)
	for i, cap := range c.Capabilities {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(&b, cap)
	}
	b.WriteString(`],"expiresAt":`)
	writeString(&b, c.ExpiresAt)
	b.WriteString(`,"id":`)
	writeString(&b, c.ID)
	b.WriteString(`,"issuedAt":`)
	writeString(&b, c.IssuedAt)
	b.WriteString(`,"issuer":`)
	writeString(&b, c.Issuer)
	b.WriteString(`,"subject":`)
	writeString(&b, c.Subject)
	b.WriteByte('}')
	return b.Bytes()
}

// writeString writes s as RFC 8785 serializes a string (the ECMAScript
// JSON.stringify rules): quote, backslash and the control characters
// escaped, \b \t \n \f \r in their short forms, the other control
// characters as \u00xx in lower case, everything else as is.
func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				h := strconv.FormatInt(int64(r), 16)
				if len(h) < 2 {
					b.WriteByte('0')
				}
				b.WriteString(h)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// Sign sets c's signature with key, the issuer's private key.
func Sign(c *Certificate, key ed25519.PrivateKey) {
	c.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, Canonical(*c)))
}

// Verify returns the verification result of c at now against the trusted
// issuers, and for a result other than valid a sentence saying why.
func Verify(c Certificate, issuers Issuers, now time.Time) (result, detail string) {
	key, ok := issuers[c.Issuer]
	if !ok {
		return UnknownIssuer, fmt.Sprintf("the issuer %s is not one this gateway trusts", c.Issuer)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(c.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize || !ed25519.Verify(key, Canonical(c), sig) {
		return BadSignature, fmt.Sprintf("the signature does not verify with the key of %s: the certificate was altered or signed with another key", c.Issuer)
	}
	issued, err1 := time.Parse(time.RFC3339, c.IssuedAt)
	expires, err2 := time.Parse(time.RFC3339, c.ExpiresAt)
	if err1 != nil || err2 != nil {
		return BadSignature, "the certificate's times are malformed"
	}
	switch {
	case now.Before(issued):
		return NotYetValid, "the certificate is valid from " + issued.UTC().Format(time.RFC3339)
	case !now.Before(expires):
		return Expired, "the certificate expired at " + expires.UTC().Format(time.RFC3339)
	}
	return Valid, ""
}

// Marshal renders c as compact JSON, members in the order of the format.
func Marshal(c Certificate) []byte {
	b, _ := json.Marshal(c) // strings only: cannot fail
	return b
}
