package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
	"github.com/praxa/praxa/gateway/store/storetest"
)

// The migrations are expand-only (docs/decisions.md, Rolling upgrades):
// during a rolling upgrade the previous version serves on the schema this
// version migrated, and after a rollback it serves there alone, so a
// migration adds and never takes away what the previous version reads or
// writes. TestMigrationsExpandOnly refuses the statements that may break
// the previous version unless a comment just before the statement, starting
// "tolerated:", says why it does not; cmd/praxa TestRollingUpgradePostgres
// runs the previous binary on the migrated schema.

// sqlStatement is one statement of a migration with the comments written
// between the previous statement and it.
type sqlStatement struct {
	sql, comments string
}

// splitSQL splits a migration into its statements: at semicolons outside
// quoted strings, quoted names, dollar-quoted bodies and comments.
func splitSQL(src string) []sqlStatement {
	var (
		out           []sqlStatement
		code, comment strings.Builder
	)
	flush := func() {
		if s := strings.TrimSpace(code.String()); s != "" {
			out = append(out, sqlStatement{sql: s, comments: comment.String()})
		}
		code.Reset()
		comment.Reset()
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case strings.HasPrefix(src[i:], "--"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			comment.WriteString(src[i:i+end] + "\n")
			i += end
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 4
			}
			comment.WriteString(src[i:i+end+4] + "\n")
			i += end + 4
		case c == '\'' || c == '"':
			end := i + 1
			for end < len(src) && src[end] != c {
				end++
			}
			code.WriteString(src[i:min(end+1, len(src))])
			i = end + 1
		case c == '$':
			tag := dollarTagRE.FindString(src[i:])
			if tag == "" {
				code.WriteByte(c)
				i++
				continue
			}
			end := strings.Index(src[i+len(tag):], tag)
			if end < 0 {
				end = len(src) - i - 2*len(tag)
			}
			code.WriteString(src[i : i+2*len(tag)+end])
			i += 2*len(tag) + end
		case c == ';':
			flush()
			i++
		default:
			code.WriteByte(c)
			i++
		}
	}
	flush()
	return out
}

var (
	// dollarTagRE finds the tag opening a dollar-quoted string ($$ or $tag$).
	dollarTagRE = regexp.MustCompile(`^\$[A-Za-z_]*\$`)
	// createdTableRE finds the tables a migration creates: a constraint or
	// unique index on one of them refuses nothing the previous version
	// wrote.
	createdTableRE = regexp.MustCompile(`(?i)^CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)`)
	// contractRules are the statements that may break the previous version,
	// each with what it breaks. Words are matched case-insensitively on the
	// statement with its whitespace collapsed.
	contractRules = []struct {
		re   *regexp.Regexp
		what string
	}{
		{regexp.MustCompile(`(?i)^DROP\s`), "drops what the previous version may read or write"},
		{regexp.MustCompile(`(?i)^ALTER\s.*\sDROP\s`), "drops what the previous version may read or write (a column, constraint or default)"},
		{regexp.MustCompile(`(?i)\sRENAME\s`), "renames what the previous version names"},
		{regexp.MustCompile(`(?i)\sALTER\s+(?:COLUMN\s+)?\w+\s+(?:SET\s+DATA\s+)?TYPE\s`), "changes a column's type under the previous version"},
		{regexp.MustCompile(`(?i)\sALTER\s+(?:COLUMN\s+)?\w+\s+SET\s+NOT\s+NULL`), "refuses the previous version's rows without the column"},
		{regexp.MustCompile(`(?i)\sADD\s+CONSTRAINT\s`), "adds a constraint the previous version's writes may break"},
		{regexp.MustCompile(`(?i)^TRUNCATE\s`), "deletes what the previous version serves"},
	}
	addColumnRE   = regexp.MustCompile(`(?i)\bADD\s+COLUMN\s+(?:IF\s+NOT\s+EXISTS\s+)?\w+[^,]*`)
	uniqueIndexRE = regexp.MustCompile(`(?i)^CREATE\s+UNIQUE\s+INDEX\s.*\sON\s+(?:ONLY\s+)?(\w+)`)
)

