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
	// ErrConflict: a compare-and-set found another version or status than
	// the one expected.
	ErrConflict = errors.New("store: conflict")
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
	// SweepIdempotency turns the idempotency records that expired before t
	// into their tombstones (IdempotencyRecord.TombstoneUntil: the answer
	// is dropped, the key, operation, fingerprint, object and CreatedAt
	// kept), deletes the records and tombstones whose TombstoneUntil (or,
	// without a tombstone, ExpiresAt) is before t, and deletes the
	// resolved start leases kept for as long as the idempotency record of
	// their key (StartLease.ExpiresAt) that expired before t. It returns
	// how many rows it changed or deleted. A key has one row, record then
	// tombstone, so the table holds at most the keys of one tombstone
	// window.
	SweepIdempotency(ctx context.Context, t time.Time) (int, error)
	// RevokedSince lists revocations recorded at or after t, oldest first.
	RevokedSince(ctx context.Context, t time.Time) ([]Revocation, error)
	// Close releases the store. Pending Updates fail with ErrClosed.
	Close() error
}

// ReadTx reads inside a transaction.
type ReadTx interface {
	// GetIdempotency returns the record of key in namespace, or ErrNotFound.
	// A record past its ExpiresAt but not past its TombstoneUntil is
	// returned as its tombstone: Expired set, Status, Header and Body
	// empty (whether the sweeper has dropped them yet or not). A record
	// past both is reported as ErrNotFound.
	GetIdempotency(ctx context.Context, namespace, key string, now time.Time) (IdempotencyRecord, error)
	// GetIntent returns the tenant's intent, or ErrNotFound (also for
	// another tenant's intent).
	GetIntent(ctx context.Context, tenant, id string) (Intent, error)
	// TraceEvents returns up to limit events of the tenant's trace in causal
	// order: by time, then by append order. An event belongs to the trace
	// its TraceID or its CallTraceID names.
	TraceEvents(ctx context.Context, tenant, traceID string, limit int) ([]Event, error)
	// Revoked reports whether the token id jti was revoked.
	Revoked(ctx context.Context, jti string) (bool, error)
	// GetMission returns the tenant's mission by workflow id, or
	// ErrNotFound (also for another tenant's mission).
	GetMission(ctx context.Context, tenant, id string) (Mission, error)
	// GetMissionByRunID returns the tenant's mission by runId, or
	// ErrNotFound.
	GetMissionByRunID(ctx context.Context, tenant, runID string) (Mission, error)
	// IdleMissions returns up to limit missions of the definition, of
	// every tenant, with Status active and UpdatedAt before before, in the
	// order of UpdatedAt then ID, starting after the mission after names
	// (the zero MissionCursor starts at the first). The run sweeper pages
	// through the runs idle longer than the retention with it; drivers
	// answer it from an index on (definition_id, status, updated_at, id).
	IdleMissions(ctx context.Context, definitionID string, before time.Time, after MissionCursor, limit int) ([]Mission, error)
	// ExpiredWaits returns up to limit active missions, of every tenant,
	// whose WaitDeadline is set and before now, earliest deadline first
	// (then by ID): the parents parked on a sub-workflow past the
	// executor's timeoutMs, which the wait sweeper fails.
	ExpiredWaits(ctx context.Context, now time.Time, limit int) ([]Mission, error)
	// ListMissions returns up to limit missions of the tenant that match
	// the filter, most recently changed first (then by ID, descending).
	// The operator console lists missions with it.
	ListMissions(ctx context.Context, tenant string, f MissionFilter, limit int) ([]Mission, error)
	// MissionEvents returns up to limit events of the tenant that name the
	// workflow id, in causal order (by time, then append order): a
	// mission's audit history, transitions included.
	MissionEvents(ctx context.Context, tenant, workflowID string, limit int) ([]Event, error)
	// ExportEvents returns up to limit events that match the filter, of
	// every tenant when f.Tenant is empty, in append order (by Seq), or
	// newest first with f.Newest, between f.AfterSeq and f.BeforeSeq:
	// praxa audit export pages through the audit trail with it, the
	// console's audit page back from the newest.
	ExportEvents(ctx context.Context, f EventFilter, limit int) ([]Event, error)
	// GetSubmit returns the recorded submit of a workflow at a version, or
	// ErrNotFound.
	GetSubmit(ctx context.Context, tenant, workflowID string, expectedVersion int64) (SubmitRecord, error)
	// GetApproval returns the tenant's approval, or ErrNotFound.
	GetApproval(ctx context.Context, tenant, id string) (Approval, error)
	// ListApprovals returns up to limit approvals of the tenant with the
	// status ("" for any), oldest first.
	ListApprovals(ctx context.Context, tenant, status string, limit int) ([]Approval, error)
	// GetMoveLease returns the lease on a workflow's version, or
	// ErrNotFound (also for another tenant's). An expired lease is
	// returned too: it is resolved, never silently replaced.
	GetMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64) (MoveLease, error)
	// ExpiredMoveLeases returns up to limit move leases whose Deadline is
	// before now, of every tenant, oldest deadline first (the lease
	// sweeper resolves them).
	ExpiredMoveLeases(ctx context.Context, now time.Time, limit int) ([]MoveLease, error)
	// GetStartLease returns the tenant's start lease (held or resolved) by
	// ref, or ErrNotFound (also for another tenant's).
	GetStartLease(ctx context.Context, tenant, ref string) (StartLease, error)
	// ExpiredStartLeases returns up to limit held start leases (Status 0)
	// whose Deadline is before now, of every tenant, oldest deadline
	// first.
	ExpiredStartLeases(ctx context.Context, now time.Time, limit int) ([]StartLease, error)
	// ContextReadTx reads memory records, goals and certificates.
	ContextReadTx
	// PendingReadTx reads the commands paused on unknown subjects.
	PendingReadTx
	// QuotaReadTx counts what the tenant quotas bound.
	QuotaReadTx
	// PinReadTx reads the pins of imported capabilities.
	PinReadTx
	// LexiconReadTx reads the lexicon overlay (gateway/catalogue).
	LexiconReadTx
	// CoverageReadTx reads the recorded coverage (gateway/knowledge).
	CoverageReadTx
}

