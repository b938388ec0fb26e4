package memstore

import (
	"context"
	"slices"

	"github.com/praxa/praxa/gateway/store"
)

// Coverage runs are kept in the order they were recorded; the latest is
// the one with the greatest RecordedAt, the later-recorded on a tie, as in
// the SQLite driver.

func copyCoverageRun(r store.CoverageRun) store.CoverageRun {
	r.Doc = append([]byte{}, r.Doc...)
	return r
}

// PutCoverageRun implements store.Tx.
func (t *txn) PutCoverageRun(ctx context.Context, r store.CoverageRun) error {
	t.mustWrite()
	taken := func(x store.CoverageRun) bool { return x.ID == r.ID }
	if slices.ContainsFunc(t.db.coverage, taken) || slices.ContainsFunc(t.coverage, taken) {
		return store.ErrExists
	}
	r = copyCoverageRun(r)
	r.RecordedAt = normTime(r.RecordedAt)
	t.coverage = append(t.coverage, r)
	return nil
}

// LatestCoverageRun implements store.ReadTx.
func (t *txn) LatestCoverageRun(ctx context.Context) (store.CoverageRun, error) {
	var latest *store.CoverageRun
	for _, runs := range [][]store.CoverageRun{t.db.coverage, t.coverage} {
		for i := range runs {
			if latest == nil || nanos(runs[i].RecordedAt) >= nanos(latest.RecordedAt) {
				latest = &runs[i]
			}
		}
	}
	if latest == nil {
		return store.CoverageRun{}, store.ErrNotFound
	}
	return copyCoverageRun(*latest), nil
}
