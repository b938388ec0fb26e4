package connect

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// ImportTimeout bounds listing the tools of every proxy.import connection
// at start and on a reload.
const ImportTimeout = 60 * time.Second

// ImportError refuses a configuration reload (SetupReload): the
// proxy.import connections whose tools could not be listed. Reloading
// without them would drop every capability the running configuration
// imported from them.
type ImportError struct {
	// Problems say, one per connection, what could not be listed and why.
	Problems []string
}

// Error implements error.
func (e *ImportError) Error() string {
	return "a proxy.import connection could not be listed, so the reload would drop the capabilities it offers; the running configuration stays: " +
		strings.Join(e.Problems, "; ")
}

// Setup is the one wiring of connections, shared by praxa serve, praxa
// mcp and the tests: it prepares the connections of cfg, imports the tools
// proxy.import names (adding them to cfg with SetImported, so discovery
// and proxy_default see them), and compiles the workflows with the
// built-in proxy_default built from every capability the proxy surface
// offers. Problems with connections (one refused, a tool skipped, a
// connection that cannot be listed) are logged and returned; they do not
// stop the gateway. The connections that could not be listed are also
// ImportFailures, which reload.Reloader.RetryImports retries. The caller closes the Manager on shutdown.
func Setup(ctx context.Context, cfg *config.Config, opts *Options) (*Manager, *workflow.Registry, []string, error) {
	return setup(ctx, cfg, opts, false, nil)
}

// SetupReload is Setup for a configuration reload: a proxy.import
// connection whose tools cannot be listed refuses the reload with an
// *ImportError (the Manager is closed) instead of being a problem, since
// the new configuration would lack every capability imported from it. A
// tool skipped (its schema fails, its id is taken) remains a problem. The
// connections named in retrying are those whose import already failed in
// the running configuration (their capabilities are not served, so
// nothing is dropped): their failure stays a problem, listed by
// ImportFailures, and does not refuse the reload.
func SetupReload(ctx context.Context, cfg *config.Config, opts *Options, retrying ...string) (*Manager, *workflow.Registry, []string, error) {
	return setup(ctx, cfg, opts, true, retrying)
}

func setup(ctx context.Context, cfg *config.Config, opts *Options, strict bool, retrying []string) (*Manager, *workflow.Registry, []string, error) {
	m := New(cfg.Connections, opts)
	var problems []string
	for name, why := range m.Problems() {
		problems = append(problems, "connection "+name+": "+why)
	}
	for _, imp := range cfg.Proxy.Import {
		if c, ok := m.mcp[imp.Connection]; ok {
			c.imported = true
		}
	}
	if len(cfg.Proxy.Import) > 0 {
		ictx, cancel := context.WithTimeout(ctx, ImportTimeout)
		caps, found := m.importTools(ictx, cfg.Proxy.Import)
		cancel()
		var unlisted []string
		for _, p := range found {
			problems = append(problems, p.text)
			if !p.unlisted {
				continue
			}
			if m.importFailed == nil {
				m.importFailed = map[string]string{}
			}
			if prev, ok := m.importFailed[p.conn]; ok {
				m.importFailed[p.conn] = prev + "; " + p.text
			} else {
				m.importFailed[p.conn] = p.text
			}
			if !slices.Contains(retrying, p.conn) {
				unlisted = append(unlisted, p.text)
			}
		}
		if strict && len(unlisted) > 0 {
			m.Close()
			return nil, nil, nil, &ImportError{Problems: unlisted}
		}
		added := cfg.SetImported(caps)
		if len(added) < len(caps) {
			kept := map[string]bool{}
			for _, id := range added {
				kept[id] = true
			}
			for _, c := range caps {
				if !kept[c.ID] {
					m.log.Warn("proxy.import: tool skipped: its id is already taken", "capability", c.ID, "import", c.Source)
					problems = append(problems, c.Source+": "+c.ID+" skipped: its id is already taken")
				}
			}
		}
	}
	reg, err := workflow.Compile(cfg.Workflows)
	if err != nil {
		m.Close()
		return nil, nil, nil, err
	}
	if err := reg.AddProxy(cfg.Exposed()); err != nil {
		m.Close()
		return nil, nil, nil, err
	}
	return m, reg, problems, nil
}
