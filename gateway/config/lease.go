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
