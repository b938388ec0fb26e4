package httpapi

import (
	"context"
	"math"
	"time"

	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/store"
)

// quotaScrapeTimeout bounds the store read a /metrics scrape makes for
// the quota usage (counted at most every 15 s: gateway.Service.QuotaUsage).
const quotaScrapeTimeout = 2 * time.Second

// RegisterQuotas exposes the tenant quotas of svc, labelled by quota kind
// only (four values; tenants are unbounded and stay out of the labels):
// praxa_quota_usage, what every tenant together holds, and
// praxa_quota_refusals_total, the creations this gateway refused with
// quota-exceeded.
func (m *Metrics) RegisterQuotas(svc *gateway.Service) {
	for _, kind := range store.QuotaKinds() {
		labels := map[string]string{"kind": kind}
		m.LabeledGaugeFunc("praxa_quota_usage", "What every tenant together holds of each tenant quota kind (open missions, pending approvals, memory records, goals), counted in the store at most every 15 s.",
			labels, func() float64 {
				ctx, cancel := context.WithTimeout(context.Background(), quotaScrapeTimeout)
				defer cancel()
				n, err := svc.QuotaUsage(ctx, kind)
				if err != nil {
					return math.NaN()
				}
				return float64(n)
			})
		m.LabeledCounterFunc("praxa_quota_refusals_total", "Creations this gateway refused with quota-exceeded, by tenant quota kind.",
			labels, func() float64 { return float64(svc.QuotaRefusals(kind)) })
	}
}
