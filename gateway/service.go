package gateway

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/lightpath"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/pins"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/telemetry/tracing"
	"github.com/praxa/praxa/gateway/workflow"
)

// Service is the one service layer. Every surface (REST, MCP over HTTP and
// stdio, the console) hands it a Call and a verified principal; the service
// admits the call through the one chain of checks (admission.go: allowlist,
// scope, tenancy, key, arguments, schema, then at execution the
// idempotency record, policy, quarantine, rate limit, lease, guards and
// quota), runs the operation and audits the decision. Surfaces only
// translate.
//
// The Service keeps the pipeline: admission, idempotency, policy, quotas,
// rate limits, the direct calls, and the read or write transaction of an
// operation. The missions (starts, moves, leases, waits, approvals, the
// run sweeper) live in a type of their own, missions (missions.go), with
// its leases (leases.go); the operations table hands them their calls.
type Service struct {
	store     store.Store
	audit     *audit.Auditor
	now       func() time.Time
	log       *slog.Logger
	ops       map[string]operation
	inflight  sync.Map // namespace + "\x00" + key -> struct{}
	workflows *workflow.Registry
	// keys is how long an idempotency record replays and a key is kept
	// from acting again (idempotency.go).
	keys keyTimes
	// missions runs the missions: their starts and moves, leases, waits,
	// approvals and the run sweeper (missions.go).
	missions *missions
	// cat is the catalogue and lexicon in force (package catalogue).
	cat *catalogue.Catalogue
	// quotas holds the tenant quotas in force (quotas.go).
	quotas quotaState
	// policy is the configuration's policy in force (a reload replaces
	// it).
	policy atomic.Pointer[config.Policy]
	// light runs the direct calls that need no run (direct.go).
	light *lightpath.Path
	// limiter enforces the capabilities' rate limits (ratelimits.go).
	limiter atomic.Pointer[limiterBox]
	// pins holds the quarantined imported capabilities and the requests
	// to list the imported tools again (package pins).
	pins *pins.Pins
}

// Options configure a Service. The zero value is usable.
type Options struct {
	// Now is the clock (default time.Now); schedule guards read it.
	Now func() time.Time
	// Logger receives operational logs (default slog.Default()).
	Logger *slog.Logger
	// Retention is how long idempotency records replay (default 24h).
	Retention time.Duration
	// TombstoneRetention is how long, from its first use, a key is kept
	// from acting again (config.DefaultTombstoneRetention when zero; never
	// less than Retention): past Retention the key answers 409
	// idempotency-key-expired (idempotency.go).
	TombstoneRetention time.Duration
	// Auditor receives the events of reads and refusals; nil creates one
	// on the store.
	Auditor *audit.Auditor
	// Workflows are the compiled workflow definitions (none when nil).
	Workflows *workflow.Registry
	// Policy holds the destructive-action denials.
	Policy config.Policy
	// Discovery is the catalogue search and describe answer from; nil
	// indexes Workflows alone.
	Discovery *discovery.Index
	// Lexicon holds the configuration's lexicon terms, keyed by term.
	Lexicon map[string]config.LexiconEntry
	// LexiconWrites accepts praxec.command define (off by default: a
	// define answers LEXICON_WRITES_DISABLED).
	LexiconWrites bool
	// SkillsSearch and ScriptsSearch accept the skill and script kinds in
	// a search (INVALID_PARAMS otherwise).
	SkillsSearch, ScriptsSearch bool
	// Runners run the executor kinds that call a connection (package
	// connect), by kind; without them those executors answer
	// not-implemented. Their calls run outside any store transaction (see
	// external.go).
	Runners map[config.Kind]workflow.Runner
	// Skills are the governed skills aura_get_skill serves (none when
	// nil): gateway-wide configuration, the same for every tenant.
	Skills *skills.Catalog
	// Scripts are the scripts script executors run, and search and
	// describe answer (none when nil). With scripts, or with Runners, the
	// service runs script executors itself (scripts.go).
	Scripts *scripts.Catalog
	// LeaseTTL is how long a move or start lease holds before another
	// gateway takes its holder for stopped mid-call (default
	// DefaultLeaseTTL, config.Config.LeaseTTL from server.leaseTTL; see
	// leases.go).
	LeaseTTL time.Duration
	// RunRetention is how long a proxy_default run may stay idle before
	// the run sweeper expires it (runs_expire.go); 0 keeps runs for good.
	// praxa serve passes config.Config.RunRetention (24h unless
	// proxy.runRetention says otherwise); a reload replaces it.
	RunRetention time.Duration
	// Quotas are the tenant quotas (server.quotas; none when zero); a
	// reload replaces them (quotas.go).
	Quotas config.Quotas
	// Quarantines are the imported capabilities quarantined by their pins
	// at start (pins.Check); a reload replaces them.
	Quarantines pins.Quarantines
	// ToolListChanges receives the requests to list the imported tools
	// again (give its Notify to connect.Options.ToolsChanged); nil
	// creates one.
	ToolListChanges *pins.ToolListChanges
}

