package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// implementedOp is one operation the gateway serves today, with a request
// that succeeds for a caller holding its scope.
type implementedOp struct {
	name   string
	method string
	path   string
	body   string
	keyed  bool
	scope  contracts.Scope
	status int
}

func implementedOps(trace string) []implementedOp {
	return []implementedOp{
		{name: "aura_submit_intent", method: http.MethodPost, path: "/v8/intents", body: intentBody, keyed: true,
			scope: contracts.ScopeMissionsWrite, status: http.StatusOK},
		{name: "aura_get_trace", method: http.MethodGet, path: "/v8/traces/" + trace,
			scope: contracts.ScopeTracesRead, status: http.StatusOK},
		{name: "revoke token", method: http.MethodPost, path: "/v8/tokens/revocations", body: `{"jti":"some-other-token"}`,
			scope: contracts.ScopeTokensWrite, status: http.StatusOK},
	}
}

func (h *harness) send(t *testing.T, op implementedOp, token string, extra ...gatewaytest.RequestOption) *gatewaytest.Response {
	t.Helper()
	opts := []gatewaytest.RequestOption{gatewaytest.Bearer(token)}
	if op.keyed {
		opts = append(opts, gatewaytest.IdempotencyKey(newKey()))
	}
	return h.Do(t, op.method, op.path, op.body, append(opts, extra...)...)
}

// wantInsufficientScope checks a 403 and its RFC 6750 challenge.
func wantInsufficientScope(t *testing.T, h *harness, r *gatewaytest.Response, scope contracts.Scope) {
	t.Helper()
	gatewaytest.WantProblem(t, r, http.StatusForbidden, contracts.CodeInsufficientScope)
	ch := challengeParams(t, r)
	if ch["error"] != "insufficient_scope" || ch["scope"] != string(scope) || ch["resource_metadata"] != h.metadataURL() {
		t.Errorf("challenge %v, want error=insufficient_scope scope=%s resource_metadata=%s", ch, scope, h.metadataURL())
	}
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("a refusal is marked Idempotent-Replayed")
	}
}

// TestScopes covers checklist items 21-24 for every implemented operation.
func TestScopes(t *testing.T) {
	h := newHarness(t)
	sub := h.submit(t, h.tokenA(t), newKey(), intentBody)
	gatewaytest.WantStatus(t, sub, http.StatusOK)
	trace := sub.TraceID(t)

	for _, op := range implementedOps(trace) {
		t.Run(op.name, func(t *testing.T) {
			t.Run("lacking exactly its scope", func(t *testing.T) {
				r := h.send(t, op, h.token(t, tok{Scopes: scopesWithout(string(op.scope))}))
				wantInsufficientScope(t, h, r, op.scope)
			})
			t.Run("its scope alone", func(t *testing.T) {
				r := h.send(t, op, h.token(t, tok{Scopes: []string{string(op.scope)}}))
				gatewaytest.WantStatus(t, r, op.status)
			})
			t.Run("no scope at all", func(t *testing.T) {
				r := h.send(t, op, h.token(t, tok{Scopes: []string{}}))
				wantInsufficientScope(t, h, r, op.scope)
			})
			t.Run("scope differing in case", func(t *testing.T) {
				r := h.send(t, op, h.token(t, tok{Scopes: []string{upperFirst(string(op.scope))}}))
				wantInsufficientScope(t, h, r, op.scope)
			})
		})
	}

	t.Run("read never unlocks write", func(t *testing.T) {
		r := h.submit(t, h.token(t, tok{Scopes: []string{string(contracts.ScopeTracesRead), string(contracts.ScopeMissionsRead)}}), newKey(), intentBody)
		wantInsufficientScope(t, h, r, contracts.ScopeMissionsWrite)
	})
	t.Run("write does not imply read", func(t *testing.T) {
		r := h.Get(t, "/v8/traces/"+trace, gatewaytest.Bearer(h.token(t, tok{Scopes: []string{string(contracts.ScopeMissionsWrite)}})))
		wantInsufficientScope(t, h, r, contracts.ScopeTracesRead)
	})
	t.Run("scp array accepted", func(t *testing.T) {
		r := h.Get(t, "/v8/traces/"+trace, gatewaytest.Bearer(h.token(t, tok{Claims: map[string]any{"scope": nil, "scp": []string{"traces:read"}}})))
		gatewaytest.WantStatus(t, r, http.StatusOK)
	})
	t.Run("unknown extra scopes ignored", func(t *testing.T) {
		r := h.Get(t, "/v8/traces/"+trace, gatewaytest.Bearer(h.token(t, tok{Claims: map[string]any{"scope": "openid profile traces:read offline_access"}})))
		gatewaytest.WantStatus(t, r, http.StatusOK)
	})
	t.Run("scope is not matched by prefix", func(t *testing.T) {
		r := h.Get(t, "/v8/traces/"+trace, gatewaytest.Bearer(h.token(t, tok{Claims: map[string]any{"scope": "traces:read:all traces"}})))
		wantInsufficientScope(t, h, r, contracts.ScopeTracesRead)
	})
	t.Run("tool allowlist narrows", func(t *testing.T) {
		tk := h.token(t, tok{Claims: map[string]any{"tools": []string{contracts.ToolGetTrace}}})
		gatewaytest.WantStatus(t, h.Get(t, "/v8/traces/"+trace, gatewaytest.Bearer(tk)), http.StatusOK)
		gatewaytest.WantProblem(t, h.submit(t, tk, newKey(), intentBody), http.StatusForbidden, contracts.CodeToolNotAllowed)
	})
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	b := []byte(s)
	if 'a' <= b[0] && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
	return string(b)
}

