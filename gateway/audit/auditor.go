package audit

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// Auditor writes the audit events that do not belong to a mutation (reads,
// replays, refusals of an authenticated principal) asynchronously and in
// batches, so a read never waits for a durable write. Mutations write their
// events in their own transaction instead. Events of unauthenticated
// requests never reach it: they go to logs and metrics only.
//
// Commit is the one durable append outside a mutation: the light path's
// one event per call (gateway/lightpath) waits for it. Concurrent Commits
// are group-committed: while one batch commits, the events that arrive
// meanwhile gather into the next, so a burst costs one store transaction
// (one fsync) per batch rather than per call.
type Auditor struct {
	store   store.Store
	log     *slog.Logger
	now     func() time.Time
	events  chan store.Event
	flushed chan struct{}
	batch   int
	every   time.Duration
	dropped atomic.Int64
	waits   atomic.Int64

	flushReq chan chan struct{}

	// durable queues the events of Commit; committed is closed when its
	// writer has stopped.
	durable   chan durableEvent
	committed chan struct{}

	closeOnce sync.Once
	stop      chan struct{}
}

// durableEvent is one Commit waiting for its batch.
type durableEvent struct {
	event store.Event
	done  chan error
}

// Options tune an Auditor. The zero value is usable.
type Options struct {
	Logger *slog.Logger
	// Now is the clock the events of reads of the trail are dated by
	// (Events; default time.Now).
	Now func() time.Time
	// Queue bounds the events waiting to be written (default 8192); when
	// it is full, Record waits for room.
	Queue int
	// Batch is the most events written in one transaction (default 256).
	Batch int
	// Every is the longest an event waits before it is written (default
	// 200ms).
	Every time.Duration
}

// NewAuditor starts an Auditor writing to st.
func NewAuditor(st store.Store, opts *Options) *Auditor {
	o := *cmp.Or(opts, &Options{})
	o.Logger = cmp.Or(o.Logger, slog.Default())
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Queue <= 0 {
		o.Queue = 8192
	}
	if o.Batch <= 0 {
		o.Batch = 256
	}
	if o.Every <= 0 {
		o.Every = 200 * time.Millisecond
	}
	a := &Auditor{store: st, log: o.Logger, now: o.Now, events: make(chan store.Event, o.Queue),
		flushed: make(chan struct{}), batch: o.Batch, every: o.Every, stop: make(chan struct{}),
		flushReq: make(chan chan struct{}), durable: make(chan durableEvent, o.Batch), committed: make(chan struct{})}
	go a.loop()
	go a.commitLoop()
	return a
}

// ErrClosed is returned by Commit once the Auditor is closed: the
// event was not written.
var ErrClosed = errors.New("gateway: the auditor is closed")

// Commit appends e durably: it returns once the transaction holding e has
// committed, or with the error that kept it from committing (then e is
// not in the store). Once e is queued Commit waits for that outcome even
// if ctx ends, so a caller never takes a committed event for a lost one;
// ctx bounds only the wait for room in the queue. An audit sink sees e
// after its commit (WithSink).
func (a *Auditor) Commit(ctx context.Context, e store.Event) error {
	d := durableEvent{event: e, done: make(chan error, 1)}
	if queued, err := enqueue(ctx, a.durable, d, a.stop); !queued {
		if err != nil {
			return err
		}
		return ErrClosed
	}
	select {
	case err := <-d.done:
		return err
	case <-a.committed:
		select {
		case err := <-d.done:
			return err
		default:
			return ErrClosed
		}
	}
}

// commitLoop writes the events of Commit: each batch is every event queued
// when the previous batch's commit returned (group commit), up to the
// batch size, in one store transaction.
func (a *Auditor) commitLoop() {
	defer close(a.committed)
	batch := make([]durableEvent, 0, a.batch)
	events := make([]store.Event, 0, a.batch)
	for {
		select {
		case d := <-a.durable:
			batch = append(batch[:0], d)
		gather:
			for len(batch) < a.batch {
				select {
				case d := <-a.durable:
					batch = append(batch, d)
				default:
					break gather
				}
			}
			events = events[:0]
			for _, d := range batch {
				events = append(events, d.event)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := a.store.AppendEvents(ctx, events)
			cancel()
			if err != nil {
				a.log.Error("durable audit write failed", "events", len(events), "err", err)
			}
			for _, d := range batch {
				d.done <- err
			}
		case <-a.stop:
			for {
				select {
				case d := <-a.durable:
					d.done <- ErrClosed
				default:
					return
				}
			}
		}
	}
}

// Record queues an event. It returns at once unless the queue is full;
// then it waits for room, so no event of a running gateway is lost.
func (a *Auditor) Record(e store.Event) {
	select {
	case a.events <- e:
		return
	default:
	}
	// The queue is full: the caller waits for the writer rather than the
	// event being lost. Reads pay for the audit only when it cannot keep up.
	a.waits.Add(1)
	select {
	case a.events <- e:
	case <-a.flushed:
		// Stopped: nothing will write it any more.
		if n := a.dropped.Add(1); n == 1 || n%1000 == 0 {
			a.log.Warn("audit event after close dropped", "dropped", n)
		}
	}
}

// Waits reports how many events had to wait for room in the queue.
func (a *Auditor) Waits() int64 { return a.waits.Load() }

// Dropped reports how many events were recorded after Close and so lost.
func (a *Auditor) Dropped() int64 { return a.dropped.Load() }

func (a *Auditor) loop() {
	defer close(a.flushed)
	tick := time.NewTicker(a.every)
	defer tick.Stop()
	buf := make([]store.Event, 0, a.batch)
	flush := func() {
		if len(buf) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := a.store.AppendEvents(ctx, buf); err != nil {
			a.log.Error("audit write failed", "events", len(buf), "err", err)
		}
		cancel()
		buf = buf[:0]
	}
	// add buffers e, writing the buffer once it holds a batch.
	add := func(e store.Event) {
		buf = append(buf, e)
		if len(buf) >= a.batch {
			flush()
		}
	}
	drain := func() {
		for {
			select {
			case e := <-a.events:
				add(e)
			default:
				flush()
				return
			}
		}
	}
	for {
		select {
		case e := <-a.events:
			add(e)
		case <-tick.C:
			flush()
		case reply := <-a.flushReq:
			drain()
			close(reply)
		case <-a.stop:
			drain()
			return
		}
	}
}

// Flush writes every event queued before the call, then returns.
func (a *Auditor) Flush(ctx context.Context) error {
	reply := make(chan struct{})
	if queued, err := enqueue(ctx, a.flushReq, reply, a.flushed); !queued {
		return err // nil once the writer has stopped: nothing is left to write
	}
	select {
	case <-reply:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueue sends v on ch. It answers false with ctx's error when ctx ends
// first, and false with nil when stopped is closed first (the receiver is
// gone).
func enqueue[T any](ctx context.Context, ch chan<- T, v T, stopped <-chan struct{}) (bool, error) {
	select {
	case ch <- v:
		return true, nil
	case <-stopped:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Close writes what is queued and stops the Auditor; a Commit queued
// before Close but not yet in a batch answers ErrClosed.
func (a *Auditor) Close(ctx context.Context) error {
	a.closeOnce.Do(func() { close(a.stop) })
	for _, done := range []chan struct{}{a.flushed, a.committed} {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
