package e2e_test

// Cluster-wide rate limits (issue 17 item 2, gateway/ratelimit): on one
// PostgreSQL database, server.limits' per-principal and per-tenant rates
// hold across the replicas together, within the documented error (a
// leased slice per replica), and a refusal keeps the 429 shape of the
// in-process limit.

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
)

// TestRateLimitAcrossPostgresReplicas: two replicas on one PostgreSQL
// database, each hammered over HTTP by several clients for a window.
// One principal (limit 20/s, burst 40) is admitted, over both together,
// no more than one bucket allows over the window plus a slice per
// replica; three principals of one tenant (each 20/s, the tenant 30/s,
// burst 60) no more than the tenant's bucket allows plus a slice per
// replica, where their own limits alone would admit about three times
// that. Each refusal is the in-process limit's 429.
func TestRateLimitAcrossPostgresReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	ti := newIssuer(t)
	principal := ratelimit.Rule{Rate: 20, Burst: 40}
	tenant := ratelimit.Rule{Rate: 30, Burst: 60}
	const replicas, workers = 2, 3
	var gws []*gatewaytest.Gateway
	for range replicas {
		gws = append(gws, gatewaytest.New(t, &gatewaytest.Options{
			Issuer:     ti,
			StoreDSN:   dsn,
			RateLimits: true,
			Edit: func(cfg *config.Config) {
				cfg.Auth.Resource = resource
				cfg.Server.Limits.RatePerSecond, cfg.Server.Limits.Burst = principal.Rate, principal.Burst
				cfg.Server.Limits.Tenant = &config.Rate{RatePerSecond: tenant.Rate, Burst: tenant.Burst}
			},
		}))
	}
	tcs := []struct {
		name   string
		tenant string
		users  []string
		rule   ratelimit.Rule // the limit that binds
		who    string
	}{
		{"principal", tenantA, []string{userA}, principal, "principal"},
		{"tenant", tenantB, []string{"bob", "carol", "dave"}, tenant, "tenant"},
	}
	for _, tc := range tcs {
		t.Run(tc.name, func(t *testing.T) {
			var tokens []string
			for _, u := range tc.users {
				tokens = append(tokens, mint(t, ti, tc.tenant, u, string(contracts.ScopeTracesRead)))
			}
			var admitted, refused atomic.Int64
			var bad atomic.Pointer[gatewaytest.Response]
			start := time.Now()
			stop := start.Add(2 * time.Second)
			var wg sync.WaitGroup
			for i, g := range gws {
				w := wrapGateway(g)
				for j := range workers * len(tokens) {
					tok := tokens[(i+j)%len(tokens)]
					wg.Go(func() {
						for time.Now().Before(stop) {
							r, err := w.send(req{method: http.MethodGet, path: "/v8/traces/" + newTraceID(), token: tok})
							if err != nil {
								t.Error(err)
								return
							}
							if r.Status != http.StatusTooManyRequests {
								admitted.Add(1)
								continue
							}
							refused.Add(1)
							if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
								bad.Store(r)
							}
						}
					})
				}
			}
			wg.Wait()
			window := time.Since(start).Seconds()
			slice := ratelimit.ClusterOptions{}.SliceFor(tc.rule)
			one := float64(tc.rule.Burst) + tc.rule.Rate*window
			bound := one + float64(replicas*slice)
			got := admitted.Load()
			t.Logf("admitted %d, refused %d in %.2fs over %d replicas; one bucket allows %.0f, the bound is %.0f",
				got, refused.Load(), window, replicas, one, bound)
			// A lease that did not answer within its timeout (a
			// machine too loaded) sent its replica to the fallback,
			// whose shares add one more bucket's worth at most: the
			// documented bound of that case.
			for i, g := range gws {
				if s := g.Limiter.(*ratelimit.Cluster).Stats(); s.Errors > 0 {
					t.Logf("replica %d fell back during the window (%+v): the bound is one more bucket's %.0f", i+1, s, one)
					bound += one
				}
			}
			if float64(got) > bound {
				t.Fatalf("%d replicas admitted %d requests in %.2fs: more than %.1f (one bucket's %.1f and a slice of %d per replica)",
					replicas, got, window, bound, one, slice)
			}
			if got < int64(tc.rule.Burst) {
				t.Fatalf("%d replicas admitted %d requests, fewer than the burst %d", replicas, got, tc.rule.Burst)
			}
			if refused.Load() == 0 {
				t.Fatal("nothing was refused: the clients did not outrun the limit")
			}
			if r := bad.Load(); r != nil {
				t.Fatalf("a 429 without an integer Retry-After: %v %s", r.Header, r.Body)
			}
			// The refusal's shape, on either replica: for a principal
			// that sent nothing yet, of the tenant whose budget the
			// others spent, the tenant's.
			tok := tokens[0]
			if tc.who == "tenant" {
				tok = mint(t, ti, tc.tenant, "erin", string(contracts.ScopeTracesRead))
			}
			// (The replica may hold tokens of a slice still, and the
			// bucket refills: the first refusal comes within the
			// burst of the new principal.)
			var r *gatewaytest.Response
			for range principal.Burst {
				if r = wrapGateway(gws[1]).do(t, req{method: http.MethodGet, path: "/v8/traces/" + newTraceID(), token: tok}); r.Status == http.StatusTooManyRequests {
					break
				}
			}
			p := wantProblem(t, r, http.StatusTooManyRequests, contracts.CodeRateLimited)
			if want := "this " + tc.who + " sends too many requests"; p.Detail != want {
				t.Errorf("detail %q, want %q", p.Detail, want)
			}
		})
	}
	for i, g := range gws {
		m := wrapGateway(g).do(t, req{method: http.MethodGet, path: "/metrics"})
		if v := metricValue(t, string(m.Body), "praxa_rate_limit_leases_total"); v < 1 {
			t.Errorf("replica %d: praxa_rate_limit_leases_total %v, want leases", i+1, v)
		}
		if v := metricValue(t, string(m.Body), "praxa_rate_limit_fallback"); v != 0 {
			t.Errorf("replica %d: praxa_rate_limit_fallback %v, want 0", i+1, v)
		}
	}
}

// metricValue is the value of the unlabelled series name in a /metrics
// text.
func metricValue(t *testing.T, text, name string) float64 {
	t.Helper()
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no series %s", name)
	return 0
}
