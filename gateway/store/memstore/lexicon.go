package memstore

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/praxa/praxa/gateway/store"
)

// The lexicon overlay, keyed by term key as in the SQLite driver; a put
// compares the stored version.

func copyLexiconTerm(lt store.LexiconTerm) store.LexiconTerm {
	lt.Entry = append([]byte{}, lt.Entry...)
	return lt
}

func (t *txn) lexiconTerm(key string) (store.LexiconTerm, bool) {
	if lt, ok := t.lexicon[key]; ok {
		return lt, true
	}
	lt, ok := t.db.lexicon[key]
	return lt, ok
}

// applyLexicon moves the staged terms into the DB.
func (t *txn) applyLexicon() {
	if len(t.lexicon) == 0 {
		return
	}
	if t.db.lexicon == nil {
		t.db.lexicon = map[string]store.LexiconTerm{}
	}
	maps.Copy(t.db.lexicon, t.lexicon)
}

// GetLexiconTerm implements store.ReadTx.
func (t *txn) GetLexiconTerm(ctx context.Context, key string) (store.LexiconTerm, error) {
	lt, ok := t.lexiconTerm(key)
	if !ok {
		return store.LexiconTerm{}, store.ErrNotFound
	}
	return copyLexiconTerm(lt), nil
}

// ListLexiconTerms implements store.ReadTx.
func (t *txn) ListLexiconTerms(ctx context.Context) ([]store.LexiconTerm, error) {
	keys := slices.Collect(maps.Keys(t.db.lexicon))
	for k := range t.lexicon {
		if _, ok := t.db.lexicon[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, strings.Compare)
	var out []store.LexiconTerm
	for _, k := range keys {
		lt, _ := t.lexiconTerm(k)
		out = append(out, copyLexiconTerm(lt))
	}
	return out, nil
}

// PutLexiconTerm implements store.Tx.
func (t *txn) PutLexiconTerm(ctx context.Context, lt store.LexiconTerm, expectedVersion int64) error {
	t.mustWrite()
	old, exists := t.lexiconTerm(lt.Key)
	switch {
	case expectedVersion == 0 && exists:
		return store.ErrExists
	case expectedVersion != 0 && !exists:
		return store.ErrNotFound
	case expectedVersion != 0 && old.Version != expectedVersion:
		return store.ErrConflict
	}
	lt = copyLexiconTerm(lt)
	lt.UpdatedAt = normTime(lt.UpdatedAt)
	if t.lexicon == nil {
		t.lexicon = map[string]store.LexiconTerm{}
	}
	t.lexicon[lt.Key] = lt
	return nil
}
