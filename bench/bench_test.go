// Package bench holds the gateway's end-to-end Go benchmarks and, beside
// them, the load harnesses: load.sh (wrk, REST) with its bare chi baseline
// server (barechi); mcp.sh (MCP) with its go-sdk baselines, the upstream
// mcpecho, the naive relay mcprelay and mcphome answering the home body,
// and its load driver mcpload; and all.sh, which runs both, gobench.sh on
// BenchmarkSubmitIntent and (GROWTH=1) BenchmarkStoreGrowth, and prints
// every ratio of the hot-path targets from one run; abbench.sh compares
// benchmarks between builds in interleaved rounds. It has test files
// only; BENCHMARKS.md at the repository root gives the commands and the
// figures.
//
// Every benchmark compares against a baseline measured in the same run:
//
//   - BenchmarkStrictDecodeValidate against BenchmarkStdlibUnmarshal;
//   - BenchmarkSubmitIntent's SQLite variants against its memstore variant
//     (the same pipeline without storage I/O) and against sqlite-maxbatch1
//     (one fsync per request: the naive baseline for group commit);
//   - BenchmarkReadTrace against BenchmarkBareChi, and its memstore variant
//     against its SQLite one;
//   - BenchmarkPipeline's praxec-query (a read answered from memory through
//     the full router) and get-trace against its bare-chi, in one run;
//   - BenchmarkSQLiteRead/reparsed against BenchmarkSQLiteRead/prepared;
//   - BenchmarkStoreGrowth/1M against BenchmarkStoreGrowth/10k (skipped
//     without PRAXA_GROWTH_DIR);
//   - BenchmarkSubmitIntentTombstones/tombstones against its records
//     variant (skipped without PRAXA_TOMBSTONE_DIR);
//   - BenchmarkSubmitIntent/postgres and BenchmarkMissionTransition/postgres
//     against their sqlite-durable variants (they skip without
//     PRAXA_TEST_PG_DSN).
//
// Run them pinned to one core:
//
//	taskset -c 0 go test -run='^$' -bench=. -benchtime=1s -count=3 -cpu=1,2 ./bench/...
package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/assembly"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
	"github.com/praxa/praxa/gateway/store/pgstore"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/gateway/strictjson"
	"github.com/praxa/praxa/issuer"
)

// intentBody is a realistic aura_submit_intent body (the key travels in the
// Idempotency-Key header).
const intentBody = `{"intent":"deploy the payments service to staging once the integration tests pass, then notify the on-call channel","tags":["deploy","payments","staging"]}`

// clients is how many requests the parallel benchmarks keep in flight, the
// same as the wrk runs' -c64.
const clients = 64

// testGateway is the REST handler wired as praxa serve wires it
// (assembly.Build on the default configuration): a verifier with a static
// EdDSA issuer (as --dev) and a JSON request log (to io.Discard here).
type testGateway struct {
	handler  http.Handler
	token    string
	verifier *auth.Verifier
	auditor  *audit.Auditor
}

func newGateway(b *testing.B, st store.Store) *testGateway {
	b.Helper()
	ctx := context.Background()
	cfg := config.Default()
	cfg.Defaults("127.0.0.1:8080")
	cfg.Server.Limits.RatePerSecond = -1 // one token sends everything: no 429s
	log := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))

	is, err := issuer.New(issuer.Options{Algorithms: []string{issuer.EdDSA}})
	if err != nil {
		b.Fatal(err)
	}
	is.SetIssuer(cfg.Server.PublicURL + "/dev/issuer")
	var keys []auth.StaticKey
	for _, k := range is.PublicKeys() {
		keys = append(keys, auth.StaticKey{KeyID: k.KeyID, Algorithm: k.Algorithm, Key: k.Key})
	}
	gw, err := assembly.Build(ctx, cfg, st, &assembly.Options{Logger: log, RevocationInterval: 2 * time.Second,
		StaticIssuers: []auth.StaticIssuer{{Issuer: is.Issuer(), Keys: keys}}})
	if err != nil {
		b.Fatal(err)
	}
	var scopes []string
	for _, s := range contracts.Scopes() {
		scopes = append(scopes, string(s))
	}
	token, err := is.Mint(is.Issuer(), cfg.Auth.Resource, "bench-user", "bench", scopes, time.Hour, nil)
	if err != nil {
		b.Fatal(err)
	}
	gw.Run(ctx)
	h, err := gw.HTTPHandler(&assembly.HTTPOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		gw.Close(ctx)
		st.Close()
	})
	return &testGateway{handler: h, token: token, verifier: gw.Verifier, auditor: gw.Auditor}
}

