package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/telemetry"
)

// Metrics are the gateway's Prometheus metrics, on a registry of their own.
type Metrics struct {
	registry *prometheus.Registry
	// requests are the request metrics every surface records
	// (telemetry.Recorder).
	requests     *telemetry.Requests
	authRefusals *prometheus.CounterVec
	idempotency  *prometheus.CounterVec
	rateLimited  prometheus.Counter
}

// NewMetrics registers the gateway's metrics and the Go runtime's.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: telemetry.NewRequests(),
		authRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "praxa_auth_refusals_total", Help: "Requests refused by authentication, by reason.",
		}, []string{"reason"}),
		idempotency: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "praxa_idempotency_total", Help: "Idempotency outcomes: replayed, reused (422), in_progress (409), expired (409: a late retry refused by the key's tombstone).",
		}, []string{"outcome"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "praxa_rate_limited_total", Help: "Requests refused by a rate limit (server.limits: per principal, per tenant).",
		}),
	}
	m.registry.MustRegister(m.requests, m.authRefusals, m.idempotency, m.rateLimited,
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

// Requests are the request metrics, for a telemetry.Recorder (httpapi.New
// makes the HTTP edge's; praxa mcp makes stdio's).
func (m *Metrics) Requests() *telemetry.Requests { return m.requests }

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
