package main

import (
	"context"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/pgstore"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// storeUsage documents --store for every command that opens the store.
const storeUsage = "the gateway's store: a postgres:// DSN (several replicas share one database), or a SQLite file (default DATA_DIR/praxa.db; also PRAXA_STORE)"

// defaultStore is PRAXA_STORE, else "" (SQLite in the data directory).
func defaultStore(env *environment) string { return env.getenv("PRAXA_STORE") }

// openStore opens the store the flags select: PostgreSQL when --store (or
// PRAXA_STORE) is a postgres:// DSN, else the SQLite file it names, else
// praxa.db in the data directory.
func openStore(ctx context.Context, f serveFlags) (store.Store, error) {
	switch {
	case pgstore.IsDSN(f.store):
		return pgstore.Open(ctx, f.store, nil)
	case f.store != "":
		return sqlitestore.Open(ctx, f.store, nil)
	default:
		return sqlitestore.Open(ctx, dataPath(f.dataDir), nil)
	}
}
