package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/praxa/praxa/gateway/ratelimit"
)

// Metrics are the gateway's Prometheus metrics, on a registry of their own.
type Metrics struct {
	registry     *prometheus.Registry
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	authRefusals *prometheus.CounterVec
	idempotency  *prometheus.CounterVec
	rateLimited  prometheus.Counter

	// bound caches the request metrics bound to their labels, per route
	// pattern, method, MCP method and tool, and status (routeKey ->
	// *boundRequest), so that a request does not hash its labels into the
	// vectors again.
	bound sync.Map
}

// routeKey labels one request's metrics.
type routeKey struct {
	route, method      string
	mcpMethod, mcpTool string
	status             int
}

// boundRequest is the request counter and latency histogram of one routeKey.
type boundRequest struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// NewMetrics registers the gateway's metrics and the Go runtime's.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "praxa_http_requests_total", Help: "HTTP requests by route pattern, method and status; /mcp requests also by MCP method and tool (Mcp-Method, Mcp-Name).",
		}, []string{"route", "method", "status", "mcp_method", "mcp_tool"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "praxa_http_request_duration_seconds", Help: "HTTP request latency by route pattern and method; /mcp requests also by MCP method and tool.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method", "mcp_method", "mcp_tool"}),
		authRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "praxa_auth_refusals_total", Help: "Requests refused by authentication, by reason.",
		}, []string{"reason"}),
		idempotency: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "praxa_idempotency_total", Help: "Idempotency outcomes: replayed, reused (422), in_progress (409).",
		}, []string{"outcome"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "praxa_rate_limited_total", Help: "Requests refused by a rate limit (server.limits: per principal, per tenant).",
		}),
	}
	m.registry.MustRegister(m.requests, m.latency, m.authRefusals, m.idempotency, m.rateLimited,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// CounterFunc registers a counter whose value fn reports (the service's
// own counters, such as the audit queue's).
func (m *Metrics) CounterFunc(name, help string, fn func() float64) {
	m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, fn))
}

// LabeledCounterFunc registers a counter whose value fn reports, with
// constant labels: one series of a family whose other series are
// registered with other label values (bounded ones, such as a quota kind).
func (m *Metrics) LabeledCounterFunc(name, help string, labels map[string]string, fn func() float64) {
	m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, fn))
}

// LabeledGaugeFunc registers a gauge whose value fn reports, with
// constant labels, as LabeledCounterFunc does a counter.
func (m *Metrics) LabeledGaugeFunc(name, help string, labels map[string]string, fn func() float64) {
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, fn))
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// AuthRefused counts one authentication refusal.
func (m *Metrics) AuthRefused(reason string) { m.authRefusals.WithLabelValues(reason).Inc() }

// observe counts one request; mcpMethod and mcpTool are its bounded MCP
// labels (mcpLabels), empty outside /mcp.
func (m *Metrics) observe(route, method, mcpMethod, mcpTool string, status int, d time.Duration) {
	k := routeKey{route: route, method: method, mcpMethod: mcpMethod, mcpTool: mcpTool, status: status}
	v, ok := m.bound.Load(k)
	if !ok {
		v, _ = m.bound.LoadOrStore(k, &boundRequest{
			requests: m.requests.WithLabelValues(route, method, strconv.Itoa(status), mcpMethod, mcpTool),
			latency:  m.latency.WithLabelValues(route, method, mcpMethod, mcpTool),
		})
	}
	b := v.(*boundRequest)
	b.requests.Inc()
	b.latency.Observe(d.Seconds())
}

// RegisterLimiter exposes the counters of a cluster-wide rate limiter
// (ratelimit.Cluster): its leases from the database, their failures, and
// whether the replica is in fallback (admitting its share of every limit
// in process because the database cannot be reached). An in-process
// limiter has none.
func (m *Metrics) RegisterLimiter(l ratelimit.Limiter) {
	c, ok := l.(*ratelimit.Cluster)
	if !ok {
		return
	}
	m.CounterFunc("praxa_rate_limit_leases_total", "Slices of a rate limit's budget this replica asked the database for.",
		func() float64 { return float64(c.Stats().Leases) })
	m.CounterFunc("praxa_rate_limit_lease_errors_total", "Leases of a rate limit's budget that failed: the database could not be reached in time.",
		func() float64 { return float64(c.Stats().Errors) })
	m.CounterFunc("praxa_rate_limit_fallback_admits_total", "Requests admitted by the in-process fallback (this replica's share of a limit) while the database could not be reached.",
		func() float64 { return float64(c.Stats().FallbackAdmits) })
	m.LabeledGaugeFunc("praxa_rate_limit_fallback", "1 while this replica enforces its share of the rate limits in process because the database cannot be reached, 0 while they are cluster-wide.", nil,
		func() float64 {
			if c.Stats().Fallback {
				return 1
			}
			return 0
		})
	m.LabeledGaugeFunc("praxa_rate_limit_replicas", "The replicas sharing the rate limits, as last counted (the fallback's share is 1/this).", nil,
		func() float64 { return float64(c.Stats().Replicas) })
}
