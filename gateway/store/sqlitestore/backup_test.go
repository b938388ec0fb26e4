package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

func revoke(ctx context.Context, s *Store, jti string) error {
	return s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.Revoke(ctx, store.Revocation{JTI: jti, RevokedAt: time.Now(), By: "test"})
	})
}

// openAt opens the store at path with opts, closed when the test ends.
func openAt(t *testing.T, path string, opts *Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openInTemp opens a store at praxa.db in a new folder, closed when the
// test ends.
func openInTemp(t *testing.T) (dir, path string, s *Store) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "praxa.db")
	return dir, path, openAt(t, path, nil)
}

// TestBackupWhileWriting: a backup taken while a writer commits is one
// consistent snapshot (every revocation acknowledged before it began is
// in it, and it passes the integrity check), the writer's commits all
// succeed meanwhile, and a restore of it opens as a store holding the same
// records and takes writes.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir, src, s := openInTemp(t)
	for i := range 200 {
		if err := revoke(ctx, s, fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatal(err)
		}
	}

	// A writer commits throughout the backup.
	var written atomic.Int64
	stop, twenty := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := revoke(ctx, s, fmt.Sprintf("during-%d", i)); err != nil {
				t.Errorf("a write during the backup: %v", err)
				return
			}
			if written.Add(1) == 20 {
				close(twenty)
			}
		}
	}()
	<-twenty
	backup := filepath.Join(dir, "backup.db")
	info, err := Backup(ctx, src, backup)
	during := written.Load()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if info.Path != backup || info.Pages == 0 || info.Migrations == 0 || info.Schema == "" {
		t.Errorf("backup info %+v", info)
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(backup + suffix); err == nil {
			t.Errorf("the backup left %s: it must be one file", backup+suffix)
		}
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup file: %v, %v", fi, err)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, ".backup.db.partial-*")); len(entries) > 0 {
		t.Errorf("partial files left: %v", entries)
	}

	restored := filepath.Join(t.TempDir(), "praxa.db")
	if _, err := Restore(ctx, backup, restored); err != nil {
		t.Fatal(err)
	}
	r := openAt(t, restored, nil)
	got, err := r.RevokedSince(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	before, dur := 0, 0
	for _, rev := range got {
		switch {
		case strings.HasPrefix(rev.JTI, "before-"):
			before++
		case strings.HasPrefix(rev.JTI, "during-"):
			dur++
		}
	}
	if before != 200 {
		t.Errorf("the restored store holds %d of the 200 revocations made before the backup", before)
	}
	if dur < 20 || int64(dur) > during {
		t.Errorf("the restored store holds %d revocations made during the backup; %d were acknowledged before it began at least, %d by its end", dur, 20, during)
	}
	// The restored store takes writes.
	if err := revoke(ctx, r, "after-restore"); err != nil {
		t.Fatal(err)
	}
}

// TestBackupRefusals: nothing is overwritten, a restore never lands on a
// store that may be in use, and what is not a Praxa store is not restored.
func TestBackupRefusals(t *testing.T) {
	ctx := context.Background()
	dir, src, _ := openInTemp(t) // open: the live store, its -wal beside it
	taken := filepath.Join(dir, "taken.db")
	if err := os.WriteFile(taken, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Backup(ctx, src, taken); !errors.Is(err, ErrExists) {
		t.Errorf("backup onto an existing file: %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(taken); string(b) != "keep me" {
		t.Errorf("the existing file changed: %q", b)
	}
	if _, err := Backup(ctx, filepath.Join(dir, "absent.db"), filepath.Join(dir, "b0.db")); err == nil {
		t.Error("a backup of a missing store succeeded")
	}

	backup := filepath.Join(dir, "backup.db")
	if _, err := Backup(ctx, src, backup); err != nil {
		t.Fatal(err)
	}
	// The live store (its -wal beside it) is not a restore's target.
	if _, err := Restore(ctx, backup, src); !errors.Is(err, ErrExists) {
		t.Errorf("restore onto the live store: %v, want ErrExists", err)
	}
	walOnly := filepath.Join(t.TempDir(), "praxa.db")
	if err := os.WriteFile(walOnly+"-wal", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ctx, backup, walOnly); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "stop it") {
		t.Errorf("restore beside a -wal file: %v", err)
	}
	if _, err := os.Stat(walOnly); err == nil {
		t.Error("the refused restore wrote the store")
	}
	if _, err := Restore(ctx, taken, filepath.Join(t.TempDir(), "praxa.db")); err == nil || !strings.Contains(err.Error(), "not a SQLite database") {
		t.Errorf("restore of a file that is no database: %v", err)
	}
	// A SQLite database that is not a Praxa store.
	plain := filepath.Join(t.TempDir(), "plain.db")
	db, err := sql.Open("sqlite", fileURI(plain))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Restore(ctx, plain, filepath.Join(t.TempDir(), "praxa.db")); err == nil || !strings.Contains(err.Error(), "not a Praxa store") {
		t.Errorf("restore of a database that is no Praxa store: %v", err)
	}
}
