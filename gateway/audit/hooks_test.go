package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
)

// endpoint is an HTTP endpoint that records the JSON lines POSTed to it.
type endpoint struct {
	*httptest.Server
	mu     sync.Mutex
	posts  int
	lines  []SinkLine
	header http.Header
	// answer, when set, decides the status of each post (n counts from 1).
	answer func(n int, w http.ResponseWriter) bool
}

func newEndpoint(t *testing.T, answer func(n int, w http.ResponseWriter) bool) *endpoint {
	t.Helper()
	e := &endpoint{answer: answer}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.posts++
		n := e.posts
		e.header = r.Header.Clone()
		e.mu.Unlock()
		if e.answer != nil && !e.answer(n, w) {
			return
		}
		body, _ := io.ReadAll(r.Body)
		var got []SinkLine
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l SinkLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("a line that is not JSON: %q", sc.Text())
			}
			got = append(got, l)
		}
		e.mu.Lock()
		e.lines = append(e.lines, got...)
		e.mu.Unlock()
	}))
	t.Cleanup(e.Close)
	return e
}

// received returns the lines the endpoint took and how many posts it saw.
func (e *endpoint) received() ([]SinkLine, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]SinkLine(nil), e.lines...), e.posts
}

// hookEvents makes n events of capability c, each with a secret under a
// sensitive name.
func hookEvents(c string, n int) []store.Event {
	out := make([]store.Event, n)
	for i := range out {
		out[i] = store.Event{Type: "capability.called", At: time.Now(), Tenant: "acme", Subject: "alice", Outcome: "allowed",
			Attributes: map[string]any{"capability": c, "n": i, "arguments": map[string]any{"title": "t", "token": sinkSecret1}}}
	}
	return out
}

func httpSink(t *testing.T, spec config.AuditHookSink, getenv func(string) string) *httpAuditSink {
	t.Helper()
	spec.Kind = config.AuditHookHTTP
	s, err := openHTTPAuditSink(spec, getenv, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close(context.Background()) })
	return s
}

// TestHTTPAuditSinkDelivers: the events reach the endpoint in batches of
// at most 100 JSON lines, with the configured headers (${NAME} read from
// the environment) and redacted; Close waits until they are delivered.
func TestHTTPAuditSinkDelivers(t *testing.T) {
	ep := newEndpoint(t, nil)
	s := httpSink(t, config.AuditHookSink{URL: ep.URL + "/ingest?x=1", Headers: map[string]string{"Authorization": "Bearer ${SIEM_TOKEN}"}},
		func(name string) string { return map[string]string{"SIEM_TOKEN": "siem-tok"}[name] })
	s.write(hookEvents("pr.create", 250))
	if err := s.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines, posts := ep.received()
	if len(lines) != 250 || posts < 3 {
		t.Fatalf("the endpoint took %d lines in %d posts, want 250 in at least 3", len(lines), posts)
	}
	if d, x := s.counts(); d != 250 || x != 0 {
		t.Errorf("counts: delivered %d, dropped %d", d, x)
	}
	if got := ep.header.Get("Authorization"); got != "Bearer siem-tok" || ep.header.Get("Content-Type") != "application/x-ndjson" {
		t.Errorf("headers: %v", ep.header)
	}
	for _, l := range lines {
		if args := l.Attributes["arguments"].(map[string]any); args["token"] != "[redacted]" || l.Tenant != "acme" {
			t.Fatalf("line %+v", l)
		}
	}
	if s.name != ep.URL+"/ingest" {
		t.Errorf("the sink's name %s shows the query", s.name)
	}
	// An unset variable refuses the sink.
	_, err := openHTTPAuditSink(config.AuditHookSink{Kind: config.AuditHookHTTP, URL: ep.URL, Headers: map[string]string{"Authorization": "Bearer ${UNSET_X}"}},
		func(string) string { return "" }, slog.Default())
	if err == nil || !strings.Contains(err.Error(), "${UNSET_X}") {
		t.Errorf("a header naming an unset variable: %v", err)
	}
}

