package gatewaytest

import (
	"sync/atomic"
	"time"
)

// Clock is real time shifted by a settable offset: the clock a test
// injects (Options.Now, issuer.Options.Now) to move every part of a
// gateway forward at once (token expiry, leases, retention, waits)
// without sleeping. Real time keeps its readings comparable with what
// still reads the wall clock (a replica's revocation poll). The zero value
// is real time; it is safe for concurrent use.
type Clock struct {
	off atomic.Int64
}

// Now is real time plus the offset.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// Set sets the offset to d: the clock reads real time plus d.
func (c *Clock) Set(d time.Duration) { c.off.Store(int64(d)) }
