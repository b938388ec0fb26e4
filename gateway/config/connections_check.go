package config

import (
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// connectionKindAt returns the kind of the connection at ptr when ptr is a
// connection of a known kind.
func connectionKindAt(doc *document, ptr string) (Kind, bool) {
	if typeAt(ptr) != reflect.TypeFor[Connection]() {
		return "", false
	}
	v, _ := lookup(doc.value, ptr+"/kind")
	kind, _ := v.(string)
	return Kind(kind), Kind(kind).ConnectionMembers() != nil
}

// unknownConnectionMember words an unknown member of a connection.
func unknownConnectionMember(kind Kind, name string) string {
	owners := kindNames(func(k *kindInfo) bool { return slices.Contains(k.connectionMembers, name) })
	return unknownKindMember(kind.article()+" "+string(kind)+" connection", "connections", name, kind.ConnectionMembers(), owners)
}

// envNameRE matches an environment variable name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// connections checks what the schema cannot say of the connections
// section and of proxy.import: what each kind checks of its connections
// (kindInfo.checkConnection), auth, environment names, URLs, and that an
// import names a connection whose tools can be listed.
func (c *checker) connections() {
	conns, _ := c.obj("/connections")
	for _, name := range c.keys("/connections", conns) {
		ptr := "/connections/" + escapePointer(name)
		if conn, ok := c.obj(ptr); ok && !c.reported[ptr+"/kind"] {
			if kind, _ := conn["kind"].(string); Kind(kind).info().checkConnection != nil {
				Kind(kind).info().checkConnection(c, ptr, conn)
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
	c.eachMember("/proxy/import", "connection", func(ptr, name string) {
		conn, declared := conns[name].(map[string]any)
		switch {
		case !declared:
			c.report(ptr, "names no declared connection%s", nameHint(name, c.keys("/connections", conns), "connections"))
		case !connectionKind(conn).info().imports:
			c.report(ptr, "names the %v connection %s: only the tools of an mcp connection can be imported", conn["kind"], name)
		case authKind(conn) == AuthTokenExchange:
			c.report(ptr, "names the connection %s, whose auth is token-exchange: its tools are listed at start, when no caller's token is there to exchange; declare its tools under proxy.expose (mcp executors), or give it auth kind client-credentials", name)
		}
	})
}

// mcpConnection checks the mcp connection conn at ptr: a child process
// (command, args, env) or a server running elsewhere (url, headers,
// auth), never both.
func (c *checker) mcpConnection(ptr string, conn map[string]any) {
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

// cliConnection checks the cli connection conn at ptr: each protected path
// of confine lies inside one of its writable directories (the rest of the
// file system is read-only already, so a path outside them protects
// nothing, and is most likely a mistyped one left writable), and is not
// one of them.
func (c *checker) cliConnection(ptr string, _ map[string]any) {
	var writable []string
	c.each(ptr+"/confine/writable", func(_, w string) { writable = append(writable, filepath.Clean(w)) })
	items, _ := lookup(c.doc.value, ptr+"/confine/writable")
	if l, ok := items.([]any); !ok || len(writable) != len(l) {
		return // no writable list, or one the schema refused: its fix comes first
	}
	c.each(ptr+"/confine/protected", func(at, p string) {
		if slices.Contains(strings.Split(p, "/"), "..") {
			c.report(at, "has a \"..\" element: name the protected path as it is, since \"..\" after a symbolic link is not what the kernel resolves")
			return
		}
		p = filepath.Clean(p)
		if slices.Contains(writable, p) {
			c.report(at, "is the writable directory %s itself: a protected path is a part of a writable directory that stays read-only; to make all of it read-only, remove it from writable", p)
			return
		}
		for _, w := range writable {
			if strings.HasPrefix(p, strings.TrimSuffix(w, "/")+"/") {
				return
			}
		}
		listed := "lists none"
		if len(writable) > 0 {
			listed = "is " + strings.Join(writable, ", ")
		}
		c.report(at, "is not inside a writable directory (confine.writable %s): everything else is read-only already, so it would protect nothing; name a path inside a writable directory, or remove it", listed)
	})
}

// connectionKind returns the kind of conn, a connection of the file (""
// when it has none, or not a string).
func connectionKind(conn map[string]any) Kind {
	k, _ := conn["kind"].(string)
	return Kind(k)
}

// ofKind reports whether conn, a connection of the file, has kind k, or
// no kind at all (which the schema reports).
func ofKind(conn map[string]any, k Kind) bool {
	return conn["kind"] == nil || connectionKind(conn) == k
}

// namedConnection returns the name of the connection the executor at ptr
// names (ok false when it names none) and that connection, nil when the
// file declares none by that name.
func (c *checker) namedConnection(ptr string) (name string, conn map[string]any, ok bool) {
	name, ok = c.str(ptr + "/connection")
	if !ok {
		return "", nil, false
	}
	conns, _ := c.obj("/connections")
	conn, _ = conns[name].(map[string]any)
	return name, conn, true
}

// executorConnection checks that the executor at ptr, of a kind that
// needs a connection, names a declared connection of the kind it needs.
func (c *checker) executorConnection(ptr string, kind Kind) {
	if !kind.NeedsConnection() {
		return
	}
	name, conn, ok := c.namedConnection(ptr)
	switch want := kind.Connection(); {
	case !ok:
	case conn == nil:
		conns, _ := c.obj("/connections")
		c.report(ptr+"/connection", "names no declared connection%s", nameHint(name, c.keys("/connections", conns), "connections"))
	case !ofKind(conn, want):
		c.report(ptr+"/connection", "names the %v connection %s: %s %s executor needs %s %s connection", conn["kind"], name, kind.article(), kind, want.article(), want)
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
	if k, _ := c.str(ptr + "/kind"); !ok || !slices.Contains(Kind(k).ConnectionMembers(), "auth") {
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
