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
			// The probe is refused on replica 2 while the clients keep
			// the budget spent: the principal's own, or, for a
			// principal that sent nothing yet, of the tenant whose
			// budget the others spend, the tenant's. (After the
			// window the bucket refills at its rate: a lone client
			// slower than the rate, as on a loaded machine, would
			// never be refused.)
			probe := tokens[0]
			if tc.who == "tenant" {
				probe = mint(t, ti, tc.tenant, "erin", string(contracts.ScopeTracesRead))
			}
			var admitted, refused atomic.Int64
			var bad, probed atomic.Pointer[gatewaytest.Response]
			// send sends one request of tok to w and counts its answer;
			// it returns the answer, or nil after an error.
			send := func(w *gw, tok string) *gatewaytest.Response {
				r, err := w.send(req{method: http.MethodGet, path: "/v8/traces/" + newTraceID(), token: tok})
				if err != nil {
					t.Error(err)
					return nil
				}
				if r.Status != http.StatusTooManyRequests {
					admitted.Add(1)
					return r
				}
				refused.Add(1)
				if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
					bad.Store(r)
				}
				return r
			}
			slice := ratelimit.ClusterOptions{}.SliceFor(tc.rule)
			// limit is what the replicas may admit together over a
			// window of w seconds (ratelimit.Cluster's error bound):
			// one bucket's, one, and a slice per replica. A lease that
			// did not answer within its timeout (a machine too loaded)
			// sent its replica to the fallback, whose shares add one
			// more bucket's worth at most: the documented bound of
			// that case. fell counts those replicas: in fallback when
			// the window began, or failing a lease since (errs, their
			// failed leases before the window).
			var errs []int64
			var down []bool
			for _, g := range gws {
				s := g.Limiter.(*ratelimit.Cluster).Stats()
				errs, down = append(errs, s.Errors), append(down, s.Fallback)
			}
			limit := func(w float64) (one, bound float64, fell int) {
				one = float64(tc.rule.Burst) + tc.rule.Rate*w
				bound = one + float64(replicas*slice)
				for i, g := range gws {
					if down[i] || g.Limiter.(*ratelimit.Cluster).Stats().Errors > errs[i] {
						fell++
					}
				}
				return one, bound + float64(fell)*one, fell
			}
			start := time.Now()
			stop := start.Add(2 * time.Second)
			// The clients go on past stop, for at most a minute more,
			// until they have outrun the limit (sent more than it
			// allows over the window so far: on a loaded machine they
			// may send fewer within 2 s) and the probe is refused.
			// The window is measured.
			giveUp := stop.Add(time.Minute)
			running := func() bool {
				now := time.Now()
				if now.Before(stop) {
					return true
				}
				_, bound, _ := limit(now.Sub(start).Seconds())
				outran := float64(admitted.Load()+refused.Load()) > bound
				return (!outran || probed.Load() == nil) && now.Before(giveUp)
			}
			var wg sync.WaitGroup
			for i, g := range gws {
				w := wrapGateway(g)
				for j := range workers * len(tokens) {
					tok := tokens[(i+j)%len(tokens)]
					wg.Go(func() {
						for running() {
							if send(w, tok) == nil {
								return
							}
						}
					})
				}
			}
			wg.Go(func() {
				w := wrapGateway(gws[1])
				// Once the clients are refused, the budget is spent.
				for refused.Load() == 0 && running() {
					time.Sleep(time.Millisecond)
				}
				for running() {
					r := send(w, probe)
					if r == nil {
						return
					}
					if r.Status == http.StatusTooManyRequests {
						probed.Store(r)
						return
					}
				}
			})
			wg.Wait()
			window := time.Since(start).Seconds()
			one, bound, fell := limit(window)
			got := admitted.Load()
			t.Logf("admitted %d, refused %d in %.2fs over %d replicas; one bucket allows %.0f, the bound is %.0f",
				got, refused.Load(), window, replicas, one, bound)
			if fell > 0 {
				t.Logf("%d replicas fell back during the window (%+v, %+v): the bound has one more bucket's %.0f for each",
					fell, gws[0].Limiter.(*ratelimit.Cluster).Stats(), gws[1].Limiter.(*ratelimit.Cluster).Stats(), one)
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
			// The refusal's shape, on replica 2.
			r := probed.Load()
			if r == nil {
				t.Fatalf("the probe of replica 2 was not refused within %.0fs while the clients outran the limit", window)
			}
			p := wantProblem(t, r, http.StatusTooManyRequests, contracts.CodeRateLimited)
			if want := "this " + tc.who + " sends too many requests"; p.Detail != want {
				t.Errorf("detail %q, want %q", p.Detail, want)
			}
		})
	}
	// A replica that fell back (a lease slower than its timeout on a
	// loaded machine) stays in fallback until a request finds the
	// database again, RetryStore after the failure: such requests are
	// sent, of a principal of its own.
	again := mint(t, ti, tenantA, "frank", string(contracts.ScopeTracesRead))
	for i, g := range gws {
		c := g.Limiter.(*ratelimit.Cluster)
		for deadline := time.Now().Add(time.Minute); c.Stats().Fallback; {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d still in fallback a minute after the windows: %+v", i+1, c.Stats())
			}
			time.Sleep(100 * time.Millisecond)
			wrapGateway(g).do(t, req{method: http.MethodGet, path: "/v8/traces/" + newTraceID(), token: again})
		}
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
