package config

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Connection is one backend the gateway talks to, under connections: an
// MCP server (a child process over stdio, or a streamable HTTP URL), a
// command line program, or a REST API. Which members apply depends on Kind:
//
//   - mcp: Command, Args and Env (a child process the gateway starts), or
//     URL and Headers (a server running elsewhere);
//   - cli: Command, WorkingDirectory, Env, Shell and Confine;
//   - rest: BaseURL and Headers;
//   - llm: BaseURL, Model, APIKey and Headers (an OpenAI-compatible
//     chat-completions server).
//
// Values of Env and Headers may name environment variables of the gateway
// as ${NAME}; they are read when the connection is opened, never logged.
type Connection struct {
	Kind Kind `json:"kind"`

	// Command is the program to run (mcp over stdio, cli): a path, or a
	// name looked up in the PATH the child is given.
	Command string `json:"command,omitempty"`
	// Args are the arguments of an mcp child process (a cli executor
	// brings its own arguments).
	Args []string `json:"args,omitempty"`
	// Env is added to the child's environment, which otherwise holds only
	// PATH, HOME, LANG and TMPDIR of the gateway's: never its secrets. A
	// confined cli command gets a private HOME, TMPDIR and XDG directories
	// instead of the gateway's (Confine); a variable Env names is Env's.
	Env map[string]string `json:"env,omitempty"`

	// URL is the streamable HTTP endpoint of an mcp server.
	URL string `json:"url,omitempty"`
	// Headers are sent with every request (rest, and mcp over URL).
	Headers map[string]string `json:"headers,omitempty"`

	// WorkingDirectory is where a cli command runs (default the gateway's
	// working directory).
	WorkingDirectory string `json:"workingDirectory,omitempty"`
	// Shell runs a cli command line through /bin/sh -c: the command and
	// the executor's arguments joined by spaces, each argument read from a
	// path quoted for the shell. Default false: argv, no shell.
	Shell bool `json:"shell,omitempty"`
	// Confine runs a cli command in a bubblewrap sandbox where it may
	// write only under the listed directories, never under the protected
	// paths, with a private environment. A machine without bwrap refuses
	// the connection rather than run it unconfined.
	Confine *Confine `json:"confine,omitempty"`
	// Roots is the path authority of a cli connection (seeds/002): where
	// its working directory and the paths its executors declare may lie.
	Roots *Roots `json:"roots,omitempty"`

	// BaseURL is the root of a rest API, or of an llm server's
	// OpenAI-compatible API (chat completions are POSTed to
	// BaseURL/chat/completions).
	BaseURL string `json:"baseUrl,omitempty"`
	// Model is the model an llm connection asks for.
	Model string `json:"model,omitempty"`
	// Pin says how the definitions of the tools proxy.import takes from
	// an mcp connection are pinned: PinEnforce (the default, ""), PinWarn
	// or PinOff (see PinMode).
	Pin string `json:"pin,omitempty"`

	// APIKey is an llm connection's API key, sent as a bearer token: a
	// ${NAME} reference to the gateway's environment, read when a call is
	// made and never logged or audited.
	APIKey string `json:"apiKey,omitempty"`

	// Auth is how a rest connection, or an mcp connection over URL,
	// obtains the bearer token it sends upstream (nil: none beyond the
	// configured headers).
	Auth *ConnectionAuth `json:"auth,omitempty"`
}

// The kinds of a connection's auth.
const (
	// AuthTokenExchange exchanges the caller's verified access token for
	// one the upstream accepts (RFC 8693): the upstream sees the caller.
	AuthTokenExchange = "token-exchange"
	// AuthClientCredentials obtains a token for the gateway itself (RFC
	// 6749 §4.4): the upstream sees the gateway.
	AuthClientCredentials = "client-credentials"
	// AuthPassthrough would send the caller's own token upstream; it is
	// refused when the configuration is loaded.
	AuthPassthrough = "passthrough"
)

// ConnectionAuth is the auth of a connection: a token obtained from an
// OAuth 2.0 token endpoint and sent upstream as Authorization: Bearer.
type ConnectionAuth struct {
	// Kind is token-exchange or client-credentials.
	Kind string `json:"kind"`
	// TokenEndpoint is the authorization server's token endpoint.
	TokenEndpoint string `json:"tokenEndpoint"`
	// Audience is the upstream the token is for (RFC 8693 audience);
	// required with token-exchange.
	Audience string `json:"audience,omitempty"`
	// Resource is the upstream's resource indicator (RFC 8707), sent when
	// set.
	Resource string `json:"resource,omitempty"`
	// Scope is the space-separated scope asked for.
	Scope string `json:"scope,omitempty"`
	// ClientID is the gateway's client at the token endpoint.
	ClientID string `json:"clientId"`
	// ClientSecret authenticates the client (client_secret_basic): a
	// ${NAME} reference to the gateway's environment, never the secret.
	ClientSecret string `json:"clientSecret,omitempty"`
	// PrivateKey authenticates the client with a signed assertion
	// (private_key_jwt, RFC 7523): a ${NAME} reference to an environment
	// variable holding a PEM private key (RSA, EC P-256 or Ed25519).
	PrivateKey string `json:"privateKey,omitempty"`
	// PrivateKeyFile is PrivateKey read from a PEM file instead; a
	// relative path is relative to the configuration file's directory.
	PrivateKeyFile string `json:"privateKeyFile,omitempty"`
	// KeyID is the kid of the private key, sent in the assertion's header.
	KeyID string `json:"keyId,omitempty"`
	// Actor, with token-exchange, sends the gateway's own token (obtained
	// with client credentials at the same endpoint) as the actor_token:
	// the upstream token then names the gateway as acting for the caller.
	Actor bool `json:"actor,omitempty"`
}

