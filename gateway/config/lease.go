package config

import "time"

// DefaultLeaseTTL is the lease TTL when server.leaseTTL is not set: how
// long a move or start lease holds before a gateway that finds it takes
// its holder for stopped mid-call (see gateway/leases.go). It must outlast
// the longest outside call of a move, its retries and fallbacks included.
const DefaultLeaseTTL = 5 * time.Minute

// LeaseTTL returns the lease TTL in force: server.leaseTTL, or
// DefaultLeaseTTL when it is unset (or zero). A nil Config answers the
// default.
func (c *Config) LeaseTTL() time.Duration {
	if c == nil || c.Server.LeaseTTL <= 0 {
		return DefaultLeaseTTL
	}
	return time.Duration(c.Server.LeaseTTL)
}

// DefaultRunRetention is the run retention when proxy.runRetention is not
// set: how long a proxy_default run may stay idle before the gateway
// expires it (see gateway/runs_expire.go).
const DefaultRunRetention = 24 * time.Hour

// RunRetention returns the run retention in force: proxy.runRetention,
// DefaultRunRetention when it is unset, or 0 when it is set to 0s, which
// keeps proxy_default runs for good. A nil Config answers the default.
func (c *Config) RunRetention() time.Duration {
	if c == nil || c.Proxy.RunRetention == nil {
		return DefaultRunRetention
	}
	return time.Duration(*c.Proxy.RunRetention)
}
