// Package reload reloads the configuration of a running gateway (SIGHUP,
// POST /v8/config/reload): a Reloader builds every part of the new
// configuration, stages the features that hold configuration state
// (op.Reloadable), and only then swaps them all in, so that a
// configuration that fails anywhere is refused whole; every attempt is an
// audit event. It also retries the import of a proxy.import connection
// that could not be listed, and lists the imported tools again when an
// upstream says they changed.
//
// It imports the service (package gateway) and the parts it swaps; no
// package it reloads imports it.
package reload

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/pins"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/telemetry"
)

// How a reload was asked for (Trigger.Via).
const (
	// ViaToolsChanged is a reload the gateway made to list the
	// imported tools again: an upstream sent
	// notifications/tools/list_changed, or an operator accepted a
	// quarantined capability's new definition.
	ViaToolsChanged = "tools-list-changed"
	// ViaSignal is a SIGHUP of the gateway's process.
	ViaSignal = "signal"
	// ViaEndpoint is POST /v8/config/reload.
	ViaEndpoint = "endpoint"
)

// Trigger says who asked for a reload and how: its audit event
// records it.
type Trigger struct {
	// Via is ViaSignal or ViaEndpoint.
	Via string
	// Principal is the operator who called the endpoint; nil for a
	// signal, whose event names Via as its subject.
	Principal *auth.Principal
	// RequestID and TraceID place the event in a trace; a Reloader mints
	// a trace id when TraceID is empty.
	RequestID, TraceID string
}

// Result is the answer of an accepted reload (POST
// /v8/config/reload; the contract's reloadConfig output schema).
type Result struct {
	Reloaded bool `json:"reloaded"`
	// Source is the file read, empty for the embedded configuration.
	Source string `json:"source"`
	// SHA256 is the hex SHA-256 of the bytes read (empty when the
	// configuration was not read from bytes).
	SHA256             string    `json:"sha256,omitempty"`
	Workflows          int       `json:"workflows"`
	Capabilities       int       `json:"capabilities"`
	Connections        int       `json:"connections"`
	Skills             int       `json:"skills"`
	CertificateIssuers int       `json:"certificateIssuers"`
	At                 time.Time `json:"at"`
	// TraceID is the trace of the reload's audit event.
	TraceID string `json:"-"`
}