// Pin modes of an mcp connection (Connection.Pin).
const (
	// PinEnforce quarantines an imported capability whose upstream
	// definition no longer matches its pin, until an operator accepts
	// the new one.
	PinEnforce = "enforce"
	// PinWarn audits and logs a changed definition and serves it.
	PinWarn = "warn"
	// PinOff checks nothing.
	PinOff = "off"
)

// PinMode is the connection's pin mode: Pin, PinEnforce when unset.
func (c Connection) PinMode() string {
	if c.Pin == "" {
		return PinEnforce
	}
	return c.Pin
}

// Confine is the sandbox of a cli connection (seeds/002's confinement):
// bubblewrap with the whole file system read-only but Writable, Protected
// read-only again inside Writable, and a private environment (HOME,
// TMPDIR and the XDG directories fresh for each call).
type Confine struct {
	// Writable lists the directories the command may write under; the
	// rest of the file system is read-only.
	Writable []string `json:"writable"`
	// Protected lists paths inside the writable directories that stay
	// read-only (a repository's .git, a lock file): bubblewrap mounts each
	// read-only after the writable binds, and pins the directories
	// between it and its writable directory so that the command cannot
	// move it aside. Each must lie inside a writable directory (the load
	// refuses one that does not: it would protect nothing) and exist,
	// without a symbolic link below its writable directory, when a call
	// runs: a call whose protected path cannot be protected is refused
	// (unavailable), never run with the path writable.
	Protected []string `json:"protected,omitempty"`
}

// Roots grants a cli connection read and write authority over
// directories. A read path must resolve (symlinks followed) under a read
// or a write root, a write path under a write root: read roots never grant
// writes.
type Roots struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// PathArgs are the path arguments of a cli executor: values ($. paths
// into the scope, or literal paths) that must resolve under the
// connection's roots before the command runs.
type PathArgs struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// Import is one entry of proxy.import: the tools of an mcp connection,
// listed when the gateway starts, each offered as a capability named
// PREFIX.TOOL with the upstream description and input schema.
type Import struct {
	// Connection names an mcp connection.
	Connection string `json:"connection"`
	// Prefix is prepended to each tool name with a dot (default the
	// connection's name).
	Prefix string `json:"prefix,omitempty"`
	// Include, when set, imports only these tools; Exclude skips tools
	// after Include.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// Tags are given to every imported capability.
	Tags []string `json:"tags,omitempty"`
	// ExposeDirectly lists every imported tool as an MCP tool of its own.
	ExposeDirectly bool `json:"exposeDirectly,omitempty"`
}

// envRef matches ${NAME} in a connection's header or env value.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Interpolate replaces every ${NAME} of s with the value getenv gives
// (os.Getenv when nil); an unset variable becomes empty and is reported in
// missing.
func Interpolate(s string, getenv func(string) string) (out string, missing []string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	out = envRef.ReplaceAllStringFunc(s, func(m string) string {
		name := envRef.FindStringSubmatch(m)[1]
		v := getenv(name)
		if v == "" && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return v
	})
	return out, missing
}

// EnvNames returns the names of the environment variables s refers to as
// ${NAME}.
func EnvNames(s string) []string {
	var out []string
	for _, m := range envRef.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// SetImported adds the capabilities proxy.import produced at start to the
// ones the configuration declares; Exposed lists them after those. An
// imported capability whose id is already taken is not added (the caller
// logs it); the ids added are returned.
func (c *Config) SetImported(caps []ExposedCapability) []string {
	taken := map[string]bool{}
	for _, x := range c.exposedDeclared() {
		taken[x.ID] = true
	}
	for id := range c.Workflows {
		taken[id] = true
	}
	for _, n := range c.ConnectionNames() {
		taken[n] = true
	}
	c.imported = c.imported[:0]
	var added []string
	for _, x := range caps {
		if taken[x.ID] || x.ID == ProxyDefaultWorkflow {
			continue
		}
		taken[x.ID] = true
		c.imported = append(c.imported, x)
		added = append(added, x.ID)
	}
	return added
}

// SetQuarantined records which imported capabilities their pins
// quarantine (pins.Check): Exposed marks them Quarantined.
func (c *Config) SetQuarantined(ids []string) {
	c.quarantined = make(map[string]bool, len(ids))
	for _, id := range ids {
		c.quarantined[id] = true
	}
}

// hasShellMeta reports whether s holds a character a shell interprets.
func hasShellMeta(s string) bool {
	return strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}~#!")
}

// ShellQuote quotes s as one word for /bin/sh.
func ShellQuote(s string) string {
	if s != "" && !hasShellMeta(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Clone returns a copy of c whose imported capabilities (SetImported) can
// be replaced without touching c's: the configuration a Reloader imports
// again from. The sections are shared, not copied; nothing changes them
// once the configuration is loaded and Defaults has run.
func (c *Config) Clone() *Config {
	d := *c
	d.imported = slices.Clone(c.imported)
	d.quarantined = maps.Clone(c.quarantined)
	return &d
}

// resolveKeyFiles makes each relative auth.privateKeyFile relative to the
// directory of the configuration file (Source), as the audit sink's path.
func (c *Config) resolveKeyFiles() {
	if c.Source == "" {
		return
	}
	for name, conn := range c.Connections {
		if conn.Auth == nil || conn.Auth.PrivateKeyFile == "" || filepath.IsAbs(conn.Auth.PrivateKeyFile) {
			continue
		}
		a := *conn.Auth
		a.PrivateKeyFile = filepath.Join(filepath.Dir(c.Source), a.PrivateKeyFile)
		conn.Auth = &a
		c.Connections[name] = conn
	}
}