// TestHTTPAuditSinkRetries: a batch answered 503 (with Retry-After) or 429
// is posted again, after a backoff, until the endpoint takes it; a status
// that repeating cannot change (400) drops it at once; an endpoint that
// is down drops it after the retries.
func TestHTTPAuditSinkRetries(t *testing.T) {
	flaky := newEndpoint(t, func(n int, w http.ResponseWriter) bool {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return false
		case 2:
			w.WriteHeader(http.StatusTooManyRequests)
			return false
		}
		return true
	})
	// One event a test: the sender may split events written together
	// into batches, and the posts are counted.
	s := httpSink(t, config.AuditHookSink{URL: flaky.URL, BackoffMs: 1}, nil)
	s.write(hookEvents("pr.create", 1))
	s.close(context.Background())
	if lines, posts := flaky.received(); len(lines) != 1 || posts != 3 {
		t.Errorf("flaky endpoint: %d lines in %d posts, want 1 in 3", len(lines), posts)
	}

	refusing := newEndpoint(t, func(n int, w http.ResponseWriter) bool { w.WriteHeader(http.StatusBadRequest); return false })
	s = httpSink(t, config.AuditHookSink{URL: refusing.URL, BackoffMs: 1}, nil)
	s.write(hookEvents("pr.create", 1))
	s.close(context.Background())
	if _, posts := refusing.received(); posts != 1 {
		t.Errorf("a 400 was posted %d times, want once", posts)
	}
	if d, x := s.counts(); d != 0 || x != 1 {
		t.Errorf("after a 400: delivered %d, dropped %d", d, x)
	}

	down := newEndpoint(t, nil)
	down.Close()
	zero := 2
	s = httpSink(t, config.AuditHookSink{URL: down.URL, BackoffMs: 1, Retries: &zero}, nil)
	s.write(hookEvents("pr.create", 5))
	s.close(context.Background())
	if d, x := s.counts(); d != 0 || x != 5 {
		t.Errorf("endpoint down: delivered %d, dropped %d", d, x)
	}
}

// TestHTTPAuditSinkNeverBlocks: while the endpoint hangs, write returns at
// once: the queue fills and what does not fit is dropped and counted. A
// post that outlives timeoutMs is retried; Close past its deadline drops
// what is left instead of waiting for the endpoint.
func TestHTTPAuditSinkNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 16)
	hanging := newEndpoint(t, func(n int, w http.ResponseWriter) bool {
		arrived <- struct{}{}
		<-release
		return true
	})
	defer close(release)
	none := 0
	s := httpSink(t, config.AuditHookSink{URL: hanging.URL, Queue: 10, Retries: &none, TimeoutMs: 60000}, nil)
	s.write(hookEvents("pr.create", 1))
	<-arrived // the sender is stuck in its post; the queue is empty
	s.write(hookEvents("pr.create", 50))
	if _, x := s.counts(); x != 40 {
		t.Errorf("dropped %d of 50 with a queue of 10, want 40", x)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.close(ctx); err != errSinkClosing {
		t.Errorf("close past its deadline: %v", err)
	}
	if d, x := s.counts(); d != 0 || x != 51 {
		t.Errorf("after close: delivered %d, dropped %d, want 0 and 51", d, x)
	}
	s.write(hookEvents("pr.create", 1))
	if _, x := s.counts(); x != 52 {
		t.Errorf("an event after close is not counted dropped: %d", x)
	}

	// A post that takes longer than timeoutMs ends, and is retried.
	one := 1
	s = httpSink(t, config.AuditHookSink{URL: hanging.URL, TimeoutMs: 20, Retries: &one, BackoffMs: 1}, nil)
	s.write(hookEvents("pr.create", 1))
	<-arrived
	<-arrived
	s.close(context.Background())
	if d, x := s.counts(); d != 0 || x != 1 {
		t.Errorf("slow endpoint: delivered %d, dropped %d", d, x)
	}
}

