package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// This file holds the checklist's crash test: "a process killed mid-request
// and restarted either replays or executes once". It runs the real binary as
// a child process, kills it with SIGKILL while POST /v8/intents requests are
// in flight, restarts it on the same data directory and retries every key.

// crashConfig disables the per-principal rate limit (the test sends
// hundreds of requests with one token; 429s would hide nothing but noise).
const crashConfig = "server:\n  limits:\n    ratePerSecond: -1\n"

// crashChild is one running `praxa serve --dev` process.
type crashChild struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{} // closed when the process has exited and stderr is drained
	mu   sync.Mutex
	tail []string // the last lines of stderr, for failure messages
}

func (c *crashChild) keep(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tail = append(c.tail, line)
	if len(c.tail) > 40 {
		c.tail = c.tail[len(c.tail)-40:]
	}
}

func (c *crashChild) stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.tail, "\n")
}

// crashStart starts `praxa serve --dev` on addr, with further flags, and
// returns once it listens. It retries a few times when the port is still
// held by the killed process.
func crashStart(t *testing.T, bin, addr, dataDir, cfgPath string, flags ...string) *crashChild {
	t.Helper()
	var last string
	for attempt := range 5 {
		c, err := crashTryStart(bin, addr, dataDir, cfgPath, flags...)
		if err == nil {
			return c
		}
		last = err.Error()
		if !strings.Contains(last, "address already in use") {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond) // backoff between process starts while the OS frees the port
	}
	t.Fatalf("praxa serve did not start: %s", last)
	return nil
}

func crashTryStart(bin, addr, dataDir, cfgPath string, flags ...string) (*crashChild, error) {
	c := &crashChild{done: make(chan struct{})}
	c.cmd = exec.Command(bin, append([]string{"serve", "--dev", "--addr", addr, "--data-dir", dataDir, "--config", cfgPath}, flags...)...)
	c.cmd.Env = append(os.Environ(), "PRAXA_DATA_DIR=")
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	c.cmd.Stdout = io.Discard
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	urlc := watchServe(c.cmd, stderr, c.done, c.keep)
	select {
	case c.url = <-urlc:
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("exited before listening: %s", c.stderr())
	case <-time.After(60 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
		return nil, fmt.Errorf("no listening line within 60s: %s", c.stderr())
	}
}

// kill ends the child with SIGKILL and waits for it.
func (c *crashChild) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill: %v", err)
	}
	<-c.done
}

// stop asks the child to shut down gracefully and waits at most 30s.
func (c *crashChild) stop(t *testing.T) {
	t.Helper()
	c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		t.Errorf("praxa serve did not stop within 30s; killing it")
		c.kill(t)
	}
}

// crashSite is a praxa serve --dev killed and restarted on one data
// directory and one port.
type crashSite struct {
	bin, dataDir, cfgPath, addr string
	// child is the running process (the last one started).
	child *crashChild
}

// crashSetup builds the binary, writes the configuration cfg and starts
// praxa serve --dev on a free port; the test is skipped with -short. The
// cleanup kills the child running then.
func crashSetup(t *testing.T, cfg string) *crashSite {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and kills it: skipped with -short")
	}
	s := &crashSite{bin: buildPraxa(t), dataDir: t.TempDir(), cfgPath: filepath.Join(t.TempDir(), "praxec.yaml")}
	if err := os.WriteFile(s.cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s.child = crashStart(t, s.bin, "127.0.0.1:0", s.dataDir, s.cfgPath)
	t.Cleanup(func() {
		select {
		case <-s.child.done:
		default:
			s.child.kill(t)
		}
	})
	u, err := url.Parse(s.child.url)
	if err != nil {
		t.Fatalf("listening URL %q: %v", s.child.url, err)
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		t.Fatalf("listening URL %q: %v", s.child.url, err)
	}
	s.addr = u.Host
	return s
}

// restart starts praxa serve again on the site's data directory and port:
// in dev mode the issuer's URL (and with it the principal's idempotency
// namespace) contains the port.
func (s *crashSite) restart(t *testing.T) {
	t.Helper()
	s.child = crashStart(t, s.bin, s.addr, s.dataDir, s.cfgPath)
}