// New returns a Service over st.
func New(st store.Store, opts *Options) *Service {
	o := *cmp.Or(opts, &Options{})
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Logger = cmp.Or(o.Logger, slog.Default())
	if o.Retention <= 0 {
		o.Retention = 24 * time.Hour
	}
	if o.Auditor == nil {
		o.Auditor = audit.NewAuditor(st, &audit.Options{Logger: o.Logger, Now: o.Now})
	}
	if o.Workflows == nil {
		o.Workflows, _ = workflow.Compile(nil)
	}
	if o.TombstoneRetention <= 0 {
		o.TombstoneRetention = config.DefaultTombstoneRetention
	}
	s := &Service{store: st, audit: o.Auditor, now: o.Now, log: o.Logger, workflows: o.Workflows,
		keys: keyTimes{retention: o.Retention, tombstones: max(o.TombstoneRetention, o.Retention)}}
	s.policy.Store(&o.Policy)
	s.quotas.quotas.Store(&o.Quotas)
	s.SetLimiter(nil)
	s.pins = pins.New(st, &pins.Options{Now: o.Now, Quarantines: o.Quarantines, Changes: o.ToolListChanges})
	s.cat = catalogue.New(st, &catalogue.Options{Now: o.Now, Logger: o.Logger, Index: o.Discovery, Workflows: o.Workflows,
		Lexicon: o.Lexicon, Skills: o.Skills, Scripts: o.Scripts, LexiconWrites: o.LexiconWrites,
		SkillsSearch: o.SkillsSearch, ScriptsSearch: o.ScriptsSearch, Pins: s.pins})
	engine := &workflow.Engine{Registry: o.Workflows, NewID: newID, Runners: withScriptRunner(o.Runners, o.Scripts, s.cat), Now: o.Now}
	s.missions = newMissions(st, &o, engine, s.cat, &s.quotas, s.keys)
	s.light = &lightpath.Path{Engine: engine, Journal: s.audit}
	s.ops = s.operations()
	s.Register(s.cat.Operations()...)
	return s
}

// Surface names where a call came in.
type Surface string

// The surfaces.
const (
	SurfaceREST Surface = "rest"
	SurfaceMCP  Surface = "mcp"
	// SurfaceConsole is the operator console (package console): its
	// calls are reads, their arguments given as MCP's are.
	SurfaceConsole Surface = "console"
)

// Call is one tool invocation, whatever surface it came in on.
type Call struct {
	// Tool is the contract tool name.
	Tool string
	// Capability, for a call of a directly exposed capability (CallDirect),
	// is the capability's id: Tool is then praxec.command, whose start the
	// call stands for, and Args loads the capability's own arguments.
	Capability string
	Surface    Surface
	// Key is the idempotency key sent beside the arguments (REST's
	// Idempotency-Key header); KeySent says a header was present even if
	// empty. Over MCP the key is the idempotencyKey argument.
	Key     string
	KeySent bool
	// Args loads the decoded arguments. It is called only after the scope
	// (outside praxec) and the key presence were checked, so a refusal never
	// reads the body.
	Args func() (map[string]any, error)
	// PathValue is the path argument of a REST call, known before the body
	// is read: the object it names is checked for ownership first.
	PathValue string
	// ToolSet names the tool set the surface serves ("" for all); policy
	// may match on it.
	ToolSet string
	// RequestID identifies the request; TraceID is its W3C trace id.
	RequestID string
	TraceID   string
}

