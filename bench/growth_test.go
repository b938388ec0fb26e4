package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/gatewaytest"
)

// growthSizes are the store sizes BenchmarkStoreGrowth compares: how many
// missions, audit events and idempotency records the store holds.
var growthSizes = []struct {
	name string
	n    int
}{{"10k", 10_000}, {"1M", 1_000_000}}

// growthTenant owns every generated row, so that the reads walk indexes
// that hold all of them.
const growthTenant = "growth-tenant"

// growthConfig declares an mcp connection to the echo upstream at %s whose
// echo tool is exposed directly as up.echo.
const growthConfig = `server:
  limits:
    ratePerSecond: -1
connections:
  upstream:
    kind: mcp
    url: %s
proxy:
  expose:
    - name: up.echo
      description: Echo the text.
      exposeDirectly: true
      inputSchema:
        type: object
        properties:
          text: { type: string }
      executor:
        kind: mcp
        connection: upstream
        tool: echo
`

// growthSeed is what a generated store keeps beside it: the template rows
// made through the gateway and the prefixes of the generated ones.
type growthSeed struct {
	RunID   string `json:"runId"`
	TraceID string `json:"traceId"`
	N       int    `json:"n"`
}

// BenchmarkStoreGrowth measures whether a store read and a proxied call
// cost more when the store is large: for each size of growthSizes, a
// SQLite file holding that many missions, audit events and idempotency
// records of one tenant, generated with SQL straight into the file (copies
// of one mission, one event and one idempotency record made through the
// gateway, under new keys), not through the API. On it, one request at a
// time through the REST handler of a gateway wired as praxa serve wires it:
//
//   - mission: GET /v8/missions/{runId} of a random generated mission;
//   - trace: GET /v8/traces/{traceId} of a random generated trace (one
//     event each);
//   - proxied: tools/call of up.echo, an upstream echo tool exposed
//     directly, over /mcp (streamable HTTP, go-sdk client and upstream).
//
// Each store file is read through once before its reads are measured, so
// that both sizes are measured with the file in the operating system's
// page cache (warmFile). Compare each size's ns/op with 10k's in the same
// run: the target is no growth. The stores are generated once into the directory
// PRAXA_GROWTH_DIR names (1M takes minutes and about a gigabyte) and
// reused by later runs; without it the benchmark is skipped. bench/all.sh
// runs it with GROWTH=1.
func BenchmarkStoreGrowth(b *testing.B) {
	dir := os.Getenv("PRAXA_GROWTH_DIR")
	if dir == "" {
		b.Skip("set PRAXA_GROWTH_DIR to a directory for the generated stores (about 1 GB)")
	}
	up := echoUpstream(b)
	for _, size := range growthSizes {
		b.Run(size.name, func(b *testing.B) {
			path := filepath.Join(dir, fmt.Sprintf("growth-%d.db", size.n))
			cfgPath := filepath.Join(b.TempDir(), "growth.yaml")
			if err := os.WriteFile(cfgPath, fmt.Appendf(nil, growthConfig, up), 0o600); err != nil {
				b.Fatal(err)
			}
			seed := growthStore(b, path, cfgPath, size.n)
			warmFile(b, path)
			g := gatewaytest.New(b, &gatewaytest.Options{ConfigFile: cfgPath, DBPath: path})
			tok := g.Token(b, growthTenant, "growth-user", nil, nil)
			rng := rand.New(rand.NewPCG(1, uint64(size.n)))
			get := func(path string) {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				rec := httptest.NewRecorder()
				g.Handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
				}
			}
			get("/v8/missions/" + seed.RunID) // warm the verifier
			b.Run("mission", func(b *testing.B) {
				cpu0 := gatewaytest.ProcessCPU()
				for b.Loop() {
					get("/v8/missions/" + genRunID(rng.IntN(seed.N-1)+1))
				}
				b.ReportMetric(float64(gatewaytest.ProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
			b.Run("trace", func(b *testing.B) {
				cpu0 := gatewaytest.ProcessCPU()
				for b.Loop() {
					get("/v8/traces/" + genTraceID(rng.IntN(seed.N-1)+1))
				}
				b.ReportMetric(float64(gatewaytest.ProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
			b.Run("proxied", func(b *testing.B) {
				cs := connectMCP(b, g.URL+"/mcp", tok)
				params := &mcp.CallToolParams{Name: "up.echo", Arguments: map[string]any{"text": "growth"}}
				// The first call opens the gateway's upstream session.
				if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
					b.Fatalf("up.echo: %v %+v", err, res)
				}
				for b.Loop() {
					res, err := cs.CallTool(context.Background(), params)
					if err != nil || res.IsError {
						b.Fatalf("up.echo: %v %+v", err, res)
					}
				}
			})
		})
	}
}

// warmFile reads the file at path through once, so that the operating
// system's page cache holds it before the reads are measured: a store
// generated in an earlier run is otherwise mostly on disk, and a random
// read among a million rows then measures the disk (about 1 ms a read
// here, against 0.2 ms with the file cached), not what the store's own
// code costs as it grows.
func warmFile(b *testing.B, path string) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(io.Discard, f); err != nil {
		b.Fatal(err)
	}
}

// genRunID and genTraceID are the keys of the i-th generated mission and
// trace (i from 1; the template rows keep their own).
func genRunID(i int) string   { return fmt.Sprintf("wf_growth%016d", i) }
func genTraceID(i int) string { return fmt.Sprintf("%032x", i) }

// growthStore returns the seed of the store at path holding n rows of
// each kind, generating it first unless a seed file says it is there.
func growthStore(b *testing.B, path, cfgPath string, n int) growthSeed {
	seedPath := path + ".seed.json"
	var seed growthSeed
	if data, err := os.ReadFile(seedPath); err == nil && json.Unmarshal(data, &seed) == nil && seed.N == n {
		return seed
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", seedPath} {
		os.Remove(p)
	}
	start := time.Now()
	// The template rows, made through the gateway.
	g := gatewaytest.New(b, &gatewaytest.Options{ConfigFile: cfgPath, DBPath: path})
	tok := g.Token(b, growthTenant, "growth-user", nil, nil)
	post := func(path, key, body string) map[string]any {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		rec := httptest.NewRecorder()
		g.Handler.ServeHTTP(rec, req)
		var out map[string]any
		if rec.Code/100 != 2 || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			b.Fatalf("POST %s: %d %s", path, rec.Code, rec.Body)
		}
		return out
	}
	mission := post("/v8/missions", "growth-template-mission",
		`{"goal":"the template of the generated missions","definitionId":"proxy_default","input":{"capability":"up.echo","text":"hi"}}`)
	intent := post("/v8/intents", "growth-template-intent", intentBody)
	seed = growthSeed{N: n}
	seed.RunID, _ = mission["runId"].(string)
	seed.TraceID, _ = intent["traceId"].(string)
	if seed.RunID == "" || seed.TraceID == "" {
		b.Fatalf("no runId or traceId: %v %v", mission, intent)
	}
	g.Flush(b)
	g.Close()

	// n-1 copies of each, with SQL.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	series := `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?) `
	for _, q := range []struct {
		what string
		sql  string
		args []any
	}{
		{"pragma", `PRAGMA synchronous = OFF`, nil},
		{"missions", series + `INSERT INTO missions (tenant, id, run_id, definition_id, definition_version, state,
			version, status, parent_id, doc, created_at, updated_at)
			SELECT m.tenant, printf('wf_growth%016d', s.i), printf('wf_growth%016d', s.i), m.definition_id,
			m.definition_version, m.state, m.version, m.status, m.parent_id,
			CAST(replace(CAST(m.doc AS TEXT), m.run_id, printf('wf_growth%016d', s.i)) AS BLOB), m.created_at, m.updated_at
			FROM s, (SELECT * FROM missions WHERE tenant = ? AND run_id = ?) AS m`,
			[]any{n - 1, growthTenant, seed.RunID}},
		{"events", series + `INSERT INTO events (tenant, trace_id, type, at, subject, client_id, operation, tool,
			run_id, workflow_id, outcome, code, request_id, attributes)
			SELECT e.tenant, printf('%032x', s.i), e.type, e.at, e.subject, e.client_id, e.operation, e.tool,
			e.run_id, e.workflow_id, e.outcome, e.code, e.request_id, e.attributes
			FROM s, (SELECT * FROM events WHERE tenant = ? AND trace_id = ? ORDER BY seq LIMIT 1) AS e`,
			[]any{n - 1, growthTenant, seed.TraceID}},
		{"idempotency", series + `INSERT INTO idempotency (namespace, key, operation, fingerprint, status, header,
			body, created_at, expires_at)
			SELECT r.namespace, printf('growth-%016d', s.i), r.operation, r.fingerprint, r.status, r.header,
			r.body, r.created_at, r.expires_at
			FROM s, (SELECT * FROM idempotency WHERE key = 'growth-template-intent') AS r`,
			[]any{n - 1}},
		{"checkpoint", `PRAGMA wal_checkpoint(TRUNCATE)`, nil},
	} {
		res, err := db.Exec(q.sql, q.args...)
		if err != nil {
			b.Fatalf("generating %s: %v", q.what, err)
		}
		if q.what != "pragma" && q.what != "checkpoint" {
			if rows, _ := res.RowsAffected(); rows != int64(n-1) {
				b.Fatalf("generating %s: %d rows, want %d", q.what, rows, n-1)
			}
		}
	}
	data, err := json.Marshal(seed)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(seedPath, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %s (%d rows of each kind) in %s", path, n, time.Since(start).Round(time.Second))
	return seed
}

// echoUpstream serves a go-sdk server with one echo tool (bench/mcpecho's)
// over stateless streamable HTTP and returns its URL.
func echoUpstream(b *testing.B) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "growth-echo", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	b.Cleanup(hs.Close)
	return hs.URL
}

// connectMCP opens a go-sdk client session on endpoint with a bearer token.
func connectMCP(b *testing.B, endpoint, tok string) *mcp.ClientSession {
	client := mcp.NewClient(&mcp.Implementation{Name: "growth", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: bearerTransport{tok: tok}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// bearerTransport sends a bearer token with every request.
type bearerTransport struct{ tok string }

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.tok)
	return http.DefaultTransport.RoundTrip(r)
}
