package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/store"
)

func init() {
	register(command{name: "audit", summary: "export audit events as JSON lines, filtered: audit export",
		run: runAudit, verbs: []string{"export"}})
}

// runAudit is praxa audit export: the store's audit events, filtered, as
// JSON lines on stdout (the audit sink's lines, with their seq).
func runAudit(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "audit", "export")
	var f serveFlags
	fs.StringVar(&f.dataDir, "data-dir", defaultDataDir(env), "data directory of the gateway (also PRAXA_DATA_DIR)")
	storeVar(fs, &f.store, env, storeUsage)
	tenant := fs.String("tenant", "", "the tenant's events only (default: every tenant)")
	since := fs.String("since", "", "events recorded at or after this `INSTANT`: RFC 3339 (2026-12-01T00:00:00Z) or a duration ago (24h)")
	until := fs.String("until", "", "events recorded before this `INSTANT`: RFC 3339 or a duration ago")
	types := fs.String("type", "", "comma-separated event `TYPES` to keep (e.g. request.refused,transition.fired)")
	trace := fs.String("trace", "", "the events of one trace `ID` (its own, or the one its caller named)")
	run := fs.String("run", "", "the events of one run (its runId `ID`)")
	subject := fs.String("subject", "", "the events of one principal (its subject)")
	outcome := fs.String("outcome", "", "the events of one outcome: allowed, refused, replayed or failed")
	capability := fs.String("capability", "", "the events of one capability or tool (its tool, or its capability attribute)")
	limit := fs.Int("limit", 0, "at most this many events `N` (0: all)")
	if len(args) == 0 || args[0] != "export" {
		return verbUsage(fs, args)
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "praxa audit export: unexpected %q: every filter is a flag\n", fs.Arg(0))
		return errUsage
	}
	filter := store.EventFilter{Tenant: *tenant, TraceID: *trace, RunID: *run, Subject: *subject, Outcome: *outcome, Capability: *capability}
	now := time.Now()
	var err error
	if filter.Since, err = instant("--since", *since, now); err != nil {
		fmt.Fprintf(env.stderr, "praxa audit export: %v\n", err)
		return errUsage
	}
	if filter.Until, err = instant("--until", *until, now); err != nil {
		fmt.Fprintf(env.stderr, "praxa audit export: %v\n", err)
		return errUsage
	}
	for _, t := range strings.Split(*types, ",") {
		if t = strings.TrimSpace(t); t != "" {
			filter.Types = append(filter.Types, t)
		}
	}
	if *limit < 0 {
		fmt.Fprintln(env.stderr, "praxa audit export: --limit is a count of events, 0 for all")
		return errUsage
	}
	st, err := openStore(ctx, f)
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := audit.Export(ctx, st, filter, *limit, env.stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "praxa audit export: %d events\n", n)
	return nil
}

// instant reads a flag's instant: RFC 3339, or a Go duration before now;
// "" is the zero time (no bound).
func instant(flag, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%s %q is neither an RFC 3339 instant (2026-12-01T00:00:00Z) nor a duration ago (24h)", flag, v)
}
