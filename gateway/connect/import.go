package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
)

var identifierRE = regexp.MustCompile(contracts.IdentifierPattern)

// Import lists the tools of each proxy.import entry's connection and turns
// each tool it keeps into a capability: PREFIX.TOOL, the upstream title,
// description and input schema, the entry's tags, an mcp executor calling
// the tool with the capability's arguments as they are. A tool whose name
// does not make a valid id, or whose input schema fails CheckToolSchema, is
// skipped with a log line; a connection that cannot be listed is logged
// and imports nothing. Skipped tools and unlisted connections are also
// returned as problems.
func (m *Manager) Import(ctx context.Context, imports []config.Import) (caps []config.ExposedCapability, problems []string) {
	caps, found := m.importTools(ctx, imports)
	for _, p := range found {
		problems = append(problems, p.text)
	}
	return caps, problems
}

// importProblem is one problem of Import: a tool skipped, or (unlisted) a
// connection whose tools could not be listed, so that none of its tools
// was imported.
type importProblem struct {
	text     string
	unlisted bool
	// conn names the connection of an unlisted problem.
	conn string
}

func (m *Manager) importTools(ctx context.Context, imports []config.Import) (caps []config.ExposedCapability, problems []importProblem) {
	for i, imp := range imports {
		src := "proxy.import[" + strconv.Itoa(i) + "]"
		c, ok := m.mcp[imp.Connection]
		if !ok {
			problems = append(problems, importProblem{text: fmt.Sprintf("%s: there is no mcp connection %q", src, imp.Connection), unlisted: true, conn: imp.Connection})
			continue
		}
		tools, err := c.tools(ctx)
		if err != nil {
			m.log.Error("proxy.import: cannot list the tools of the connection", "import", src, "connection", imp.Connection, "err", err)
			problems = append(problems, importProblem{text: fmt.Sprintf("%s: %v", src, err), unlisted: true, conn: imp.Connection})
			continue
		}
		prefix := imp.Prefix
		if prefix == "" {
			prefix = imp.Connection
		}
		for _, t := range tools {
			if len(imp.Include) > 0 && !slices.Contains(imp.Include, t.Name) {
				continue
			}
			if slices.Contains(imp.Exclude, t.Name) {
				continue
			}
			id := prefix + "." + t.Name
			skip := func(reason string) {
				m.log.Warn("proxy.import: tool skipped", "import", src, "connection", imp.Connection, "tool", t.Name, "reason", reason)
				problems = append(problems, importProblem{text: fmt.Sprintf("%s: tool %s skipped: %s", src, t.Name, reason)})
			}
			if !identifierRE.MatchString(id) {
				skip(fmt.Sprintf("%q is not a valid capability id", id))
				continue
			}
			schema, err := config.CheckToolSchema(t.InputSchema)
			if err != nil {
				skip("input schema: " + err.Error())
				continue
			}
			title := t.Title
			if title == "" && t.Annotations != nil {
				title = t.Annotations.Title
			}
			def, err := pinnedDefinition(t)
			if err != nil {
				skip("definition: " + err.Error())
				continue
			}
			caps = append(caps, config.ExposedCapability{ID: id, Source: src, Title: title, Description: t.Description,
				Tags: slices.Clone(imp.Tags), ExposeDirectly: imp.ExposeDirectly, InputSchema: schema,
				Executor: &config.Executor{Kind: config.ExecutorMCP, Connection: imp.Connection, Tool: t.Name},
				Upstream: &config.UpstreamTool{Connection: imp.Connection, Tool: t.Name, Pin: m.pinMode(imp.Connection), Definition: def}})
		}
		m.log.Info("proxy.import: tools imported", "import", src, "connection", imp.Connection, "listed", len(tools))
	}
	return caps, problems
}

// pinnedFields are the members of a tool's definition a pin covers: what
// an agent reads and what the call is checked against (never _meta or
// icons).
var pinnedFields = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// pinnedDefinition returns the part of t's definition a pin covers, as
// decoded JSON with numbers kept as sent (json.Number).
func pinnedDefinition(t *mcp.Tool) (map[string]any, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var all map[string]any
	if err := dec.Decode(&all); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(pinnedFields))
	for _, k := range pinnedFields {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// pinMode is the pin mode of the mcp connection name.
func (m *Manager) pinMode(name string) string {
	if c, ok := m.mcp[name]; ok {
		return c.cfg.PinMode()
	}
	return config.PinEnforce
}

// ImportFailures lists, by connection name, the proxy.import connections
// whose tools could not be listed when this Manager was set up (Setup,
// SetupReload), with the problem: none of their tools is among the
// configuration's capabilities. A Reloader retries them in the background.
func (m *Manager) ImportFailures() map[string]string {
	out := make(map[string]string, len(m.importFailed))
	for name, why := range m.importFailed {
		out[name] = why
	}
	return out
}

// ImportRetryTimeout bounds one ProbeImport: the open of the session
// (starting the child, a cold `npx` fetching its package, the handshake)
// and the listing. It is longer than a call's open (30s): nobody waits
// on a background retry, and an open cut short at 30s every time would
// never finish a fetch that needs longer.
const ImportRetryTimeout = 5 * time.Minute

// ProbeImport lists the tools of the mcp connection name, opening it when
// it is not open (an open it starts may take up to ImportRetryTimeout, or
// until ctx ends), and reports whether that worked: the check a Reloader
// makes before it imports again a connection that failed.
func (m *Manager) ProbeImport(ctx context.Context, name string) error {
	c, ok := m.mcp[name]
	if !ok {
		return fmt.Errorf("there is no mcp connection %q", name)
	}
	ctx, cancel := context.WithTimeout(ctx, ImportRetryTimeout)
	defer cancel()
	_, err := c.toolsWithin(ctx, ImportRetryTimeout)
	return err
}
