// Package memstore is an in-memory store.Store driver for tests and for the
// "no store" baseline of benchmarks.
//
// It is NOT durable: everything lives in the process's memory and is lost
// when the process exits. "Committed" here means applied to a map under a
// mutex, which is why it measures what the rest of the gateway costs without
// any storage I/O. Never use it to serve real traffic.
//
// The data lives in a DB; a Store is a handle on one DB. Closing a Store
// does not discard the DB, so a test can Open the same DB again and see what
// was committed, as it would reopen a file (storetest's Durable test does).
//
// Semantics follow the SQLite driver, so code that passes its tests on
// memstore behaves the same on a durable driver:
//
//   - Update runs its function under an exclusive lock with its writes
//     staged in the transaction; they are applied only when the function
//     returns nil (an error or a panic discards them). Reads inside the
//     transaction see its own staged writes.
//   - View runs under a shared lock, so it sees a consistent snapshot.
//   - Stored values are copied on the way in and on the way out: callers
//     can neither change stored data through a slice or map they passed in
//     nor through one they got back.
//   - Times are kept at nanosecond precision in UTC, without monotonic clock
//     readings; event attributes are normalized through JSON on write
//     (numbers become float64, arrays []any, objects map[string]any), as
//     they come back from a driver that serializes them.
package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/txrun"
	"github.com/praxa/praxa/internal/jsonvalue"
)

// DB is the in-memory state that Stores open. It outlives them: Close on a
// Store leaves the DB as it was.
type DB struct {
	mu      sync.RWMutex
	idem    map[idemKey]store.IdempotencyRecord
	intents map[string]store.Intent // by id: ids are unique across tenants
	traces  map[traceKey][]store.Event
	seq     int64
	revs    map[string]store.Revocation

	missions  map[string]store.Mission // by id: ids are unique across tenants
	runIDs    map[runKey]string        // tenant and runId -> mission id
	submits   map[submitKey]store.SubmitRecord
	approvals map[string]store.Approval      // by id
	lexicon   map[string]store.LexiconTerm   // by key; nil until the first term
	pins      map[string]store.CapabilityPin // by capability; nil until the first pin
	coverage  []store.CoverageRun            // in the order recorded
	context   contextData                    // memory, goals, certificates
	leases    map[submitKey]store.MoveLease  // by workflow and version; nil until the first lease
	pending   map[pendingKey]store.PendingSubject
	// startLeases are by tenant and ref; nil until the first lease.
	startLeases map[startKey]store.StartLease
}

type idemKey struct{ namespace, key string }

type traceKey struct{ tenant, traceID string }

// NewDB returns an empty database.
func NewDB() *DB {
	return &DB{
		idem:    map[idemKey]store.IdempotencyRecord{},
		intents: map[string]store.Intent{},
		traces:  map[traceKey][]store.Event{},
		revs:    map[string]store.Revocation{},

		missions:  map[string]store.Mission{},
		runIDs:    map[runKey]string{},
		submits:   map[submitKey]store.SubmitRecord{},
		approvals: map[string]store.Approval{},
	}
}

// Store is a store.Store on a DB.
type Store struct {
	db     *DB
	closed atomic.Bool
}

var _ store.Store = (*Store)(nil)

// Open returns a Store on db.
func Open(db *DB) *Store { return &Store{db: db} }

// New returns a Store on a fresh, empty DB.
func New() *Store { return Open(NewDB()) }

// DB returns the database the Store is open on.
func (s *Store) DB() *DB { return s.db }

// Update implements store.Store. Updates are serialized; fn's writes are
// applied atomically when it returns nil.
func (s *Store) Update(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	db := s.db
	db.mu.Lock()
	defer db.mu.Unlock()
	if s.closed.Load() {
		return store.ErrClosed
	}
	tx := &txn{db: db, nextSeq: db.seq}
	if err := txrun.Update(ctx, "memstore", fn, tx); err != nil {
		return err
	}
	tx.apply()
	return nil
}

// View implements store.Store.
func (s *Store) View(ctx context.Context, fn func(context.Context, store.ReadTx) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.db.mu.RLock()
	defer s.db.mu.RUnlock()
	return fn(ctx, &txn{db: s.db, readOnly: true})
}

// AppendEvents implements store.Store.
func (s *Store) AppendEvents(ctx context.Context, events []store.Event) error {
	return s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, events)
	})
}