// Result is the answer to a Call.
type Result struct {
	// Status is the HTTP status of the answer.
	Status int
	// Header holds response headers to send (Location).
	Header map[string]string
	// Body is the JSON of a successful answer.
	Body []byte
	// Err is set for a refusal or failure instead of Body.
	Err *contracts.Error
	// Replayed says the answer is a stored one replayed for an idempotency
	// key; RequestID is then, for a replayed refusal, the id of the request
	// that was answered first ("" when the record does not say).
	Replayed  bool
	RequestID string
	// TraceID is the trace id a refusal's body names: the call's own, or
	// for a replayed refusal the trace of the request answered first (the
	// call's own when the record does not say). Every surface puts it in
	// the error body as traceId.
	TraceID string
	// Operation is the operationId, or for praxec tools the dispatch
	// operation; surfaces use it for metrics.
	Operation string

	// audited says the call's events were already recorded.
	audited bool
	// value is what Body encodes, for a caller in this package that
	// wants it typed (nil for a replayed answer).
	value any
}

// env is what an operation of the root sees of its call: the Request a
// feature's operation sees (package op), and what the pipeline keeps of
// the call besides.
type env struct {
	op.Request
	toolSet string
	// tape holds the outside calls a move made before its transaction
	// (see external.go).
	tape *workflow.Tape
	// idemNS, idemKey and idemFP are the call's idempotency key (none for
	// a keyless call); lease is the move lease the call holds, refusal
	// the answer of a move refused before it ran (see leases.go).
	idemNS, idemKey, idemFP string
	lease                   *store.MoveLease
	refusal                 *contracts.Error
	// startLease is the start lease the call holds (leases_start.go);
	// startRun is the id of the run a start stores with its lease, minted
	// before its first outside call.
	startLease *store.StartLease
	startRun   string
	// resumeDue lists the parked parents the call's transaction left to
	// resume outside it (waits.go, resumeAfterCommit).
	resumeDue []missionRef
}

// operation implements one contract operation.
type operation struct {
	// read answers a safe read.
	read func(ctx context.Context, tx store.ReadTx, e *env) (any, error)
	// mutate changes state inside the store transaction. It must return
	// any error before it writes: a contract error is recorded as the
	// answer and the transaction commits only the idempotency record and
	// the audit events.
	mutate func(ctx context.Context, tx store.Tx, e *env) (any, error)
	// status overrides the tool's success status.
	status int
	// header computes response headers from the answer.
	header func(result any) map[string]string
	// storeless marks a read that answers from memory (home, the discovery
	// index): it runs without opening a store transaction, and its tx is
	// nil.
	storeless bool
	// exists checks that the object the path argument names belongs to the
	// tenant, before the idempotency key and the body are looked at (reads
	// need none: they answer not-found themselves).
	exists func(ctx context.Context, tx store.ReadTx, tenant, id string) error
	// prepare runs, outside any transaction and before mutate, the calls
	// of a move that reach outside the gateway, recording them in e.tape
	// for mutate to replay; it returns what releases the move's lock
	// after the transaction (see external.go).
	prepare func(ctx context.Context, e *env) (release func())
	// fires names the workflow definition and the transition the move
	// would fire ("" when it names none), for the destructive-action
	// policy on proxy_default's capabilities (policy.go); an error
	// refuses the move.
	fires func(ctx context.Context, e *env) (definitionID, transition string, err error)
}

// RequireScope checks one scope for an operation that is not a tool (the
// operator endpoints); it is the same check the tools get (op.RequireScope).
func RequireScope(p *auth.Principal, scope contracts.Scope) *contracts.Error {
	return op.RequireScope(p, scope)
}

// requireScope is the one scope check.
func requireScope(p *auth.Principal, scope contracts.Scope) *contracts.Error {
	return op.RequireScope(p, scope)
}

// ResourceMetadataPath is where the gateway's protected resource metadata
// (RFC 9728) names its authorization servers and scopes.
const ResourceMetadataPath = op.ResourceMetadataPath

