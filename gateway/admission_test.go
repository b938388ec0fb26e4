package gateway

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/pins"
	"github.com/praxa/praxa/gateway/store/memstore"
	"github.com/praxa/praxa/gateway/strictjson"
)

// admissionFiles declare what the chain's refusals need: a workflow for
// the aura mission tools (gatewaytest's deploy), capabilities of every
// kind of check (a light one, a destructive one, one a run must carry, a
// quarantined one, and one sharing a rate limit with another), and the
// sandbox tenant denied destructive actions.
var admissionFiles = []string{"gatewaytest/testdata/deploy.yaml", "testdata/admission.yaml"}

// admissionRequest is one call as a caller means it; each surface carries
// it its own way (toCall).
type admissionRequest struct {
	// tool is the contract tool; "" with capability set for a direct call.
	tool, capability string
	// body is the JSON text of the arguments, without the key and the path
	// argument (or a text that is not JSON).
	body string
	// key is the idempotency key ("" for none), path the path argument's
	// value ("" for none).
	key, path string
}

// The surfaces: REST carries the key in a header and the path argument in
// the path; MCP (HTTP and stdio: one backend) and the console carry both
// in the arguments; a direct tool is a call of its own.
const (
	onREST    = "rest"
	onMCP     = "mcp"
	onConsole = "console"
	onDirect  = "direct"
)

// toCall is r as surface hands it to the service.
func toCall(surface string, r admissionRequest, trace string) Call {
	tool, _ := contracts.Lookup(r.tool)
	args := func(inBody map[string]string) func() (map[string]any, error) {
		return func() (map[string]any, error) {
			body := r.body
			if body == "" {
				body = "{}"
			}
			m, err := strictjson.DecodeObject([]byte(body), 32)
			if err != nil {
				return nil, err
			}
			for k, v := range inBody {
				if v != "" {
					m[k] = v
				}
			}
			return m, nil
		}
	}
	c := Call{Tool: r.tool, RequestID: "req-" + trace, TraceID: trace}
	switch surface {
	case onREST:
		c.Surface, c.Key, c.KeySent, c.PathValue = SurfaceREST, r.key, r.key != "", r.path
		in := map[string]string{}
		if tool.PathArgument != "" {
			in[tool.PathArgument] = r.path
		}
		if tool.Idempotency == contracts.IdempotencyRequired {
			in["idempotencyKey"] = r.key // as httpapi.arguments adds it
		}
		c.Args = args(in)
	case onMCP, onConsole:
		c.Surface = SurfaceMCP
		if surface == onConsole {
			c.Surface = SurfaceConsole
		}
		c.Args = args(map[string]string{"idempotencyKey": r.key, tool.PathArgument: r.path})
	case onDirect:
		c.Tool, c.Capability, c.Surface, c.Args = contracts.ToolPraxecCommand, r.capability, SurfaceMCP, args(nil)
	}
	return c
}

// send makes the call r on surface as principal p and returns its refusal
// (nil when it was answered).
func send(s *Service, p *auth.Principal, surface string, r admissionRequest) *contracts.Error {
	trace := fmt.Sprintf("%032x", traceCounter.next())
	c := toCall(surface, r, trace)
	if surface == onDirect {
		return s.CallDirect(context.Background(), p, DirectCall{Capability: c.Capability, Surface: c.Surface, Args: c.Args,
			RequestID: c.RequestID, TraceID: c.TraceID}).Err
	}
	return s.Invoke(context.Background(), p, c).Err
}

type counter struct{ n int }

func (c *counter) next() int { c.n++; return c.n }

var traceCounter counter

