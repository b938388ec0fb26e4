package storetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/praxa/praxa/gateway/store"
)

func pendingRow(tenant, subject, command, doc string) store.PendingSubject {
	return store.PendingSubject{Tenant: tenant, SubjectKey: subject, CommandKey: command, Subject: subject,
		Doc: []byte(doc), CreatedBy: "alice", CreatedAt: epoch}
}

func pendingCommands(t *testing.T, s store.Store, tenant, subject string) []string {
	t.Helper()
	var out []string
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		rows, err := tx.ListPendingSubjects(ctx, tenant, subject)
		if err != nil {
			t.Fatalf("ListPendingSubjects: %v", err)
		}
		for _, r := range rows {
			out = append(out, r.CommandKey)
		}
		return nil
	})
	return out
}

// testPendingSubjects: paused commands are keyed by tenant, subject and
// command, replaced on a second put, listed by command key within one
// tenant (every subject's when none is named), dropped by subject or by command, rolled back with their
// transaction, durable across a reopen and copied on the way in and out.
func testPendingSubjects(t *testing.T, o Opener) {
	s := o.Open(t)
	doc := []byte(`{"v":1}`)
	first := pendingRow("a", "evidence foo", "cmd-2", "")
	first.Doc = doc
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutPendingSubject(ctx, first); err != nil {
			return err
		}
		doc[0] = 'X' // the store keeps its own copy
		for _, p := range []store.PendingSubject{
			pendingRow("a", "evidence foo", "cmd-1", `{}`),
			pendingRow("a", "other", "cmd-1", `{}`),
			pendingRow("b", "evidence foo", "cmd-1", `{}`),
		} {
			if err := tx.PutPendingSubject(ctx, p); err != nil {
				return err
			}
		}
		// A transaction sees its own writes.
		rows, err := tx.ListPendingSubjects(ctx, "a", "evidence foo")
		if err != nil || len(rows) != 2 {
			return fmt.Errorf("read own writes: %v, %v", rows, err)
		}
		return nil
	})
	if got := pendingCommands(t, s, "a", "evidence foo"); fmt.Sprint(got) != "[cmd-1 cmd-2]" {
		t.Errorf("tenant a lists %v, want [cmd-1 cmd-2]", got)
	}
	// No subject key: every subject of the tenant, by subject then command.
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		rows, err := tx.ListPendingSubjects(ctx, "a", "")
		var got []string
		for _, r := range rows {
			got = append(got, r.SubjectKey+"/"+r.CommandKey)
		}
		if err != nil || fmt.Sprint(got) != "[evidence foo/cmd-1 evidence foo/cmd-2 other/cmd-1]" {
			t.Errorf("tenant a on any subject lists %v (%v)", got, err)
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		rows, _ := tx.ListPendingSubjects(ctx, "a", "evidence foo")
		if len(rows) == 2 {
			if !bytes.Equal(rows[1].Doc, []byte(`{"v":1}`)) || !rows[1].CreatedAt.Equal(epoch) || rows[1].CreatedBy != "alice" {
				t.Errorf("stored row = %+v", rows[1])
			}
			rows[1].Doc[0] = 'Y'
		}
		return nil
	})
	// A second put of the same key replaces the row.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.PutPendingSubject(ctx, pendingRow("a", "evidence foo", "cmd-2", `{"v":2}`))
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		rows, _ := tx.ListPendingSubjects(ctx, "a", "evidence foo")
		if len(rows) != 2 || string(rows[1].Doc) != `{"v":2}` {
			t.Errorf("after replace: %+v", rows)
		}
		return nil
	})
	// A failed transaction drops nothing.
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.DeletePendingSubjects(ctx, "a", "evidence foo", ""); err != nil {
			return err
		}
		return fmt.Errorf("roll back")
	}); err == nil {
		t.Fatal("a failing function committed")
	}
	if got := pendingCommands(t, s, "a", "evidence foo"); len(got) != 2 {
		t.Errorf("a rolled-back delete dropped rows: %v", got)
	}
	s = reopen(t, o, s)
	if got := pendingCommands(t, s, "a", "evidence foo"); len(got) != 2 {
		t.Fatalf("after reopen: %v", got)
	}
	// By command, across subjects, within the tenant only.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		n, err := tx.DeletePendingSubjects(ctx, "a", "", "cmd-1")
		if err == nil && n != 2 {
			err = fmt.Errorf("dropped %d by command, want 2", n)
		}
		return err
	})
	if got := pendingCommands(t, s, "a", "evidence foo"); fmt.Sprint(got) != "[cmd-2]" {
		t.Errorf("after the command drop: %v", got)
	}
	if got := pendingCommands(t, s, "a", "other"); len(got) != 0 {
		t.Errorf("subject other kept %v", got)
	}
	if got := pendingCommands(t, s, "b", "evidence foo"); fmt.Sprint(got) != "[cmd-1]" {
		t.Errorf("tenant b lost its row: %v", got)
	}
	// By subject.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		n, err := tx.DeletePendingSubjects(ctx, "a", "evidence foo", "")
		if err == nil && n != 1 {
			err = fmt.Errorf("dropped %d by subject, want 1", n)
		}
		if err == nil {
			if n, _ = tx.DeletePendingSubjects(ctx, "a", "evidence foo", ""); n != 0 {
				err = fmt.Errorf("a second drop dropped %d", n)
			}
		}
		return err
	})
	if got := pendingCommands(t, s, "a", "evidence foo"); len(got) != 0 {
		t.Errorf("after the subject drop: %v", got)
	}
	if got := pendingCommands(t, s, "b", "evidence foo"); len(got) != 1 {
		t.Errorf("tenant b lost its row: %v", got)
	}
}
