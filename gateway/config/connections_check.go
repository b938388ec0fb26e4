package config

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// connectionKinds are the connection kinds, in the order of schema.json.
var connectionKinds = []string{ConnectionMCP, ConnectionCLI, ConnectionREST, ConnectionLLM}

// connectionMembers lists the members each connection kind admits, as the
// if/then rules of schema.json do.
var connectionMembers = map[string][]string{
	ConnectionMCP:  {"kind", "command", "args", "env", "url", "headers", "auth", "pin"},
	ConnectionCLI:  {"kind", "command", "workingDirectory", "env", "shell", "confine", "roots"},
	ConnectionREST: {"kind", "baseUrl", "headers", "auth"},
	ConnectionLLM:  {"kind", "baseUrl", "model", "apiKey", "headers"},
}

// connectionKindAt returns the kind of the connection at ptr when ptr is a
// connection of a known kind.
func connectionKindAt(doc *document, ptr string) (string, bool) {
	if typeAt(ptr) != reflect.TypeFor[Connection]() {
		return "", false
	}
	v, _ := lookup(doc.value, ptr+"/kind")
	kind, _ := v.(string)
	_, ok := connectionMembers[kind]
	return kind, ok
}

// unknownConnectionMember words an unknown member of a connection.
func unknownConnectionMember(kind, name string) string {
	var owners []string
	for _, k := range connectionKinds {
		if slices.Contains(connectionMembers[k], name) {
			owners = append(owners, k)
		}
	}
	what := article(kind) + " " + kind + " connection"
	if len(owners) > 0 {
		return fmt.Sprintf("is not a known field of %s (%s belongs to %s connections); known fields: %s", what, name, joinAnd(owners), strings.Join(connectionMembers[kind], ", "))
	}
	if s, ok := suggest(name, connectionMembers[kind]); ok {
		return fmt.Sprintf("is not a known field of %s; did you mean %q?", what, s)
	}
	return fmt.Sprintf("is not a known field of %s; known fields: %s", what, strings.Join(connectionMembers[kind], ", "))
}

// envNameRE matches an environment variable name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// connections checks what the schema cannot say of the connections
// section and of proxy.import: URLs, and that an import names an mcp
// connection.
func (c *checker) connections() {
	conns, _ := c.obj("/connections")
	for _, name := range c.keys("/connections", conns) {
		ptr := "/connections/" + escapePointer(name)
		if conn, ok := c.obj(ptr); ok && conn["kind"] == ConnectionMCP && !c.reported[ptr+"/kind"] {
			_, cmd := conn["command"]
			_, url := conn["url"]
			switch {
			case cmd && url:
				c.reportKey(ptr+"/url", "cannot be set together with command: an mcp connection is a child process the gateway starts (command) or a server running elsewhere (url)")
			case !cmd && !url:
				c.reportKey(ptr, "needs command (a child process the gateway starts) or url (a server running elsewhere)")
			}
			for _, m := range []string{"args", "env"} {
				if _, has := conn[m]; has && url && !cmd {
					c.reportKey(ptr+"/"+m, "applies to a child process (command), not to a server reached by url")
				}
			}
			if _, has := conn["headers"]; has && cmd && !url {
				c.reportKey(ptr+"/headers", "applies to a server reached by url, not to a child process (command)")
			}
			if _, has := conn["auth"]; has && cmd && !url {
				c.reportKey(ptr+"/auth", "applies to a server reached by url, not to a child process (command): give the child its credentials in env")
			}
		}
		c.connectionAuth(ptr)
		env, _ := c.obj(ptr + "/env")
		for _, k := range c.keys(ptr+"/env", env) {
			if !envNameRE.MatchString(k) {
				c.reportKey(ptr+"/env/"+escapePointer(k), "is not an environment variable name: letters, digits and _, not starting with a digit")
			}
		}
		for _, m := range []string{"/url", "/baseUrl"} {
			if s, ok := c.str(ptr + m); ok {
				if msg := checkURL(s, urlRules{http: true}); msg != "" {
					c.report(ptr+m, "%s", msg)
				}
			}
		}
	}
	items, _ := c.list("/proxy/import")
	for i := range items {
		ptr := "/proxy/import/" + strconv.Itoa(i) + "/connection"
		name, ok := c.str(ptr)
		if !ok {
			continue
		}
		conn, declared := conns[name].(map[string]any)
		switch {
		case !declared:
			c.report(ptr, "names no declared connection%s", nameHint(name, c.keys("/connections", conns), "connections"))
		case conn["kind"] != ConnectionMCP:
			c.report(ptr, "names the %v connection %s: only the tools of an mcp connection can be imported", conn["kind"], name)
		case authKind(conn) == AuthTokenExchange:
			c.report(ptr, "names the connection %s, whose auth is token-exchange: its tools are listed at start, when no caller's token is there to exchange; declare its tools under proxy.expose (mcp executors), or give it auth kind client-credentials", name)
		}
	}
}

