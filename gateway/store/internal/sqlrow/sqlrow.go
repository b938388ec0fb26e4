// Package sqlrow holds the row mapping the SQL drivers share (their queries
// are package sqltx's).
//
// Every scan function takes a Scanner (a single row or a cursor positioned on
// a row) and returns the store type with the raw scan error unwrapped, so the
// caller can map the driver's no-rows sentinel to store.ErrNotFound and add
// the driver's prefix. A column that holds JSON is decoded here; a decoding error is
// wrapped with the column's name.
package sqlrow

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// Scanner is what both database/sql and pgx rows offer.
type Scanner interface {
	Scan(dest ...any) error
}

// Column lists, in the order the scan functions read them.
const (
	ContextColumns     = `kind, tenant, id, compartment, purposes, tags, doc, created_at, updated_at`
	CertificateColumns = `id, issuer, subject, doc, created_at, updated_at`
	CoverageColumns    = `id, tenant, subject, recorded_at, doc`
	LeaseColumns       = `tenant, workflow_id, expected_version, transition, fingerprint, namespace, key, operation, key_fingerprint, owner, created_at, deadline`
	StartLeaseColumns  = `tenant, ref, definition_id, fingerprint, namespace, key, operation, key_fingerprint, owner, created_at, deadline, status, response, expires_at, workflow_id`
	LexiconColumns     = `key, term, entry, version, tenant, subject, client_id, updated_at`
	PinColumns         = `capability, connection, tool, sha256, definition, offered_sha256, offered_definition, offered_at, version, accepted_by, created_at, updated_at`
	MissionColumns     = `tenant, id, run_id, definition_id, definition_version, state, version, status, parent_id, doc, created_at, updated_at, wait_deadline`
	SubmitColumns      = `fingerprint, response, created_at, status`
	ApprovalColumns    = `tenant, id, workflow_id, run_id, transition, queue, status, requested_by, resolved_by, doc, created_at, resolved_at`
	PendingColumns     = `tenant, subject_key, command_key, subject, doc, created_by, created_at`
	IdempotencyColumns = `operation, fingerprint, status, header, body, created_at, expires_at, object, forget_at`
	IntentColumns      = `subject, text, tags, trace_id, created_at`
	EventColumns       = `seq, type, at, subject, client_id, operation, tool, run_id, workflow_id, outcome, code, request_id, attributes, trace_id, call_trace_id`
	RevocationColumns  = `jti, revoked_at, expires_at, by_subject, reason`
)

// fromNanos turns a stored nanosecond count back into a UTC time; zero is
// the zero time.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// decode unmarshals a JSON column, naming the column in its error.
func decode(column, doc string, v any) error {
	if err := json.Unmarshal([]byte(doc), v); err != nil {
		return fmt.Errorf("%s: %w", column, err)
	}
	return nil
}

// ContextRecord reads ContextColumns.
func ContextRecord(row Scanner) (store.ContextRecord, error) {
	var r store.ContextRecord
	var purposes, tags string
	var created, updated int64
	if err := row.Scan(&r.Kind, &r.Tenant, &r.ID, &r.Compartment, &purposes, &tags, &r.Doc, &created, &updated); err != nil {
		return r, err
	}
	if err := decode("purposes", purposes, &r.Purposes); err != nil {
		return r, err
	}
	if err := decode("tags", tags, &r.Tags); err != nil {
		return r, err
	}
	r.CreatedAt, r.UpdatedAt = fromNanos(created), fromNanos(updated)
	return r, nil
}

// Certificate reads CertificateColumns.
func Certificate(row Scanner) (store.Certificate, error) {
	var c store.Certificate
	var created, updated int64
	if err := row.Scan(&c.ID, &c.Issuer, &c.Subject, &c.Doc, &created, &updated); err != nil {
		return c, err
	}
	c.CreatedAt, c.UpdatedAt = fromNanos(created), fromNanos(updated)
	return c, nil
}

// CoverageRun reads CoverageColumns.
func CoverageRun(row Scanner) (store.CoverageRun, error) {
	var r store.CoverageRun
	var at int64
	if err := row.Scan(&r.ID, &r.Tenant, &r.Subject, &at, &r.Doc); err != nil {
		return r, err
	}
	r.RecordedAt = fromNanos(at)
	return r, nil
}

