package memstore

import (
	"context"

	"github.com/praxa/praxa/gateway/store"
)

// The lexicon overlay, keyed by term key as in the SQLite driver; a put
// compares the stored version.

func copyLexiconTerm(lt store.LexiconTerm) store.LexiconTerm {
	lt.Entry = append([]byte{}, lt.Entry...)
	return lt
}

// GetLexiconTerm implements store.ReadTx.
func (t *txn) GetLexiconTerm(ctx context.Context, key string) (store.LexiconTerm, error) {
	return getCopy(t.lexicon, t.db.lexicon, key, copyLexiconTerm)
}

// ListLexiconTerms implements store.ReadTx.
func (t *txn) ListLexiconTerms(ctx context.Context) ([]store.LexiconTerm, error) {
	return listCopies(t.lexicon, t.db.lexicon, copyLexiconTerm), nil
}

// PutLexiconTerm implements store.Tx.
func (t *txn) PutLexiconTerm(ctx context.Context, lt store.LexiconTerm, expectedVersion int64) error {
	t.mustWrite()
	lt = copyLexiconTerm(lt)
	lt.UpdatedAt = normTime(lt.UpdatedAt)
	return putVersioned(&t.lexicon, t.db.lexicon, lt.Key, lt, expectedVersion, func(lt store.LexiconTerm) int64 { return lt.Version })
}