// contractSteps returns, for each statement of the migration src that may
// break the previous version and has no "tolerated:" comment before it,
// the statement and what it breaks.
func contractSteps(src string) []string {
	stmts := splitSQL(src)
	created := map[string]bool{}
	for _, s := range stmts {
		if m := createdTableRE.FindStringSubmatch(s.sql); m != nil {
			created[strings.ToLower(m[1])] = true
		}
	}
	var out []string
	for _, s := range stmts {
		if strings.Contains(strings.ToLower(s.comments), "tolerated:") {
			continue
		}
		flat := strings.Join(strings.Fields(s.sql), " ")
		var what []string
		for _, r := range contractRules {
			if r.re.MatchString(flat) {
				what = append(what, r.what)
			}
		}
		for _, add := range addColumnRE.FindAllString(flat, -1) {
			up := strings.ToUpper(add)
			if strings.Contains(up, "NOT NULL") && !strings.Contains(up, "DEFAULT") && !strings.Contains(up, "GENERATED") {
				what = append(what, "adds a NOT NULL column without a default, which the previous version's inserts leave out")
			}
		}
		if m := uniqueIndexRE.FindStringSubmatch(flat); m != nil && !created[strings.ToLower(m[1])] {
			what = append(what, "adds a uniqueness the previous version's writes may break")
		}
		if len(what) > 0 {
			out = append(out, flat+": "+strings.Join(slices.Compact(what), "; "))
		}
	}
	return out
}

// TestMigrationsExpandOnly: no migration takes away what the previous
// version uses, unless it says why the previous version tolerates it.
func TestMigrationsExpandOnly(t *testing.T) {
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range contractSteps(string(b)) {
			t.Errorf("%s is not expand-only: %s.\nDuring a rolling upgrade the previous version serves on this schema, and after a rollback alone. "+
				"Add instead (a new column or table, written alongside the old one), and drop what no supported version uses in a later release; "+
				"or, just before the statement, say in a comment starting \"tolerated:\" why the previous version tolerates it (docs/decisions.md, Rolling upgrades).",
				filepath.Base(f), step)
		}
	}
}

// TestContractSteps: the check finds what it should, and only that.
func TestContractSteps(t *testing.T) {
	for src, want := range map[string]int{
		"ALTER TABLE t ADD COLUMN c TEXT NOT NULL DEFAULT '';":                                   0,
		"ALTER TABLE t ADD COLUMN c TEXT;":                                                       0,
		"CREATE TABLE t (a TEXT NOT NULL);\nCREATE UNIQUE INDEX t_a ON t (a);":                   0,
		"CREATE INDEX t_a ON t (a);":                                                             0,
		"CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DROP TABLE x; END $$;": 0,
		"UPDATE t SET note = 'DROP TABLE t; RENAME';":                                            0,
		"-- DROP TABLE t;\nSELECT 1;":                                                            0,
		"-- tolerated: the previous version never reads it.\nDROP INDEX t_a;":                    0,
		"DROP INDEX t_a;":                                                                 1,
		"drop table t;":                                                                   1,
		"ALTER TABLE t DROP COLUMN c;":                                                    1,
		"ALTER TABLE t ALTER COLUMN c DROP DEFAULT;":                                      1,
		"ALTER TABLE t RENAME COLUMN a TO b;":                                             1,
		"ALTER TABLE t RENAME TO u;":                                                      1,
		"ALTER TABLE t ALTER COLUMN c TYPE BIGINT;":                                       1,
		"ALTER TABLE t ALTER c SET DATA TYPE BIGINT;":                                     1,
		"ALTER TABLE t ALTER COLUMN c SET NOT NULL;":                                      1,
		"ALTER TABLE t ADD COLUMN c TEXT NOT NULL;":                                       1,
		"ALTER TABLE t ADD COLUMN a TEXT NOT NULL DEFAULT '', ADD COLUMN b INT NOT NULL;": 1,
		"ALTER TABLE t ADD CONSTRAINT t_c CHECK (c > 0);":                                 1,
		"CREATE UNIQUE INDEX t_a ON t (a);":                                               1,
		"TRUNCATE t;":                                                                     1,
		"-- tolerated: one.\nDROP INDEX a;\nDROP INDEX b;":                                1,
	} {
		if got := contractSteps(src); len(got) != want {
			t.Errorf("contractSteps(%q) = %q, want %d", src, got, want)
		}
	}
}

// TestIdempotencyOfPreviousWriters: the keys a binary from before
// migration 0018 records read and sweep as this version's (0020).
func TestIdempotencyOfPreviousWriters(t *testing.T) {
	dsn := freshSchema(t)
	ctx := context.Background()
	conn := pgtest.Conn(t, dsn)
	n := 0
	stmt := regexp.MustCompile(`\?`).ReplaceAllStringFunc(storetest.PreviousIdempotencyInsert, func(string) string { n++; return fmt.Sprintf("$%d", n) })
	storetest.PreviousIdempotencyWriter(t, open(t, dsn), func(args ...any) error {
		_, err := conn.Exec(ctx, stmt, args...)
		return err
	})
}
