package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
)

// auditHTTPBatch is the most events one POST of an http audit sink
// carries.
const auditHTTPBatch = 100

// httpAuditSink posts committed audit events to an HTTP endpoint (a
// capability's audit sink of kind http) without ever holding up the call
// that committed them: write only queues each event's line, in a bounded
// queue, and a sender of its own posts them in batches, one JSON line
// each (application/x-ndjson), retrying a batch after a network error, a
// timeout, 408, 429 or 5xx with a doubling backoff. An event that finds
// the queue full, or whose batch is still undelivered after the retries
// or refused with another status, is dropped: counted, logged (the first
// and every thousandth), and still in the store. The lines are
// SinkLine, redacted as every sink's are.
type httpAuditSink struct {
	name    string // the URL without user information or query, for logs and metrics
	url     string
	header  http.Header
	client  *http.Client
	timeout time.Duration
	retries int
	backoff time.Duration
	log     *slog.Logger

	queue chan []byte
	// mu guards closed: write queues under the read lock, so that no line
	// is queued after Close has begun.
	mu      sync.RWMutex
	closed  bool
	closing chan struct{}
	// ctx ends the deliveries in flight and the backoff waits (Close past
	// its deadline).
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	delivered, dropped atomic.Int64
}

// openHTTPAuditSink starts the sender of the http sink spec describes,
// with its headers' ${NAME} read through getenv; a header naming a
// variable that is not set refuses the sink.
func openHTTPAuditSink(spec config.AuditHookSink, getenv func(string) string, log *slog.Logger) (*httpAuditSink, error) {
	u, err := url.Parse(spec.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("audit sink %s: not an absolute http or https URL", spec.URL)
	}
	name := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	header := http.Header{}
	for k, v := range spec.Headers {
		val, missing := config.Interpolate(v, getenv)
		if len(missing) > 0 {
			return nil, fmt.Errorf("audit sink %s: the header %s reads ${%s}, which is not set in the gateway's environment", name, k, strings.Join(missing, "}, ${"))
		}
		header.Set(k, val)
	}
	header.Set("Content-Type", "application/x-ndjson")
	ctx, cancel := context.WithCancel(context.Background())
	s := &httpAuditSink{name: name, url: spec.URL, header: header, timeout: spec.Timeout(), retries: spec.RetryCount(), backoff: spec.Backoff(),
		log: log, queue: make(chan []byte, spec.QueueSize()), closing: make(chan struct{}), ctx: ctx, cancel: cancel, done: make(chan struct{}),
		// A redirect is not followed: it would carry the events, and
		// the headers, somewhere the configuration does not name.
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	go s.run()
	return s, nil
}

// write queues the events' lines; it never waits.
func (s *httpAuditSink) write(events []store.Event) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, ev := range events {
		if s.closed {
			s.drop(1, "the gateway is shutting down")
			continue
		}
		b, err := json.Marshal(sinkLine(ev))
		if err != nil {
			s.drop(1, err.Error())
			continue
		}
		select {
		case s.queue <- b:
		default:
			s.drop(1, "its queue is full")
		}
	}
}

// drop counts n events lost for why, and logs the first loss and one in
// every thousand.
func (s *httpAuditSink) drop(n int, why string) {
	after := s.dropped.Add(int64(n))
	if before := after - int64(n); before == 0 || before/1000 != after/1000 {
		s.log.Error("audit events dropped by an http audit sink; they are in the store", "sink", s.name, "events", n, "dropped", after, "reason", why)
	}
}

// counts reports the events delivered and those dropped.
func (s *httpAuditSink) counts() (delivered, dropped int64) {
	return s.delivered.Load(), s.dropped.Load()
}

// run posts the queued lines in batches until Close, then what is left.
func (s *httpAuditSink) run() {
	defer close(s.done)
	batch := make([][]byte, 0, auditHTTPBatch)
	for {
		var first []byte
		select {
		case first = <-s.queue:
		case <-s.closing:
			select {
			case first = <-s.queue:
			default:
				return
			}
		}
		batch = append(batch[:0], first)
	gather:
		for len(batch) < auditHTTPBatch {
			select {
			case b := <-s.queue:
				batch = append(batch, b)
			default:
				break gather
			}
		}
		s.deliver(batch)
	}
}

// deliver posts one batch, retrying what may succeed later.
func (s *httpAuditSink) deliver(batch [][]byte) {
	body := append(bytes.Join(batch, []byte("\n")), '\n')
	wait := s.backoff
	for attempt := 0; ; attempt++ {
		if s.ctx.Err() != nil {
			s.drop(len(batch), "the gateway stopped before the endpoint took them")
			return
		}
		retryAfter, retry, err := s.post(body)
		if err == nil {
			s.delivered.Add(int64(len(batch)))
			return
		}
		if !retry || attempt >= s.retries {
			s.drop(len(batch), err.Error())
			return
		}
		d := wait + rand.N(wait/4+1)
		if retryAfter > d {
			d = retryAfter
		}
		wait = min(2*wait, config.MaxAuditHTTPBackoff)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
		}
	}
}

// post sends body once. It reports whether a failure may be retried, and
// the Retry-After the endpoint asked for (at most MaxAuditHTTPBackoff).
func (s *httpAuditSink) post(body []byte) (retryAfter time.Duration, retry bool, err error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return 0, false, err
	}
	req.Header = s.header.Clone()
	res, err := s.client.Do(req)
	if err != nil {
		// The transport's error names the URL, never the headers.
		return 0, true, err
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	switch c := res.StatusCode; {
	case c >= 200 && c < 300:
		return 0, false, nil
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && secs > 0 {
			retryAfter = min(time.Duration(secs)*time.Second, config.MaxAuditHTTPBackoff)
		}
		return retryAfter, true, fmt.Errorf("the endpoint answered %s", res.Status)
	default:
		return 0, false, fmt.Errorf("the endpoint answered %s, which is not retried", res.Status)
	}
}

// errSinkClosing is what a sink closed past its deadline says.
var errSinkClosing = errors.New("the audit sink was closed before it delivered every event")

// close stops taking events and waits, within ctx, for the sender to
// deliver what it holds; past ctx the deliveries in flight stop and what
// is left is dropped (counted and logged).
func (s *httpAuditSink) close(ctx context.Context) error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if !already {
		close(s.closing)
	}
	defer s.cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		s.cancel()
		<-s.done
		return errSinkClosing
	}
}
