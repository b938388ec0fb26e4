package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String renders d the way time.Duration does ("1h30m0s").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON renders d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// errNegativeDuration is returned, wrapped, for a duration below zero.
var errNegativeDuration = errors.New("a duration must not be negative")

// UnmarshalJSON reads a Go duration string such as "30s" or "1h30m". Numbers
// are refused: a bare number does not say its unit.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("config: a duration must be a string such as \"30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if v < 0 {
		return fmt.Errorf("config: %q: %w", s, errNegativeDuration)
	}
	*d = Duration(v)
	return nil
}
