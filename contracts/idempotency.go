package contracts

import "regexp"

var idempotencyKeyRE = regexp.MustCompile(IdempotencyKeyPattern)

// ValidIdempotencyKey reports whether key matches IdempotencyKeyPattern.
func ValidIdempotencyKey(key string) bool {
	return idempotencyKeyRE.MatchString(key)
}

// CheckIdempotencyKey returns nil for a valid key, an *Error with code
// idempotency-key-missing for an empty one and idempotency-key-invalid for
// anything else. The message never repeats the key.
func CheckIdempotencyKey(key string) error {
	switch {
	case key == "":
		return &Error{Code: CodeIdempotencyKeyMissing, Message: "this operation requires an idempotency key",
			Hint: "Send one stable key per logical mutation (16-128 characters matching " + IdempotencyKeyPattern + ") and reuse it on retries."}
	case !ValidIdempotencyKey(key):
		return &Error{Code: CodeIdempotencyKeyInvalid, Message: "the idempotency key does not match " + IdempotencyKeyPattern,
			Fields: []FieldError{{Pointer: "/idempotencyKey", Keyword: "pattern", Detail: "must match the pattern " + IdempotencyKeyPattern}}}
	}
	return nil
}
