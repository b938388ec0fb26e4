package mcpadapter_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/praxa/praxa/gateway/gatewaytest"
)

// BenchmarkLightCallOwn is the proxied call of BenchmarkProxiedCall's
// light stack (a tools/call of up.echo on /mcp at 2026-07-28: the
// stateless path, the light path, the upstream POST and the committed
// audit event) with the two ends that are not the gateway's made as cheap
// as they can be, so that allocs/op, B/op and a CPU profile show the
// gateway's own cost: the client is one hand-written POST a call (not
// go-sdk's client), and the upstream answers each tools/call with the
// bytes a real go-sdk server answered the first one (its id replaced);
// every other request (the connection's server/discover and tools/list)
// goes to that real server. The gateway is the one `praxa serve` builds
// (gatewaytest), on a real SQLite file with its audit events fsync'd.
//
//	go test -run '^$' -bench BenchmarkLightCallOwn -benchmem -count 6 ./mcpadapter/
func BenchmarkLightCallOwn(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("sessions=%d", workers), func(b *testing.B) { benchLightOwn(b, workers) })
	}
}

// replayUpstream serves the first tools/call through the real upstream
// and replays its answer for every later one.
type replayUpstream struct {
	next http.Handler

	mu     sync.Mutex
	header http.Header
	status int
	// before and after are the recorded body around its id.
	before, after []byte
}

func (u *replayUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Method") != "tools/call" {
		u.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	id := callID(body)
	u.mu.Lock()
	recorded := u.header != nil
	header, status, before, after := u.header, u.status, u.before, u.after
	u.mu.Unlock()
	if !recorded {
		rec := httptest.NewRecorder()
		r.Body = io.NopCloser(bytes.NewReader(body))
		u.next.ServeHTTP(rec, r)
		res := rec.Body.Bytes()
		key := []byte(`"id":` + string(id))
		i := bytes.Index(res, key)
		if i < 0 || id == nil {
			panic(fmt.Sprintf("replayUpstream: the answer %q does not name the call's id %s", res, id))
		}
		u.mu.Lock()
		u.header, u.status = rec.Header().Clone(), rec.Code
		u.before, u.after = bytes.Clone(res[:i+len(`"id":`)]), bytes.Clone(res[i+len(key):])
		header, status, before, after = u.header, u.status, u.before, u.after
		u.mu.Unlock()
	}
	h := w.Header()
	for k, v := range header {
		h[k] = v
	}
	w.WriteHeader(status)
	w.Write(before)
	w.Write(id)
	w.Write(after)
}

// callID is the id of a JSON-RPC request as the gateway's POST path
// writes it: a number right after `"id":`.
func callID(body []byte) []byte {
	_, rest, ok := bytes.Cut(body, []byte(`"id":`))
	if !ok {
		return nil
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end == 0 {
		return nil
	}
	return rest[:end]
}

func benchLightOwn(b *testing.B, workers int) {
	up := serveUpstream(b, func(h http.Handler) http.Handler { return &replayUpstream{next: h} })
	path := filepath.Join(b.TempDir(), "praxec.yaml")
	if err := os.WriteFile(path, []byte(lightConfig(up.url)), 0o600); err != nil {
		b.Fatal(err)
	}
	g := gatewaytest.New(b, &gatewaytest.Options{ConfigFile: path, LogLevel: slog.LevelError})
	tok := g.Token(b, tenantA, userA, nil, nil)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.Cleanup(client.CloseIdleConnections)
	ctx := context.Background()
	call := func(id int) error {
		body := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"_meta":{` +
			`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"},` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"up.echo","arguments":{"text":"hi"}}}`)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/mcp", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "up.echo")
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		text, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		// The stateless path answers JSON (go-sdk's handler an event
		// stream): a call that left it would not be measured.
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" ||
			!bytes.Contains(text, []byte(`"text":"echo: hi"`)) || bytes.Contains(text, []byte(`"isError":true`)) {
			return fmt.Errorf("answer %d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), text)
		}
		return nil
	}
	if err := call(0); err != nil {
		b.Fatal(err)
	}
	cpu := gatewaytest.ProcessCPU()
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				if err := call(w + 1); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(gatewaytest.ProcessCPU()-cpu)/float64(b.N*workers), "cpu-ns/call")
}