// TestScopeBeforeEverythingElse: the scope check precedes key checks, body
// validation and the idempotency lookup (25, 26), and follows only the
// transport guards and authentication.
func TestScopeBeforeEverythingElse(t *testing.T) {
	h := newHarness(t)
	under := h.token(t, tok{Scopes: scopesWithout(string(contracts.ScopeMissionsWrite))})
	key := newKey()
	first := h.submit(t, h.tokenA(t), key, intentBody)
	gatewaytest.WantStatus(t, first, http.StatusOK)

	for _, tc := range []struct {
		name string
		key  string
		body string
		opts []gatewaytest.RequestOption
	}{
		{"malformed body", newKey(), `{"intent":`, nil},
		{"schema violation", newKey(), `{"zzz":1}`, nil},
		{"missing key", "", intentBody, nil},
		{"malformed key", "short", intentBody, nil},
		{"two key lines", newKey(), intentBody, []gatewaytest.RequestOption{gatewaytest.IdempotencyKey(newKey())}},
		{"completed key, same body", key, intentBody, nil},
		{"completed key, other body", key, `{"intent":"something else"}`, nil},
		{"too deep", newKey(), deepBody(40), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.submit(t, under, tc.key, tc.body, tc.opts...)
			wantInsufficientScope(t, h, r, contracts.ScopeMissionsWrite)
		})
	}
	// Under-scoped on a read, with junk in the query.
	r := h.Get(t, "/v8/traces/"+first.TraceID(t)+"?zzz=1", gatewaytest.Bearer(h.token(t, tok{Scopes: []string{string(contracts.ScopeMissionsWrite)}})))
	wantInsufficientScope(t, h, r, contracts.ScopeTracesRead)

	// Transport guards come first: a wrong media type is 415 even without
	// a token or scope.
	gatewaytest.WantProblem(t, h.submit(t, under, newKey(), intentBody, gatewaytest.ContentType("text/plain")), http.StatusUnsupportedMediaType, contracts.CodeUnsupportedMediaType)
	gatewaytest.WantProblem(t, h.Post(t, "/v8/intents", intentBody, gatewaytest.ContentType("text/plain")), http.StatusUnsupportedMediaType, contracts.CodeUnsupportedMediaType)
	// Authentication precedes scope.
	gatewaytest.WantProblem(t, h.submit(t, h.token(t, tok{Scopes: []string{}, TTL: -time.Hour}), newKey(), intentBody), http.StatusUnauthorized, contracts.CodeInvalidToken)
}

