// Package ids mints the gateway's identifiers, one function per kind of id,
// so that every surface (REST, MCP over HTTP and stdio, background jobs)
// mints each kind the same way.
//
// Identifiers others could guess or that must not collide (object ids, run
// ids, minted idempotency keys, request and trace ids) come from
// crypto/rand. Span ids only name a hop in a Traceparent header answered to
// the caller and are never stored nor used as keys: they come from
// math/rand/v2, whose ChaCha8 generator is cheaper and still unpredictable
// in practice.
//
// It imports only the standard library.
package ids

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	mrand "math/rand/v2"
)

var encoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// New mints an object identifier: prefix, an underscore and 26 lowercase
// base32 letters (128 random bits).
func New(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + "_" + encoding.EncodeToString(b[:])
}

// Request mints a request id: 12 random bytes, 24 lowercase hex digits.
func Request() string {
	var b [12]byte
	rand.Read(b[:])
	var out [24]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}

// Trace mints a W3C trace id: 16 random bytes, 32 lowercase hex digits.
func Trace() string {
	var b [16]byte
	rand.Read(b[:])
	var out [32]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}

// Span mints a W3C parent (span) id: 8 bytes, 16 lowercase hex digits,
// never all zero. It is not from crypto/rand (see the package doc).
func Span() string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], mrand.Uint64()|1)
	var out [16]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}
