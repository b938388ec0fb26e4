package e2e_test

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"

	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
)

// rateLimitCapabilitiesYAML declares two capabilities of the REST
// connection api, whose baseUrl is its %s: quote, limited to a burst of 3
// that refills nothing within a test, and ping, without limits.
//
//go:embed testdata/ratelimit-capabilities.yaml
var rateLimitCapabilitiesYAML string

// TestCapabilityRateLimits: capabilities.X.limits is one bucket for every
// call of the capability, of every tenant, however it is reached (a
// praxec.command start over REST, a direct tool call) and, on PostgreSQL,
// on whichever replica: past it a call answers 429 rate-limited (REST:
// Retry-After) before it reaches the upstream; a capability without
// limits is not held back.
func TestCapabilityRateLimits(t *testing.T) {
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			up, srv := newHitCounter(t)
			path := filepath.Join(t.TempDir(), "praxec.yaml")
			// A rate that refills nothing within the test: the burst
			// of 3 is all the calls quote gets.
			writeFile(t, path, fmt.Sprintf(rateLimitCapabilitiesYAML, srv.URL))
			ti := newIssuer(t)
			o := &gatewaytest.Options{ConfigFile: path, Issuer: ti,
				Edit: func(cfg *config.Config) { cfg.Auth.Resource = resource }}
			if driver == "postgres" {
				o.StoreDSN = pgtest.Schema(t)
			}
			g1 := gatewaytest.New(t, o)
			g2 := g1
			if driver == "postgres" {
				g2 = g1.Replica(t, nil)
			}
			tokA := mint(t, ti, tenantA, userA, gatewaytest.AllScopes()...)
			tokB := mint(t, ti, tenantB, userB, gatewaytest.AllScopes()...)
			start := func(g *gatewaytest.Gateway, tok, capability string) *gatewaytest.Response {
				return wrapGateway(g).command(t, tok, map[string]any{"definitionId": config.ProxyDefaultWorkflow,
					"input": map[string]any{"capability": capability}})
			}
			direct := func(g *gatewaytest.Gateway, tenant, capability string) *contracts.Error {
				p := principalOf(tenant)
				return g.Service.CallDirect(context.Background(), p, gateway.DirectCall{Capability: capability,
					Surface: gateway.SurfaceMCP, RequestID: "req-" + newTraceID(), TraceID: newTraceID(),
					Args: func() (map[string]any, error) { return map[string]any{}, nil }}).Err
			}
			// Three calls, by two tenants, two ways, on both replicas.
			// (On PostgreSQL the first call's replica leases a second
			// token ahead of need, in the background: the third call
			// goes there. On the other replica it would be refused,
			// the bucket empty: a slice a replica holds is the
			// documented error. The second call waits until that lease
			// took its token: else, on a loaded machine, the second
			// call's replica could take it first.)
			for i, call := range []func() error{
				func() error { return statusErr(start(g1, tokA, "quote")) },
				func() error { return asErr(direct(g2, tenantB, "quote")) },
				func() error { return statusErr(start(g1, tokB, "quote")) },
			} {
				if err := call(); err != nil {
					t.Fatalf("call %d of quote within its burst: %v", i+1, err)
				}
				if i == 0 && driver == "postgres" {
					waitBucket(t, o.StoreDSN, ratelimit.CapabilityKey("quote"), 1)
				}
			}
			// The fourth, either way, on either replica, is refused.
			for i, g := range []*gatewaytest.Gateway{g1, g2} {
				r := start(g, tokA, "quote")
				p := wantProblem(t, r, http.StatusTooManyRequests, contracts.CodeRateLimited)
				if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
					t.Errorf("replica %d: Retry-After %q, want whole seconds", i+1, r.Header.Get("Retry-After"))
				}
				if p.Hint == "" {
					t.Errorf("replica %d: a refusal without a hint", i+1)
				}
				if err := direct(g, tenantB, "quote"); err == nil || err.Code != contracts.CodeRateLimited {
					t.Errorf("replica %d: direct call past the limit answered %v, want rate-limited", i+1, err)
				}
			}
			if n := up.count("GET /quote"); n != 3 {
				t.Fatalf("the upstream saw %d calls of quote, want the 3 within its limit", n)
			}
			// ping has no limit: it is not held back by quote's.
			for range 5 {
				if err := statusErr(start(g2, tokA, "ping")); err != nil {
					t.Fatalf("ping: %v", err)
				}
			}
		})
	}
}

// waitBucket waits until the shared bucket of key in the PostgreSQL
// database dsn holds tokens whole tokens (the leases in flight have taken
// theirs), and fails the test when it does not within 10 s.
func waitBucket(t *testing.T, dsn, key string, tokens int) {
	t.Helper()
	conn := pgtest.Conn(t, dsn)
	var held float64
	if !gatewaytest.Poll(10*time.Second, func() bool {
		if err := conn.QueryRow(context.Background(), `SELECT tokens FROM rate_buckets WHERE key = $1`, key).Scan(&held); err != nil {
			t.Fatalf("bucket %s: %v", key, err)
		}
		return int(math.Floor(held)) == tokens
	}) {
		t.Fatalf("the bucket %s holds %.3f tokens, want %d whole ones", key, held, tokens)
	}
}

// statusErr is nil for a 2xx answer, else an error holding it.
func statusErr(r *gatewaytest.Response) error {
	if r.Status/100 == 2 {
		return nil
	}
	return &statusError{r}
}

type statusError struct{ r *gatewaytest.Response }

func (e *statusError) Error() string {
	return strconv.Itoa(e.r.Status) + " " + string(bytes.TrimSpace(e.r.Body))
}

// asErr is the contract error as an error (nil stays nil).
func asErr(err *contracts.Error) error {
	if err == nil {
		return nil
	}
	return err
}