// deepBody is an intent body nesting depth containers in all: the object
// and depth-1 arrays in its tags member.
func deepBody(depth int) string {
	s := `"x"`
	for range depth - 1 {
		s = "[" + s + "]"
	}
	return `{"intent":"x","tags":` + s + `}`
}

// otherOp is a contract route other than the two the suite drives in
// depth. Some answer 501 to an authorized caller until their operation
// exists; the missions routes are exercised in depth by gateway/e2e.
type otherOp struct {
	tool   string
	method string
	path   string
	body   string
	keyed  bool
	scope  contracts.Scope
}

var otherOps = []otherOp{
	{contracts.ToolCreateMission, http.MethodPost, "/v8/missions", `{"goal":"ship it"}`, true, contracts.ScopeMissionsWrite},
	{contracts.ToolGetMission, http.MethodGet, "/v8/missions/run-1", "", false, contracts.ScopeMissionsRead},
	{contracts.ToolSignalMission, http.MethodPost, "/v8/missions/run-1/signals", `{"signal":"approve","expectedVersion":1}`, true, contracts.ScopeMissionsWrite},
	{contracts.ToolCancelMission, http.MethodPost, "/v8/missions/run-1/cancel", `{"reason":"no longer needed"}`, true, contracts.ScopeMissionsWrite},
	{contracts.ToolSearchCapabilities, http.MethodPost, "/v8/capabilities/search", `{"query":"deploy"}`, false, contracts.ScopeCapabilitiesRead},
	{contracts.ToolQueryMemory, http.MethodPost, "/v8/memory/query", `{"compartment":"c1","purpose":"p1","query":"x"}`, false, contracts.ScopeMemoryRead},
	{contracts.ToolGetSkill, http.MethodGet, "/v8/skills/skill-1", "", false, contracts.ScopeSkillsRead},
	{contracts.ToolListGoals, http.MethodGet, "/v8/context-twin/goals?compartment=c1&purpose=p1", "", false, contracts.ScopeContextRead},
	{contracts.ToolListWorldCertificates, http.MethodGet, "/v8/world-model/certificates", "", false, contracts.ScopeWorldRead},
	{contracts.ToolGetCoverage, http.MethodGet, "/v8/coverage", "", false, contracts.ScopeCoverageRead},
	{contracts.ToolPraxecQuery, http.MethodPost, "/v8/praxec/query", `{"query":"deploy"}`, false, contracts.ScopeCapabilitiesRead},
	{contracts.ToolPraxecCommand, http.MethodPost, "/v8/praxec/command", `{"definitionId":"deploy"}`, false, contracts.ScopeMissionsWrite},
}