// crashToken runs `praxa token` for the data directory.
func crashToken(t *testing.T, bin, dataDir string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "token", "--data-dir", dataDir, "--ttl", "1h")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("praxa token: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// crashAnswer is what one POST /v8/intents answered.
type crashAnswer struct {
	status   int
	intentID string
	replayed bool
	err      error // transport failure: the outcome is unknown
}

func crashBody(key string) string {
	return fmt.Sprintf(`{"intent":"crash test for %s","tags":["crash"]}`, key)
}

func crashPost(ctx context.Context, client *http.Client, base, token, key string) crashAnswer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v8/intents", strings.NewReader(crashBody(key)))
	if err != nil {
		return crashAnswer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := client.Do(req)
	if err != nil {
		return crashAnswer{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return crashAnswer{err: err}
	}
	a := crashAnswer{status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if resp.StatusCode == http.StatusOK {
		var out struct {
			IntentID string `json:"intentId"`
		}
		if err := json.Unmarshal(body, &out); err != nil || out.IntentID == "" {
			return crashAnswer{status: resp.StatusCode, err: fmt.Errorf("200 without an intentId: %s", body)}
		}
		a.intentID = out.IntentID
	}
	return a
}

func crashClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
}

// crashLedger keeps, for each key, the intent id of every 200 answer seen.
type crashLedger struct {
	mu   sync.Mutex
	seen map[string]map[string]int // key -> intentId -> answers
}

// has reports whether a 200 was seen for key.
func (l *crashLedger) has(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen[key]) > 0
}

func (l *crashLedger) add(key, intentID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[key] == nil {
		l.seen[key] = map[string]int{}
	}
	l.seen[key][intentID]++
}

// TestCrashRestartExactlyOnce kills the gateway with SIGKILL while intents
// are being submitted, three times, restarting it on the same data
// directory each time, and proves every idempotency key was executed
// exactly once: every retry answers 200 (fresh or replayed), every 200 of a
// key names one intent, and the database holds one intent per key.
func TestCrashRestartExactlyOnce(t *testing.T) {
	site := crashSetup(t, crashConfig)
	bin, dataDir := site.bin, site.dataDir

	const (
		rounds    = 3
		workers   = 8
		perRound  = 300 // keys fired per round before and around the kill
		maxRetry  = 3   // attempts per key after a restart (transport errors only)
		roundTime = 60 * time.Second
	)

	led := &crashLedger{seen: map[string]map[string]int{}}
	var allKeys []string
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))

	for round := range rounds {
		token := crashToken(t, bin, dataDir)
		keys := make([]string, perRound)
		for i := range keys {
			keys[i] = fmt.Sprintf("crash-r%d-%06d-%08x", round, i, rng.Uint32())
		}
		allKeys = append(allKeys, keys...)

		// Fire, and kill once a random number of answers came back: the
		// other workers are then in the middle of their requests.
		killAfter := int64(10 + rng.IntN(perRound/2))
		var (
			next, answered, inflight, unknown atomic.Int64
			killed                            atomic.Bool
			inflightAtKill                    int64
			wg                                sync.WaitGroup
		)
		ctx, cancel := context.WithTimeout(context.Background(), roundTime)
		client := crashClient()
		killc := make(chan struct{})
		var killOnce sync.Once
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !killed.Load() && ctx.Err() == nil {
					i := next.Add(1) - 1
					if i >= perRound {
						return
					}
					inflight.Add(1)
					a := crashPost(ctx, client, site.child.url, token, keys[i])
					inflight.Add(-1)
					switch {
					case a.err != nil:
						unknown.Add(1)
					case a.status == http.StatusOK:
						led.add(keys[i], a.intentID)
					default:
						t.Errorf("round %d, key %s before the kill: status %d", round, keys[i], a.status)
					}
					if answered.Add(1) >= killAfter {
						killOnce.Do(func() { close(killc) })
					}
				}
			}()
		}
		select {
		case <-killc:
		case <-ctx.Done():
			t.Fatalf("round %d: the kill threshold (%d answers) was not reached in time", round, killAfter)
		}
		inflightAtKill = inflight.Load()
		killed.Store(true)
		site.child.kill(t)
		wg.Wait()
		client.CloseIdleConnections()
		cancel()
		t.Logf("round %d: killed after %d answers with %d requests in flight; %d requests had no answer",
			round, answered.Load(), inflightAtKill, unknown.Load())

		// Restart on the same data directory and port; retry every key of
		// the round with the identical body.
		site.restart(t)
		token = crashToken(t, bin, dataDir)
		crashRetry(t, site.child.url, token, keys, led, workers, maxRetry, fmt.Sprintf("round %d", round))
	}

	// Every key of every round once more, after all the restarts.
	crashRetry(t, site.child.url, crashToken(t, bin, dataDir), allKeys, led, workers, maxRetry, "final")
	site.child.stop(t)
	if t.Failed() {
		t.Fatalf("stderr of the last run:\n%s", site.child.stderr())
	}

	// Exactly once: one intent id per key across every 200 seen ...
	ids := map[string]string{} // intent id -> key
	for _, k := range allKeys {
		seen := led.seen[k]
		if len(seen) != 1 {
			t.Errorf("key %s: the 200 answers name %d intents: %v", k, len(seen), seen)
			continue
		}
		for id := range seen {
			if other, dup := ids[id]; dup {
				t.Errorf("intent %s answered for two keys: %s and %s", id, other, k)
			}
			ids[id] = k
		}
	}
	// ... each of them in the store ...
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, dataPath(dataDir), nil)
	if err != nil {
		t.Fatalf("reopen the store: %v", err)
	}
	err = st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		for id, k := range ids {
			if _, err := tx.GetIntent(ctx, devTenant, id); err != nil {
				t.Errorf("intent %s of key %s: %v", id, k, err)
			}
		}
		return nil
	})
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	// ... and nothing else: the file holds exactly one intent (and one
	// idempotency record) per key.
	intents, records := gatewaytest.RowCount(t, dataPath(dataDir), "intents"), gatewaytest.RowCount(t, dataPath(dataDir), "idempotency")
	if len(ids) != len(allKeys) || intents != len(allKeys) || records != len(allKeys) {
		t.Errorf("keys %d, distinct intents answered %d, intents stored %d, idempotency records %d; want all equal",
			len(allKeys), len(ids), intents, records)
	}
}

