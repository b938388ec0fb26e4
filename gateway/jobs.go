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
		{Name: "lease sweep", Every: periodic.Fixed(LeaseSweepInterval(s.LeaseTTL())),
			Round: func(ctx context.Context) (int, bool, error) { n, err := s.SweepLeases(ctx); return n, false, err }},
		{Name: "run sweep", Every: func() time.Duration { return RunSweepInterval(s.RunRetention()) }, CatchUp: runSweepCatchUp,
			Round: s.missions.sweepRuns},
		{Name: "wait sweep", Every: periodic.Fixed(WaitSweepInterval),
			Round: func(ctx context.Context) (int, bool, error) { n, err := s.SweepWaits(ctx); return n, false, err }},
	}
}

// SweepLeases resolves, once, the move and start leases past their
// deadline as outcome-unknown (never by calling again), and returns how
// many it resolved. A lease another replica resolves first is skipped
// (leases_sweep.go).
func (s *Service) SweepLeases(ctx context.Context) (int, error) { return s.missions.leases.sweep(ctx) }

// LeasesSwept reports how many expired leases the sweeper resolved since
// the Service was built.
func (s *Service) LeasesSwept() int64 { return s.missions.leases.swept.Load() }

// SweepWaits fails, once, the parked moves whose wait passed its deadline
// (the workflow executor's timeoutMs): the parent's move fails with a
// workflow.wait.timedout event and the child is cancelled, in one
// transaction per parent. It returns how many waits it ended; a wait
// another replica ended first, or that ended otherwise, is skipped
// (waits.go).
func (s *Service) SweepWaits(ctx context.Context) (int, error) { return s.missions.sweepWaits(ctx) }

// SweepIdleRuns expires, once, the proxy_default runs idle longer than the
// run retention (none when it is 0), at most runBatches pages of runBatch
// runs, and returns how many it expired. A run another replica expired or
// moved first is skipped (runs_expire.go).
func (s *Service) SweepIdleRuns(ctx context.Context) (int, error) {
	n, _, err := s.missions.sweepRuns(ctx)
	return n, err
}

// RunsExpired reports how many idle proxy_default runs this process
// expired since the Service was built.
func (s *Service) RunsExpired() int64 { return s.missions.runs.expired.Load() }

// RunRetention returns the run retention in force (0: runs are kept for
// good).
func (s *Service) RunRetention() time.Duration { return s.missions.runs.current() }
