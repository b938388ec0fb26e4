package sqltx

import (
	"context"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// PutCoverageRun implements store.Tx.
func (t *Tx) PutCoverageRun(ctx context.Context, r store.CoverageRun) error {
	return t.insert(ctx, "put coverage run", `INSERT INTO coverage_runs (`+sqlrow.CoverageColumns+`) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, r.ID, r.Tenant, r.Subject, sqlrow.Nanos(r.RecordedAt), sqlrow.NonNilBytes(r.Doc))
}

// LatestCoverageRun implements store.ReadTx.
func (t *Tx) LatestCoverageRun(ctx context.Context) (store.CoverageRun, error) {
	r, err := sqlrow.CoverageRun(t.queryRow(ctx, `SELECT `+sqlrow.CoverageColumns+` FROM coverage_runs
		ORDER BY recorded_at DESC, seq DESC LIMIT 1`))
	return r, t.rowErr("latest coverage run", err)
}
