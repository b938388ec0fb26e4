package config

// Kind is the kind of an executor, and of a connection: an executor of
// kind mcp, cli, rest or llm names a connection of its own kind. What
// each kind needs and allows is one entry of kinds; the checks of the
// configuration, the workflow engine, the runners and the docs read it
// through Kind's methods, never a list of their own. Adding a kind is an
// entry there (and its constant here) plus its runner; a test holds the
// table against schema.json, the Executor and Connection types and
// README.md.
type Kind string

// The executor kinds, in the order of schema.json's enum.
const (
	ExecutorNoop     Kind = "noop"
	ExecutorHuman    Kind = "human"
	ExecutorWorkflow Kind = "workflow"
	ExecutorMCP      Kind = "mcp"
	ExecutorCLI      Kind = "cli"
	ExecutorREST     Kind = "rest"
	ExecutorParallel Kind = "parallel"
	ExecutorLLM      Kind = "llm"
	ExecutorScript   Kind = "script"
)

// The connection kinds: each is the kind of the executors that call a
// connection of it.
const (
	ConnectionMCP  = ExecutorMCP
	ConnectionCLI  = ExecutorCLI
	ConnectionREST = ExecutorREST
	ConnectionLLM  = ExecutorLLM
)

// Run says how the workflow engine runs an executor of a kind.
type Run uint8

const (
	// RunRunner hands the executor to the runner registered for its kind
	// (workflow.Engine.Runners): one call, outside the engine. It is the
	// zero Run, so a kind the table does not hold is refused for want of
	// a runner rather than run as nothing.
	RunRunner Run = iota
	// RunNothing runs nothing: the move itself is the work (once a
	// person approved it, for a kind that NeedsApproval).
	RunNothing
	// RunWorkflow starts a sub-workflow and waits for it to end.
	RunWorkflow
	// RunBranches runs the executor's branches at once, each as its
	// runner does.
	RunBranches
)

// kindInfo is what the gateway knows of one kind.
type kindInfo struct {
	kind Kind
	// article is the indefinite article of the kind as it is spoken: an
	// mcp executor, a rest executor.
	article string
	run     Run
	// connection is the kind of the connection an executor of this kind
	// names ("" for none).
	connection Kind
	// approval: a person approves the move before it fires.
	approval bool
	// branch: the kind may be a branch of a parallel executor (one call,
	// a connection's or noop).
	branch bool
	// readOnly: an executor of the kind acts on nothing and reaches
	// nothing, so its capability is read-only and idempotent unless its
	// configuration says otherwise (ExecutorHints). Any other kind may
	// change the world: destructive, open-world, not idempotent.
	readOnly bool
	// methodHints: the executor's HTTP method refines those hints (RFC
	// 9110: GET, HEAD and OPTIONS read; PUT and DELETE are idempotent).
	methodHints bool
	// retries are the retries an executor gets when its reliability sets
	// none, all within its one timeout (RetriesFor).
	retries int
	// retryAfter: a failed answer may ask to be left alone for up to
	// MaxRetryAfter before the next attempt (Reliability.WorstCase).
	retryAfter bool
	// usage: the executor's output reports its token usage and budget,
	// which the attempt records.
	usage bool
	// members are the members an executor of the kind admits, as the
	// if/then rules of schema.json do.
	members []string
	// check checks what the schema cannot say of an executor of the kind
	// at ptr, after what every executor is checked for (checker.executor).
	// It is given the kind's entry: a check that looked the kind up in
	// kinds would make the table depend on itself.
	check func(c *checker, ptr string, k *kindInfo)

	// connectionMembers are the members a connection of the kind admits,
	// as the if/then rules of schema.json do; nil when no connection has
	// the kind.
	connectionMembers []string
	// imports: proxy.import can list the tools of a connection of the
	// kind.
	imports bool
	// checkConnection checks what the schema cannot say of the
	// connection conn at ptr (checker.connections).
	checkConnection func(c *checker, ptr string, conn map[string]any)
}