// Reloader reloads the configuration of a running gateway. SIGHUP and POST
// /v8/config/reload both call Reload, which builds every part of the new
// configuration (connections and workflows, discovery index, skills,
// scripts, what each of Features stages, and what
// Stage adds) before swapping any, so a
// configuration that fails anywhere is refused whole and the running one
// stays; either way the attempt is an audit event. Reloads run one at a
// time; after Close none runs. The zero value is not usable: set Service,
// Switch and Load.
//
// What is read at start only is not reloaded: a file that changes
// server.leaseTTL is refused (the leases and the lease sweeper keep the
// TTL they started with, and the file's executors are checked against
// its own), as is one whose proxy.import connections cannot be listed
// (connect.SetupReload: it would drop their capabilities), unless the
// import of that connection was failing already and is being retried
// (RetryImports): the reload is then accepted and the retry goes on. A new
// proxy.runRetention applies from the run sweeper's next sweep.
type Reloader struct {
	// Service is the service whose Runtime is replaced.
	Service *gateway.Service
	// Store is the store the service runs on (audit hooks included): the
	// pins are checked and the reload's audit event written there.
	Store store.Store
	// Now is the clock of the pins and the audit event (nil: time.Now);
	// Logger receives the reload's logs (nil: slog.Default()).
	Now    func() time.Time
	Logger *slog.Logger
	// Features are the features whose state comes from the
	// configuration: each is staged with the other parts and swapped in
	// by Service.Reload (Runtime.Apply), in order.
	Features []op.Reloadable
	// Switch holds the connections the service's executors run on.
	Switch *connect.Switch
	// Source names the configuration Load reads ("" for the embedded
	// one), for the audit event of a configuration that does not load.
	Source string
	// Load reads the configuration again. It returns the bytes it read,
	// also with an error when it read some, for the digest the audit event
	// and the answer carry (nil: no digest).
	Load func(ctx context.Context) (*config.Config, []byte, error)
	// Prepare, when set, completes a loaded configuration before anything
	// is built from it (as at start: Defaults with the listener's
	// address).
	Prepare func(*config.Config)
	// Connect configures the new connections (nil: the service's logger).
	Connect *connect.Options
	// Skills loads the configuration's skills (nil: skills.FromConfig
	// without an embedded directory); an error refuses the reload.
	Skills func(*config.Config) (*skills.Catalog, error)
	// Stage, when set, builds further parts from the configuration (an MCP
	// server's direct tools): it returns the function that swaps them in,
	// called after the service's Runtime; an error refuses the reload
	// before anything changed.
	Stage func(*config.Config) (apply func(), err error)
	// Problems, when set, receives the problems of the new connections
	// that do not refuse the reload (a connection refused, a tool
	// skipped); they are logged otherwise. Either way the audit event
	// lists them.
	Problems func(problem string)
	// Running is the configuration the gateway runs on: set it at start
	// (prepared, as Setup used it); each accepted reload replaces it.
	// RetryImports imports it again when a failed proxy.import connection
	// answers.
	Running *config.Config
	// ImportRetryBase and ImportRetryMax bound the waits between two
	// attempts of RetryImports (0: DefaultImportRetryBase,
	// DefaultImportRetryMax).
	ImportRetryBase, ImportRetryMax time.Duration

	mu     sync.Mutex
	closed bool
	// runningData are the bytes Running was read from (for the digest of
	// an import retry's audit event).
	runningData []byte

	// stateMu guards the import retry state (imports.go).
	stateMu sync.Mutex
	retry   map[string]*importRetry
	kick    chan struct{}
}

// ErrClosed refuses a reload asked for after Reloader.Close: the
// gateway is shutting down.
var ErrClosed = errors.New("the gateway is shutting down: the configuration is not reloaded")

// Reload reads the configuration again and swaps it in: the connections
// first, then the service's Runtime, then what Stage built. A
// configuration that does not load returns its *config.LoadError, one
// whose skills do not load, or that a feature refuses to stage (the
// knowledge's certificate issuers), that error, one that
// changes server.leaseTTL or cannot list a proxy.import connection (a
// *connect.ImportError) an error saying so, and nothing changes. Every
// attempt, accepted or refused, is audited as by names it, except one
// after Close, which is logged and answered ErrClosed (the store
// may be closed already).
func (r *Reloader) Reload(ctx context.Context, by Trigger) (*Result, error) {
	return r.run(ctx, by, func(ctx context.Context) (*config.Config, []byte, bool, error) {
		cfg, data, err := r.Load(ctx)
		return cfg, data, false, err
	})
}

