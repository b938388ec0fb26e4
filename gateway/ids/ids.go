// Package ids mints the gateway's identifiers, one function per kind of id,
// so that every surface (REST, MCP over HTTP and stdio, background jobs)
// mints each kind the same way.
//
// Identifiers others could guess or that must not collide (object ids, run
// ids, minted idempotency keys, request and trace ids) come from
// crypto/rand. Trace ids lead with the time in milliseconds, as a UUIDv7
// does, and keep 80 random bits: they are time-ordered so that the store's
// trace index grows at its right edge. Span ids only name a hop in a
// Traceparent header answered to the caller and are never stored nor used
// as keys: they come from math/rand/v2, whose ChaCha8 generator is cheaper
// and still unpredictable in practice.
//
// It imports only the standard library.
package ids

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	mrand "math/rand/v2"
	"time"
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

// Trace mints a W3C trace id, 32 lowercase hex digits: the first 6 bytes
// are the Unix time in milliseconds (big-endian), the other 10 random, as
// a UUIDv7 lays them out. W3C Trace Context level 2 asks only the
// right-most 7 bytes to be random; the time prefix keeps the store's
// trace index appending at its right edge instead of touching a random
// page per event.
func Trace() string {
	var b [16]byte
	rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
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