// Tx reads and writes inside a transaction.
type Tx interface {
	ReadTx
	// InsertIdempotency stores a new record; ErrExists if the namespace and
	// key hold a record or a tombstone that has not expired at the new
	// record's CreatedAt (an expired one is replaced).
	InsertIdempotency(ctx context.Context, rec IdempotencyRecord) error
	// InsertIntent stores a new intent; ErrExists if its id is taken.
	InsertIntent(ctx context.Context, in Intent) error
	// AppendEvents appends audit events; the store assigns their Seq.
	AppendEvents(ctx context.Context, events []Event) error
	// DeleteEventsBefore deletes up to limit of the oldest events (by Seq)
	// recorded before t, of every tenant, and returns how many it deleted:
	// the audit retention (audit.retention) sweeps with it, a bounded
	// batch a transaction.
	DeleteEventsBefore(ctx context.Context, t time.Time, limit int) (int, error)
	// Revoke records a revocation; revoking a revoked jti again is not an
	// error and keeps the first record.
	Revoke(ctx context.Context, r Revocation) error
	// InsertMission stores a new mission; ErrExists if its id, or its
	// runId within the tenant, is taken.
	InsertMission(ctx context.Context, m Mission) error
	// UpdateMission replaces a mission if its stored version is
	// expectedVersion: ErrConflict if it is another, ErrNotFound if the
	// mission does not exist. This compare-and-set is what keeps two
	// gateways from firing two transitions from one version.
	UpdateMission(ctx context.Context, m Mission, expectedVersion int64) error
	// DeleteMission removes the tenant's mission id if its stored version
	// is expectedVersion: ErrConflict if it is another, ErrNotFound if
	// there is none (or it is another tenant's). Its runId is free again.
	// The gateway deletes only the run a start stored with its start lease
	// (StartLease.WorkflowID, at version 0) when the start released the
	// lease without any call that may have acted.
	DeleteMission(ctx context.Context, tenant, id string, expectedVersion int64) error
	// PutSubmit records the answer of a submit so an exact replay can
	// return it; ErrExists if the version already has one.
	PutSubmit(ctx context.Context, r SubmitRecord) error
	// InsertApproval stores a new approval; ErrExists if its id is taken.
	InsertApproval(ctx context.Context, a Approval) error
	// UpdateApproval replaces an approval whose stored status is
	// expectedStatus; ErrConflict otherwise.
	UpdateApproval(ctx context.Context, a Approval, expectedStatus string) error
	// InsertMoveLease stores a new lease; ErrExists if the workflow's
	// version holds one, expired or not (a lease is only ever removed by
	// DeleteMoveLease).
	InsertMoveLease(ctx context.Context, l MoveLease) error
	// DeleteMoveLease removes the lease on a workflow's version if owner
	// holds it: ErrNotFound if there is none, ErrConflict if another
	// owner holds it.
	DeleteMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner string) error
	// RenewMoveLease extends the lease owner holds on a workflow's version
	// to deadline and hands it to newOwner, if it is still live at now
	// (now before its deadline, as resolvers judge it): ErrNotFound if
	// there is none, ErrConflict if another owner holds it or it has
	// expired. The new owner makes a resolution decided on the lease as it
	// was read before the renewal fail its compare-and-set.
	RenewMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner, newOwner string, now, deadline time.Time) error
	// InsertStartLease stores a new start lease; ErrExists if the tenant's
	// ref holds one, held or resolved, expired or not.
	InsertStartLease(ctx context.Context, l StartLease) error
	// DeleteStartLease removes the held start lease on the tenant's ref if
	// owner holds it: ErrNotFound if there is none, ErrConflict if another
	// owner holds it or it was resolved.
	DeleteStartLease(ctx context.Context, tenant, ref, owner string) error
	// ResolveStartLease turns the held start lease owner holds into a
	// record of its answer (status, response; Owner becomes ""), kept so
	// that a retry of the start replays it until expiresAt (zero: for
	// good; SweepIdempotency deletes it once expired): ErrNotFound if there
	// is none, ErrConflict if another owner holds it or it was resolved
	// already.
	ResolveStartLease(ctx context.Context, tenant, ref, owner string, status int, response []byte, expiresAt time.Time) error
	// RenewStartLease extends the held start lease owner holds to deadline
	// and hands it to newOwner, as RenewMoveLease does.
	RenewStartLease(ctx context.Context, tenant, ref, owner, newOwner string, now, deadline time.Time) error
	// ContextTx writes memory records, goals and certificates.
	ContextTx
	// PendingTx writes the commands paused on unknown subjects.
	PendingTx
	// QuotaTx serializes the writes a tenant quota checks.
	QuotaTx
	// PinTx writes the pins of imported capabilities.
	PinTx
	// LexiconTx writes the lexicon overlay (gateway/catalogue).
	LexiconTx
	// CoverageTx records coverage runs (gateway/knowledge).
	CoverageTx
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
	// ExpiresAt is when the record stops replaying.
	ExpiresAt time.Time
	// TombstoneUntil is when the key is forgotten: from ExpiresAt until
	// then the record is a tombstone (its key, operation, fingerprint,
	// object and CreatedAt, without the answer) that keeps the key from
	// acting again. Zero, or not after ExpiresAt, is no tombstone (and
	// reads back as zero).
	TombstoneUntil time.Time
	// Object names what the request created or acted on, as the gateway
	// names it (a mission), "" for nothing it can link: a tombstone keeps
	// it so that a late retry can be pointed at it.
	Object string
	// Expired is set by GetIdempotency on a tombstone: the record is past
	// its ExpiresAt, and Status, Header and Body are empty. Drivers
	// ignore it on insert.
	Expired bool
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
	// CallTraceID is the trace the caller named in its arguments
	// (praxec.command traceId), "" for none: TraceEvents finds the event
	// by it as well as by TraceID.
	CallTraceID string
}

