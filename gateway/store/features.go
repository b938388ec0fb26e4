package store

import "context"

// LexiconReadTx reads the lexicon overlay: the terms defined at run time,
// which replace the configuration's term of the same key
// (gateway/catalogue).
type LexiconReadTx interface {
	// GetLexiconTerm returns the overlay term with the key, or ErrNotFound.
	GetLexiconTerm(ctx context.Context, key string) (LexiconTerm, error)
	// ListLexiconTerms returns every overlay term, by key.
	ListLexiconTerms(ctx context.Context) ([]LexiconTerm, error)
}

// LexiconTx writes the lexicon overlay.
type LexiconTx interface {
	// PutLexiconTerm writes an overlay term. With expectedVersion 0 it
	// inserts, ErrExists when the key holds a term; otherwise it replaces
	// the term whose stored version is expectedVersion: ErrConflict when it
	// is another, ErrNotFound when there is none.
	PutLexiconTerm(ctx context.Context, t LexiconTerm, expectedVersion int64) error
}

// CoverageReadTx reads the coverage evidence of conformance runs
// (gateway/knowledge).
type CoverageReadTx interface {
	// LatestCoverageRun returns the most recently recorded coverage run
	// (by RecordedAt, then by the order of recording), or ErrNotFound.
	LatestCoverageRun(ctx context.Context) (CoverageRun, error)
}

// CoverageTx records coverage runs.
type CoverageTx interface {
	// PutCoverageRun stores a recorded coverage run; ErrExists if its id is
	// taken.
	PutCoverageRun(ctx context.Context, r CoverageRun) error
}