// crashRetry sends every key once more, from several goroutines, and
// requires 200 for each; a transport error is retried up to maxRetry times.
func crashRetry(t *testing.T, base, token string, keys []string, led *crashLedger, workers, maxRetry int, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := crashClient()
	defer client.CloseIdleConnections()
	var next, fresh, replayed, lostAnswers atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(keys) || ctx.Err() != nil {
					return
				}
				var a crashAnswer
				for range maxRetry {
					if a = crashPost(ctx, client, base, token, keys[i]); a.err == nil {
						break
					}
				}
				switch {
				case a.err != nil:
					t.Errorf("%s: retry of %s: %v", what, keys[i], a.err)
				case a.status != http.StatusOK:
					t.Errorf("%s: retry of %s: status %d, want 200", what, keys[i], a.status)
				default:
					if a.replayed && !led.has(keys[i]) {
						lostAnswers.Add(1) // committed before the kill, answer lost
					}
					led.add(keys[i], a.intentID)
					if a.replayed {
						replayed.Add(1)
					} else {
						fresh.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%s: retried %d keys: %d replayed (%d of them committed before the kill with the answer lost), %d executed now",
		what, len(keys), replayed.Load(), lostAnswers.Load(), fresh.Load())
}

// TestConcurrentSameKeyOneIntent sends 20 identical requests with one key
// at once to an in-process gateway: one intent is recorded, every 200 names
// it, the others are told the key is in progress (409), and retrying those
// replays the same answer.
func TestConcurrentSameKeyOneIntent(t *testing.T) {
	dataDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := serveInProcess(t, serveFlags{dataDir: dataDir, dev: true})
	a := s.app
	var tokOut bytes.Buffer
	if code := run(ctx, &environment{stdout: &tokOut, stderr: io.Discard, getenv: func(string) string { return "" }}, []string{"token", "--data-dir", dataDir}); code != 0 {
		t.Fatalf("praxa token exited %d", code)
	}
	token := strings.TrimSpace(tokOut.String())

	const n = 20
	key := "same-key-" + fmt.Sprint(time.Now().UnixNano())
	client := crashClient()
	defer client.CloseIdleConnections()
	answers := gatewaytest.Race(n, func(int) crashAnswer { return crashPost(ctx, client, a.url, token, key) })

	ids := map[string]int{}
	var ok, busy, replays int
	for i, ans := range answers {
		switch {
		case ans.err != nil:
			t.Fatalf("request %d: %v", i, ans.err)
		case ans.status == http.StatusOK:
			ok++
			if ans.replayed {
				replays++
			}
			ids[ans.intentID]++
		case ans.status == http.StatusConflict:
			busy++
		default:
			t.Errorf("request %d: status %d, want 200 or 409", i, ans.status)
		}
	}
	if ok-replays != 1 || len(ids) != 1 {
		t.Fatalf("200 answers %d naming intents %v; want one fresh (%d replayed), all naming one intent", ok, ids, replays)
	}
	// The ones told to retry get the same answer, replayed.
	for range busy {
		ans := crashPost(ctx, client, a.url, token, key)
		if ans.err != nil || ans.status != http.StatusOK || !ans.replayed {
			t.Fatalf("retry after 409: %+v", ans)
		}
		ids[ans.intentID]++
	}
	if len(ids) != 1 {
		t.Fatalf("answers name intents %v; want one", ids)
	}
	t.Logf("%d concurrent requests: %d answered 200 (%d of them replayed), %d answered 409 and replayed on retry", n, ok, replays, busy)

	if err := s.stop(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if count := gatewaytest.RowCount(t, dataPath(dataDir), "intents"); count != 1 {
		t.Errorf("intents stored: %d, want 1", count)
	}
}