// MoveLease reads LeaseColumns.
func MoveLease(row Scanner) (store.MoveLease, error) {
	var l store.MoveLease
	var created, deadline int64
	if err := row.Scan(&l.Tenant, &l.WorkflowID, &l.ExpectedVersion, &l.Transition, &l.Fingerprint, &l.Namespace, &l.Key,
		&l.Operation, &l.KeyFingerprint, &l.Owner, &created, &deadline); err != nil {
		return l, err
	}
	l.CreatedAt, l.Deadline = fromNanos(created), fromNanos(deadline)
	return l, nil
}

// StartLease reads StartLeaseColumns.
func StartLease(row Scanner) (store.StartLease, error) {
	var l store.StartLease
	var created, deadline, expires int64
	if err := row.Scan(&l.Tenant, &l.Ref, &l.DefinitionID, &l.Fingerprint, &l.Namespace, &l.Key, &l.Operation, &l.KeyFingerprint,
		&l.Owner, &created, &deadline, &l.Status, &l.Response, &expires, &l.WorkflowID); err != nil {
		return l, err
	}
	l.CreatedAt, l.Deadline, l.ExpiresAt = fromNanos(created), fromNanos(deadline), fromNanos(expires)
	if len(l.Response) == 0 {
		l.Response = nil
	}
	return l, nil
}

// LexiconTerm reads LexiconColumns.
func LexiconTerm(row Scanner) (store.LexiconTerm, error) {
	var lt store.LexiconTerm
	var updated int64
	if err := row.Scan(&lt.Key, &lt.Term, &lt.Entry, &lt.Version, &lt.Tenant, &lt.Subject, &lt.ClientID, &updated); err != nil {
		return lt, err
	}
	lt.UpdatedAt = fromNanos(updated)
	return lt, nil
}

// CapabilityPin reads PinColumns.
func CapabilityPin(row Scanner) (store.CapabilityPin, error) {
	var p store.CapabilityPin
	var offered, created, updated int64
	if err := row.Scan(&p.Capability, &p.Connection, &p.Tool, &p.SHA256, &p.Definition, &p.OfferedSHA256, &p.OfferedDefinition,
		&offered, &p.Version, &p.AcceptedBy, &created, &updated); err != nil {
		return p, err
	}
	if len(p.OfferedDefinition) == 0 {
		p.OfferedDefinition = nil
	}
	p.OfferedAt, p.CreatedAt, p.UpdatedAt = fromNanos(offered), fromNanos(created), fromNanos(updated)
	return p, nil
}

// Mission reads MissionColumns.
func Mission(row Scanner) (store.Mission, error) {
	var m store.Mission
	var created, updated, wait int64
	if err := row.Scan(&m.Tenant, &m.ID, &m.RunID, &m.DefinitionID, &m.DefinitionVersion, &m.State, &m.Version,
		&m.Status, &m.ParentID, &m.Doc, &created, &updated, &wait); err != nil {
		return m, err
	}
	m.CreatedAt, m.UpdatedAt, m.WaitDeadline = fromNanos(created), fromNanos(updated), fromNanos(wait)
	return m, nil
}

// Submit reads SubmitColumns into the record of one workflow version, which
// the row does not repeat.
func Submit(row Scanner, tenant, workflowID string, expectedVersion int64) (store.SubmitRecord, error) {
	r := store.SubmitRecord{Tenant: tenant, WorkflowID: workflowID, ExpectedVersion: expectedVersion}
	var created int64
	if err := row.Scan(&r.Fingerprint, &r.Response, &created, &r.Status); err != nil {
		return r, err
	}
	r.CreatedAt = fromNanos(created)
	return r, nil
}

// Approval reads ApprovalColumns.
func Approval(row Scanner) (store.Approval, error) {
	var a store.Approval
	var created, resolved int64
	if err := row.Scan(&a.Tenant, &a.ID, &a.WorkflowID, &a.RunID, &a.Transition, &a.Queue, &a.Status, &a.RequestedBy,
		&a.ResolvedBy, &a.Doc, &created, &resolved); err != nil {
		return a, err
	}
	a.CreatedAt, a.ResolvedAt = fromNanos(created), fromNanos(resolved)
	return a, nil
}

// PendingSubject reads PendingColumns.
func PendingSubject(row Scanner) (store.PendingSubject, error) {
	var p store.PendingSubject
	var created int64
	if err := row.Scan(&p.Tenant, &p.SubjectKey, &p.CommandKey, &p.Subject, &p.Doc, &p.CreatedBy, &created); err != nil {
		return p, err
	}
	p.CreatedAt = fromNanos(created)
	return p, nil
}

