package mcpadapter

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/praxa/praxa/gateway/config"
)

// This file is the requestState of MCP input requests (multi round-trip
// requests, 2026-07-28): what a retry needs to know of the call that asked
// for input, carried by the client and protected by an HMAC-SHA256 with a
// key every replica shares (server.requestStateKeys), so that any replica
// verifies it and none keeps state.

// MinRequestStateKey is the shortest key RequestStateCodec accepts, in
// bytes: the HMAC-SHA256 block of security (RFC 2104 recommends at least
// the hash's output length).
const MinRequestStateKey = 32

// RequestStateTTL is how long a requestState is accepted after it was
// issued: enough for a person to read a form and answer it.
const RequestStateTTL = 15 * time.Minute

// maxRequestState bounds the requestState a client sends back, before
// anything is decoded.
const maxRequestState = 4096

// requestStatePrefix starts every requestState (the format's version); the
// MAC covers it.
const requestStatePrefix = "prs1."

// RequestState is what a requestState binds: who asked (principal and
// tenant), about which mission at which version, for which move, and until
// when.
type RequestState struct {
	// Kind is what was asked: "input" (arguments, a form) or "approval"
	// (the approval page, a URL).
	Kind string `json:"kind"`
	// Subject and Tenant are the principal the input request answered.
	Subject string `json:"sub"`
	Tenant  string `json:"ten"`
	// Tool is the tool that was called; RunID, Version and Signal the
	// mission, its version and the move the call asked for.
	Tool    string `json:"tool"`
	RunID   string `json:"run"`
	Version int64  `json:"ver"`
	Signal  string `json:"sig"`
	// Asked are the arguments the input request asked the user for.
	Asked []string `json:"ask,omitempty"`
	// Approval is the approval whose page an approval request opened.
	Approval string `json:"apr,omitempty"`
	// Expires is when the state stops being accepted (Unix seconds).
	Expires int64 `json:"exp"`
}

// The ways a requestState is refused.
var (
	// ErrStateTampered is a requestState that is not one this gateway
	// issued (malformed, or its MAC verifies under no key).
	ErrStateTampered = errors.New("requestState was not issued by this gateway or was altered")
	// ErrStateExpired is a requestState past its expiry.
	ErrStateExpired = errors.New("requestState has expired")
	// ErrStateForeign is a requestState issued to another principal or
	// tenant, or for another call.
	ErrStateForeign = errors.New("requestState was issued for another caller or call")
	// ErrStateReplayed is a requestState whose mission has moved on since
	// it was issued.
	ErrStateReplayed = errors.New("requestState is for a mission version that has moved on")
)

// RequestStateCodec signs and verifies requestStates. The first key signs,
// every key verifies: a rotation adds the new key first and drops the old
// one once the states it signed have expired (RequestStateTTL).
type RequestStateCodec struct {
	keys [][]byte
	now  func() time.Time
}

// NewRequestStateCodec returns a codec over keys (at least one, each at
// least MinRequestStateKey bytes). now is the clock (nil: time.Now).
func NewRequestStateCodec(keys [][]byte, now func() time.Time) (*RequestStateCodec, error) {
	if len(keys) == 0 {
		return nil, errors.New("mcpadapter: a requestState codec needs at least one key")
	}
	for i, k := range keys {
		if len(k) < MinRequestStateKey {
			return nil, fmt.Errorf("mcpadapter: requestState key %d is %d bytes, fewer than %d", i+1, len(k), MinRequestStateKey)
		}
	}
	if now == nil {
		now = time.Now
	}
	c := &RequestStateCodec{now: now}
	for _, k := range keys {
		c.keys = append(c.keys, append([]byte(nil), k...))
	}
	return c, nil
}

// RequestStateCodecFor is the codec of server.requestStateKeys: each
// key's ${NAME} references are read with getenv (nil: os.Getenv), an unset
// one being an error. Without keys it is nil (no input requests), unless
// generate (praxa serve --dev) asks for a fresh random key.
func RequestStateCodecFor(keys []string, getenv func(string) string, generate bool) (*RequestStateCodec, error) {
	var raw [][]byte
	for i, k := range keys {
		v, missing := config.Interpolate(k, getenv)
		if len(missing) > 0 {
			return nil, fmt.Errorf("server.requestStateKeys[%d]: the environment does not set %s", i, strings.Join(missing, ", "))
		}
		raw = append(raw, []byte(v))
	}
	if len(raw) == 0 {
		if !generate {
			return nil, nil
		}
		raw = [][]byte{NewRequestStateKey()}
	}
	return NewRequestStateCodec(raw, nil)
}

// NewRequestStateKey returns a fresh random key (praxa serve --dev).
func NewRequestStateKey() []byte {
	k := make([]byte, MinRequestStateKey)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
	return k
}

// Seal returns the requestState of s, expiring RequestStateTTL from now.
func (c *RequestStateCodec) Seal(s RequestState) (string, error) {
	s.Expires = c.now().Add(RequestStateTTL).Unix()
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("mcpadapter: requestState: %w", err)
	}
	body := requestStatePrefix + base64.RawURLEncoding.EncodeToString(b)
	return body + "." + base64.RawURLEncoding.EncodeToString(mac(c.keys[0], body)), nil
}

// Open verifies a requestState and returns what it binds: ErrStateTampered
// unless some key's MAC matches, ErrStateExpired past its expiry. The
// caller checks the binding itself (Check).
func (c *RequestStateCodec) Open(state string) (RequestState, error) {
	var s RequestState
	if len(state) > maxRequestState || !strings.HasPrefix(state, requestStatePrefix) {
		return s, ErrStateTampered
	}
	i := strings.LastIndexByte(state, '.')
	if i <= len(requestStatePrefix) {
		return s, ErrStateTampered
	}
	body, sig := state[:i], state[i+1:]
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil {
		return s, ErrStateTampered
	}
	ok := false
	for _, k := range c.keys {
		if hmac.Equal(got, mac(k, body)) {
			ok = true
			break
		}
	}
	if !ok {
		return s, ErrStateTampered
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body[len(requestStatePrefix):])
	if err != nil {
		return s, ErrStateTampered
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return RequestState{}, ErrStateTampered
	}
	if c.now().Unix() >= s.Expires {
		return RequestState{}, ErrStateExpired
	}
	return s, nil
}

// Check verifies that an opened state binds the call it came back with:
// the same principal and tenant, tool, mission and move
// (ErrStateForeign), at the version the call is based on
// (ErrStateReplayed).
func (s RequestState) Check(want RequestState) error {
	if s.Kind != want.Kind || s.Subject != want.Subject || s.Tenant != want.Tenant || s.Tool != want.Tool || s.RunID != want.RunID || s.Signal != want.Signal {
		return ErrStateForeign
	}
	if s.Version != want.Version {
		return ErrStateReplayed
	}
	return nil
}

func mac(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return m.Sum(nil)
}