// run is Reload with the configuration load returns (prepared: Prepare
// has run on it already).
func (r *Reloader) run(ctx context.Context, by Trigger, load func(context.Context) (*config.Config, []byte, bool, error)) (*Result, error) {
	if by.TraceID == "" {
		by.TraceID = ids.Trace()
	}
	// The lines logged on the way carry the reload's trace (a request's
	// already do).
	ctx = telemetry.WithTrace(ctx, by.TraceID)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.log().WarnContext(ctx, "configuration reload refused: the gateway is shutting down", "via", by.Via)
		return nil, ErrClosed
	}
	res, warnings, err := r.reload(ctx, load)
	if res == nil {
		res = &Result{Source: r.Source}
	}
	res.TraceID = by.TraceID
	r.auditReload(ctx, by, res, warnings, err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Close ends reloading: it waits for a reload in progress to finish (its
// swap included), and every later Reload is refused with
// ErrClosed, so that none swaps into a service being closed. Call
// it first when the gateway shuts down; it is safe to call more than once.
func (r *Reloader) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
}

func (r *Reloader) reload(ctx context.Context, load func(context.Context) (*config.Config, []byte, bool, error)) (*Result, []string, error) {
	s := r.Service
	cfg, data, prepared, err := load(ctx)
	res := &Result{Source: r.Source, SHA256: digest(data)}
	if err != nil {
		return res, nil, err
	}
	res.Source = cfg.Source
	if r.Prepare != nil && !prepared {
		r.Prepare(cfg)
	}
	if ttl := cfg.LeaseTTL(); ttl != s.LeaseTTL() {
		return res, nil, fmt.Errorf("server.leaseTTL is read at start only; restart the gateway to change it (the running gateway holds leases for %s, the file sets %s)", s.LeaseTTL(), ttl)
	}
	opts := &connect.Options{Logger: r.log()}
	if r.Connect != nil {
		o := *r.Connect
		opts = &o
	}
	// The new connections' upstreams tell of changed tool lists too.
	opts.ToolsChanged = s.Pins().Changes().Notify
	// The connections are set up whatever becomes of the request that
	// asked for the reload (a client that hangs up, the request timeout,
	// shorter than the import's): an import cut short would refuse it.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), connect.ImportTimeout)
	// A connection whose import is being retried refuses nothing: its
	// capabilities are not served now, and the retry goes on.
	conns, workflows, warnings, err := connect.SetupReload(sctx, cfg, opts, r.retrying()...)
	cancel()
	if err != nil {
		return res, nil, err
	}
	for _, p := range warnings {
		if r.Problems != nil {
			r.Problems(p)
		} else {
			r.log().WarnContext(ctx, "configuration reload: "+p)
		}
	}
	refuse := func(err error) (*Result, []string, error) {
		conns.Close()
		return res, warnings, err
	}
	// The imported definitions are checked against their pins before
	// anything is built from them: the quarantined capabilities stay out
	// of the tools MCP lists (Stage).
	pctx, pcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	quarantines, err := pins.Check(pctx, r.Store, cfg.Exposed(), r.now(), r.log())
	pcancel()
	if err != nil {
		return refuse(err)
	}
	cfg.SetQuarantined(quarantines.IDs())
	index, err := discovery.Build(workflows, cfg)
	if err != nil {
		return refuse(err)
	}
	loadSkills := r.Skills
	if loadSkills == nil {
		loadSkills = func(cfg *config.Config) (*skills.Catalog, error) { return skills.FromConfig(cfg, nil, "") }
	}
	cat, err := loadSkills(cfg)
	if err != nil {
		return refuse(fmt.Errorf("skills: %w", err))
	}
	scr, err := scripts.FromConfig(cfg)
	if err != nil {
		return refuse(err)
	}
	staged, err := r.stage(op.Staged{Config: cfg, Skills: cat})
	if err != nil {
		return refuse(err)
	}
	apply := func() {}
	if r.Stage != nil {
		if apply, err = r.Stage(cfg); err != nil {
			return refuse(err)
		}
	}
	r.Switch.Swap(conns)
	s.Reload(ctx, gateway.Runtime{Workflows: workflows, Discovery: index, Lexicon: cfg.Lexicon, Policy: cfg.Policy,
		Skills: cat, Scripts: scr, RunRetention: cfg.RunRetention(), Quotas: cfg.Server.Quotas,
		Quarantines: quarantines, Apply: staged})
	apply()
	r.stateMu.Lock()
	// Running is written under both locks: a reload reads it under mu,
	// the import retry's state under stateMu.
	r.Running, r.runningData = cfg, data
	r.syncImportsLocked()
	if r.kick == nil {
		r.kick = make(chan struct{}, 1)
	}
	select {
	case r.kick <- struct{}{}:
	default:
	}
	r.stateMu.Unlock()
	res.Reloaded = true
	res.Workflows, res.Capabilities, res.Connections = len(workflows.IDs()), len(cfg.Exposed()), len(cfg.Connections)
	// The configuration checked that issuer ids are unique: one key each.
	res.Skills, res.CertificateIssuers = cat.Len(), len(cfg.Certificates.Issuers)
	res.At = time.Now().UTC()
	return res, warnings, nil
}

// stage stages every feature on the new configuration, in order, and
// returns what swaps each in; the first error refuses the reload.
func (r *Reloader) stage(st op.Staged) ([]func(), error) {
	applies := make([]func(), 0, len(r.Features))
	for _, f := range r.Features {
		apply, err := f.Stage(st)
		if err != nil {
			return nil, err
		}
		applies = append(applies, apply)
	}
	return applies, nil
}

// now reads the Reloader's clock.
func (r *Reloader) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

// log is the Reloader's logger, writing the ids of the request or the
// reload a line is logged in (telemetry.Logger).
func (r *Reloader) log() *slog.Logger {
	return telemetry.Logger(cmp.Or(r.Logger, slog.Default()))
}

// digest is the hex SHA-256 of data, "" for none.
func digest(data []byte) string {
	if data == nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Problems lists what refused a reload: one line per problem of a
// configuration that does not load (file:line:column: field: message) or
// per proxy.import connection that could not be listed, else the error's
// message.
func Problems(err error) []string {
	var le *config.LoadError
	if errors.As(err, &le) {
		return le.Lines()
	}
	var ie *connect.ImportError
	if errors.As(err, &ie) {
		out := make([]string, 0, len(ie.Problems))
		for _, p := range ie.Problems {
			out = append(out, p+" (the reload is refused: it would drop the capabilities this connection offers)")
		}
		return out
	}
	return []string{err.Error()}
}

// auditReload writes the audit event of one reload attempt, in a
// transaction of its own before the answer leaves: config.reloaded
// (allowed) with the counts of what is now served, or
// config.reload_refused (refused) with the problems. Both name the
// source and the digest of what was read. A failed write is logged; it
// does not undo a reload that happened.
func (r *Reloader) auditReload(ctx context.Context, by Trigger, res *Result, warnings []string, err error) {
	attrs := map[string]any{"via": by.Via, "source": res.Source}
	if res.SHA256 != "" {
		attrs["sha256"] = res.SHA256
	}
	// A reload no operator asked for (a signal, the gateway's own) names
	// how it came as its subject.
	e := op.EventSpec{Actor: op.Actor{Principal: by.Principal, Subject: by.Via, Operation: contracts.EndpointReloadConfig},
		Type: "config.reloaded", Outcome: "allowed", RequestID: by.RequestID, TraceID: by.TraceID, At: r.now(), Attributes: attrs}
	if len(warnings) > 0 {
		attrs["warnings"] = warnings
	}
	if err != nil {
		e.Type, e.Outcome = "config.reload_refused", "refused"
		e.Code = string(contracts.CodeInvalidParams)
		if ce := (*contracts.Error)(nil); errors.As(err, &ce) {
			e.Code = string(ce.Code)
		} else if ie := (*connect.ImportError)(nil); errors.As(err, &ie) {
			e.Code = string(contracts.CodeUnavailable)
		}
		attrs["problems"] = Problems(err)
	} else {
		attrs["workflows"], attrs["capabilities"], attrs["connections"] = res.Workflows, res.Capabilities, res.Connections
		attrs["skills"], attrs["certificateIssuers"] = res.Skills, res.CertificateIssuers
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	werr := r.Store.Update(wctx, func(ctx context.Context, tx store.Tx) error { return tx.AppendEvents(ctx, []store.Event{e.Build()}) })
	if werr != nil {
		r.log().ErrorContext(ctx, "the audit event of a configuration reload was not written", "type", e.Type, "err", werr)
	}
}
