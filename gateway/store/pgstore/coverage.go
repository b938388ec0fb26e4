package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/praxa/praxa/gateway/store"
)

func (t *txn) PutCoverageRun(ctx context.Context, r store.CoverageRun) error {
	res, err := t.q.Exec(ctx, `INSERT INTO coverage_runs (id, tenant, subject, recorded_at, doc) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT DO NOTHING`, r.ID, r.Tenant, r.Subject, nanos(r.RecordedAt), nonNilBytes(r.Doc))
	if err != nil {
		return fmt.Errorf("pgstore: put coverage run: %w", err)
	}
	return affectedOne(res, store.ErrExists)
}

func (t *txn) LatestCoverageRun(ctx context.Context) (store.CoverageRun, error) {
	var r store.CoverageRun
	var at int64
	err := t.q.QueryRow(ctx, `SELECT id, tenant, subject, recorded_at, doc FROM coverage_runs
		ORDER BY recorded_at DESC, seq DESC LIMIT 1`).Scan(&r.ID, &r.Tenant, &r.Subject, &at, &r.Doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, store.ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("pgstore: latest coverage run: %w", err)
	}
	r.RecordedAt = fromNanos(at)
	return r, nil
}
