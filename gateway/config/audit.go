package config

import (
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
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
	// the older ones, in batches, every few minutes (audit.RetentionJob).
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
		return c.Path(s)
	}
}

// The kinds of sink a capability's audit block names (AuditHookSink.Kind):
// AuditSinkStderr, AuditHookFile and AuditHookHTTP.
const (
	// AuditHookFile appends JSON lines to a file, as audit.sink does.
	AuditHookFile = "file"
	// AuditHookHTTP posts JSON lines to an HTTP endpoint from a bounded
	// queue, never holding up the call.
	AuditHookHTTP = "http"
)

// The defaults and bounds of an http sink (schema.json holds the bounds).
const (
	DefaultAuditHTTPTimeout = 5 * time.Second
	DefaultAuditHTTPRetries = 3
	DefaultAuditHTTPBackoff = 500 * time.Millisecond
	DefaultAuditHTTPQueue   = 1024
	// MaxAuditHTTPBackoff bounds the wait between two attempts.
	MaxAuditHTTPBackoff = 30 * time.Second
)

// MaxRecordedBytes bounds one recorded value (CapabilityAudit.Record) as
// JSON: a longer one is recorded as a note of its size instead.
const MaxRecordedBytes = 8192

// CapabilityAudit is the audit block of a capability the configuration
// declares (capabilities, proxy.expose, a manifest): what the audit events
// of its calls record beyond the gateway's own attributes, and which sinks,
// beside audit.sink, receive those events once committed. The events of a
// capability's calls are capability.called (the light path), and in a run
// transition.fired and guard.rejected; each carries the capability's id
// as its capability attribute. An imported capability has no audit block.
// A capability that wraps another, or an exposure of one, adds its block
// to the wrapped capability's: the records and the sinks of every layer.
type CapabilityAudit struct {
	// Record lists the values the events of a call record, as paths into
	// the call's arguments ($.arguments, $.arguments.NAME...) and into
	// its executor's output ($.output...; none for a call refused before
	// it ran). Each value is recorded under the event's arguments or
	// output attribute at the place its path names, redacted by name as
	// aura_get_trace redacts (package redact) before the event is
	// written; one longer than MaxRecordedBytes as JSON is recorded as a
	// note of its size.
	Record []string `json:"record,omitempty"`
	// Sinks receive a copy of every committed event of the capability's
	// calls, as audit.sink does (the lines of praxa audit export).
	Sinks []AuditHookSink `json:"sinks,omitempty"`
}

// IsZero reports whether a records nothing and names no sink.
func (a CapabilityAudit) IsZero() bool { return len(a.Record) == 0 && len(a.Sinks) == 0 }

// stack returns a with what b adds: b's records and sinks that a lacks,
// after a's (b is the nearer declaration).
func (a CapabilityAudit) stack(b *CapabilityAudit) CapabilityAudit {
	if b == nil {
		return a
	}
	out := CapabilityAudit{Record: union(a.Record, b.Record), Sinks: slices.Clone(a.Sinks)}
	for _, s := range b.Sinks {
		if !slices.ContainsFunc(out.Sinks, s.Equal) {
			out.Sinks = append(out.Sinks, s)
		}
	}
	return out
}

// AuditHookSink is one sink of a capability's audit block: the standard
// error, a file, or an HTTP endpoint. Kind says which; the other members
// belong to one kind each (schema.json refuses the others).
type AuditHookSink struct {
	// Kind is stderr, file or http.
	Kind string `json:"kind"`
	// Path is a file sink's file, appended to (created with mode 0600);
	// a relative path is relative to the configuration file's directory
	// (Config.Path).
	Path string `json:"path,omitempty"`
	// URL is an http sink's endpoint: each POST carries a batch of
	// events, one JSON line each (application/x-ndjson).
	URL string `json:"url,omitempty"`
	// Headers are sent with every POST of an http sink; ${NAME} reads
	// the gateway's environment when the sink opens.
	Headers map[string]string `json:"headers,omitempty"`
	// TimeoutMs bounds one POST (default DefaultAuditHTTPTimeout).
	TimeoutMs int `json:"timeoutMs,omitempty"`
	// Retries is how many more times a batch is posted after a network
	// error, a 408, a 429 or a 5xx (default DefaultAuditHTTPRetries).
	Retries *int `json:"retries,omitempty"`
	// BackoffMs is the wait before the first retry, doubled for each
	// further one up to MaxAuditHTTPBackoff, plus up to a quarter of
	// jitter (default DefaultAuditHTTPBackoff).
	BackoffMs int `json:"backoffMs,omitempty"`
	// Queue bounds the events waiting to be posted (default
	// DefaultAuditHTTPQueue): when it is full, a new event is dropped,
	// counted and logged, and the call goes on.
	Queue int `json:"queue,omitempty"`
}

// Equal reports whether s and o are the same sink.
func (s AuditHookSink) Equal(o AuditHookSink) bool {
	return s.Kind == o.Kind && s.Path == o.Path && s.URL == o.URL && maps.Equal(s.Headers, o.Headers) &&
		s.TimeoutMs == o.TimeoutMs && s.RetryCount() == o.RetryCount() && s.BackoffMs == o.BackoffMs && s.Queue == o.Queue
}

// Timeout is the bound of one POST of an http sink.
func (s AuditHookSink) Timeout() time.Duration {
	if s.TimeoutMs > 0 {
		return time.Duration(s.TimeoutMs) * time.Millisecond
	}
	return DefaultAuditHTTPTimeout
}

// RetryCount is how many more times an http sink posts a batch that
// could not be delivered.
func (s AuditHookSink) RetryCount() int {
	if s.Retries != nil {
		return *s.Retries
	}
	return DefaultAuditHTTPRetries
}

// Backoff is the wait before an http sink's first retry.
func (s AuditHookSink) Backoff() time.Duration {
	if s.BackoffMs > 0 {
		return time.Duration(s.BackoffMs) * time.Millisecond
	}
	return DefaultAuditHTTPBackoff
}

// QueueSize bounds the events an http sink holds waiting.
func (s AuditHookSink) QueueSize() int {
	if s.Queue > 0 {
		return s.Queue
	}
	return DefaultAuditHTTPQueue
}

// Path resolves a path the configuration names: an absolute one as it
// is, a relative one against the directory of the configuration file
// (as it is when the configuration was read from none).
func (c *Config) Path(p string) string {
	if p == "" || filepath.IsAbs(p) || c.Source == "" {
		return p
	}
	return filepath.Join(filepath.Dir(c.Source), p)
}
