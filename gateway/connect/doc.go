// Package connect runs the connections of the configuration: MCP servers
// (child processes over stdio, or streamable HTTP URLs, through the go-sdk
// client), command line programs, REST APIs and OpenAI-compatible LLM
// servers. It implements workflow.Runner for the executor kinds that call
// a connection (config.Kind.NeedsConnection), each registered once in
// kinds, and lists the tools of MCP connections for proxy.import.
//
// # Child processes
//
// Every process the gateway starts (an MCP server, a CLI command) gets an
// environment built from an allow-list: PATH, HOME, LANG and TMPDIR of the
// gateway's own environment, plus the variables its connection names in
// env (whose values may read the gateway's variables as ${NAME}). Nothing
// else of the gateway's environment, its secrets included, reaches it.
//
// No child outlives the gateway, grandchildren included (npx starts its
// own). On Linux a child is started with a parent-death signal (SIGKILL)
// in its own process group and, where the kernel lets the gateway create
// one, in its own PID namespace: when the gateway dies, however it dies,
// the kernel kills the child, and when that child (the namespace's first
// process) dies, the kernel kills every process left in the namespace.
// Where PID namespaces are not available (an unprivileged user without
// user namespaces) the process group and the parent-death signal remain:
// an orderly shutdown kills the whole group, a SIGKILL of the gateway
// kills the child, and a grandchild sees its standard input close. The
// parent-death signal fires when the thread that started the child ends,
// so children are started from one goroutine locked to its thread for the
// life of the process.
//
// # MCP connections
//
// An MCP connection is opened on its first use and held open: every call
// reuses the one session. When the child dies, or the session breaks, the
// next call opens it again, after a backoff that doubles on each failed
// start (100ms up to 30s) and resets once a session has lived a minute.
// A session opens on a goroutine of its own: a call waits for it no
// longer than its own timeout (it then answers unavailable, nothing sent)
// and the open goes on for the calls that follow, so that no attempt
// outlasts its timeoutMs. Close ends every session, an open in progress
// included, and kills the process groups.
//
// Calls to one connection overlap on its one session: go-sdk's client
// session writes each call as it comes (over stdio one line each, over
// streamable HTTP a POST each, on an HTTP connection of its own) and
// matches the answers by id, so a session does not serialize calls and
// a pool of sessions would add nothing but children (one process per
// stdio session) and split what a stateful upstream keeps per session.
// The HTTP connections of a URL (and of a rest connection) are kept for
// the calls that follow, up to 64 idle per host, rather than the default
// transport's 2, and the end of an answer's stream is read after the
// call returned rather than cut, which closed its connection.
//
// # Outcomes
//
// A call that does not succeed returns a *workflow.ExecutorError whose
// Outcome says what is known: unavailable (nothing was sent: the
// connection could not open, the program could not start, the sandbox it
// demands is missing), failed (the upstream answered with a failure, or
// the request could not be built from the executor and the arguments: a
// call that would fail the same way again), or
// unknown (a timeout or a broken connection after the call was sent: it may
// have taken effect). Messages name the connection, the tool, command or
// path, and what the upstream said; a URL is named by its host, and
// header values, environment values and a URL's query and user
// information are never put in an error or a log line (see redact.go).
//
// A runner makes one attempt per call. Retries and fallback executors are
// the workflow engine's, by the capability's reliability (see
// config.Reliability): it tries a call again, or hands it to a fallback,
// only when its outcome is unavailable, so that a call that may have acted
// is never made twice and every attempt is recorded.
package connect
