package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/praxa/praxa/contracts"
)

// mustRouter routes requests with the reloaded document, the way a client
// or a test of the gateway would.
func mustRouter(tb testing.TB) routers.Router {
	tb.Helper()
	r, err := gorillamux.NewRouter(mustLoad(tb, mustJSON(tb)))
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func missionProjection() map[string]any {
	return map[string]any{
		"runId": "run-2024-0001",
		"workflow": map[string]any{
			"id": "wf-7", "definitionId": "incident-review", "definitionVersion": 2,
			"state": "triage", "version": 3,
		},
		"result":   map[string]any{"status": "waiting_for_action", "message": "Waiting for a reviewer."},
		"context":  map[string]any{"ticket": "INC-42"},
		"evidence": []any{"ticket INC-42 opened"},
		"links": []any{
			map[string]any{
				"rel": "approve", "method": contracts.ToolSignalMission, "actor": "human", "description": nil,
				"args": map[string]any{"runId": "run-2024-0001", "signal": "approve", "expectedVersion": 3},
			},
			map[string]any{"rel": "read", "method": contracts.ToolGetMission, "args": map[string]any{"runId": "run-2024-0001"}},
		},
	}
}

func approvalView(status string) map[string]any {
	a := map[string]any{
		"id": "ap-1", "status": status, "workflowId": "wf-7", "runId": "run-2024-0001", "transition": "deploy",
		"queue": "release", "arguments": map[string]any{"service": "payments"},
		"requestedBy": "agent-7", "requestedAt": "2026-11-30T10:00:00.123456789Z",
	}
	if status != "pending" {
		a["resolvedBy"], a["resolvedAt"] = "alice", "2026-11-30T10:05:00Z"
	}
	return a
}

// resolution is an approve or reject answer: the approval and the mission
// in its praxec projection, which carries no runId.
func resolution(status string) map[string]any {
	m := missionProjection()
	delete(m, "runId")
	return map[string]any{"approval": approvalView(status), "mission": m}
}

// problem renders a contract error as the gateway's problem+json would.
func problem(e *contracts.Error, instance string) map[string]any {
	info, _ := e.Code.Info()
	p := map[string]any{
		"type": e.Code.TypeURI(), "title": info.Title, "status": info.Status, "detail": e.Message,
		"instance": instance, "code": string(e.Code), "requestId": "req-1", "retryable": info.Retryable,
		"links": []any{},
	}
	if e.Hint != "" {
		p["hint"] = e.Hint
	}
	if len(e.Fields) > 0 {
		var fields []any
		for _, f := range e.Fields {
			fe := map[string]any{"pointer": f.Pointer, "detail": f.Detail}
			if f.Keyword != "" {
				fe["keyword"] = f.Keyword
			}
			fields = append(fields, fe)
		}
		p["errors"] = fields
	}
	return p
}

func TestResponsesValidate(t *testing.T) {
	router := mustRouter(t)
	invalid := contracts.ValidateInput(contracts.ToolCreateMission, map[string]any{"idempotencyKey": "k", "goal": ""})
	var invalidParams *contracts.Error
	if !errors.As(invalid, &invalidParams) || len(invalidParams.Fields) == 0 {
		t.Fatalf("ValidateInput = %v, want INVALID_PARAMS with field errors", invalid)
	}
	notFound := contracts.Errorf(contracts.CodeNotFound, "no mission run-x")
	ambiguous := contracts.AmbiguousIntent(contracts.ToolPraxecCommand)
	ambiguousProblem := problem(ambiguous, "/v8/praxec/command")
	var links []any
	for _, l := range ambiguous.Links {
		links = append(links, map[string]any{"rel": l.Rel, "method": l.Method, "args": l.Args})
	}
	ambiguousProblem["links"] = links

	for _, tt := range []struct {
		name    string
		method  string
		path    string
		status  int
		media   string
		header  http.Header
		body    any
		wantErr bool
	}{
		{name: "OKGetMission", method: http.MethodGet, path: "/v8/missions/run-2024-0001",
			status: 200, media: "application/json", body: missionProjection()},
		{name: "OKCreateMission", method: http.MethodPost, path: "/v8/missions",
			status: 201, media: "application/json", body: missionProjection(),
			header: http.Header{"Location": {"/v8/missions/run-2024-0001"}}},
		{name: "OKReplayedCreateMission", method: http.MethodPost, path: "/v8/missions",
			status: 201, media: "application/json", body: missionProjection(),
			header: http.Header{"Location": {"/v8/missions/run-2024-0001"}, "Idempotent-Replayed": {"true"}}},
		{name: "OKNotFound", method: http.MethodGet, path: "/v8/missions/run-x",
			status: 404, media: "application/problem+json", body: problem(notFound, "/v8/missions/run-x")},
		{name: "OKInvalidParams", method: http.MethodPost, path: "/v8/missions",
			status: 400, media: "application/problem+json", body: problem(invalidParams, "/v8/missions")},
		{name: "OKAmbiguousIntent", method: http.MethodPost, path: "/v8/praxec/command",
			status: 400, media: "application/problem+json", body: ambiguousProblem},
		{name: "OKUnauthenticated", method: http.MethodGet, path: "/v8/coverage",
			status: 401, media: "application/problem+json",
			header: http.Header{"Www-Authenticate": {`Bearer realm="praxa", resource_metadata="https://gw.example/.well-known/oauth-protected-resource"`}},
			body:   problem(contracts.Errorf(contracts.CodeUnauthenticated, "no credentials"), "/v8/coverage")},
		{name: "OKInProgress", method: http.MethodPost, path: "/v8/missions/run-1/signals",
			status: 409, media: "application/problem+json", header: http.Header{"Retry-After": {"1"}},
			body: problem(contracts.Errorf(contracts.CodeIdempotencyInProgress, "in flight"), "/v8/missions/run-1/signals")},
		{name: "OKRevokeToken", method: http.MethodPost, path: "/v8/tokens/revocations",
			status: 200, media: "application/json", body: map[string]any{"jti": "j-1", "revoked": true, "at": "2026-11-30T10:00:00Z"}},
		{name: "OKListApprovals", method: http.MethodGet, path: "/v8/approvals",
			status: 200, media: "application/json", body: map[string]any{"approvals": []any{approvalView("pending")}}},
		{name: "OKApprove", method: http.MethodPost, path: "/v8/approvals/ap-1/approve",
			status: 200, media: "application/json", body: resolution("approved")},
		{name: "OKRejectResolved", method: http.MethodPost, path: "/v8/approvals/ap-1/reject",
			status: 409, media: "application/problem+json",
			body: problem(contracts.Errorf(contracts.CodeMissionStateConflict, "approval ap-1 is already approved"), "/v8/approvals/ap-1/reject")},
		{name: "OKApproveNotFound", method: http.MethodPost, path: "/v8/approvals/ap-x/approve",
			status: 404, media: "application/problem+json",
			body: problem(contracts.Errorf(contracts.CodeNotFound, "there is no approval ap-x"), "/v8/approvals/ap-x/approve")},
		{name: "ErrRevokedFalse", method: http.MethodPost, path: "/v8/tokens/revocations",
			status: 200, media: "application/json", wantErr: true, body: map[string]any{"jti": "j-1", "revoked": false, "at": "2026-11-30T10:00:00Z"}},
		{name: "ErrApprovalUnknownStatus", method: http.MethodGet, path: "/v8/approvals",
			status: 200, media: "application/json", wantErr: true, body: map[string]any{"approvals": []any{approvalView("open")}}},
		{name: "ErrRevokeUndocumentedNotFound", method: http.MethodPost, path: "/v8/tokens/revocations",
			status: 404, media: "application/problem+json", wantErr: true,
			body: problem(contracts.Errorf(contracts.CodeNotFound, "no such token"), "/v8/tokens/revocations")},
		{name: "ErrMissionWithoutWorkflow", method: http.MethodGet, path: "/v8/missions/run-2024-0001",
			status: 200, media: "application/json", wantErr: true,
			body: func() map[string]any { m := missionProjection(); delete(m, "workflow"); return m }()},
		{name: "ErrCreatedWithoutLocation", method: http.MethodPost, path: "/v8/missions",
			status: 201, media: "application/json", body: missionProjection(), wantErr: true},
		{name: "ErrUnauthorizedWithoutChallenge", method: http.MethodGet, path: "/v8/coverage",
			status: 401, media: "application/problem+json", wantErr: true,
			body: problem(contracts.Errorf(contracts.CodeUnauthenticated, "no credentials"), "/v8/coverage")},
		{name: "ErrProblemUnknownCode", method: http.MethodGet, path: "/v8/missions/run-x",
			status: 404, media: "application/problem+json", wantErr: true,
			body: func() map[string]any { p := problem(notFound, "/v8/missions/run-x"); p["code"] = "NOPE"; return p }()},
		{name: "ErrUndocumentedStatus", method: http.MethodGet, path: "/v8/coverage",
			status: 409, media: "application/problem+json", wantErr: true,
			body: problem(contracts.Errorf(contracts.CodeVersionConflict, "stale"), "/v8/coverage")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			route, params, err := router.FindRoute(req)
			if err != nil {
				t.Fatalf("FindRoute(%s %s): %v", tt.method, tt.path, err)
			}
			body, err := json.Marshal(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{"Content-Type": {tt.media}}
			for k, v := range tt.header {
				h[http.CanonicalHeaderKey(k)] = v
			}
			in := &openapi3filter.ResponseValidationInput{
				RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
				Status:                 tt.status,
				Header:                 h,
				Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
			}
			in.SetBodyBytes(body)
			err = openapi3filter.ValidateResponse(context.Background(), in)
			wantVerdict(t, "ValidateResponse", err, tt.wantErr)
		})
	}
}

// wantVerdict fails unless the validator named what refused (err not nil)
// exactly when wantErr says it should; a refusal is logged.
func wantVerdict(t *testing.T, what string, err error, wantErr bool) {
	t.Helper()
	if wantErr != (err != nil) {
		t.Fatalf("%s = %v, want error %v", what, err, wantErr)
	}
	if err != nil {
		t.Logf("refused as expected: %v", err)
	}
}

func TestRequestsValidate(t *testing.T) {
	router := mustRouter(t)
	const key = "0f8fad5b-d9cb-469f-a165-70867728950e"
	for _, tt := range []struct {
		name    string
		method  string
		target  string
		header  http.Header
		body    any
		wantErr bool
	}{
		{name: "OKCreateMission", method: http.MethodPost, target: "/v8/missions",
			header: http.Header{"Idempotency-Key": {key}},
			body:   map[string]any{"goal": "Review incident INC-42", "definitionId": "incident-review", "input": map[string]any{"ticket": "INC-42"}}},
		{name: "OKSignalMission", method: http.MethodPost, target: "/v8/missions/run-1/signals",
			header: http.Header{"Idempotency-Key": {key}},
			body:   map[string]any{"signal": "approve", "expectedVersion": 3}},
		{name: "OKListGoals", method: http.MethodGet, target: "/v8/context-twin/goals?compartment=ops&purpose=triage&limit=5"},
		{name: "OKPraxecCommandWithoutKey", method: http.MethodPost, target: "/v8/praxec/command",
			body: map[string]any{"definitionId": "incident-review"}},
		{name: "OKPraxecQueryHome", method: http.MethodPost, target: "/v8/praxec/query", body: map[string]any{}},
		{name: "OKRevokeToken", method: http.MethodPost, target: "/v8/tokens/revocations",
			body: map[string]any{"jti": "j-1", "reason": "leaked", "expiresAt": "2026-12-01T00:00:00Z"}},
		{name: "OKListApprovals", method: http.MethodGet, target: "/v8/approvals"},
		{name: "OKListAllApprovals", method: http.MethodGet, target: "/v8/approvals?status=all&limit=500"},
		{name: "OKApproveWithoutBody", method: http.MethodPost, target: "/v8/approvals/ap-1/approve"},
		{name: "OKRejectWithNote", method: http.MethodPost, target: "/v8/approvals/ap-1/reject", body: map[string]any{"note": "wrong target"}},
		{name: "ErrRevokeWithoutJTI", method: http.MethodPost, target: "/v8/tokens/revocations", body: map[string]any{"reason": "leaked"}, wantErr: true},
		{name: "ErrRevokeUnknownMember", method: http.MethodPost, target: "/v8/tokens/revocations", body: map[string]any{"jti": "j", "tenant": "t"}, wantErr: true},
		{name: "ErrRevokeBadExpiry", method: http.MethodPost, target: "/v8/tokens/revocations", body: map[string]any{"jti": "j", "expiresAt": "tomorrow"}, wantErr: true},
		{name: "ErrListApprovalsUnknownStatus", method: http.MethodGet, target: "/v8/approvals?status=open", wantErr: true},
		{name: "ErrListApprovalsLimit", method: http.MethodGet, target: "/v8/approvals?limit=501", wantErr: true},
		{name: "ErrApproveIDInBody", method: http.MethodPost, target: "/v8/approvals/ap-1/approve", body: map[string]any{"approvalId": "ap-1"}, wantErr: true},
		{name: "ErrApproveBadID", method: http.MethodPost, target: "/v8/approvals/..%2Fx/approve", wantErr: true},
		{name: "ErrCreateMissionWithoutKey", method: http.MethodPost, target: "/v8/missions",
			body: map[string]any{"goal": "Review incident INC-42"}, wantErr: true},
		{name: "ErrShortKey", method: http.MethodPost, target: "/v8/missions",
			header: http.Header{"Idempotency-Key": {"short"}}, body: map[string]any{"goal": "g"}, wantErr: true},
		{name: "ErrKeyInBody", method: http.MethodPost, target: "/v8/missions",
			header: http.Header{"Idempotency-Key": {key}}, body: map[string]any{"goal": "g", "idempotencyKey": key}, wantErr: true},
		{name: "ErrPathArgumentInBody", method: http.MethodPost, target: "/v8/missions/run-1/signals",
			header: http.Header{"Idempotency-Key": {key}},
			body:   map[string]any{"runId": "run-1", "signal": "approve", "expectedVersion": 3}, wantErr: true},
		{name: "ErrListGoalsWithoutPurpose", method: http.MethodGet, target: "/v8/context-twin/goals?compartment=ops", wantErr: true},
		{name: "ErrLimitTooLarge", method: http.MethodGet, target: "/v8/context-twin/goals?compartment=ops&purpose=triage&limit=1000", wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var req *http.Request
			if tt.body != nil {
				b, err := json.Marshal(tt.body)
				if err != nil {
					t.Fatal(err)
				}
				req = httptest.NewRequest(tt.method, tt.target, bytes.NewReader(b))
				req.Header.Set("Content-Type", "application/json")
			} else {
				req = httptest.NewRequest(tt.method, tt.target, nil)
			}
			for k, v := range tt.header {
				req.Header[k] = v
			}
			route, params, err := router.FindRoute(req)
			if err != nil {
				t.Fatalf("FindRoute: %v", err)
			}
			err = openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
				Request: req, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
			})
			wantVerdict(t, "ValidateRequest", err, tt.wantErr)
		})
	}
}

// TestRouterRefusesUnknownRoutes checks that the documented paths are the
// only ones: the contract's paths are full paths under /v8.
func TestRouterRefusesUnknownRoutes(t *testing.T) {
	router := mustRouter(t)
	for _, tt := range []struct{ method, path string }{
		{http.MethodGet, "/missions/run-1"},
		{http.MethodDelete, "/v8/missions/run-1"},
		{http.MethodGet, "/v8/unknown"},
		{http.MethodGet, "/v8/tokens/revocations"},
		{http.MethodPost, "/v8/approvals"},
		{http.MethodPost, "/v8/approvals/ap-1"},
	} {
		if _, _, err := router.FindRoute(httptest.NewRequest(tt.method, tt.path, nil)); err == nil {
			t.Errorf("FindRoute(%s %s) found a route", tt.method, tt.path)
		}
	}
}