// SweepIdempotency implements store.Store.
func (s *Store) SweepIdempotency(ctx context.Context, t time.Time) (int, error) {
	if s.closed.Load() {
		return 0, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	n := 0
	for k, rec := range s.db.idem {
		switch {
		case forgetAt(rec) < nanos(t):
			delete(s.db.idem, k)
			n++
		case rec.Status != 0 && nanos(rec.ExpiresAt) < nanos(t):
			// Expired: its tombstone keeps the key, not the answer.
			rec.Status, rec.Header, rec.Body = 0, nil, []byte{}
			s.db.idem[k] = rec
			n++
		}
	}
	// The resolved start leases kept as long as their key's record.
	for k, l := range s.db.startLeases {
		if l.Status != 0 && !l.ExpiresAt.IsZero() && nanos(l.ExpiresAt) < nanos(t) {
			delete(s.db.startLeases, k)
			n++
		}
	}
	return n, nil
}

// RevokedSince implements store.Store.
func (s *Store) RevokedSince(ctx context.Context, t time.Time) ([]store.Revocation, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.db.mu.RLock()
	defer s.db.mu.RUnlock()
	var out []store.Revocation
	for _, r := range s.db.revs {
		if nanos(r.RevokedAt) >= nanos(t) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b store.Revocation) int {
		return cmp.Or(cmp.Compare(nanos(a.RevokedAt), nanos(b.RevokedAt)), cmp.Compare(a.JTI, b.JTI))
	})
	return out, nil
}

// Close closes this handle; the DB keeps its data. Later calls on the handle
// fail with store.ErrClosed. An Update in progress finishes first.
func (s *Store) Close() error {
	s.db.mu.Lock()
	s.closed.Store(true)
	s.db.mu.Unlock()
	return nil
}

// txn is one transaction. A read-only txn reads the DB; a read-write one
// also stages writes that apply() moves into the DB.
type txn struct {
	db       *DB
	readOnly bool

	idem    map[idemKey]store.IdempotencyRecord
	intents map[string]store.Intent
	events  []store.Event
	revs    map[string]store.Revocation
	nextSeq int64
	// deleted are the seqs of committed events DeleteEventsBefore deletes.
	deleted map[int64]bool

	missions  map[string]store.Mission
	dropped   map[string]store.Mission // the missions deleted, as they were
	submits   map[submitKey]store.SubmitRecord
	approvals map[string]store.Approval
	lexicon   map[string]store.LexiconTerm
	pins      map[string]store.CapabilityPin
	coverage  []store.CoverageRun
	context   contextData
	leases    map[submitKey]*store.MoveLease // nil: deleted
	// startLeases stages start-lease writes; a nil value is a delete.
	startLeases map[startKey]*store.StartLease
	// pending stages pending-subject writes; a nil value is a delete.
	pending map[pendingKey]*store.PendingSubject
}

var _ store.Tx = (*txn)(nil)

func (t *txn) apply() {
	db := t.db
	maps.Copy(db.idem, t.idem)
	maps.Copy(db.intents, t.intents)
	maps.Copy(db.revs, t.revs)
	for id, m := range t.dropped {
		delete(db.missions, id)
		delete(db.runIDs, runKey{m.Tenant, m.RunID})
	}
	for id, m := range t.missions {
		db.missions[id] = m
		db.runIDs[runKey{m.Tenant, m.RunID}] = id
	}
	maps.Copy(db.submits, t.submits)
	maps.Copy(db.approvals, t.approvals)
	merge(&db.lexicon, t.lexicon)
	merge(&db.pins, t.pins)
	t.applyContext()
	applyStaged(&db.leases, t.leases)
	applyStaged(&db.startLeases, t.startLeases)
	applyStaged(&db.pending, t.pending)
	db.coverage = append(db.coverage, t.coverage...)
	if len(t.deleted) > 0 {
		for k, evs := range db.traces {
			evs = slices.DeleteFunc(evs, func(e store.Event) bool { return t.deleted[e.Seq] })
			if len(evs) == 0 {
				delete(db.traces, k)
			} else {
				db.traces[k] = evs
			}
		}
	}
	for _, e := range t.events {
		k := traceKey{e.Tenant, e.TraceID}
		db.traces[k] = insertSorted(db.traces[k], e)
		if e.CallTraceID != "" && e.CallTraceID != e.TraceID {
			// The trace the caller named finds the event too.
			k := traceKey{e.Tenant, e.CallTraceID}
			db.traces[k] = insertSorted(db.traces[k], e)
		}
	}
	db.seq = t.nextSeq
}

// insertSorted inserts e into events kept sorted by (At, Seq). Events come
// mostly in order, so the search starts from the end.
func insertSorted(events []store.Event, e store.Event) []store.Event {
	i := len(events)
	for i > 0 && eventCompare(events[i-1], e) > 0 {
		i--
	}
	return slices.Insert(events, i, e)
}