// TestOtherContractRoutes: every other contract route answers 401 and 403
// before anything else, and an authorized caller gets an answer that is
// neither, and no failure (501 while the operation does not exist yet).
func TestOtherContractRoutes(t *testing.T) {
	h := newHarness(t)
	if len(otherOps)+2 != len(contracts.Names()) {
		t.Fatalf("%d routes listed here plus 2 driven in depth, the contract has %d tools", len(otherOps), len(contracts.Names()))
	}
	for _, op := range otherOps {
		t.Run(op.tool, func(t *testing.T) {
			opts := func(token string) []gatewaytest.RequestOption {
				var o []gatewaytest.RequestOption
				if token != "" {
					o = append(o, gatewaytest.Bearer(token))
				}
				if op.keyed {
					o = append(o, gatewaytest.IdempotencyKey(newKey()))
				}
				return o
			}
			r := h.Do(t, op.method, op.path, op.body, opts("")...)
			gatewaytest.WantProblem(t, r, http.StatusUnauthorized, contracts.CodeUnauthenticated)
			if ch := challengeParams(t, r); ch["scope"] != string(op.scope) || ch["error"] != "" {
				t.Errorf("challenge %v, want scope=%s and no error", ch, op.scope)
			}
			r = h.Do(t, op.method, op.path, op.body, opts(h.token(t, tok{TTL: -time.Hour}))...)
			gatewaytest.WantProblem(t, r, http.StatusUnauthorized, contracts.CodeInvalidToken)

			r = h.Do(t, op.method, op.path, op.body, opts(h.token(t, tok{Scopes: scopesWithout(string(op.scope))}))...)
			wantInsufficientScope(t, h, r, op.scope)

			// The context reads also need the compartment and purpose
			// they name among the token's claims.
			authorized := h.token(t, tok{Claims: map[string]any{"compartments": []string{"c1"}, "purposes": []string{"p1"}}})
			r = h.Do(t, op.method, op.path, op.body, opts(authorized)...)
			switch {
			case r.Status == http.StatusNotImplemented:
				gatewaytest.WantProblem(t, r, http.StatusNotImplemented, contracts.CodeNotImplemented)
			case r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden || r.Status >= 500:
				t.Fatalf("authorized caller: %s", r)
			}
		})
	}
}

// TestOrderOfChecksOnPathObjects: on a route whose path names an object,
// ownership (404, the same for a missing and a foreign object) follows the
// scope check and, on mutations, precedes the key and the body checks.
func TestOrderOfChecksOnPathObjects(t *testing.T) {
	h := newHarness(t)
	full := h.tokenA(t)
	const run = "no-such-run"
	for _, tc := range []struct {
		method, path, body string
		scope              contracts.Scope
	}{
		{http.MethodGet, "/v8/missions/" + run, "", contracts.ScopeMissionsRead},
		{http.MethodPost, "/v8/missions/" + run + "/signals", `{"signal":"approve","expectedVersion":1}`, contracts.ScopeMissionsWrite},
		{http.MethodPost, "/v8/missions/" + run + "/cancel", `{}`, contracts.ScopeMissionsWrite},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			under := h.token(t, tok{Scopes: scopesWithout(string(tc.scope))})
			wantInsufficientScope(t, h, h.Do(t, tc.method, tc.path, `{"zzz":`, gatewaytest.Bearer(under)), tc.scope)
			for _, c := range []struct {
				name string
				body string
				opts []gatewaytest.RequestOption
			}{
				{"valid request", tc.body, []gatewaytest.RequestOption{gatewaytest.IdempotencyKey(newKey())}},
				{"missing key", tc.body, nil},
				{"malformed key", tc.body, []gatewaytest.RequestOption{gatewaytest.IdempotencyKey("short")}},
				{"two key lines", tc.body, []gatewaytest.RequestOption{gatewaytest.IdempotencyKey(newKey()), gatewaytest.IdempotencyKey(newKey())}},
				{"malformed body", `{"zzz":`, []gatewaytest.RequestOption{gatewaytest.IdempotencyKey(newKey())}},
				{"unknown field", `{"zzz":1}`, []gatewaytest.RequestOption{gatewaytest.IdempotencyKey(newKey())}},
			} {
				body := c.body
				if tc.method == http.MethodGet {
					body = ""
				}
				r := h.Do(t, tc.method, tc.path, body, append([]gatewaytest.RequestOption{gatewaytest.Bearer(full)}, c.opts...)...)
				if r.Status != http.StatusNotFound {
					t.Errorf("%s: status %d, want 404 before the key and the body are checked: %s", c.name, r.Status, r.Body)
					continue
				}
				gatewaytest.WantProblem(t, r, http.StatusNotFound, contracts.CodeNotFound)
			}
		})
	}
}
