package gateway

import (
	"context"

	"time"

	"github.com/praxa/praxa/gateway/periodic"
)

// Jobs are the service's background jobs, which praxa serve and praxa mcp
// run for the life of the gateway (package periodic runs each):
//
//   - the lease sweep, every LeaseSweepInterval of the lease TTL: expired
//     move and start leases resolve as outcome-unknown without waiting for
//     a request (leases_sweep.go);
//   - the run sweep, every RunSweepInterval of the run retention in force
//     (a reload changes it): proxy_default runs idle longer expire; a sweep
//     that stops at its bound with runs left is followed by another after
//     a second, so a backlog drains without one sweep holding the store
//     for long (runs_expire.go);
//   - the wait sweep, every WaitSweepInterval: moves parked on a
//     sub-workflow past their timeoutMs fail and the sub-workflow is
//     cancelled (waits.go).
func (s *Service) Jobs() []periodic.Job {
	return []periodic.Job{
		{Name: "lease sweep", Every: periodic.Fixed(LeaseSweepInterval(s.leaseTTL)),
			Round: func(ctx context.Context) (int, bool, error) { n, err := s.SweepLeases(ctx); return n, false, err }},
		{Name: "run sweep", Every: func() time.Duration { return RunSweepInterval(s.RunRetention()) }, CatchUp: runSweepCatchUp,
			Round: s.sweepRuns},
		{Name: "wait sweep", Every: periodic.Fixed(WaitSweepInterval),
			Round: func(ctx context.Context) (int, bool, error) { n, err := s.SweepWaits(ctx); return n, false, err }},
	}
}