// kinds are the kinds, in the order of schema.json's enum.
var kinds = []kindInfo{
	{kind: ExecutorNoop, article: "a", run: RunNothing, branch: true, readOnly: true,
		members: []string{"kind"}},
	{kind: ExecutorHuman, article: "a", run: RunNothing, approval: true,
		members: []string{"kind", "queue", "approver"}},
	{kind: ExecutorWorkflow, article: "a", run: RunWorkflow,
		members: []string{"kind", "definitionId", "input", "timeoutMs"}},
	{kind: ExecutorMCP, article: "an", run: RunRunner, connection: ConnectionMCP, branch: true,
		members:           []string{"kind", "connection", "tool", "map", "timeoutMs"},
		connectionMembers: []string{"kind", "command", "args", "env", "url", "headers", "auth", "pin"},
		imports:           true,
		checkConnection:   (*checker).mcpConnection},
	{kind: ExecutorCLI, article: "a", run: RunRunner, connection: ConnectionCLI, branch: true,
		members:           []string{"kind", "connection", "args", "treatNonZeroAsFailure", "paths", "unconfinedArguments", "optionArguments", "timeoutMs"},
		check:             (*checker).cliExecutor,
		connectionMembers: []string{"kind", "command", "workingDirectory", "env", "shell", "confine", "roots"},
		checkConnection:   (*checker).cliConnection},
	{kind: ExecutorREST, article: "a", run: RunRunner, connection: ConnectionREST, branch: true,
		methodHints: true, retries: DefaultRESTRetries, retryAfter: true,
		members:           []string{"kind", "connection", "method", "path", "query", "headers", "body", "timeoutMs"},
		connectionMembers: []string{"kind", "baseUrl", "headers", "auth"}},
	{kind: ExecutorParallel, article: "a", run: RunBranches,
		members: []string{"kind", "branches", "policy"}},
	{kind: ExecutorLLM, article: "an", run: RunRunner, connection: ConnectionLLM, branch: true, usage: true, retryAfter: true,
		members:           []string{"kind", "connection", "prompt", "system", "outputSchema", "maxTokens", "timeoutMs"},
		check:             (*checker).llmExecutor,
		connectionMembers: []string{"kind", "baseUrl", "model", "apiKey", "headers"}},
	{kind: ExecutorScript, article: "a", run: RunRunner, readOnly: true,
		members: []string{"kind", "script", "timeoutMs"},
		check:   (*checker).scriptExecutor},
}

// kindIndex finds a kind's entry of kinds: one map lookup, the cost of
// every method of Kind.
var kindIndex = func() map[Kind]*kindInfo {
	m := make(map[Kind]*kindInfo, len(kinds))
	for i := range kinds {
		m[kinds[i].kind] = &kinds[i]
	}
	return m
}()

// unknownKind is the entry of a kind the table does not hold: it runs
// through a runner, which no one registers (so its call is refused as
// not implemented), names no connection, needs no approval, may be no
// branch, and its capability is destructive.
var unknownKind kindInfo

func (k Kind) info() *kindInfo {
	if i, ok := kindIndex[k]; ok {
		return i
	}
	return &unknownKind
}

// Kinds returns the executor kinds, in the order of schema.json.
func Kinds() []Kind {
	out := make([]Kind, len(kinds))
	for i := range kinds {
		out[i] = kinds[i].kind
	}
	return out
}

// ConnectionKinds returns the connection kinds, in the order of
// schema.json.
func ConnectionKinds() []Kind {
	var out []Kind
	for i := range kinds {
		if kinds[i].connectionMembers != nil {
			out = append(out, kinds[i].kind)
		}
	}
	return out
}

// Known reports whether k is an executor kind this gateway runs.
func (k Kind) Known() bool {
	_, ok := kindIndex[k]
	return ok
}

// Runs says how the workflow engine runs an executor of kind k.
func (k Kind) Runs() Run { return k.info().run }

// Connection returns the kind of the connection an executor of kind k
// names, "" when it names none.
func (k Kind) Connection() Kind { return k.info().connection }

// NeedsConnection reports whether an executor of kind k calls a
// connection: the kinds that retries, fallbacks and the lease bound
// apply to.
func (k Kind) NeedsConnection() bool { return k.info().connection != "" }

// ReachesOutside reports whether an executor of kind k runs outside the
// workflow engine: through a runner (a connection's call, a script), or
// through the runners of its branches. A move that may run one records
// its calls before its store transaction (see workflow.Tape).
func (k Kind) ReachesOutside() bool {
	r := k.info().run
	return r == RunRunner || r == RunBranches
}

// NeedsApproval reports whether a person approves a move whose executor is
// of kind k before it fires.
func (k Kind) NeedsApproval() bool { return k.info().approval }

// Branchable reports whether an executor of kind k may be a branch of a
// parallel executor.
func (k Kind) Branchable() bool { return k.info().branch }

// ReportsUsage reports whether an executor of kind k reports its token
// usage and budget in its output (usage, budget), which its attempt
// records.
func (k Kind) ReportsUsage() bool { return k.info().usage }

// Members returns the members an executor of kind k admits, in the order
// of the table (nil for a kind the table does not hold).
func (k Kind) Members() []string { return k.info().members }

// ConnectionMembers returns the members a connection of kind k admits
// (nil when no connection has kind k).
func (k Kind) ConnectionMembers() []string { return k.info().connectionMembers }

// article is the indefinite article of k as it is spoken.
func (k Kind) article() string {
	if a := k.info().article; a != "" {
		return a
	}
	return "a"
}

// kindNames returns the names of the kinds for which keep is true, in the
// order of the table, for a message that lists them.
func kindNames(keep func(*kindInfo) bool) []string {
	var out []string
	for i := range kinds {
		if keep(&kinds[i]) {
			out = append(out, string(kinds[i].kind))
		}
	}
	return out
}

// connectionKindNames returns the names of the kinds whose executors call
// a connection, for a message that lists them.
func connectionKindNames() []string {
	return kindNames(func(k *kindInfo) bool { return k.connection != "" })
}
