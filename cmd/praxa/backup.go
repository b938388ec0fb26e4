package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

func init() {
	register(command{name: "backup", summary: "copy the SQLite store into a new file while the gateway serves: backup FILE", run: runBackup})
	register(command{name: "restore", summary: "put a backup in place as the SQLite store of a stopped gateway: restore FILE", run: runRestore})
}

// runBackup copies the store of --data-dir (or --store) into a new file
// with SQLite's online backup: a consistent snapshot, taken while the
// gateway goes on serving and writing.
func runBackup(ctx context.Context, env *environment, args []string) error {
	f, out, err := backupArgs(env, "backup", "FILE", "the backup to write (must not exist; - writes it to stdout)", args)
	if err != nil {
		return err
	}
	if out == "-" {
		return backupToStdout(ctx, env, f)
	}
	info, err := sqlitestore.Backup(ctx, f, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "backed up %s to %s: %s\n", f, info.Path, backupSummary(info))
	return nil
}

// backupSummary is what the backup and restore lines say of the copy.
func backupSummary(info sqlitestore.BackupInfo) string {
	return fmt.Sprintf("%d pages of %d bytes, schema %s (%d migrations)", info.Pages, info.PageSize, info.Schema, info.Migrations)
}

// backupToStdout is praxa backup -: the backup is made beside the store
// (the image has no shell or tar to fetch a file with: kubectl exec
// deploy/praxa -- /praxa backup - > praxa.db), written to stdout, and
// removed; the summary goes to stderr.
func backupToStdout(ctx context.Context, env *environment, db string) error {
	dir, err := os.MkdirTemp(filepath.Dir(db), ".praxa-backup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	info, err := sqlitestore.Backup(ctx, db, filepath.Join(dir, "praxa.db"))
	if err != nil {
		return err
	}
	f, err := os.Open(info.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(env.stdout, f); err != nil {
		return fmt.Errorf("write the backup to stdout: %w", err)
	}
	fmt.Fprintf(env.stderr, "backed up %s to stdout: %s\n", db, backupSummary(info))
	return nil
}

// runRestore writes a backup as the store of --data-dir (or --store),
// which must not exist: a restore never replaces a store in use.
func runRestore(ctx context.Context, env *environment, args []string) error {
	f, in, err := backupArgs(env, "restore", "FILE", "the backup to restore (praxa backup wrote it; - reads it from stdin)", args)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if in == "-" {
		// Kept beside the store while it is checked and copied.
		dir, err := os.MkdirTemp(filepath.Dir(f), ".praxa-restore-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		in = filepath.Join(dir, "stdin.db")
		if err := writeFile(in, env.stdin); err != nil {
			return fmt.Errorf("read the backup from stdin: %w", err)
		}
	}
	info, err := sqlitestore.Restore(ctx, in, f)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "restored %s as %s: %s; praxa serve migrates it at start\n", in, info.Path, backupSummary(info))
	return nil
}

// backupArgs parses FILE [--data-dir DIR] [--store FILE] and returns the
// store's SQLite file and FILE. A PostgreSQL store is refused: it is backed
// up with PostgreSQL's own tools.
func backupArgs(env *environment, name, arg, argUsage string, args []string) (string, string, error) {
	fs := newFlagSet(env, name, arg)
	var f serveFlags
	fs.StringVar(&f.dataDir, "data-dir", defaultDataDir(env), "data directory of the gateway, whose praxa.db is the store (also PRAXA_DATA_DIR)")
	storeVar(fs, &f.store, env, "the SQLite `FILE` of the store, when not DATA_DIR/praxa.db (also PRAXA_STORE)")
	var file string
	if len(args) > 0 && (args[0] == "-" || !strings.HasPrefix(args[0], "-")) {
		file, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return "", "", err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "praxa %s: one %s only: %s, then flags\n", name, arg, argUsage)
		return "", "", errUsage
	}
	if file == "" {
		fmt.Fprintf(env.stderr, "praxa %s: name the %s: %s\n", name, arg, argUsage)
		return "", "", errUsage
	}
	db := sqliteFile(f)
	if db == "" {
		fmt.Fprintf(env.stderr, "praxa %s: the store is PostgreSQL: back it up and restore it with PostgreSQL's tools (pg_dump -Fc, pg_restore; docs/deploy.md)\n", name)
		return "", "", errUsage
	}
	return db, file, nil
}

// writeFile copies r into the new file path (mode 0600).
func writeFile(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
