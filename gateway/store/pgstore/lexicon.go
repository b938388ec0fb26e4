package pgstore

import (
	"context"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the lexicon overlay (migration 0004): one row per term,
// keyed by its lookup key, written with compare-and-set on its version.

func (t *txn) GetLexiconTerm(ctx context.Context, key string) (store.LexiconTerm, error) {
	v, err := sqlrow.LexiconTerm(t.q.QueryRow(ctx, `SELECT `+sqlrow.LexiconColumns+` FROM lexicon_terms WHERE key = $1`, key))
	return v, rowErr("lexicon term", err)
}

func (t *txn) ListLexiconTerms(ctx context.Context) ([]store.LexiconTerm, error) {
	rows, err := t.q.Query(ctx, `SELECT `+sqlrow.LexiconColumns+` FROM lexicon_terms ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list lexicon terms: %w", err)
	}
	defer rows.Close()
	var out []store.LexiconTerm
	for rows.Next() {
		lt, err := sqlrow.LexiconTerm(rows)
		if err != nil {
			return nil, rowErr("lexicon term", err)
		}
		out = append(out, lt)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: list lexicon terms: %w", err)
	}
	return out, nil
}

func (t *txn) PutLexiconTerm(ctx context.Context, lt store.LexiconTerm, expectedVersion int64) error {
	if expectedVersion == 0 {
		res, err := t.q.Exec(ctx, `INSERT INTO lexicon_terms (`+sqlrow.LexiconColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT DO NOTHING`,
			lt.Key, lt.Term, sqlrow.NonNilBytes(lt.Entry), lt.Version, lt.Tenant, lt.Subject, lt.ClientID, sqlrow.Nanos(lt.UpdatedAt))
		if err != nil {
			return fmt.Errorf("pgstore: insert lexicon term: %w", err)
		}
		return affectedOne(res, store.ErrExists)
	}
	res, err := t.q.Exec(ctx, `UPDATE lexicon_terms SET term = $1, entry = $2, version = $3, tenant = $4, subject = $5,
		client_id = $6, updated_at = $7 WHERE key = $8 AND version = $9`,
		lt.Term, sqlrow.NonNilBytes(lt.Entry), lt.Version, lt.Tenant, lt.Subject, lt.ClientID, sqlrow.Nanos(lt.UpdatedAt), lt.Key, expectedVersion)
	if err != nil {
		return fmt.Errorf("pgstore: update lexicon term: %w", err)
	}
	if n := res.RowsAffected(); n == 1 {
		return nil
	}
	if _, err := t.GetLexiconTerm(ctx, lt.Key); err != nil {
		return err
	}
	return store.ErrConflict
}