// executorConnection checks that the executor at ptr, of an mcp, cli,
// rest or llm kind, names a declared connection of its own kind.
func (c *checker) executorConnection(ptr, kind string) {
	if kind != ExecutorMCP && kind != ExecutorCLI && kind != ExecutorREST && kind != ExecutorLLM {
		return
	}
	name, ok := c.str(ptr + "/connection")
	if !ok {
		return
	}
	conns, _ := c.obj("/connections")
	conn, declared := conns[name].(map[string]any)
	switch {
	case !declared:
		c.report(ptr+"/connection", "names no declared connection%s", nameHint(name, c.keys("/connections", conns), "connections"))
	case conn["kind"] != kind && conn["kind"] != nil:
		c.report(ptr+"/connection", "names the %v connection %s: %s %s executor needs %s %s connection", conn["kind"], name, article(kind), kind, article(kind), kind)
	case kind == ExecutorCLI:
		if _, paths := c.obj(ptr + "/paths"); paths {
			if _, roots := conn["roots"]; !roots {
				c.reportKey(ptr+"/paths", "are checked against the roots of the connection, and the cli connection %s declares none: add roots (read, write) to it", name)
			}
		}
	}
}

// authKind returns the kind of a connection's auth, "" when it has none.
func authKind(conn map[string]any) string {
	a, _ := conn["auth"].(map[string]any)
	k, _ := a["kind"].(string)
	return k
}

// connectionAuth checks what the schema cannot say of the auth of the
// connection at ptr: passthrough is refused, token-exchange names an
// audience, the client authenticates one way, and no configured header
// competes with the token.
func (c *checker) connectionAuth(ptr string) {
	a, ok := c.obj(ptr + "/auth")
	if k, _ := c.str(ptr + "/kind"); !ok || (k != ConnectionREST && k != ConnectionMCP) {
		return
	}
	ptr += "/auth"
	kind, _ := a["kind"].(string)
	if kind == AuthPassthrough && !c.reported[ptr+"/kind"] {
		c.report(ptr+"/kind", "passthrough is refused: the MCP authorization specification forbids sending the caller's token to an upstream (it was issued for this gateway, and the upstream could replay it here); use kind token-exchange, which exchanges it at tokenEndpoint for a token issued for the upstream (RFC 8693), or client-credentials for the gateway's own identity")
		return
	}
	if kind == AuthTokenExchange {
		if _, has := a["audience"]; !has {
			c.reportKey(ptr, "needs audience with token-exchange: the upstream the exchanged token is for")
		}
	} else if _, has := a["actor"]; has {
		c.reportKey(ptr+"/actor", "applies to token-exchange only")
	}
	var ways []string
	for _, m := range []string{"clientSecret", "privateKey", "privateKeyFile"} {
		if _, has := a[m]; has {
			ways = append(ways, m)
		}
	}
	switch {
	case len(ways) == 0:
		c.reportKey(ptr, "needs one way for the client to authenticate: clientSecret (a ${NAME} reference), privateKey (a ${NAME} reference to a PEM key) or privateKeyFile (private_key_jwt)")
	case len(ways) > 1:
		c.reportKey(ptr+"/"+ways[1], "cannot be set together with %s: the client authenticates one way", ways[0])
	}
	if _, has := a["keyId"]; has && len(ways) == 1 && ways[0] == "clientSecret" {
		c.reportKey(ptr+"/keyId", "applies to a private key (privateKey or privateKeyFile), not to clientSecret")
	}
	if s, ok := c.str(ptr + "/tokenEndpoint"); ok {
		if msg := checkURL(s, urlRules{http: true}); msg != "" {
			c.report(ptr+"/tokenEndpoint", "%s", msg)
		}
	}
	headers, _ := c.obj(strings.TrimSuffix(ptr, "/auth") + "/headers")
	for k := range headers {
		if strings.EqualFold(k, "Authorization") {
			c.reportKey(strings.TrimSuffix(ptr, "/auth")+"/headers/"+escapePointer(k), "cannot be set together with auth: auth sends the Authorization header")
		}
	}
}
