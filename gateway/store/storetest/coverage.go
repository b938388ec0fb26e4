package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

func coverageRun(id string, at time.Time, doc string) store.CoverageRun {
	return store.CoverageRun{ID: id, Tenant: "ops", Subject: "operator", RecordedAt: at, Doc: []byte(doc)}
}

// testCoverageRuns: the latest run is the one recorded last in time (on a
// tie, the one recorded later); ids are unique; a failed Update stores
// nothing; runs survive a reopen.
func testCoverageRuns(t *testing.T, o Opener) {
	s := o.Open(t)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.LatestCoverageRun(ctx); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("empty store: err = %v, want ErrNotFound", err)
		}
		return nil
	})
	first := coverageRun("cov_1", epoch, `{"n":1}`)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutCoverageRun(ctx, first) })
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.PutCoverageRun(ctx, coverageRun("cov_1", epoch.Add(time.Hour), `{"n":9}`))
	}); !errors.Is(err, store.ErrExists) {
		t.Errorf("duplicate id: err = %v, want ErrExists", err)
	}
	// An older run recorded later does not become the latest.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.PutCoverageRun(ctx, coverageRun("cov_0", epoch.Add(-time.Hour), `{"n":0}`))
	})
	latest := func(want string) {
		t.Helper()
		view(t, s, func(ctx context.Context, tx store.ReadTx) error {
			got, err := tx.LatestCoverageRun(ctx)
			if err != nil || got.ID != want {
				t.Errorf("LatestCoverageRun = %q, %v; want %q", got.ID, err, want)
			}
			return nil
		})
	}
	latest("cov_1")
	// A tie goes to the run recorded later; inside one transaction the
	// run is visible at once.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutCoverageRun(ctx, coverageRun("cov_2", epoch, `{"n":2}`)); err != nil {
			return err
		}
		got, err := tx.LatestCoverageRun(ctx)
		if err != nil || got.ID != "cov_2" {
			t.Errorf("inside the transaction: LatestCoverageRun = %q, %v; want cov_2", got.ID, err)
		}
		return nil
	})
	latest("cov_2")
	// A failed Update stores nothing.
	boom := errors.New("boom")
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutCoverageRun(ctx, coverageRun("cov_3", epoch.Add(time.Hour), `{}`)); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("failed Update: %v", err)
	}
	latest("cov_2")
	s = reopen(t, o, s)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.LatestCoverageRun(ctx)
		if err != nil {
			t.Fatalf("after reopen: %v", err)
		}
		if got.ID != "cov_2" || got.Tenant != "ops" || got.Subject != "operator" || string(got.Doc) != `{"n":2}` || !got.RecordedAt.Equal(epoch) {
			t.Errorf("after reopen: %+v", got)
		}
		// The caller cannot change the stored document through the copy.
		got.Doc[0] = 'X'
		again, _ := tx.LatestCoverageRun(ctx)
		if string(again.Doc) != `{"n":2}` {
			t.Errorf("stored document changed through a returned copy: %s", again.Doc)
		}
		return nil
	})
}
