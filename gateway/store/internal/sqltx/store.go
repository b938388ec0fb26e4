package sqltx

import (
	"context"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// The store.Store methods both SQL drivers run as one transaction of their
// own over a Tx. The driver's transactions embed Tx, so they have its
// SweepExpired and RevokedSince; each driver wraps the errors its way.

// AppendEvents appends events in one Update of s.
func AppendEvents(ctx context.Context, s store.Store, events []store.Event) error {
	return s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, events)
	})
}

// Sweep runs SweepExpired in one Update of s.
func Sweep(ctx context.Context, s store.Store, at time.Time) (int, error) {
	var n int
	err := s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		n, err = tx.(interface {
			SweepExpired(context.Context, time.Time) (int, error)
		}).SweepExpired(ctx, at)
		return err
	})
	return n, err
}

// RevokedSince runs RevokedSince in one View of s.
func RevokedSince(ctx context.Context, s store.Store, since time.Time) ([]store.Revocation, error) {
	var out []store.Revocation
	err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		out, err = tx.(interface {
			RevokedSince(context.Context, time.Time) ([]store.Revocation, error)
		}).RevokedSince(ctx, since)
		return err
	})
	return out, err
}
