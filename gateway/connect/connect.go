package connect

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// DefaultTimeout bounds one call whose executor and capability set none.
const DefaultTimeout = config.DefaultExecutorTimeout

// Options configure a Manager. The zero value is usable.
type Options struct {
	// Logger receives connection events (default slog.Default()).
	Logger *slog.Logger
	// Getenv reads the gateway's environment (default os.Getenv): the
	// allow-listed variables and the ${NAME} references.
	Getenv func(string) string
	// Bwrap is the bubblewrap program confined cli connections run under
	// (default "bwrap", looked up in the gateway's PATH).
	Bwrap string
	// ClientName is the name the MCP client gives upstream servers.
	ClientName, ClientVersion string
	// Tokens obtains and caches the upstream tokens of connections with
	// auth (default a cache of the Manager's own). Share one across the
	// Managers of a process, and call its Forget when a token is revoked.
	Tokens *Tokens
	// ToolsChanged, when set, is told the name of an mcp connection whose
	// server sent notifications/tools/list_changed (on the session's own
	// goroutine: it must not block). A gateway lists the tools again
	// (reload.Reloader's relist) and checks their pins.
	ToolsChanged func(connection string)
}

// Manager holds the connections of one configuration.
type Manager struct {
	log    *slog.Logger
	getenv func(string) string
	mcp    map[string]*mcpConn
	cli    map[string]*cliConn
	rest   map[string]*restConn
	llm    map[string]*llmConn
	// importFailed are the proxy.import connections that could not be
	// listed at setup, with the problem (ImportFailures); set before the
	// Manager is handed out, read-only afterwards.
	importFailed map[string]string

	mu     sync.Mutex
	closed bool
}

// New prepares the connections. Nothing is started: an MCP connection
// opens on first use. A connection that cannot run at all (a cli
// connection that demands a sandbox on a machine without bwrap) is kept
// refused: its calls answer unavailable with the reason, and Problems
// lists it so the caller can say so at start.
func New(conns map[string]config.Connection, opts *Options) *Manager {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Logger = cmp.Or(o.Logger, slog.Default())
	o.Bwrap = cmp.Or(o.Bwrap, "bwrap")
	if o.Getenv == nil { // a func: cmp.Or cannot compare it
		o.Getenv = os.Getenv
	}
	if o.ClientName == "" { // the version goes with the name
		o.ClientName, o.ClientVersion = "praxa-gateway", "1"
	}
	if o.Tokens == nil { // not cmp.Or: a cache is made only when none is given
		o.Tokens = NewTokens(nil)
	}
	m := &Manager{log: o.Logger, getenv: o.Getenv, mcp: map[string]*mcpConn{}, cli: map[string]*cliConn{}, rest: map[string]*restConn{}, llm: map[string]*llmConn{}}
	for _, name := range sortedKeys(conns) {
		c := conns[name]
		if k, ok := kinds[c.Kind]; ok {
			k.open(m, name, c, &o)
		}
	}
	return m
}

// kinds are the connection kinds this package runs, each once: how a
// connection of the kind is opened into a Manager, and the runner of the
// executors that call one (config.Kind.Connection). A test holds them to
// config.ConnectionKinds.
var kinds = map[config.Kind]struct {
	open   func(m *Manager, name string, c config.Connection, o *Options)
	runner func(m *Manager) workflow.Runner
}{
	config.ConnectionMCP: {
		open:   func(m *Manager, name string, c config.Connection, o *Options) { m.mcp[name] = newMCPConn(name, c, o) },
		runner: func(m *Manager) workflow.Runner { return mcpRunner{m} },
	},
	config.ConnectionCLI: {
		open:   func(m *Manager, name string, c config.Connection, o *Options) { m.cli[name] = newCLIConn(name, c, o) },
		runner: func(m *Manager) workflow.Runner { return cliRunner{m} },
	},
	config.ConnectionREST: {
		open:   func(m *Manager, name string, c config.Connection, o *Options) { m.rest[name] = newRESTConn(name, c, o) },
		runner: func(m *Manager) workflow.Runner { return restRunner{m} },
	},
	config.ConnectionLLM: {
		open:   func(m *Manager, name string, c config.Connection, o *Options) { m.llm[name] = newLLMConn(name, c, o) },
		runner: func(m *Manager) workflow.Runner { return llmRunner{m} },
	},
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Problems lists, by connection name, the connections that cannot run on
// this machine and why.
func (m *Manager) Problems() map[string]string {
	out := map[string]string{}
	for name, c := range m.cli {
		if c.refused != "" {
			out[name] = c.refused
		}
	}
	return out
}

// Runners returns the runners of the executor kinds that call a
// connection (mcp, cli, rest and llm), for workflow.Engine.Runners.
func (m *Manager) Runners() map[config.Kind]workflow.Runner {
	out := make(map[config.Kind]workflow.Runner, len(kinds))
	for k, d := range kinds {
		out[k] = d.runner(m)
	}
	return out
}

// Close ends every MCP session and kills the children and their process
// groups. Calls after Close answer unavailable.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, c := range m.mcp {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.close(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, c := range m.rest {
		c.client.CloseIdleConnections()
	}
	for _, c := range m.llm {
		c.client.CloseIdleConnections()
	}
	return errors.Join(errs...)
}

// timeout is how long one call of x may take.
func timeout(x config.Executor) time.Duration {
	if x.TimeoutMs > 0 {
		return time.Duration(x.TimeoutMs) * time.Millisecond
	}
	return DefaultTimeout
}

// unavailable is the error of a call that was never sent.
func unavailable(kind config.Kind, conn, format string, args ...any) *workflow.ExecutorError {
	return &workflow.ExecutorError{Outcome: workflow.OutcomeUnavailable, Kind: kind, Connection: conn, Message: fmt.Sprintf(format, args...)}
}

// noConnection answers a call to a connection the configuration does not
// declare with the kind asked.
func noConnection(kind config.Kind, name string) *workflow.ExecutorError {
	return unavailable(kind, name, "there is no %s connection %q", kind, name)
}

// execErrorMessage words a failure to start a program without quoting
// its environment.
func execErrorMessage(command string, err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return fmt.Sprintf("cannot start %s: %v", command, ee.Err)
	}
	return fmt.Sprintf("cannot start %s: %v", command, err)
}

// clip shortens s to n bytes for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Starts returns how many sessions the mcp connection name has opened
// (0 for another kind): a held connection opens one, a restart one more.
func (m *Manager) Starts(name string) int {
	if c, ok := m.mcp[name]; ok {
		return c.Starts()
	}
	return 0
}

// ChildPID returns the process id of the mcp connection's child, 0 when
// none runs.
func (m *Manager) ChildPID(name string) int {
	c, ok := m.mcp[name]
	if !ok {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return pid(c.cmd)
}