func eventCompare(a, b store.Event) int {
	return cmp.Or(cmp.Compare(nanos(a.At), nanos(b.At)), cmp.Compare(a.Seq, b.Seq))
}

func (t *txn) mustWrite() {
	if t.readOnly {
		panic("memstore: write in a read-only transaction")
	}
}

// GetIdempotency implements store.ReadTx.
func (t *txn) GetIdempotency(ctx context.Context, namespace, key string, now time.Time) (store.IdempotencyRecord, error) {
	rec, ok := t.idemRecord(idemKey{namespace, key})
	if !ok || forgetAt(rec) < nanos(now) {
		return store.IdempotencyRecord{}, store.ErrNotFound
	}
	rec = copyRecord(rec)
	if rec.Status == 0 || nanos(rec.ExpiresAt) < nanos(now) {
		// A tombstone, as the SQL drivers answer one.
		rec.Expired, rec.Status, rec.Header, rec.Body = true, 0, nil, nil
	}
	return rec, nil
}

// forgetAt is when rec goes: at the end of its tombstone or, without one,
// when it expires (the SQL drivers' forget_at).
func forgetAt(rec store.IdempotencyRecord) int64 {
	return max(nanos(rec.ExpiresAt), nanos(rec.TombstoneUntil))
}

func (t *txn) idemRecord(k idemKey) (store.IdempotencyRecord, bool) {
	return get(t.idem, t.db.idem, k)
}

// InsertIdempotency implements store.Tx.
func (t *txn) InsertIdempotency(ctx context.Context, rec store.IdempotencyRecord) error {
	t.mustWrite()
	k := idemKey{rec.Namespace, rec.Key}
	// As in the SQLite driver: a record forgotten (past its tombstone, or
	// its expiry without one) before the new record's creation gives way;
	// any other makes this an ErrExists.
	if old, ok := t.idemRecord(k); ok && forgetAt(old) >= nanos(rec.CreatedAt) {
		return store.ErrExists
	}
	rec = copyRecord(rec)
	if rec.Body == nil {
		rec.Body = []byte{}
	}
	rec.Expired = false
	rec.CreatedAt, rec.ExpiresAt, rec.TombstoneUntil = normTime(rec.CreatedAt), normTime(rec.ExpiresAt), normTime(rec.TombstoneUntil)
	if nanos(rec.TombstoneUntil) <= nanos(rec.ExpiresAt) {
		rec.TombstoneUntil = time.Time{} // no tombstone, as the SQL drivers read it back
	}
	put(&t.idem, k, rec)
	return nil
}

// GetIntent implements store.ReadTx.
func (t *txn) GetIntent(ctx context.Context, tenant, id string) (store.Intent, error) {
	in, ok := t.intent(id)
	if !ok || in.Tenant != tenant {
		return store.Intent{}, store.ErrNotFound
	}
	in.Tags = slices.Clone(in.Tags)
	return in, nil
}

func (t *txn) intent(id string) (store.Intent, bool) {
	return get(t.intents, t.db.intents, id)
}

// InsertIntent implements store.Tx.
func (t *txn) InsertIntent(ctx context.Context, in store.Intent) error {
	t.mustWrite()
	if _, ok := t.intent(in.ID); ok {
		return store.ErrExists
	}
	in.Tags = append([]string{}, in.Tags...) // never nil, as a driver reads "[]" back
	in.CreatedAt = normTime(in.CreatedAt)
	put(&t.intents, in.ID, in)
	return nil
}

// AppendEvents implements store.Tx.
func (t *txn) AppendEvents(ctx context.Context, events []store.Event) error {
	t.mustWrite()
	staged := make([]store.Event, 0, len(events))
	seq := t.nextSeq
	for _, e := range events {
		attrs, err := normAttributes(e.Attributes)
		if err != nil {
			return err
		}
		seq++
		e.Seq, e.At, e.Attributes = seq, normTime(e.At), attrs
		staged = append(staged, e)
	}
	t.events = append(t.events, staged...)
	t.nextSeq = seq
	return nil
}

// TraceEvents implements store.ReadTx.
func (t *txn) TraceEvents(ctx context.Context, tenant, traceID string, limit int) ([]store.Event, error) {
	if limit == 0 {
		return nil, nil
	}
	if limit < 0 { // as SQL's LIMIT -1: no bound
		limit = int(^uint(0) >> 1)
	}
	committed := t.db.traces[traceKey{tenant, traceID}]
	var all []store.Event
	if len(t.events) == 0 {
		all = committed[:min(limit, len(committed))]
	} else {
		all = slices.Clone(committed)
		for _, e := range t.events {
			if e.Tenant == tenant && (e.TraceID == traceID || e.CallTraceID == traceID) {
				all = insertSorted(all, e)
			}
		}
		all = all[:min(limit, len(all))]
	}
	if len(all) == 0 {
		return nil, nil
	}
	out := make([]store.Event, len(all))
	for i, e := range all {
		e.Attributes = jsonvalue.CloneMap(e.Attributes)
		out[i] = e
	}
	return out, nil
}

