package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
			Name: "praxa_rate_limited_total", Help: "Requests refused by the per-principal rate limit.",
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
