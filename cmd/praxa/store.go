package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/url"

	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/pgstore"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// storeUsage documents --store for every command that opens the store.
const storeUsage = "the gateway's store `DSN|FILE`: a postgres:// DSN (several replicas share one database), or a SQLite file (default DATA_DIR/praxa.db; also PRAXA_STORE)"

// storeVar defines --store on fs into p, its default PRAXA_STORE (else "":
// SQLite in the data directory). Its value prints with a DSN's password
// masked, so that -h, which prints a flag's default, shows no secret.
func storeVar(fs flagDefiner, p *string, env *environment, usage string) {
	*p = env.getenv("PRAXA_STORE")
	fs.Var((*storeValue)(p), "store", usage)
}

// flagDefiner is the part of a flag.FlagSet that defines flags.
type flagDefiner interface {
	StringVar(p *string, name, value, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
	Var(value flag.Value, name, usage string)
}

// storeValue is the value of --store.
type storeValue string

func (v *storeValue) Set(s string) error { *v = storeValue(s); return nil }

func (v *storeValue) String() string {
	if v == nil {
		return ""
	}
	if u, err := url.Parse(string(*v)); err == nil && u.User != nil {
		return u.Redacted()
	}
	return string(*v)
}

// openStore opens the store the flags select: PostgreSQL when --store (or
// PRAXA_STORE) is a postgres:// DSN, else the SQLite file it names, else
// praxa.db in the data directory.
func openStore(ctx context.Context, f serveFlags) (store.Store, error) {
	if pgstore.IsDSN(f.store) {
		return pgstore.Open(ctx, f.store, nil)
	}
	return sqlitestore.Open(ctx, sqliteFile(f), nil)
}

// sqliteFile is the SQLite file of the flags' store: --store (or
// PRAXA_STORE) when it names a file, else praxa.db in the data directory;
// "" for a PostgreSQL DSN.
func sqliteFile(f serveFlags) string {
	switch {
	case pgstore.IsDSN(f.store):
		return ""
	case f.store != "":
		return f.store
	}
	return dataPath(f.dataDir)
}

// openOperatorStore loads the configuration f finds and opens its store
// for an operator command (openAuditedStore), logging warnings and worse
// to the standard error; the caller closes the store.
func openOperatorStore(ctx context.Context, env *environment, f serveFlags) (*config.Config, *slog.Logger, store.Store, error) {
	cfg, err := f.findConfig().load()
	if err != nil {
		return nil, nil, nil, err
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := openAuditedStore(ctx, f, cfg, env.stderr, log)
	if err != nil {
		return nil, nil, nil, err
	}
	return cfg, log, st, nil
}

// openAuditedStore is openStore for a command that runs the service on
// cfg: every audit event the store commits also goes to cfg's audit.sink
// (stderr, or a file appended to), which closing the store closes. With
// no sink, or the sink store, it is the store alone.
func openAuditedStore(ctx context.Context, f serveFlags, cfg *config.Config, stderr io.Writer, log *slog.Logger) (store.Store, error) {
	var sink *audit.Sink
	switch cfg.Audit.Sink {
	case "", config.AuditSinkStore:
	case config.AuditSinkStderr:
		sink = audit.NewSink(stderr, log)
	default:
		var err error
		if sink, err = audit.OpenSink(cfg.AuditSinkFile(), log); err != nil {
			return nil, err
		}
	}
	st, err := openStore(ctx, f)
	if err != nil {
		if sink != nil {
			sink.Close()
		}
		return nil, err
	}
	if sink == nil {
		return st, nil
	}
	return audit.WithSink(st, sink), nil
}
