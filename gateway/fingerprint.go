package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/praxa/praxa/gateway/canonjson"
)

// A fingerprint identifies a request: the operation and the canonical JSON
// of its arguments without the idempotency key, hashed with SHA-256. The
// same mutation sent over REST and over MCP has the same fingerprint.
//
// Canonical JSON here (package canonjson): object members sorted by key, strings as
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
	if err := canonjson.Write(&b, withoutKey(args)); err != nil {
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