// RequiredScopes returns the scopes an insufficient-scope error names, for
// the WWW-Authenticate challenge.
func RequiredScopes(err *contracts.Error) []string {
	if err == nil || err.Code != contracts.CodeInsufficientScope {
		return nil
	}
	var out []string
	for _, f := range err.Fields {
		if f.Keyword == "scope" {
			out = append(out, f.Detail)
		}
	}
	return out
}

// tools is the gateway's own copy of the contract's tools, made once:
// contracts.Lookup copies a tool's schemas on every call, and Invoke only
// reads them.
var tools = func() map[string]contracts.Tool {
	m := map[string]contracts.Tool{}
	for t := range contracts.All() {
		m[t.Name] = t
	}
	return m
}()

// Invoke runs one call for principal p.
func (s *Service) Invoke(ctx context.Context, p *auth.Principal, c Call) *Result {
	tool, ok := tools[c.Tool]
	if !ok {
		return &Result{Err: contracts.Errorf(contracts.CodeNotFound, "there is no tool %q", c.Tool)}
	}
	res := s.invoke(ctx, p, tool, c)
	s.finish(ctx, p, tool, c.RequestID, c.TraceID, res)
	if tracing.Recording(ctx) {
		outcome := "ok"
		if res.Err != nil {
			outcome = string(res.Err.Code)
		}
		tenant := ""
		if p != nil {
			tenant = p.Tenant
		}
		tracing.Annotate(ctx, tenant, res.Operation, c.Capability, "", outcome)
	}
	return res
}

// finish completes the answer of a call of tool: its operation, and for a
// refusal its status, the log line of an internal error and the refusal's
// audit event (unless the operation recorded its events itself).
func (s *Service) finish(ctx context.Context, p *auth.Principal, tool contracts.Tool, requestID, traceID string, res *Result) {
	if res.Operation == "" {
		res.Operation = tool.OperationID
	}
	if res.TraceID == "" {
		res.TraceID = traceID
	}
	if res.Err == nil {
		return
	}
	if res.Status == 0 {
		res.Status = res.Err.Status()
	}
	if res.Err.Code == contracts.CodeInternal {
		s.log.ErrorContext(ctx, "call failed", "tool", tool.Name, "err", res.Err.Cause)
	}
	if !res.audited {
		s.audit.Record(op.EventSpec{Actor: op.Caller(p, tool), Type: "request.refused", Outcome: "refused", Code: string(res.Err.Code),
			RequestID: requestID, TraceID: traceID, At: s.now()}.Build())
	}
}

func (s *Service) invoke(ctx context.Context, p *auth.Principal, tool contracts.Tool, c Call) (res *Result) {
	ctx = traced(ctx, c.TraceID)
	a, err := s.admit(ctx, p, tool, &c)
	if err != nil {
		// A refusal of the request's own arguments gets its next moves,
		// from the arguments when they were read (nextmoves.go).
		return &Result{Err: WithNextMoves(err, tool, a.args), Operation: a.opName}
	}
	args := a.args
	if c.Capability != "" {
		args = directStart(c.Capability, args) // what its run starts with
	}
	if tracing.Recording(ctx) {
		tracing.Annotate(ctx, "", "", movedCapability(args), "", "")
	}
	e := &env{Request: op.Request{Principal: p, Tool: tool, Args: args, RequestID: c.RequestID, TraceID: c.TraceID, Now: s.now()}, toolSet: c.ToolSet}
	if tool.Name == contracts.ToolPraxecCommand {
		// Its traceId modifier attaches the call's events to a trace of
		// the caller's (elsewhere traceId names a trace to read).
		e.CallTraceID = stringArg(args, "traceId")
	}
	if a.op.mutate != nil {
		// An unknown lexicon subject pauses a start or submit: the
		// interaction answers before the idempotency machinery, so it
		// consumes no key (subjects.go).
		if res = s.pauseOnUnknownSubject(ctx, a.opName, e); res == nil {
			res = s.mutate(ctx, p, tool, a.op, e, a.key)
		}
	} else {
		res = s.read(ctx, a.op, e)
	}
	if res.Err != nil {
		res.Err = WithNextMoves(res.Err, tool, args)
	}
	res.Operation = a.opName
	return res
}