// Mission is a stored workflow instance. The columns the store queries are
// typed; the engine's own state (context, input, evidence, pending moves)
// travels in Doc, an opaque JSON document.
type Mission struct {
	Tenant            string
	ID                string
	RunID             string
	DefinitionID      string
	DefinitionVersion int
	State             string
	Version           int64
	// Status is active, completed, cancelled or expired (a proxy_default
	// run the gateway ended for idleness), or starting: the run a start
	// stores with its start lease, at version 0, while the start's first
	// outside call runs (StartLease.WorkflowID); no quota counts it.
	Status    string
	ParentID  string
	Doc       []byte
	CreatedAt time.Time
	UpdatedAt time.Time
	// WaitDeadline is when the move a parked mission waits on a
	// sub-workflow for times out (a workflow executor's timeoutMs); zero
	// when the mission is not parked or waits without a timeout.
	// UpdateMission writes it.
	WaitDeadline time.Time
}

// EventFilter narrows ExportEvents: each set field must match.
type EventFilter struct {
	// Tenant is the events' tenant; "" for every tenant.
	Tenant string
	// Since and Until bound the events' At: Since <= At < Until; a zero
	// time does not bound.
	Since, Until time.Time
	// Types are the event types to keep; none keeps every type.
	Types []string
	// TraceID keeps the events whose TraceID or CallTraceID it is.
	TraceID string
	// RunID keeps the events of one run.
	RunID string
	// Subject keeps the events of one principal's subject; Outcome those
	// of one outcome (allowed, refused, replayed, failed).
	Subject, Outcome string
	// Capability keeps the events of a capability or tool: its Tool, or
	// its capability attribute (what a capability's calls and moves
	// record, and the audit hooks route by).
	Capability string
	// AfterSeq keeps the events appended after the one with this Seq (0:
	// from the first); BeforeSeq those appended before it (0: to the
	// last).
	AfterSeq, BeforeSeq int64
	// Newest returns the newest events first (by Seq, descending), so
	// that a limit keeps the most recent and BeforeSeq pages back.
	Newest bool
}

