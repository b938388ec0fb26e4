// Package ids mints the gateway's identifiers, one function per kind of id,
// so that every surface (REST, MCP over HTTP and stdio, background jobs)
// mints each kind the same way.
//
// Identifiers others could guess or that must not collide (object ids, run
// ids, minted idempotency keys, request and trace ids) come from
// crypto/rand. Object and trace ids lead with the time in milliseconds, as
// a UUIDv7 does, and keep 80 random bits: ids minted close in time share a
// prefix, so the store's B-trees keyed by them (intents, missions, the
// events' trace index) take new rows on a few pages instead of a random
// page each; the OpenTelemetry spans' trace ids are minted the same way
// (TraceBytes). Span ids only name a hop in a Traceparent header answered to
// the caller and are never stored nor used as keys: they come from
// math/rand/v2, whose ChaCha8 generator is cheaper and still unpredictable
// in practice; so are the exported spans' ids (SpanBytes).
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
// base32 letters encoding 16 bytes, the time in milliseconds then 80
// random bits (see timeOrdered).
func New(prefix string) string {
	var b [16]byte
	timeOrdered(&b)
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

// Trace mints a W3C trace id, 32 lowercase hex digits of 16 bytes laid out
// by timeOrdered. W3C Trace Context level 2 asks only the right-most 7
// bytes to be random.
func Trace() string {
	b := TraceBytes()
	var out [32]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}

// TraceBytes mints a W3C trace id as its 16 bytes (Trace is their hex):
// the OpenTelemetry SDK's spans take their trace ids from it (package
// telemetry), so that a traced request's id is time-ordered too.
func TraceBytes() [16]byte {
	var b [16]byte
	timeOrdered(&b)
	return b
}

// Span mints a W3C parent (span) id: 8 bytes, 16 lowercase hex digits,
// never all zero. It is not from crypto/rand (see the package doc).
func Span() string {
	b := SpanBytes()
	var out [16]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}

// SpanBytes mints a span id as its 8 bytes, never all zero (Span is
// their hex).
func SpanBytes() [8]byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], mrand.Uint64()|1)
	return b
}

// Traceparent is a W3C traceparent header of a hop in trace: version 00,
// a span id of its own (Span), sampled.
func Traceparent(trace string) string {
	return "00-" + trace + "-" + Span() + "-01"
}

// timeOrdered fills b as a UUIDv7 lays out its bits, without the version
// and variant fields: the Unix time in milliseconds in the first 6 bytes
// (big-endian), 80 random bits from crypto/rand in the other 10.
func timeOrdered(b *[16]byte) {
	rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
}

// ParseTraceparent reads the trace id of a W3C traceparent
// (version-traceid-parentid-flags: 2, 32, 16 and 2 lowercase hex digits,
// the version not ff, neither id all zero). ok is false for anything else,
// which W3C Trace Context says to ignore: the caller then starts a trace
// of its own.
func ParseTraceparent(h string) (trace string, ok bool) {
	// 2 + 1 + 32 + 1 + 16 + 1 + 2
	if len(h) != 55 || h[2] != '-' || h[35] != '-' || h[52] != '-' {
		return "", false
	}
	version, trace, parent, flags := h[0:2], h[3:35], h[36:52], h[53:55]
	if !isLowerHex(version) || !isLowerHex(trace) || !isLowerHex(parent) || !isLowerHex(flags) ||
		version == "ff" || trace == "00000000000000000000000000000000" || parent == "0000000000000000" {
		return "", false
	}
	return trace, true
}

// isLowerHex reports whether s is lowercase hex digits only.
func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