// Revoke implements store.Tx.
func (t *txn) Revoke(ctx context.Context, r store.Revocation) error {
	t.mustWrite()
	if _, ok := t.revocation(r.JTI); ok {
		return nil // the first record is kept
	}
	r.RevokedAt, r.ExpiresAt = normTime(r.RevokedAt), normTime(r.ExpiresAt)
	put(&t.revs, r.JTI, r)
	return nil
}

func (t *txn) revocation(jti string) (store.Revocation, bool) {
	return get(t.revs, t.db.revs, jti)
}

// Revoked implements store.ReadTx.
func (t *txn) Revoked(ctx context.Context, jti string) (bool, error) {
	_, ok := t.revocation(jti)
	return ok, nil
}

// nanos orders times as the SQLite driver stores them: the zero time is 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// normTime keeps what a driver storing nanoseconds gives back: UTC, no
// monotonic reading; the zero time stays zero.
func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano()).UTC()
}

func copyRecord(rec store.IdempotencyRecord) store.IdempotencyRecord {
	rec.Header = maps.Clone(rec.Header)
	rec.Body = slices.Clone(rec.Body)
	return rec
}

// normAttributes copies attrs through JSON, as a driver that serializes
// them would return them; a value JSON cannot hold is an error there too.
func normAttributes(attrs map[string]any) (map[string]any, error) {
	if attrs == nil {
		return nil, nil
	}
	b, err := json.Marshal(attrs)
	if err != nil {
		return nil, fmt.Errorf("memstore: event attributes: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("memstore: event attributes: %w", err)
	}
	return out, nil
}

// allEvents returns every event, committed and staged, that the
// transaction has not deleted, once each, by Seq.
func (t *txn) allEvents() []store.Event {
	seen := map[int64]bool{}
	var all []store.Event
	for _, evs := range t.db.traces {
		for _, e := range evs {
			if !seen[e.Seq] && !t.deleted[e.Seq] {
				seen[e.Seq] = true
				all = append(all, e)
			}
		}
	}
	all = append(all, t.events...)
	slices.SortFunc(all, func(a, b store.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	return all
}

// ExportEvents implements store.ReadTx.
func (t *txn) ExportEvents(ctx context.Context, f store.EventFilter, limit int) ([]store.Event, error) {
	var out []store.Event
	all := t.allEvents()
	if f.Newest {
		slices.Reverse(all)
	}
	for _, e := range all {
		if len(out) >= limit && limit >= 0 {
			break
		}
		capability, _ := e.Attributes["capability"].(string)
		switch {
		case e.Seq <= f.AfterSeq,
			f.BeforeSeq > 0 && e.Seq >= f.BeforeSeq,
			f.Subject != "" && e.Subject != f.Subject,
			f.Outcome != "" && e.Outcome != f.Outcome,
			f.Capability != "" && e.Tool != f.Capability && capability != f.Capability,
			f.Tenant != "" && e.Tenant != f.Tenant,
			!f.Since.IsZero() && nanos(e.At) < nanos(f.Since),
			!f.Until.IsZero() && nanos(e.At) >= nanos(f.Until),
			len(f.Types) > 0 && !slices.Contains(f.Types, e.Type),
			f.TraceID != "" && e.TraceID != f.TraceID && e.CallTraceID != f.TraceID,
			f.RunID != "" && e.RunID != f.RunID:
			continue
		}
		e.Attributes = jsonvalue.CloneMap(e.Attributes)
		out = append(out, e)
	}
	return out, nil
}

// DeleteEventsBefore implements store.Tx.
func (t *txn) DeleteEventsBefore(ctx context.Context, before time.Time, limit int) (int, error) {
	t.mustWrite()
	n := 0
	staged := map[int64]bool{}
	for _, e := range t.allEvents() {
		if n >= limit {
			break
		}
		if nanos(e.At) >= nanos(before) {
			continue
		}
		if e.Seq > t.db.seq {
			staged[e.Seq] = true
		} else {
			if t.deleted == nil {
				t.deleted = map[int64]bool{}
			}
			t.deleted[e.Seq] = true
		}
		n++
	}
	t.events = slices.DeleteFunc(t.events, func(e store.Event) bool { return staged[e.Seq] })
	return n, nil
}