// StatusStarting is the Status of the run a start stores with its start
// lease while its first outside call runs (see Mission.Status).
const StatusStarting = "starting"

// MissionFilter narrows ListMissions: each non-empty field must match
// exactly.
type MissionFilter struct {
	// DefinitionID is the workflow definition.
	DefinitionID string
	// State is the workflow state the mission is in.
	State string
	// Status is active, completed, cancelled or expired.
	Status string
}

// MissionCursor is a position in the order IdleMissions lists missions
// in: the UpdatedAt and ID of the last mission of a page.
type MissionCursor struct {
	UpdatedAt time.Time
	ID        string
}

// SubmitRecord is the answer of one successful submit, kept so that an
// exact replay (same workflow, version, transition and arguments) returns
// it.
type SubmitRecord struct {
	Tenant          string
	WorkflowID      string
	ExpectedVersion int64
	Fingerprint     string
	// Status is 0 (or 200) when Response is the projection a successful
	// submit answered; otherwise it is the HTTP status of the refusal the
	// submit answered (504 for an outcome-unknown) and Response holds its
	// problem envelope (contracts.ErrorEnvelope).
	Status    int
	Response  []byte
	CreatedAt time.Time
}

// MoveLease is the durable claim a gateway takes on one version of a
// workflow before a move on it makes its first call outside the gateway
// (an mcp, cli or rest executor). It is taken in a transaction of its own,
// so it is visible to every replica while the call runs; the transaction
// that completes the move deletes it. A lease found past its Deadline was
// left by a gateway that stopped mid-call: the call may have taken effect,
// so it is resolved as an outcome-unknown for that version, never by
// calling again.
type MoveLease struct {
	Tenant          string
	WorkflowID      string
	ExpectedVersion int64
	// Transition is the move; Fingerprint identifies the request (the
	// transition and its arguments, as a submit record's fingerprint).
	Transition  string
	Fingerprint string
	// Namespace and Key are the idempotency key of the request, when it
	// had one; Operation and KeyFingerprint are what its idempotency
	// record needs (the contract operationId, the request fingerprint).
	Namespace      string
	Key            string
	Operation      string
	KeyFingerprint string
	// Owner identifies the gateway process and request holding the lease.
	Owner     string
	CreatedAt time.Time
	Deadline  time.Time
}

