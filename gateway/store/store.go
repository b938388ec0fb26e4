// Package store declares the gateway's durable state as small interfaces
// that every storage driver implements: idempotency records, intents, audit
// events and token revocations (later features add missions and the rest).
//
// Drivers live in their own packages (sqlitestore, the embedded default;
// pgstore for several replicas) and all pass the exported storetest suite,
// so nothing here may assume one process or one driver's dialect.
//
// # Concurrency
//
// A Store is safe for concurrent use. Update runs its function in a
// read-write transaction that is committed durably (on disk, fsync'd)
// before Update returns nil; a driver may commit several concurrent Updates
// together, but each function's changes are atomic on their own: when the
// function returns an error, none of its changes persist and the others in
// the same commit are unaffected. Functions passed to Update must be short,
// must not perform I/O outside the transaction, and must not call the Store
// again. View runs its function against a consistent snapshot.
//
// Functions passed to Update may run concurrently with other transactions on
// drivers that allow it (PostgreSQL); uniqueness is enforced by the driver,
// which answers ErrExists rather than overwriting.
package store

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors returned, possibly wrapped, by every driver.
var (
	// ErrNotFound: the object does not exist (or belongs to another tenant).
	ErrNotFound = errors.New("store: not found")
	// ErrExists: an object with the same unique key exists already.
	ErrExists = errors.New("store: already exists")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
)

// Store is the gateway's durable state.
type Store interface {
	// Update runs fn in a read-write transaction and commits it durably.
	Update(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(ctx context.Context, tx ReadTx) error) error
	// AppendEvents appends audit events in a transaction of their own; it is
	// meant for batched, asynchronous audit of reads.
	AppendEvents(ctx context.Context, events []Event) error
	// SweepIdempotency deletes idempotency records that expired before t and
	// returns how many it deleted.
	SweepIdempotency(ctx context.Context, t time.Time) (int, error)
	// RevokedSince lists revocations recorded at or after t, oldest first.
	RevokedSince(ctx context.Context, t time.Time) ([]Revocation, error)
	// Close releases the store. Pending Updates fail with ErrClosed.
	Close() error
}

// ReadTx reads inside a transaction.
type ReadTx interface {
	// GetIdempotency returns the record of key in namespace, or ErrNotFound.
	// A record past its ExpiresAt is reported as ErrNotFound.
	GetIdempotency(ctx context.Context, namespace, key string, now time.Time) (IdempotencyRecord, error)
	// GetIntent returns the tenant's intent, or ErrNotFound (also for
	// another tenant's intent).
	GetIntent(ctx context.Context, tenant, id string) (Intent, error)
	// TraceEvents returns up to limit events of the tenant's trace in causal
	// order: by time, then by append order.
	TraceEvents(ctx context.Context, tenant, traceID string, limit int) ([]Event, error)
	// Revoked reports whether the token id jti was revoked.
	Revoked(ctx context.Context, jti string) (bool, error)
}

// Tx reads and writes inside a transaction.
type Tx interface {
	ReadTx
	// InsertIdempotency stores a new record; ErrExists if the namespace and
	// key hold a record that has not expired (an expired one is replaced).
	InsertIdempotency(ctx context.Context, rec IdempotencyRecord) error
	// InsertIntent stores a new intent; ErrExists if its id is taken.
	InsertIntent(ctx context.Context, in Intent) error
	// AppendEvents appends audit events; the store assigns their Seq.
	AppendEvents(ctx context.Context, events []Event) error
	// Revoke records a revocation; revoking a revoked jti again is not an
	// error and keeps the first record.
	Revoke(ctx context.Context, r Revocation) error
}

// IdempotencyRecord is the remembered outcome of one idempotent request.
type IdempotencyRecord struct {
	// Namespace isolates principals: the same key from two principals names
	// two records.
	Namespace string
	Key       string
	// Operation is the contract operationId the key was first used with.
	Operation string
	// Fingerprint identifies the request (operation and canonical
	// arguments); a different fingerprint under the same key is a reuse.
	Fingerprint string
	// Status, Header and Body are the response to replay.
	Status    int
	Header    map[string]string
	Body      []byte
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Intent is a recorded natural-language intent.
type Intent struct {
	ID        string
	Tenant    string
	Subject   string
	Text      string
	Tags      []string
	TraceID   string
	CreatedAt time.Time
}

// Event is one audit event.
type Event struct {
	// Seq is assigned by the store on append; it orders events appended at
	// the same instant.
	Seq     int64
	Tenant  string
	TraceID string
	// Type names what happened ("intent.submitted", "request.refused", ...).
	Type string
	At   time.Time
	// Subject and ClientID identify the principal.
	Subject  string
	ClientID string
	// Operation is the contract operationId, Tool the tool name.
	Operation string
	Tool      string
	// RunID and WorkflowID thread a mission through its events.
	RunID      string
	WorkflowID string
	// Outcome is "allowed", "refused", "replayed" or "failed".
	Outcome string
	// Code is the error code of a refusal.
	Code string
	// RequestID identifies the HTTP request or MCP call.
	RequestID string
	// Attributes hold further details; readers redact them.
	Attributes map[string]any
}

// Revocation records one revoked access token.
type Revocation struct {
	JTI       string
	RevokedAt time.Time
	// ExpiresAt is the token's own expiry, after which the record may be
	// dropped (zero: keep forever).
	ExpiresAt time.Time
	// By is the subject that revoked it.
	By     string
	Reason string
}