// post submits the intent body with key and returns the recorder.
func (g *testGateway) post(key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/v8/intents", strings.NewReader(intentBody))
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	rec := httptest.NewRecorder()
	g.handler.ServeHTTP(rec, req)
	return rec
}

// stores are the drivers BenchmarkSubmitIntent compares.
var stores = []struct {
	name string
	open func(b *testing.B) store.Store
}{
	{"sqlite-durable", sqliteOpener(nil)},
	{"sqlite-nosync", sqliteOpener(&sqlitestore.Options{NoSync: true})},
	{"sqlite-maxbatch1", sqliteOpener(&sqlitestore.Options{MaxBatch: 1})},
	{"memstore", func(*testing.B) store.Store { return memstore.New() }},
	{"postgres", pgOpener},
}

// pgOpener opens pgstore on a fresh schema of the PRAXA_TEST_PG_DSN
// database (dropped at the end), or skips, saying why, without it.
func pgOpener(b *testing.B) store.Store {
	st, err := pgstore.Open(context.Background(), pgtest.Schema(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	return st
}

func sqliteOpener(o *sqlitestore.Options) func(b *testing.B) store.Store {
	return func(b *testing.B) store.Store {
		st, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "praxa.db"), o)
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
}

// BenchmarkSubmitIntent runs POST /v8/intents end to end through the REST
// handler (bearer token verified through the cache, strict JSON, schema,
// idempotency, one store transaction holding the intent, the idempotency
// record and the audit event), each request with a new idempotency key,
// with 64 requests in flight so that concurrent commits can be grouped.
//
//   - sqlite-durable: the default, fsync per commit, commits grouped;
//   - sqlite-nosync: synchronous=NORMAL, no fsync per commit;
//   - sqlite-maxbatch1: fsync per commit and one Update per commit, the
//     naive baseline group commit is measured against;
//   - memstore: the same pipeline without storage I/O;
//   - postgres: pgstore on a fresh schema of PRAXA_TEST_PG_DSN (skipped
//     without it), its default pool, one PostgreSQL transaction (and
//     commit) per request; compare sqlite-durable in the same run.
func BenchmarkSubmitIntent(b *testing.B) {
	for _, sc := range stores {
		b.Run(sc.name, func(b *testing.B) {
			benchSubmit(b, newGateway(b, sc.open(b)))
		})
	}
}

// benchSubmit submits b.N intents of fresh keys to g, clients requests in
// flight; every answer must be a fresh 200. It reports the process CPU
// time per submit.
func benchSubmit(b *testing.B, g *testGateway) {
	prefix := fmt.Sprintf("bench-%08x", rand.Uint32())
	var n atomic.Int64
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := gatewaytest.ProcessCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec := g.post(fmt.Sprintf("%s-%010d", prefix, n.Add(1)))
			if rec.Code != http.StatusOK || rec.Header().Get("Idempotent-Replayed") != "" {
				b.Errorf("POST /v8/intents: %d %s", rec.Code, rec.Body)
				return
			}
		}
	})
	b.ReportMetric(float64(gatewaytest.ProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkReadTrace reads one intent's trace (authenticated GET
// /v8/traces/{id}), one request at a time: on the default durable SQLite
// store, and on memstore (the same pipeline without storage). Each read
// queues its own audit event, which the Auditor writes asynchronously in
// batches on the same core. Compare BenchmarkBareChi.
func BenchmarkReadTrace(b *testing.B) {
	for _, sc := range []struct {
		name string
		open func(b *testing.B) store.Store
	}{stores[0], stores[3]} {
		b.Run(sc.name, func(b *testing.B) { benchReadTrace(b, sc.open(b)) })
	}
}

func benchReadTrace(b *testing.B, st store.Store) {
	g := newGateway(b, st)
	rec := g.post(fmt.Sprintf("bench-read-%08x-0001", rand.Uint32()))
	var out struct {
		TraceID string `json:"traceId"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil || out.TraceID == "" {
		b.Fatalf("POST /v8/intents: %d %s", rec.Code, rec.Body)
	}
	path := "/v8/traces/" + out.TraceID
	get := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+g.token)
		rec := httptest.NewRecorder()
		g.handler.ServeHTTP(rec, req)
		return rec
	}
	if r := get(); r.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, r.Code, r.Body)
	}
	before := g.verifier.CacheStats()
	b.ReportAllocs()
	cpu0 := gatewaytest.ProcessCPU()
	for b.Loop() {
		if r := get(); r.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", path, r.Code, r.Body)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(gatewaytest.ProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	if after := g.verifier.CacheStats(); after.Misses != before.Misses {
		b.Errorf("token cache misses during the loop: %d", after.Misses-before.Misses)
	}
	if d := g.auditor.Dropped(); d > 0 {
		b.ReportMetric(float64(d)/float64(b.N), "dropped-audit/op")
	}
}

// BenchmarkPipeline compares, in one run, a REST request answered from
// memory (POST /v8/praxec/query {} through the full router: ids, trace,
// metrics, the log line, a cached bearer token, the rate limit, the strict
// decoder, the schema, the read's asynchronous audit event) and a store read
// (GET /v8/traces/{id}, memstore: the pipeline without storage I/O) with
// the bare chi floor. Run it with -count to interleave the three.
func BenchmarkPipeline(b *testing.B) {
	b.Run("bare-chi", BenchmarkBareChi)
	g := newGateway(b, memstore.New())
	rec := g.post(fmt.Sprintf("bench-pipeline-%08x-0001", rand.Uint32()))
	var out struct {
		TraceID string `json:"traceId"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil || out.TraceID == "" {
		b.Fatalf("POST /v8/intents: %d %s", rec.Code, rec.Body)
	}
	for _, c := range []struct {
		name, method, path, body string
	}{
		{"praxec-query", http.MethodPost, "/v8/praxec/query", "{}"},
		{"get-trace", http.MethodGet, "/v8/traces/" + out.TraceID, ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			do := func() *httptest.ResponseRecorder {
				var body io.Reader
				if c.body != "" {
					body = strings.NewReader(c.body)
				}
				req := httptest.NewRequest(c.method, c.path, body)
				req.Header.Set("Authorization", "Bearer "+g.token)
				if c.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				rec := httptest.NewRecorder()
				g.handler.ServeHTTP(rec, req)
				return rec
			}
			if r := do(); r.Code != http.StatusOK {
				b.Fatalf("%s %s: %d %s", c.method, c.path, r.Code, r.Body)
			}
			before := g.verifier.CacheStats()
			b.ReportAllocs()
			for b.Loop() {
				if r := do(); r.Code != http.StatusOK {
					b.Fatalf("%s %s: %d %s", c.method, c.path, r.Code, r.Body)
				}
			}
			b.StopTimer()
			if after := g.verifier.CacheStats(); after.Misses != before.Misses {
				b.Errorf("token cache misses during the loop: %d", after.Misses-before.Misses)
			}
			if d := g.auditor.Dropped(); d > 0 {
				b.ReportMetric(float64(d)/float64(b.N), "dropped-audit/op")
			}
		})
	}
}

// pingResponse is the bare baseline's JSON: the same shape as bench/barechi.
type pingResponse struct {
	OK      bool   `json:"ok"`
	Service string `json:"service"`
	Version string `json:"version"`
	TS      int64  `json:"ts"`
}

func bareChi() http.Handler {
	r := chi.NewRouter()
	r.Get("/v8/ping", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(pingResponse{OK: true, Service: "gateway", Version: "v8", TS: time.Now().Unix()})
	})
	return r
}

// BenchmarkBareChi is the floor of an HTTP request here: a chi route and a
// small JSON answer through the same recorder, no middleware.
func BenchmarkBareChi(b *testing.B) {
	h := bareChi()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/v8/ping", nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET /v8/ping: %d", rec.Code)
		}
	}
}