// TestAuditHooksRoute: a capability's committed call events reach its
// sinks and no other's; events of other types (a pin's), of capabilities
// without sinks, and of transactions that fail reach none. A reload's
// Stage opens the new sinks before anything changes and closes the ones
// no longer named after apply; a sink that cannot be opened refuses it.
func TestAuditHooksRoute(t *testing.T) {
	ep := newEndpoint(t, nil)
	dir := t.TempDir()
	file := filepath.Join(dir, "b.jsonl")
	// load writes the configuration, whose sink b.jsonl is relative to
	// its directory, and loads it.
	load := func(aSinks string) (*config.Config, error) {
		path := filepath.Join(dir, "praxec.yaml")
		if err := os.WriteFile(path, []byte(`
capabilities:
  a: { audit: { sinks: [`+aSinks+`] } }
  b: { audit: { sinks: [{ kind: file, path: b.jsonl }] } }
  c: { audit: { record: [$.arguments] } }
`), 0o600); err != nil {
			t.Fatal(err)
		}
		return config.Load(path)
	}
	cfg, err := load(`{ kind: http, url: "` + ep.URL + `", backoffMs: 1 }`)
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := NewHooks(cfg, &HooksOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer hooks.Close(context.Background())
	st := WithHooks(memstore.New(), hooks)
	ctx := context.Background()
	ev := func(typ, c string) store.Event {
		return store.Event{Type: typ, At: time.Now(), Tenant: "acme", Outcome: "allowed", Attributes: map[string]any{"capability": c}}
	}
	if err := st.AppendEvents(ctx, []store.Event{ev("capability.called", "a"), ev("capability.pin_changed", "a"), ev("transition.fired", "c"),
		ev("transition.fired", "b"), {Type: "request.allowed", At: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.AppendEvents(ctx, []store.Event{ev("guard.rejected", "a")}); err != nil {
			return err
		}
		return io.EOF // the transaction fails: nothing is sent
	})
	if err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{ev("guard.rejected", "a")})
	}); err != nil {
		t.Fatal(err)
	}
	counts := hooks.Counts()

	// A reload that names a header reading an unset variable is refused
	// and changes nothing; one that moves a's events to stderr closes the
	// http sink, which delivers what it held first.
	bad, err := load(`{ kind: http, url: "` + ep.URL + `/other", headers: { Authorization: "${NOT_SET_ANYWHERE}" } }`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hooks.Stage(bad); err == nil {
		t.Fatal("a sink that cannot be opened was staged")
	}
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	hooks.opts.Stderr = stderr
	next, err := load(`{ kind: stderr }`)
	if err != nil {
		t.Fatal(err)
	}
	apply, err := hooks.Stage(next)
	if err != nil {
		t.Fatal(err)
	}
	apply()
	hooks.retiring.Wait()
	if err := st.AppendEvents(ctx, []store.Event{ev("capability.called", "a")}); err != nil {
		t.Fatal(err)
	}

	lines, _ := ep.received()
	var types []string
	for _, l := range lines {
		types = append(types, l.Type)
	}
	if strings.Join(types, ",") != "capability.called,guard.rejected" {
		t.Errorf("a's endpoint took %v, want capability.called then guard.rejected", types)
	}
	data, err := os.ReadFile(file)
	if err != nil || strings.Count(string(data), "\n") != 1 || !strings.Contains(string(data), `"type":"transition.fired"`) {
		t.Errorf("b's file: %q %v", data, err)
	}
	if out, _ := os.ReadFile(stderr.Name()); !strings.Contains(string(out), `"type":"capability.called"`) || strings.Count(string(out), "\n") != 1 {
		t.Errorf("after the reload a's events go to stderr: %q", out)
	}
	want := map[string]SinkCounts{file: {Sink: file, Kind: "file", Delivered: 1}, ep.URL: {Sink: ep.URL, Kind: "http"}}
	for _, c := range counts {
		if w, ok := want[c.Sink]; !ok || w.Kind != c.Kind || (c.Kind == "file" && c.Delivered != 1) || c.Dropped != 0 {
			t.Errorf("counts before the reload: %+v", counts)
		}
	}
	if len(counts) != 2 {
		t.Errorf("counts before the reload: %+v", counts)
	}
}
