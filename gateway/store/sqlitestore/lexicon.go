package sqlitestore

import (
	"context"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the lexicon overlay (migration 0004): one row per term,
// keyed by its lookup key, written with compare-and-set on its version.

func (t *txn) GetLexiconTerm(ctx context.Context, key string) (store.LexiconTerm, error) {
	v, err := sqlrow.LexiconTerm(t.queryRow(ctx, `SELECT `+sqlrow.LexiconColumns+` FROM lexicon_terms WHERE key = ?`, key))
	return v, rowErr("lexicon term", err)
}

func (t *txn) ListLexiconTerms(ctx context.Context) ([]store.LexiconTerm, error) {
	rows, err := t.query(ctx, `SELECT `+sqlrow.LexiconColumns+` FROM lexicon_terms ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: list lexicon terms: %w", err)
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
		return nil, fmt.Errorf("sqlitestore: list lexicon terms: %w", err)
	}
	return out, nil
}

func (t *txn) PutLexiconTerm(ctx context.Context, lt store.LexiconTerm, expectedVersion int64) error {
	if expectedVersion == 0 {
		res, err := t.exec(ctx, `INSERT INTO lexicon_terms (`+sqlrow.LexiconColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`,
			lt.Key, lt.Term, sqlrow.NonNilBytes(lt.Entry), lt.Version, lt.Tenant, lt.Subject, lt.ClientID, sqlrow.Nanos(lt.UpdatedAt))
		if err != nil {
			return fmt.Errorf("sqlitestore: insert lexicon term: %w", err)
		}
		return affectedOne(res, store.ErrExists, "insert lexicon term")
	}
	res, err := t.exec(ctx, `UPDATE lexicon_terms SET term = ?, entry = ?, version = ?, tenant = ?, subject = ?,
		client_id = ?, updated_at = ? WHERE key = ? AND version = ?`,
		lt.Term, sqlrow.NonNilBytes(lt.Entry), lt.Version, lt.Tenant, lt.Subject, lt.ClientID, sqlrow.Nanos(lt.UpdatedAt), lt.Key, expectedVersion)
	if err != nil {
		return fmt.Errorf("sqlitestore: update lexicon term: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlitestore: update lexicon term: %w", err)
	} else if n == 1 {
		return nil
	}
	if _, err := t.GetLexiconTerm(ctx, lt.Key); err != nil {
		return err
	}
	return store.ErrConflict
}
