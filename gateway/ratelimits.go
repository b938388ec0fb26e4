package gateway

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/ratelimit"
)

// limiterBox holds the Limiter behind an atomic pointer.
type limiterBox struct{ l ratelimit.Limiter }

// SetLimiter sets the limiter the capabilities' rate limits
// (capabilities.X.limits) spend their tokens from: the one the REST edge
// uses for server.limits (ratelimit.New: cluster-wide on PostgreSQL). nil
// restores the default, an in-process ratelimit.Local.
func (s *Service) SetLimiter(l ratelimit.Limiter) {
	if l == nil {
		l = ratelimit.NewLocal()
	}
	s.limiter.Store(&limiterBox{l: l})
}

// limitedCapability spends one token of each rate limit of the proxy
// capability id (its own and those of the capabilities it wraps), before
// the call does anything: at a limit it answers rate-limited and how
// long until a token is back. Tokens spent on the limits before the one
// that refuses stay spent (the call counted against them). An id that
// names no capability passes: the move refuses it itself.
func (s *Service) limitedCapability(ctx context.Context, id string) (*contracts.Error, time.Duration) {
	d, ok := s.workflows.Lookup(config.ProxyDefaultWorkflow)
	if !ok || !d.Limited() {
		return nil, 0
	}
	t, ok := d.Transition(id)
	if !ok {
		return nil, 0
	}
	lim := s.limiter.Load().l
	now := s.now()
	for _, cl := range t.Limits() {
		rule := ratelimit.RuleOf(&cl.Rate)
		if ok, wait := lim.Allow(ctx, ratelimit.CapabilityKey(cl.Capability), rule, now); !ok {
			return &contracts.Error{Code: contracts.CodeRateLimited,
				Message: fmt.Sprintf("the capability %s is called too often: its limit is %s calls a second (burst %d), shared by every caller",
					cl.Capability, strconv.FormatFloat(rule.Rate, 'f', -1, 64), rule.Burst),
				Hint: "Retry in " + ratelimit.RetryAfter(wait) + "s (Retry-After); the capability's limit (capabilities." + cl.Capability + ".limits) protects its upstream."}, wait
		}
	}
	return nil, 0
}
