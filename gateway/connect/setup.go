package connect

import (
	"context"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// ImportTimeout bounds listing the tools of every proxy.import connection
// at start.
const ImportTimeout = 60 * time.Second

// Setup is the one wiring of connections, shared by praxa serve, praxa
// mcp and the tests: it prepares the connections of cfg, imports the tools
// proxy.import names (adding them to cfg with SetImported, so discovery
// and proxy_default see them), and compiles the workflows with the
// built-in proxy_default built from every capability the proxy surface
// offers. Problems with connections (one refused, a tool skipped, a
// connection that cannot be listed) are logged and returned; they do not
// stop the gateway. The caller closes the Manager on shutdown.
func Setup(ctx context.Context, cfg *config.Config, opts *Options) (*Manager, *workflow.Registry, []string, error) {
	m := New(cfg.Connections, opts)
	var problems []string
	for name, why := range m.Problems() {
		problems = append(problems, "connection "+name+": "+why)
	}
	if len(cfg.Proxy.Import) > 0 {
		ictx, cancel := context.WithTimeout(ctx, ImportTimeout)
		caps, p := m.Import(ictx, cfg.Proxy.Import)
		cancel()
		problems = append(problems, p...)
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
