package httpapi

import (
	"github.com/praxa/praxa/gateway/audit"
	"github.com/prometheus/client_golang/prometheus"
)

// auditSinkDesc describes praxa_audit_sink_events_total.
var auditSinkDesc = prometheus.NewDesc("praxa_audit_sink_events_total",
	"Committed audit events the capabilities' audit sinks (capabilities.X.audit.sinks) delivered or dropped (a full queue, a batch still undelivered after its retries, a write that failed; the store holds them all), by sink (stderr, a file's path, an endpoint's URL without query) and kind.",
	[]string{"sink", "kind", "outcome"}, nil)

// auditSinkCollector reports the counts of the open audit sinks (sinks
// come and go with reloads, so the series are collected, not registered).
type auditSinkCollector struct{ hooks *audit.Hooks }

func (c auditSinkCollector) Describe(ch chan<- *prometheus.Desc) { ch <- auditSinkDesc }

func (c auditSinkCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.hooks.Counts() {
		ch <- prometheus.MustNewConstMetric(auditSinkDesc, prometheus.CounterValue, float64(s.Delivered), s.Sink, s.Kind, "delivered")
		ch <- prometheus.MustNewConstMetric(auditSinkDesc, prometheus.CounterValue, float64(s.Dropped), s.Sink, s.Kind, "dropped")
	}
}

// RegisterAuditHooks exposes praxa_audit_sink_events_total: the events
// each open sink of hooks delivered and dropped.
func (m *Metrics) RegisterAuditHooks(hooks *audit.Hooks) {
	m.registry.MustRegister(auditSinkCollector{hooks: hooks})
}