// owns runs an operation's ownership check.
func (s *Service) owns(ctx context.Context, op operation, p *auth.Principal, id string) *contracts.Error {
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		return op.exists(ctx, tx, p.Tenant, id)
	})
	if err != nil {
		return asContractError(err)
	}
	return nil
}

// checkHeaderKey applies the key rules of a REST mutation: required
// operations need one; versioned ones take one when sent.
func checkHeaderKey(tool contracts.Tool, key string, sent bool) *contracts.Error {
	if tool.Idempotency == contracts.IdempotencyVersioned && !sent {
		return nil
	}
	if sent && key == "" {
		return contracts.Errorf(contracts.CodeIdempotencyKeyInvalid, "the Idempotency-Key header is empty or malformed")
	}
	if err := contracts.CheckIdempotencyKey(key); err != nil {
		return err.(*contracts.Error)
	}
	return nil
}

func (s *Service) read(ctx context.Context, op operation, e *env) *Result {
	var out any
	var err error
	if op.storeless {
		out, err = op.read(ctx, nil, e)
	} else {
		err = s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
			var err error
			out, err = op.read(ctx, tx, e)
			return err
		})
	}
	if err != nil {
		return &Result{Err: asContractError(err)}
	}
	if len(e.Events) == 0 {
		e.Event("request.allowed", nil)
	}
	for _, ev := range e.Events {
		s.audit.Record(ev)
	}
	return s.success(e, op, out)
}

func (s *Service) success(e *env, op operation, out any) *Result {
	body, err := marshal(out)
	if err != nil {
		return &Result{Err: asContractError(err)}
	}
	status := e.Tool.SuccessStatus
	if op.status != 0 {
		status = op.status
	}
	var header map[string]string
	if op.header != nil {
		header = op.header(out)
	}
	return &Result{Status: status, Header: header, Body: body, value: out}
}

// asContractError keeps contract errors and store sentinels meaningful and
// turns everything else into an internal error (op.AsError).
func asContractError(err error) *contracts.Error { return op.AsError(err) }

// Pins is the quarantine of the imported capabilities in force: the
// operator's review (/readyz, /metrics, the console) and acceptance of
// their new definitions.
func (s *Service) Pins() *pins.Pins { return s.pins }

// LeaseTTL is how long the service's move and start leases hold (read at
// start only: a reload that changes it is refused).
func (s *Service) LeaseTTL() time.Duration { return s.missions.leases.leaseTTL }

// Catalogue is the catalogue and lexicon in force: the operator's lexicon
// commands (DefineTerm, LexiconTerms, PendingTerms) and the console read
// it.
func (s *Service) Catalogue() *catalogue.Catalogue { return s.cat }

// AuditWaits reports how many audit events had to wait for room in the
// asynchronous audit queue (reads slowed by an audit trail that could not
// keep up).
func (s *Service) AuditWaits() int64 { return s.audit.Waits() }

// Close waits for the moves that outlived their requests, then flushes
// pending audit events.
func (s *Service) Close(ctx context.Context) error {
	if err := s.missions.waitDetached(ctx); err != nil {
		return err
	}
	return s.audit.Close(ctx)
}

// movedCapability is the capability a praxec.command names: the one a
// start fires (input.capability), or the transition a submit fires; ""
// for anything else.
func movedCapability(args map[string]any) string {
	if in, ok := args["input"].(map[string]any); ok {
		if c, ok := in["capability"].(string); ok {
			return c
		}
	}
	c, _ := args["transition"].(string)
	return c
}

// traced returns ctx carrying the W3C trace context of a call in trace
// (a span of its own), which the executors send on to their upstreams:
// while telemetry.Tracing, the span of the request in ctx (each hop then
// sends its own span's).
func traced(ctx context.Context, trace string) context.Context {
	if trace == "" {
		return ctx
	}
	if sc := oteltrace.SpanContextFromContext(ctx); sc.IsValid() {
		if tp := tracing.Traceparent(sc); tp[3:35] == trace {
			return workflow.WithTraceparent(ctx, tp)
		}
	}
	return workflow.WithTraceparent(ctx, "00-"+trace+"-"+ids.Span()+"-01")
}
