package httpapi

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/praxa/praxa/gateway"
)

// quarantinedDesc describes praxa_capabilities_quarantined.
var quarantinedDesc = prometheus.NewDesc("praxa_capabilities_quarantined",
	"Imported capabilities quarantined because their upstream definition no longer matches the pinned one (pin enforce), by proxy.import connection; 0 is not reported.",
	[]string{"connection"}, nil)

// quarantinedCollector reports the quarantined capabilities of a service
// per connection as the configuration in force has them (connections
// come and go with reloads, so the series are collected, not registered).
type quarantinedCollector struct{ svc *gateway.Service }

func (c quarantinedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- quarantinedDesc }

func (c quarantinedCollector) Collect(ch chan<- prometheus.Metric) {
	for conn, n := range c.svc.Pins().Counts() {
		ch <- prometheus.MustNewConstMetric(quarantinedDesc, prometheus.GaugeValue, float64(n), conn)
	}
}

// RegisterPins exposes praxa_capabilities_quarantined: the imported
// capabilities svc holds in quarantine, by connection.
func (m *Metrics) RegisterPins(svc *gateway.Service) {
	m.registry.MustRegister(quarantinedCollector{svc: svc})
}
