package gateway

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/periodic"
	"github.com/praxa/praxa/gateway/store"
)

// Revocations is the set of revoked token ids, kept in memory and refreshed
// from the store so that every replica sees a revocation made on any of
// them. A revocation made through this process is effective at once; one
// made through another replica (or praxa tokens revoke) is effective here
// within the poll interval. It implements auth.Revocations.
type Revocations struct {
	store    store.Store
	interval time.Duration
	log      *slog.Logger
	onRevoke func(jti string)

	mu   sync.RWMutex
	set  map[string]struct{}
	seen time.Time
}

var _ auth.Revocations = (*Revocations)(nil)

// revocationOverlap re-reads a window before the last poll, so a revocation
// stamped by a replica whose clock lags is not missed.
const revocationOverlap = time.Minute

// NewRevocations loads every recorded revocation. onRevoke, if set, is
// called for each newly seen jti (the verifier drops it from its cache).
func NewRevocations(ctx context.Context, st store.Store, interval time.Duration, onRevoke func(jti string), log *slog.Logger) (*Revocations, error) {
	if interval <= 0 {
		interval = 2 * time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	r := &Revocations{store: st, interval: interval, log: log, onRevoke: onRevoke, set: map[string]struct{}{}}
	if err := r.refresh(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Interval is the propagation bound of a revocation made elsewhere.
func (r *Revocations) Interval() time.Duration { return r.interval }

// Revoked implements auth.Revocations.
func (r *Revocations) Revoked(_ context.Context, jti string) (bool, error) {
	r.mu.RLock()
	_, ok := r.set[jti]
	r.mu.RUnlock()
	return ok, nil
}

func (r *Revocations) add(jti string) {
	r.mu.Lock()
	_, had := r.set[jti]
	r.set[jti] = struct{}{}
	r.mu.Unlock()
	if !had && r.onRevoke != nil {
		r.onRevoke(jti)
	}
}

func (r *Revocations) refresh(ctx context.Context) error {
	r.mu.RLock()
	since := r.seen
	r.mu.RUnlock()
	if !since.IsZero() {
		since = since.Add(-revocationOverlap)
	}
	start := time.Now()
	list, err := r.store.RevokedSince(ctx, since)
	if err != nil {
		return err
	}
	for _, rv := range list {
		r.add(rv.JTI)
	}
	r.mu.Lock()
	r.seen = start
	r.mu.Unlock()
	return nil
}

// Run polls the store until ctx ends.
func (r *Revocations) Run(ctx context.Context) {
	periodic.Run(ctx, r.log, periodic.Job{Name: "revocation refresh", Every: periodic.Fixed(r.interval),
		Round: func(ctx context.Context) (int, bool, error) { return 0, false, r.refresh(ctx) }})
}

// RevokeRequest asks to revoke one access token.
type RevokeRequest struct {
	JTI       string    `json:"jti"`
	Reason    string    `json:"reason,omitempty"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// RequestID and TraceID place the audit event in the caller's trace.
	RequestID string `json:"-"`
	TraceID   string `json:"-"`
}

// RevokeToken records a revocation durably (scope tokens:write) and makes it
// effective in this process at once. p may be nil for the operator's own
// command line, which acts with the store's authority. tokens:write is an
// operator scope with gateway-wide authority: token ids are unique per
// issuer, not per tenant, so a revocation applies whatever the token's
// tenant.
func (s *Service) RevokeToken(ctx context.Context, p *auth.Principal, req RevokeRequest, revs *Revocations) error {
	if p != nil {
		if err := requireScope(p, contracts.ScopeTokensWrite); err != nil {
			return err
		}
	}
	if req.JTI == "" || len(req.JTI) > 256 {
		return &contracts.Error{Code: contracts.CodeInvalidParams, Message: "jti must be 1 to 256 characters",
			Fields: []contracts.FieldError{{Pointer: "/jti", Detail: "must be 1 to 256 characters long"}}}
	}
	// Replicas poll revocations by wall-clock time, so the record is
	// stamped with it rather than with the service's clock.
	now := time.Now()
	by := op.SubjectOperator
	if p != nil {
		by = p.Subject
	}
	err := s.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.Revoke(ctx, store.Revocation{JTI: req.JTI, RevokedAt: now, ExpiresAt: req.ExpiresAt, By: by, Reason: req.Reason}); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, []store.Event{op.EventSpec{Actor: op.Operator(p, "", contracts.EndpointRevokeToken),
			Type: "token.revoked", Outcome: "allowed", RequestID: req.RequestID, TraceID: req.TraceID, At: now,
			Attributes: map[string]any{"jti": req.JTI}}.Build()})
	})
	if err != nil {
		return asContractError(err)
	}
	if revs != nil {
		revs.add(req.JTI)
	}
	return nil
}
