package config

import (
	"path/filepath"
	"strconv"
	"strings"
)

// SupportedVersions are the major versions of the configuration format
// this gateway reads. A file declares its version with version: "1.0.0"
// (MAJOR, MAJOR.MINOR or MAJOR.MINOR.PATCH); every minor and patch of a
// supported major loads, since what a later minor adds that this gateway
// does not know is refused as an unknown field anyway.
var SupportedVersions = []int{1}

// versionMajor returns the major of a version string the schema accepted.
func versionMajor(v string) (int, bool) {
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return n, err == nil
}

// The audit sinks that are not files.
const (
	// AuditSinkStore writes audit events to the store only: the default,
	// and what aura_get_trace reads.
	AuditSinkStore = "store"
	// AuditSinkStderr also writes every event to the standard error, one
	// JSON object a line.
	AuditSinkStderr = "stderr"
)

// Audit configures where audit events go. The store always receives every
// event (aura_get_trace reads it there); a sink receives a copy of each
// event once the transaction holding it has committed, redacted as
// aura_get_trace shows it.
type Audit struct {
	// Sink is store (the default: the store only), stderr (JSON lines on
	// the standard error), or the path of a file the JSON lines are
	// appended to; a relative path is relative to the configuration
	// file's directory.
	Sink string `json:"sink,omitempty"`
	// Retention is how long the store keeps an audit event: serve deletes
	// the older ones, in batches, every few minutes (gateway.AuditRetentionJob).
	// Zero keeps every event.
	Retention Duration `json:"retention,omitempty"`
}

// AuditSinkFile returns the file the audit sink appends to, resolved
// against the directory of the configuration file, or "" when the sink is
// not a file.
func (c *Config) AuditSinkFile() string {
	switch s := c.Audit.Sink; s {
	case "", AuditSinkStore, AuditSinkStderr:
		return ""
	default:
		if !filepath.IsAbs(s) && c.Source != "" {
			return filepath.Join(filepath.Dir(c.Source), s)
		}
		return s
	}
}