// Idempotency reads IdempotencyColumns into the record under namespace and
// key, which the row does not repeat. forget_at is when the row goes: its
// TombstoneUntil, or its ExpiresAt when it has no tombstone (ForgetAt).
func Idempotency(row Scanner, namespace, key string) (store.IdempotencyRecord, error) {
	var (
		rec                      store.IdempotencyRecord
		header                   string
		created, expires, forget int64
	)
	if err := row.Scan(&rec.Operation, &rec.Fingerprint, &rec.Status, &header, &rec.Body, &created, &expires, &rec.Object, &forget); err != nil {
		return rec, err
	}
	if err := decode("header", header, &rec.Header); err != nil {
		return rec, err
	}
	rec.Namespace, rec.Key = namespace, key
	rec.CreatedAt, rec.ExpiresAt = fromNanos(created), fromNanos(expires)
	if forget > expires {
		rec.TombstoneUntil = fromNanos(forget)
	}
	return rec, nil
}

// ForgetAt is the forget_at column of rec: when its row goes, at the end
// of its tombstone or, without one, when it expires.
func ForgetAt(rec store.IdempotencyRecord) int64 {
	return max(Nanos(rec.ExpiresAt), Nanos(rec.TombstoneUntil))
}

// Tombstone makes rec, read at now, what store.ReadTx.GetIdempotency
// answers: past its ExpiresAt (or with its answer dropped by the sweeper,
// Status 0) it is a tombstone, Expired and without its answer.
func Tombstone(rec store.IdempotencyRecord, now time.Time) store.IdempotencyRecord {
	if rec.Status != 0 && Nanos(rec.ExpiresAt) >= Nanos(now) {
		return rec
	}
	rec.Expired, rec.Status, rec.Header, rec.Body = true, 0, nil, nil
	return rec
}

// Intent reads IntentColumns into the intent of tenant and id, which the row
// does not repeat.
func Intent(row Scanner, tenant, id string) (store.Intent, error) {
	in := store.Intent{Tenant: tenant, ID: id}
	var tags string
	var created int64
	if err := row.Scan(&in.Subject, &in.Text, &tags, &in.TraceID, &created); err != nil {
		return in, err
	}
	if err := decode("tags", tags, &in.Tags); err != nil {
		return in, err
	}
	in.CreatedAt = fromNanos(created)
	return in, nil
}

// Event reads EventColumns into an event of tenant, which the row does
// not repeat.
func Event(row Scanner, tenant string) (store.Event, error) {
	e := store.Event{Tenant: tenant}
	return e, scanEvent(row, &e)
}

// TenantEvent reads "tenant, " + EventColumns: an event of a query that
// spans tenants.
func TenantEvent(row Scanner) (store.Event, error) {
	var e store.Event
	return e, scanEvent(row, &e, &e.Tenant)
}

// scanEvent reads the leading columns into lead, then EventColumns into e.
func scanEvent(row Scanner, e *store.Event, lead ...any) error {
	var at int64
	var attrs string
	dest := append(lead, &e.Seq, &e.Type, &at, &e.Subject, &e.ClientID, &e.Operation, &e.Tool, &e.RunID, &e.WorkflowID,
		&e.Outcome, &e.Code, &e.RequestID, &attrs, &e.TraceID, &e.CallTraceID)
	if err := row.Scan(dest...); err != nil {
		return err
	}
	e.At = fromNanos(at)
	return decode("attributes", attrs, &e.Attributes)
}

// Revocation reads RevocationColumns.
func Revocation(row Scanner) (store.Revocation, error) {
	var r store.Revocation
	var at, exp int64
	if err := row.Scan(&r.JTI, &at, &exp, &r.By, &r.Reason); err != nil {
		return r, err
	}
	r.RevokedAt, r.ExpiresAt = fromNanos(at), fromNanos(exp)
	return r, nil
}

// Nanos is the column value of a time: Unix nanoseconds, 0 for the zero
// time (the inverse of the scans' conversion).
func Nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// NonNil returns s, or an empty list for nil, so a list column holds [].
func NonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// NonNilBytes returns b, or an empty slice for nil, for NOT NULL blob
// columns.
func NonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// JSONStrings renders a list column: a JSON array, [] for nil.
func JSONStrings(list []string) (string, error) {
	b, err := json.Marshal(NonNil(list))
	return string(b), err
}
