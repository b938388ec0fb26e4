package sqltx

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// Migrate applies the migrations of fsys (migrations/*.sql, in name order)
// that the table schema_migrations does not record, each followed by its
// record (version: the file name without .sql), in c: an open transaction
// the driver began (holding what keeps a second process from migrating at
// once) and commits when Migrate returns nil. createTable creates
// schema_migrations if it is missing, in the driver's column types. Errors
// carry d's prefix, "migrate" and the version that failed.
//
// c's Exec must run a statement without arguments whole when it holds
// several (a migration file): pgx sends it by the simple protocol and
// database/sql's SQLite driver runs each in turn, where a statement
// prepared once would run only the first.
func Migrate(ctx context.Context, c Execer, d *Dialect, fsys fs.FS, createTable string) error {
	if _, err := c.Exec(ctx, createTable); err != nil {
		return fmt.Errorf("%s: migrate: %w", d.Prefix, err)
	}
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("%s: migrate: %w", d.Prefix, err)
	}
	slices.Sort(names)
	for _, name := range names {
		version := strings.TrimSuffix(path.Base(name), ".sql")
		var n int
		if err := c.QueryRow(ctx, d.bind(`SELECT count(*) FROM schema_migrations WHERE version = ?`), version).Scan(&n); err != nil {
			return fmt.Errorf("%s: migrate: %w", d.Prefix, err)
		}
		if n > 0 {
			continue
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("%s: migrate %s: %w", d.Prefix, version, err)
		}
		// The file as it is: its text is not the dialect's to rewrite.
		if _, err := c.Exec(ctx, string(body)); err != nil {
			return fmt.Errorf("%s: migrate %s: %w", d.Prefix, version, err)
		}
		if _, err := c.Exec(ctx, d.bind(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), version, time.Now().UnixNano()); err != nil {
			return fmt.Errorf("%s: migrate %s: %w", d.Prefix, version, err)
		}
	}
	return nil
}