// admissionService is a Service on memstore running admissionFiles, with
// notes.held quarantined (as a pin would) and wrapper too.
func admissionService(t *testing.T) *Service {
	t.Helper()
	cfg, reg := compileFixture(t, "admission.yaml", admissionFiles...)
	if err := reg.AddProxy(cfg.Exposed()); err != nil {
		t.Fatal(err)
	}
	held := func(id string) pins.QuarantinedCapability {
		return pins.QuarantinedCapability{Capability: id, Quarantine: pins.Quarantine{Reason: "the upstream changed its description",
			PinnedSHA256: "aa", OfferedSHA256: "bb"}}
	}
	s := New(memstore.New(), &Options{Workflows: reg, Policy: cfg.Policy,
		Quarantines: pins.Quarantines{"notes.held": held("notes.held"), "wrapper": held("wrapper")}})
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func principal(tenant string, scopes []contracts.Scope, tools ...string) *auth.Principal {
	return &auth.Principal{Tenant: tenant, Subject: "agent-" + tenant, Issuer: "https://issuer.test",
		Scopes: auth.NewScopeSet(scopes...), Tools: tools}
}

// TestAdmissionChain drives every refusal of the admission chain through
// every surface that can make the call, alone and paired with the refusal
// that comes after it in the chain: each surface answers the same code,
// and the earlier check wins. (Authentication, the principal's rate limit
// and the transport guards are the edges', before the chain: httpapi and
// mcpadapter test them.)
func TestAdmissionChain(t *testing.T) {
	s := admissionService(t)
	all := contracts.Scopes()
	acme, sandbox, globex := principal("acme", all), principal("sandbox", all), principal("globex", all)
	noWrite := principal("acme", slices.DeleteFunc(slices.Clone(all), func(sc contracts.Scope) bool {
		return sc == contracts.ScopeMissionsWrite || sc == contracts.ScopeMissionsRead
	}))
	onlyTrace := principal("acme", all, contracts.ToolGetTrace)
	onlyTraceNoScope := principal("acme", nil, contracts.ToolGetTrace)

	// A run of globex's, which acme may not see or move.
	key := NewIdempotencyKey()
	res := s.Invoke(context.Background(), globex, toCall(onMCP, admissionRequest{tool: contracts.ToolCreateMission,
		body: `{"goal":"ship","definitionId":"deploy","runId":"globex-run"}`, key: key}, "00000000000000000000000000000001"))
	if res.Err != nil {
		t.Fatalf("globex's run: %v", res.Err)
	}

	create := func(body, key string) admissionRequest {
		return admissionRequest{tool: contracts.ToolCreateMission, body: body, key: key}
	}
	start := func(capability string) admissionRequest {
		return admissionRequest{tool: contracts.ToolPraxecCommand,
			body: `{"definitionId":"proxy_default","input":{"capability":"` + capability + `"}}`}
	}
	direct := func(capability, body string) admissionRequest {
		return admissionRequest{capability: capability, body: body}
	}
	good := `{"goal":"ship","definitionId":"deploy"}`
	both := []string{onREST, onMCP}

	type call struct {
		surfaces []string
		r        admissionRequest
	}
	cases := []struct {
		name  string
		p     *auth.Principal
		calls []call
		want  contracts.Code
	}{
		{name: "allowlist", p: onlyTrace, want: contracts.CodeToolNotAllowed, calls: []call{
			{both, create(good, NewIdempotencyKey())}, {both, start("notes.echo")}, {[]string{onDirect}, direct("notes.echo", `{}`)}}},
		{name: "allowlist before scope", p: onlyTraceNoScope, want: contracts.CodeToolNotAllowed, calls: []call{
			{both, create(good, NewIdempotencyKey())}, {both, start("notes.echo")}, {[]string{onDirect}, direct("notes.echo", `{}`)}}},
		{name: "scope", p: noWrite, want: contracts.CodeInsufficientScope, calls: []call{
			{both, create(good, NewIdempotencyKey())}, {both, start("notes.echo")}, {[]string{onDirect}, direct("notes.echo", `{}`)},
			{[]string{onREST, onMCP, onConsole}, admissionRequest{tool: contracts.ToolGetMission, path: "globex-run"}}}},
		{name: "scope before the arguments", p: noWrite, want: contracts.CodeInsufficientScope, calls: []call{
			{both, create(`{"goal":`, NewIdempotencyKey())}, {[]string{onDirect}, direct("notes.echo", `{"text":`)}}},
		// The praxec pair's row, and so its scope, is known from its body
		// alone (DESIGN, the dispatch table): its body comes first.
		{name: "praxec: the body before the row's scope", p: noWrite, want: contracts.CodeMalformedJSON, calls: []call{
			{both, admissionRequest{tool: contracts.ToolPraxecCommand, body: `{"definitionId":`}}}},
		{name: "tenancy", p: acme, want: contracts.CodeNotFound, calls: []call{
			{both, admissionRequest{tool: contracts.ToolSignalMission, body: `{"signal":"ship","expectedVersion":1}`, path: "globex-run", key: NewIdempotencyKey()}},
			{[]string{onREST, onMCP, onConsole}, admissionRequest{tool: contracts.ToolGetMission, path: "globex-run"}}}},
		{name: "tenancy before the key", p: acme, want: contracts.CodeNotFound, calls: []call{
			{both, admissionRequest{tool: contracts.ToolSignalMission, body: `{"signal":"ship","expectedVersion":1}`, path: "globex-run"}}}},
		{name: "key missing", p: acme, want: contracts.CodeIdempotencyKeyMissing, calls: []call{{both, create(good, "")}}},
		{name: "key malformed", p: acme, want: contracts.CodeIdempotencyKeyInvalid, calls: []call{{both, create(good, "short")}}},
		{name: "key before the schema", p: acme, want: contracts.CodeIdempotencyKeyMissing, calls: []call{{both, create(`{"goal":5}`, "")}}},
		{name: "strict JSON", p: acme, want: contracts.CodeMalformedJSON, calls: []call{
			{both, create(`{"goal":"a","goal":"b"}`, NewIdempotencyKey())},
			{both, admissionRequest{tool: contracts.ToolPraxecCommand, body: `{"definitionId":"a","definitionId":"b"}`}},
			{[]string{onDirect}, direct("notes.echo", `{"text":"a","text":"b"}`)}}},
		{name: "schema", p: acme, want: contracts.CodeInvalidParams, calls: []call{
			{both, create(`{"goal":5}`, NewIdempotencyKey())},
			{both, admissionRequest{tool: contracts.ToolPraxecCommand, body: `{"definitionId":"proxy_default","input":5}`}},
			{[]string{onDirect}, direct("notes.echo", `{"text":5}`)}}},
		{name: "dispatch", p: acme, want: contracts.CodeAmbiguousIntent, calls: []call{
			{both, admissionRequest{tool: contracts.ToolPraxecCommand, body: `{"workflowId":"w"}`}}}},
		// A direct tool's input schema is its capability's: an invalid
		// call is refused 400 before the policy is asked.
		{name: "schema before policy", p: sandbox, want: contracts.CodeInvalidParams, calls: []call{
			{[]string{onDirect}, direct("notes.wipe", `{"text":5}`)}}},
		{name: "policy", p: sandbox, want: contracts.CodeDestructiveActionDenied, calls: []call{
			{both, admissionRequest{tool: contracts.ToolCancelMission, body: `{}`, path: "sandbox-run", key: NewIdempotencyKey()}},
			{both, start("notes.wipe")}, {[]string{onDirect}, direct("notes.wipe", `{}`)},
			{[]string{onDirect}, direct("notes.wipe.guarded", `{"text":"yes"}`)}}},
		{name: "policy before quarantine", p: sandbox, want: contracts.CodeDestructiveActionDenied, calls: []call{
			{both, start("notes.held")}, {[]string{onDirect}, direct("notes.held", `{}`)}}},
		{name: "quarantine", p: acme, want: contracts.CodeCapabilityQuarantined, calls: []call{
			{both, start("notes.held")}, {[]string{onDirect}, direct("notes.held", `{}`)}}},
		// base's one token is spent by the first call below; wrapper shares
		// its limit and is quarantined.
		{name: "quarantine before the rate limit", p: acme, want: contracts.CodeCapabilityQuarantined, calls: []call{
			{[]string{onDirect}, direct("base", `{}`)}, {both, start("wrapper")}, {[]string{onDirect}, direct("wrapper", `{}`)}}},
		{name: "rate limit", p: acme, want: contracts.CodeRateLimited, calls: []call{
			{both, start("base")}, {[]string{onDirect}, direct("base", `{}`)}}},
	}
	// sandbox's own mission, for its cancel.
	if res := s.Invoke(context.Background(), sandbox, toCall(onMCP, create(`{"goal":"ship","definitionId":"deploy","runId":"sandbox-run"}`, NewIdempotencyKey()),
		"00000000000000000000000000000002")); res.Err != nil {
		t.Fatalf("sandbox's run: %v", res.Err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := true
			for _, c := range tc.calls {
				for _, surface := range c.surfaces {
					err := send(s, tc.p, surface, c.r)
					if tc.name == "quarantine before the rate limit" && first {
						// The call that spends base's token.
						first = false
						if err != nil {
							t.Fatalf("the first call of base: %v", err)
						}
						continue
					}
					if err == nil || err.Code != tc.want {
						t.Errorf("%s %s%s: %v, want %s", surface, c.r.tool, c.r.capability, err, tc.want)
					}
				}
			}
		})
	}
}

