package gatewaytest

import (
	"database/sql"
	"testing"
)

// RowCount is how many rows the table holds in the SQLite file at path,
// read with database/sql on a read-only connection (not through the
// store), as a check of what the file holds. An error fails t.
func RowCount(t testing.TB, path, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
