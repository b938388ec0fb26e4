package pgstore

import (
	"context"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

func (t *txn) PutCoverageRun(ctx context.Context, r store.CoverageRun) error {
	res, err := t.q.Exec(ctx, `INSERT INTO coverage_runs (`+sqlrow.CoverageColumns+`) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT DO NOTHING`, r.ID, r.Tenant, r.Subject, sqlrow.Nanos(r.RecordedAt), sqlrow.NonNilBytes(r.Doc))
	if err != nil {
		return fmt.Errorf("pgstore: put coverage run: %w", err)
	}
	return affectedOne(res, store.ErrExists)
}

func (t *txn) LatestCoverageRun(ctx context.Context) (store.CoverageRun, error) {
	r, err := sqlrow.CoverageRun(t.q.QueryRow(ctx, `SELECT `+sqlrow.CoverageColumns+` FROM coverage_runs
		ORDER BY recorded_at DESC, seq DESC LIMIT 1`))
	return r, rowErr("latest coverage run", err)
}
