package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

func lexiconTerm(key, term string, version int64, entry string) store.LexiconTerm {
	return store.LexiconTerm{Key: key, Term: term, Entry: []byte(entry), Version: version,
		Tenant: "a", Subject: "op", ClientID: "cli", UpdatedAt: epoch}
}

// testLexiconTerms: the overlay is one gateway-wide keyspace, listed by
// key, insert-only at version 0, durable across a reopen, and copied on
// the way in and out.
func testLexiconTerms(t *testing.T, o Opener) {
	s := o.Open(t)
	wantNone(t, s, "empty overlay", store.ReadTx.GetLexiconTerm, "evidence pack", store.ReadTx.ListLexiconTerms)
	entry := []byte(`{"definition_short":"A set."}`)
	first := lexiconTerm("evidence pack", "Evidence Pack", 1, string(entry))
	first.Entry = entry
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutLexiconTerm(ctx, first, 0); err != nil {
			return err
		}
		entry[0] = 'X' // the store keeps its own copy
		// A transaction sees its own writes.
		if got, err := tx.GetLexiconTerm(ctx, "evidence pack"); err != nil || got.Term != "Evidence Pack" {
			return fmt.Errorf("read own write: %+v, %v", got, err)
		}
		return tx.PutLexiconTerm(ctx, lexiconTerm("alpha", "alpha", 1, `{}`), 0)
	})
	other := lexiconTerm("evidence pack", "evidence pack", 1, `{"definition_short":"Another."}`)
	other.Tenant = "b"
	wantRefused(t, s, "second insert of a key (from another tenant)", store.ErrExists, func(ctx context.Context, tx store.Tx) error {
		return tx.PutLexiconTerm(ctx, other, 0)
	})
	wantRefused(t, s, "replacing a missing term", store.ErrNotFound, func(ctx context.Context, tx store.Tx) error {
		return tx.PutLexiconTerm(ctx, lexiconTerm("missing", "missing", 2, `{}`), 1)
	})
	s = reopen(t, o, s)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetLexiconTerm(ctx, "evidence pack")
		if err != nil {
			t.Fatalf("after reopen: %v", err)
		}
		if got.Term != "Evidence Pack" || string(got.Entry) != `{"definition_short":"A set."}` || got.Version != 1 ||
			got.Tenant != "a" || got.Subject != "op" || got.ClientID != "cli" || !got.UpdatedAt.Equal(epoch) {
			t.Errorf("GetLexiconTerm = %+v", got)
		}
		got.Entry[0] = 'X'
		again, _ := tx.GetLexiconTerm(ctx, "evidence pack")
		if again.Entry[0] != '{' {
			t.Error("the stored entry changed through a returned slice")
		}
		list, err := tx.ListLexiconTerms(ctx)
		if err != nil || len(list) != 2 || list[0].Key != "alpha" || list[1].Key != "evidence pack" {
			t.Errorf("ListLexiconTerms = %+v, %v", list, err)
		}
		return nil
	})
}

// testLexiconCompareAndSet: a replace succeeds only from the stored
// version, and of concurrent replaces from one version exactly one wins.
func testLexiconCompareAndSet(t *testing.T, o Opener) {
	s := o.Open(t)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.PutLexiconTerm(ctx, lexiconTerm("pr", "PR", 1, `{"definition_short":"v1"}`), 0)
	})
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.PutLexiconTerm(ctx, lexiconTerm("pr", "PR", 2, `{"definition_short":"v2"}`), 1)
	})
	wantRefused(t, s, "stale replace", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.PutLexiconTerm(ctx, lexiconTerm("pr", "PR", 2, `{"definition_short":"stale"}`), 1)
	})
	raceOnce(t, s, 8, store.ErrConflict, func(ctx context.Context, tx store.Tx, i int) error {
		lt := lexiconTerm("pr", "PR", 3, fmt.Sprintf(`{"definition_short":"racer %d"}`, i))
		lt.UpdatedAt = epoch.Add(time.Duration(i) * time.Second)
		return tx.PutLexiconTerm(ctx, lt, 2)
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if got, err := tx.GetLexiconTerm(ctx, "pr"); err != nil || got.Version != 3 {
			t.Errorf("after the race: %+v, %v", got, err)
		}
		return nil
	})
}