// StartLease is the durable claim a gateway takes on a start (a workflow
// that does not exist yet) before the start's chain makes its first call
// outside the gateway. It is keyed by what identifies the start within the
// tenant (Ref): the runId the caller gave, else its idempotency key. Like
// a MoveLease it is taken in a transaction of its own and deleted by the
// transaction that stores the new workflow; one found past its Deadline
// was left by a gateway that stopped mid-call and is resolved as an
// outcome-unknown, never by calling again. A start lease keyed by runId is
// then kept, resolved, as the record of that answer (Status and Response),
// since the runId is single-use and a keyless retry must replay it.
type StartLease struct {
	Tenant string
	// Ref identifies the start within the tenant ("run:" and the runId,
	// or "key:" and the idempotency namespace and key).
	Ref string
	// DefinitionID is the workflow being started; Fingerprint identifies
	// the request (its operation and arguments without the key).
	DefinitionID string
	Fingerprint  string
	// Namespace and Key are the idempotency key of the request, when it
	// had one; Operation and KeyFingerprint are what its idempotency
	// record needs.
	Namespace      string
	Key            string
	Operation      string
	KeyFingerprint string
	// Owner identifies the gateway process and request holding the lease;
	// "" once resolved.
	Owner     string
	CreatedAt time.Time
	Deadline  time.Time
	// Status and Response are the recorded answer of a resolved lease (an
	// HTTP status and an error envelope); Status is 0 while held.
	Status   int
	Response []byte
	// ExpiresAt is when a resolved lease stops being kept (zero: never).
	// A lease keyed by an idempotency key is kept as long as the key's
	// idempotency record; one keyed by runId is kept for good (a runId is
	// single-use).
	ExpiresAt time.Time
	// WorkflowID is the run the start stored with the lease, in the same
	// transaction (a Mission with Status starting), so that a start whose
	// call may have acted always leaves an object to read back: the
	// start's transaction replaces it, a release deletes it, a resolution
	// records its unknown outcome on it. "" for a lease taken without one
	// (before the gateway stored runs with their leases).
	WorkflowID string
}

// Approval is a human approval a transition waits for.
type Approval struct {
	Tenant     string
	ID         string
	WorkflowID string
	RunID      string
	Transition string
	Queue      string
	// Status is pending, approved, rejected or cancelled.
	Status      string
	RequestedBy string
	ResolvedBy  string
	// Doc holds the engine's details (arguments, expected version).
	Doc        []byte
	CreatedAt  time.Time
	ResolvedAt time.Time
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

// CoverageRun is one recorded conformance run: the coverage evidence
// aura_get_coverage serves. It describes the gateway, not a tenant's data,
// so it is not keyed by tenant; Tenant and Subject name who recorded it.
type CoverageRun struct {
	ID         string
	Tenant     string
	Subject    string
	RecordedAt time.Time
	// Doc is the run's evidence, an opaque JSON document.
	Doc []byte
}

// LexiconTerm is one term of the lexicon overlay: a definition written at
// run time (praxec.command define) on top of the configuration's lexicon.
// The lexicon is gateway-wide configuration, so the overlay is not
// partitioned by tenant: every tenant and every replica reads the same
// terms. Who wrote a term last is recorded beside it.
type LexiconTerm struct {
	// Key is the term's lookup key (config.TermKey); unique.
	Key string
	// Term is the term as it was defined.
	Term string
	// Entry is the entry's JSON document.
	Entry []byte
	// Version counts the writes of the term, from 1.
	Version int64
	// Tenant, Subject and ClientID identify who wrote the term last.
	Tenant    string
	Subject   string
	ClientID  string
	UpdatedAt time.Time
}