// TestAdmissionReplayBeforePolicy: the idempotency lookup comes before the
// policy, so a retry of a request that was answered replays its answer
// even after the policy changed to deny it; a new request is refused.
func TestAdmissionReplayBeforePolicy(t *testing.T) {
	for i, surface := range []string{onREST, onMCP} {
		t.Run(surface, func(t *testing.T) {
			s := admissionService(t)
			acme := principal("acme", contracts.Scopes())
			trace := func(n int) string { return fmt.Sprintf("%032x", 0x100*(i+1)+n) }
			run := admissionRequest{tool: contracts.ToolCreateMission, body: `{"goal":"ship","definitionId":"deploy","runId":"r1"}`, key: NewIdempotencyKey()}
			if res := s.Invoke(context.Background(), acme, toCall(surface, run, trace(1))); res.Err != nil {
				t.Fatal(res.Err)
			}
			cancel := admissionRequest{tool: contracts.ToolCancelMission, body: `{}`, path: "r1", key: NewIdempotencyKey()}
			first := s.Invoke(context.Background(), acme, toCall(surface, cancel, trace(2)))
			if first.Err != nil {
				t.Fatal(first.Err)
			}
			inForce := pins.Quarantines{}
			for _, q := range s.pins.Quarantined() {
				inForce[q.Capability] = q
			}
			s.Reload(context.Background(), Runtime{Workflows: s.workflows, Policy: config.Policy{DenyDestructive: []config.PrincipalMatch{{Tenant: "acme"}}},
				Quarantines: inForce})
			again := s.Invoke(context.Background(), acme, toCall(surface, cancel, trace(3)))
			if again.Err != nil || !again.Replayed || string(again.Body) != string(first.Body) {
				t.Errorf("the retry after the policy changed: %+v, want the recorded answer", again)
			}
			cancel.key = NewIdempotencyKey()
			if res := s.Invoke(context.Background(), acme, toCall(surface, cancel, trace(4))); res.Err == nil ||
				res.Err.Code != contracts.CodeDestructiveActionDenied {
				t.Errorf("a new request after the policy changed: %v, want destructive-action-denied", res.Err)
			}
		})
	}
}
