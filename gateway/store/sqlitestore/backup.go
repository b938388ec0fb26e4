package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	sqlite "modernc.org/sqlite"
)

// BackupInfo describes a copy Backup or Restore made.
type BackupInfo struct {
	// Path is the file written.
	Path string
	// Pages and PageSize: the copy holds Pages pages of PageSize bytes.
	Pages, PageSize int
	// Migrations is how many schema migrations the copy records (the
	// newest is Schema).
	Migrations int
	Schema     string
}

// ErrExists refuses a Backup or Restore whose destination exists: neither
// overwrites a file.
var ErrExists = errors.New("sqlitestore: the destination exists")

// Backup copies the SQLite store at src into the new file dst while src
// may be serving: SQLite's online backup API copies every page in one
// step, inside one read transaction, so the copy is one consistent
// snapshot of what was committed when it began, and (src being in WAL
// mode) the gateway's writer goes on committing meanwhile. The copy is
// written beside dst, checked (PRAGMA integrity_check, and that it is a
// Praxa store), turned into a single file (journal mode DELETE), synced
// and renamed into place, so dst is either the whole checked copy or
// absent. dst must not exist (ErrExists).
func Backup(ctx context.Context, src, dst string) (BackupInfo, error) {
	if _, err := os.Stat(src); err != nil {
		return BackupInfo{}, fmt.Errorf("sqlitestore: backup: %w", err)
	}
	return copyDatabase(ctx, src, dst, "backup")
}

// Restore writes the backup at backup into the new file dst (a data
// directory's praxa.db), the same way Backup writes its copy: the backup
// is checked before anything is written, and dst appears whole or not at
// all. dst must not exist, nor its -wal and -shm files (ErrExists): a
// restore never replaces a store in use; stop the gateway and move its
// files aside first. The gateway migrates the restored store at start.
func Restore(ctx context.Context, backup, dst string) (BackupInfo, error) {
	if _, err := check(ctx, backup, false); err != nil {
		return BackupInfo{}, fmt.Errorf("sqlitestore: restore: %s: %w", backup, err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, err := os.Lstat(dst + suffix); err == nil {
			return BackupInfo{}, fmt.Errorf("%w: %s (a gateway may be using %s: stop it, and move %s and its -wal and -shm files aside, they are the state the restore replaces)", ErrExists, dst+suffix, dst, dst)
		}
	}
	return copyDatabase(ctx, backup, dst, "restore")
}

// copyDatabase copies the database src into the new file dst with the
// online backup API, checks the copy and renames it into place.
func copyDatabase(ctx context.Context, src, dst, op string) (BackupInfo, error) {
	if _, err := os.Lstat(dst); err == nil {
		return BackupInfo{}, fmt.Errorf("%w: %s", ErrExists, dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return BackupInfo{}, fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".partial-*")
	if err != nil {
		return BackupInfo{}, fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	done := false
	defer func() {
		if !done {
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				os.Remove(tmpPath + suffix)
			}
		}
	}()
	if err := os.Chmod(tmpPath, 0o600); err != nil {
		return BackupInfo{}, fmt.Errorf("sqlitestore: %s: %w", op, err)
	}

	db, err := sql.Open("sqlite", fileURI(src)+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		return BackupInfo{}, fmt.Errorf("sqlitestore: %s: open %s: %w", op, src, err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("sqlitestore: %s: open %s: %w", op, src, err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		b, ok := dc.(interface {
			NewBackup(string) (*sqlite.Backup, error)
		})
		if !ok {
			return fmt.Errorf("the sqlite driver %T has no online backup", dc)
		}
		bk, err := b.NewBackup(fileURI(tmpPath))
		if err != nil {
			return err
		}
		// -1: every page in one step, one read transaction.
		if _, err := bk.Step(-1); err != nil {
			bk.Finish()
			return err
		}
		return bk.Finish()
	})
	if err != nil {
		return BackupInfo{}, fmt.Errorf("sqlitestore: %s of %s: %w", op, src, err)
	}

	info, err := check(ctx, tmpPath, true)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("sqlitestore: %s: the copy of %s: %w", op, src, err)
	}
	if err := syncFile(tmpPath); err != nil {
		return BackupInfo{}, fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	// Link, not rename: a dst created meanwhile is not replaced. Where
	// the file system has no hard links, rename after one more look.
	if err := os.Link(tmpPath, dst); errors.Is(err, fs.ErrExist) {
		return BackupInfo{}, fmt.Errorf("%w: %s", ErrExists, dst)
	} else if err != nil {
		if _, serr := os.Lstat(dst); serr == nil {
			return BackupInfo{}, fmt.Errorf("%w: %s", ErrExists, dst)
		}
		if err := os.Rename(tmpPath, dst); err != nil {
			return BackupInfo{}, fmt.Errorf("sqlitestore: %s: %w", op, err)
		}
	}
	os.Remove(tmpPath)
	done = true
	if err := syncFile(filepath.Dir(dst)); err != nil {
		return BackupInfo{}, fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	info.Path = dst
	return info, nil
}

// check opens the database at path, requires PRAGMA integrity_check to
// answer ok and the schema_migrations table of a Praxa store, and, with
// finish, leaves the file in journal mode DELETE (one self-contained file,
// no -wal); without it, it writes nothing.
func check(ctx context.Context, path string, finish bool) (BackupInfo, error) {
	var info BackupInfo
	params := "?_pragma=busy_timeout(10000)"
	if !finish {
		params += "&_pragma=query_only(1)"
	}
	db, err := sql.Open("sqlite", fileURI(path)+params)
	if err != nil {
		return info, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return info, fmt.Errorf("not a SQLite database: %w", err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return info, err
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return info, err
	}
	if len(problems) > 0 {
		return info, fmt.Errorf("integrity check: %s", strings.Join(problems, "; "))
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*), coalesce(max(version), '') FROM schema_migrations`).Scan(&info.Migrations, &info.Schema); err != nil {
		return info, fmt.Errorf("not a Praxa store (no schema_migrations): %w", err)
	}
	if err := db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&info.Pages); err != nil {
		return info, err
	}
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&info.PageSize); err != nil {
		return info, err
	}
	if finish {
		var mode string
		if err := db.QueryRowContext(ctx, `PRAGMA journal_mode=DELETE`).Scan(&mode); err != nil {
			return info, err
		}
	}
	return info, nil
}

// fileURI is the driver's URI of a file path.
func fileURI(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return "file:" + (&url.URL{Path: abs}).EscapedPath()
}

// syncFile fsyncs a file or directory.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
