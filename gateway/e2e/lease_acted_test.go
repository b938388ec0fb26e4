package e2e_test

// A move, start or approval whose chain makes a call that succeeds and
// then one the upstream refuses (gateway/leases.go, leases_start.go): the
// first call may have acted, so "upstream-failed, the move did not
// happen" would be false. The first request answers the recorded 504
// outcome-unknown, and every retry (keyed or not) replays the same 504
// without calling again.

import (
	_ "embed"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

//go:embed testdata/lease-acted.yaml
var actedYAML string

// actedAPI counts the calls: /deploy succeeds, /fail answers 400.
type actedAPI struct{ *countingAPI }

func newActedAPI(t *testing.T) (actedAPI, *httptest.Server) {
	a := &countingAPI{refuse: map[string]string{"/fail": `{"error":"no"}`}}
	return actedAPI{a}, a.serve(t)
}

func (a actedAPI) want(t *testing.T, what string, deploy, fail int32) {
	t.Helper()
	if d, f := a.calls("/deploy").Load(), a.calls("/fail").Load(); d != deploy || f != fail {
		t.Errorf("%s: the upstream was called %d times on /deploy and %d on /fail, want %d and %d", what, d, f, deploy, fail)
	}
}

// TestActedThenFailedAnswers504: the first answer is the recorded 504,
// the same as every retry's, for a submit (keyless and keyed), a start
// (by runId, and keyed) and an approval.
func TestActedThenFailedAnswers504(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ti := newIssuer(t)
		api, srv := newActedAPI(t)
		g := apiGateway(t, ti, "acted.yaml", actedYAML, srv.URL, dsn, nil, nil)
		w := wrapGateway(g)
		tok := mint(t, ti, tenantA, userA)
		calls := int32(0)
		same := func(what string, first *gatewaytest.Response, retry func() *gatewaytest.Response) {
			t.Helper()
			calls++
			p := wantProblem(t, first, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
			for range 2 {
				r := wantProblem(t, retry(), http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
				if r.Detail != p.Detail {
					t.Errorf("%s: the retry answers %q, the first answer was %q", what, r.Detail, p.Detail)
				}
			}
			api.want(t, what, calls, calls)
		}

		// A submit, keyless then keyed.
		for _, key := range []string{"", newKey()} {
			res := w.command(t, tok, map[string]any{"definitionId": "two_step"})
			gatewaytest.WantStatus(t, res, http.StatusOK)
			body := res.Object(t)
			wf, v := str(t, body, "workflow.id"), num(t, body, "workflow.version")
			submit := map[string]any{"workflowId": wf, "expectedVersion": v, "transition": "first"}
			send := func() *gatewaytest.Response {
				return w.do(t, req{method: http.MethodPost, path: "/v8/praxec/command", body: submit, token: tok, key: key})
			}
			same("submit", send(), send)
			wantUnknownOutcome(t, w, tok, wf, 0)
		}

		// A start by runId (keyless), and a keyed one.
		start := func() *gatewaytest.Response {
			return w.command(t, tok, map[string]any{"definitionId": "two_start", "runId": "run-acted"})
		}
		same("start by runId", start(), start)
		key := newKey()
		create := func() *gatewaytest.Response {
			return w.createMission(t, tok, key, map[string]any{"goal": "two steps", "definitionId": "two_start"})
		}
		same("keyed start", create(), create)

		// An approval.
		res := w.command(t, tok, map[string]any{"definitionId": "two_release"})
		gatewaytest.WantStatus(t, res, http.StatusOK)
		body := res.Object(t)
		res = w.command(t, tok, map[string]any{"workflowId": str(t, body, "workflow.id"), "expectedVersion": num(t, body, "workflow.version"),
			"transition": "release"})
		gatewaytest.WantStatus(t, res, http.StatusOK)
		id := str(t, res.Object(t), "approval.id")
		op := mint(t, ti, tenantA, operatorA, string(contracts.ScopeApprovalsWrite)) // nobody approves their own request
		same("approval", approve(w, op, id), func() *gatewaytest.Response { return approve(w, op, id) })
	})
}
