package sqltx

import (
	"context"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the lexicon overlay (migration 0004): one row per term,
// keyed by its lookup key, written with compare-and-set on its version.

// GetLexiconTerm implements store.ReadTx.
func (t *Tx) GetLexiconTerm(ctx context.Context, key string) (store.LexiconTerm, error) {
	v, err := sqlrow.LexiconTerm(t.queryRow(ctx, `SELECT `+sqlrow.LexiconColumns+` FROM lexicon_terms WHERE key = ?`, key))
	return v, t.rowErr("lexicon term", err)
}

// ListLexiconTerms implements store.ReadTx.
func (t *Tx) ListLexiconTerms(ctx context.Context) ([]store.LexiconTerm, error) {
	return list(ctx, t, "list lexicon terms", "lexicon term", sqlrow.LexiconTerm, `SELECT `+sqlrow.LexiconColumns+` FROM lexicon_terms ORDER BY key`, unlimited)
}

// PutLexiconTerm implements store.Tx.
func (t *Tx) PutLexiconTerm(ctx context.Context, lt store.LexiconTerm, expectedVersion int64) error {
	if expectedVersion == 0 {
		return t.insert(ctx, "insert lexicon term", `INSERT INTO lexicon_terms (`+sqlrow.LexiconColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`,
			lt.Key, lt.Term, sqlrow.NonNilBytes(lt.Entry), lt.Version, lt.Tenant, lt.Subject, lt.ClientID, sqlrow.Nanos(lt.UpdatedAt))
	}
	return t.changeOne(ctx, "update lexicon term", func() error {
		_, err := t.GetLexiconTerm(ctx, lt.Key)
		return err
	}, `UPDATE lexicon_terms SET term = ?, entry = ?, version = ?, tenant = ?, subject = ?,
		client_id = ?, updated_at = ? WHERE key = ? AND version = ?`,
		lt.Term, sqlrow.NonNilBytes(lt.Entry), lt.Version, lt.Tenant, lt.Subject, lt.ClientID, sqlrow.Nanos(lt.UpdatedAt), lt.Key, expectedVersion)
}