// BenchmarkStrictDecodeValidate is the body path of a POST: the strict
// decoder (duplicate keys, UTF-8, depth) and the 2020-12 schema of
// aura_submit_intent. Compare BenchmarkStdlibUnmarshal.
func BenchmarkStrictDecodeValidate(b *testing.B) {
	body := []byte(intentBody)
	if _, err := strictjson.DecodeObject(body, strictjson.DefaultMaxDepth); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		args, err := strictjson.DecodeObject(body, strictjson.DefaultMaxDepth)
		if err != nil {
			b.Fatal(err)
		}
		args["idempotencyKey"] = "bench-key-0000000001"
		if err := contracts.ValidateInput(contracts.ToolSubmitIntent, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdlibUnmarshal is encoding/json's permissive decoding of the
// same body into a map, with no validation: the floor of the body path.
func BenchmarkStdlibUnmarshal(b *testing.B) {
	body := []byte(intentBody)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var args map[string]any
		if err := json.Unmarshal(body, &args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSQLiteRead isolates what one store read costs on the SQLite
// driver's file: a read-only transaction and the idempotency lookup of the
// fast path, with the statement parsed on every call (as the driver does
// today: Tx.QueryRowContext with SQL text) or prepared once and reused.
func BenchmarkSQLiteRead(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "praxa.db")
	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	g := newGateway(b, st) // closes st at the end
	if rec := g.post("bench-sqlite-read-0001"); rec.Code != http.StatusOK {
		b.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	const query = `SELECT operation, fingerprint, status, header, body, created_at, expires_at
		FROM idempotency WHERE namespace = ? AND key = ? AND expires_at >= ?`
	lookup := func(b *testing.B, q func(tx *sql.Tx) *sql.Row) {
		b.ReportAllocs()
		for b.Loop() {
			tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			var op, fp, header string
			var status int
			var body []byte
			var created, expires int64
			err = q(tx).Scan(&op, &fp, &status, &header, &body, &created, &expires)
			tx.Rollback()
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				b.Fatal(err)
			}
		}
	}
	b.Run("reparsed", func(b *testing.B) {
		lookup(b, func(tx *sql.Tx) *sql.Row { return tx.QueryRowContext(ctx, query, "ns", "missing-key-000001", 0) })
	})
	b.Run("prepared", func(b *testing.B) {
		stmt, err := db.PrepareContext(ctx, query)
		if err != nil {
			b.Fatal(err)
		}
		defer stmt.Close()
		lookup(b, func(tx *sql.Tx) *sql.Row {
			return tx.StmtContext(ctx, stmt).QueryRowContext(ctx, "ns", "missing-key-000001", 0)
		})
	})
}

// BenchmarkMissionTransition is one mission transition end to end through
// the REST handler of a complete gateway over the embedded examples
// (gatewaytest.New, in process): each op starts a fresh deploy_pipeline
// over praxec (POST /v8/praxec/command) and submits its first transition,
// run_lint, from the start answer's link args, one request at a time. That
// is two durable commits per op; ns/request is ns/op over the two.
//
//   - sqlite-durable: a SQLite file, fsync per commit;
//   - postgres: pgstore on a fresh schema of PRAXA_TEST_PG_DSN (skipped
//     without it).
func BenchmarkMissionTransition(b *testing.B) {
	for _, sc := range []struct {
		name string
		opts func(b *testing.B) *gatewaytest.Options
	}{
		{"sqlite-durable", func(*testing.B) *gatewaytest.Options { return &gatewaytest.Options{} }},
		{"postgres", func(b *testing.B) *gatewaytest.Options {
			return &gatewaytest.Options{StoreDSN: pgtest.Schema(b)}
		}},
	} {
		b.Run(sc.name, func(b *testing.B) { benchMissionTransition(b, gatewaytest.New(b, sc.opts(b))) })
	}
}

func benchMissionTransition(b *testing.B, g *gatewaytest.Gateway) {
	tok := g.Token(b, "bench-tenant", "bench-user", nil, nil)
	command := func(args map[string]any) map[string]any {
		body, err := json.Marshal(args)
		if err != nil {
			b.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/v8/praxec/command", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		g.Handler.ServeHTTP(rec, req)
		var out map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			b.Fatalf("praxec.command %s: %d %s", body, rec.Code, rec.Body)
		}
		return out
	}
	// next returns the args of the run_lint link of a start answer.
	next := func(answer map[string]any) map[string]any {
		links, _ := answer["links"].([]any)
		for _, l := range links {
			if l, ok := l.(map[string]any); ok && l["rel"] == "run_lint" && l["method"] == "praxec.command" {
				if args, ok := l["args"].(map[string]any); ok {
					return args
				}
			}
		}
		b.Fatalf("no run_lint praxec.command link in %v", answer)
		return nil
	}
	start := map[string]any{"definitionId": "deploy_pipeline"}
	command(next(command(start))) // warm the verifier and the store
	b.ReportAllocs()
	for b.Loop() {
		command(next(command(start)))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/request")
}
