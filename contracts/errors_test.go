package contracts_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/internal/golden"
)

// wantStatus is the status column of DESIGN.md and the seeds for every code
// whose status they fix.
var wantStatus = map[contracts.Code]int{
	"VERSION_CONFLICT":                409,
	"INVALID_TRANSITION":              409,
	"GUARD_REJECTED":                  409,
	"INVALID_PARAMS":                  400,
	"AMBIGUOUS_INTENT":                400,
	"RUN_ID_ALREADY_RUNNING":          409,
	"LEXICON_WRITES_DISABLED":         403,
	"SUBJECT_NEEDS_DEFINITION":        200,
	"idempotency-key-reused":          422,
	"idempotency-request-in-progress": 409,
	"idempotency-key-expired":         409,
	"content-too-large":               413,
	"unsupported-media-type":          415,
	"rate-limited":                    429,
	"outcome-unknown":                 504,
	"not-found":                       404,
	"insufficient-scope":              403,
	"unauthenticated":                 401,
	"invalid-token":                   401,
	"invalid-request":                 400,
	"destructive-action-denied":       403,
	"mission-state-conflict":          409,
	"idempotency-key-missing":         400,
	"idempotency-key-invalid":         400,
}

func TestCodeRegistry(t *testing.T) {
	codes := contracts.Codes()
	if !slices.IsSortedFunc(codes, func(a, b contracts.CodeInfo) int { return strings.Compare(string(a.Code), string(b.Code)) }) {
		t.Error("Codes() is not sorted")
	}
	types := map[string]contracts.Code{}
	registered := map[contracts.Code]bool{}
	for _, info := range codes {
		c := info.Code
		registered[c] = true
		if info.Status < 200 || info.Status > 599 || info.Title == "" {
			t.Errorf("%s: status %d, title %q", c, info.Status, info.Title)
		}
		if c.Status() != info.Status {
			t.Errorf("%s: Status() %d, registry %d", c, c.Status(), info.Status)
		}
		got, ok := c.Info()
		if !ok || got != info {
			t.Errorf("%s: Info() = %+v, %v", c, got, ok)
		}
		if want, fixed := wantStatus[c]; fixed && info.Status != want {
			t.Errorf("%s: status %d, want %d", c, info.Status, want)
		}
		if info.Status < 400 && c != contracts.CodeSubjectNeedsDefinition {
			t.Errorf("%s: status %d is not an error status", c, info.Status)
		}
		// The problem type is an absolute URI ending in the code's slug,
		// unique per code and stable across calls.
		uri := c.TypeURI()
		u, err := url.Parse(uri)
		if err != nil || !u.IsAbs() || u.Scheme != "https" {
			t.Errorf("%s: type %q is not an absolute https URI", c, uri)
		}
		slug := strings.ReplaceAll(strings.ToLower(string(c)), "_", "-")
		if !strings.HasSuffix(uri, "/"+slug) {
			t.Errorf("%s: type %q does not end in /%s", c, uri, slug)
		}
		if uri != c.TypeURI() {
			t.Errorf("%s: TypeURI is not stable", c)
		}
		if prev, dup := types[uri]; dup {
			t.Errorf("%s and %s share the type %s", prev, c, uri)
		}
		types[uri] = c
		// Stop codes are never retryable unchanged, except outcome-unknown,
		// which is retried with the same key after reconciling.
		if info.Stop && info.Retryable && c != contracts.CodeOutcomeUnknown {
			t.Errorf("%s: both stop and retryable", c)
		}
	}
	for c := range wantStatus {
		if !registered[c] {
			t.Errorf("%s is not registered", c)
		}
	}
	// seeds/003: stop on missing auth, wrong scope, foreign tenant,
	// revocation (an invalid token) and destructive-action denial.
	for _, c := range []contracts.Code{contracts.CodeUnauthenticated, contracts.CodeInvalidToken, contracts.CodeInsufficientScope,
		contracts.CodeTenantForbidden, contracts.CodeDestructiveActionDenied} {
		if info, _ := c.Info(); !info.Stop {
			t.Errorf("%s: hosts must stop, not repair and retry", c)
		}
	}
	// Model-correctable argument errors are not stops.
	for _, c := range []contracts.Code{contracts.CodeInvalidParams, contracts.CodeAmbiguousIntent, contracts.CodeIdempotencyKeyMissing, contracts.CodeIdempotencyKeyInvalid} {
		if info, _ := c.Info(); info.Stop {
			t.Errorf("%s: a model-correctable error must not stop the host", c)
		}
	}
}

func TestUnknownCode(t *testing.T) {
	info, ok := contracts.Code("NO_SUCH_CODE").Info()
	if ok || info.Code != contracts.CodeInternal || info.Status != 500 {
		t.Errorf("Info() of an unknown code = %+v, %v", info, ok)
	}
	if s := contracts.Code("NO_SUCH_CODE").Status(); s != 500 {
		t.Errorf("Status() of an unknown code = %d", s)
	}
}

// checkErrorCodes holds codes, the complete error list of the operation
// owner, to what every operation's list obeys: sorted and unique, registered
// with an error status, its own codes included, the codes every
// authenticated operation can answer, the body codes iff the method is POST,
// not-found iff a path argument (or its own codes) names it. It returns
// whether the list holds a code.
func checkErrorCodes(t *testing.T, owner, method, pathArgument string, codes, own []contracts.Code) (has func(contracts.Code) bool) {
	t.Helper()
	if !slices.IsSorted(codes) || len(slices.Compact(slices.Clone(codes))) != len(codes) {
		t.Errorf("%s: ErrorCodes() is not sorted and unique: %v", owner, codes)
	}
	for _, c := range slices.Concat(codes, own) {
		info, ok := c.Info()
		if !ok {
			t.Errorf("%s: code %q is not registered", owner, c)
		}
		if info.Status < 400 {
			t.Errorf("%s: code %s answers %d, not an error status", owner, c, info.Status)
		}
	}
	has = func(c contracts.Code) bool { return slices.Contains(codes, c) }
	for _, c := range own {
		if !has(c) {
			t.Errorf("%s: own code %s missing from ErrorCodes()", owner, c)
		}
	}
	for _, c := range []contracts.Code{contracts.CodeUnauthenticated, contracts.CodeInvalidToken, contracts.CodeInsufficientScope,
		contracts.CodeInvalidParams, contracts.CodeRateLimited, contracts.CodeInternal} {
		if !has(c) {
			t.Errorf("%s: every operation can answer %s", owner, c)
		}
	}
	if has(contracts.CodeContentTooLarge) != (method == "POST") || has(contracts.CodeUnsupportedMediaType) != (method == "POST") {
		t.Errorf("%s: content-too-large and unsupported-media-type iff a body is read", owner)
	}
	if has(contracts.CodeNotFound) != (pathArgument != "" || slices.Contains(own, contracts.CodeNotFound)) {
		t.Errorf("%s: not-found iff a path argument (or the operation itself) names something", owner)
	}
	return has
}

func TestToolErrorCodesAreRegistered(t *testing.T) {
	for _, tool := range contracts.Tools() {
		has := checkErrorCodes(t, tool.Name, tool.Method, tool.PathArgument, tool.ErrorCodes(), tool.Errors)
		if tool.Idempotency == contracts.IdempotencyRequired && (!has(contracts.CodeIdempotencyKeyMissing) || !has(contracts.CodeIdempotencyKeyReused)) {
			t.Errorf("%s: a keyed tool answers idempotency-key-missing and -reused", tool.Name)
		}
		if tool.Idempotency == contracts.IdempotencySafeRead && has(contracts.CodeIdempotencyKeyReused) {
			t.Errorf("%s: a safe read takes no key", tool.Name)
		}
		if tool.Annotations.DestructiveHint != has(contracts.CodeDestructiveActionDenied) {
			t.Errorf("%s: destructive-action-denied iff destructive", tool.Name)
		}
	}
	cmd, _ := contracts.Lookup(contracts.ToolPraxecCommand)
	for _, c := range []contracts.Code{contracts.CodeAmbiguousIntent, contracts.CodeVersionConflict, contracts.CodeInvalidTransition,
		contracts.CodeGuardRejected, contracts.CodeRunIDAlreadyRunning, contracts.CodeLexiconWritesDisabled} {
		if !slices.Contains(cmd.ErrorCodes(), c) {
			t.Errorf("praxec.command: missing seeds/000 code %s", c)
		}
	}
}

func TestAsError(t *testing.T) {
	cause := errors.New("dial tcp 10.0.0.7:5432: password=hunter2 refused")
	e := contracts.AsError(cause)
	if e.Code != contracts.CodeInternal || e.Status() != 500 {
		t.Errorf("code %s status %d, want internal 500", e.Code, e.Status())
	}
	if strings.Contains(e.Message, "hunter2") || strings.Contains(e.Message, "10.0.0.7") || e.Hint != "" {
		t.Errorf("the message leaks the cause: %q", e.Message)
	}
	shown, _ := json.Marshal(e.Envelope())
	if strings.Contains(string(shown), "hunter2") {
		t.Errorf("the envelope leaks the cause: %s", shown)
	}
	if !errors.Is(e, cause) || e.Cause != cause {
		t.Error("the cause is not kept for logs")
	}

	// A contract error anywhere in the chain is returned as is.
	inner := contracts.Errorf(contracts.CodeVersionConflict, "expected version %d, found %d", 3, 4)
	wrapped := fmt.Errorf("service: %w", inner)
	if got := contracts.AsError(wrapped); got != inner {
		t.Errorf("AsError(wrapped) = %v, want the inner error", got)
	}
	if inner.Message != "expected version 3, found 4" || inner.Status() != 409 {
		t.Errorf("Errorf: %+v", inner)
	}
	if got := inner.Error(); got != "VERSION_CONFLICT: expected version 3, found 4" {
		t.Errorf("Error() = %q", got)
	}
	withCause := &contracts.Error{Code: contracts.CodeOutcomeUnknown, Message: "upstream timed out", Cause: io.ErrUnexpectedEOF}
	if !strings.Contains(withCause.Error(), io.ErrUnexpectedEOF.Error()) || !errors.Is(withCause, io.ErrUnexpectedEOF) {
		t.Errorf("Error() %q and Unwrap keep the cause for logs", withCause.Error())
	}
}

func TestEnvelopeShape(t *testing.T) {
	e := contracts.AmbiguousIntent(contracts.ToolPraxecCommand)
	b, err := json.Marshal(e.Envelope())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	body, _ := m["error"].(map[string]any)
	if body["code"] != "AMBIGUOUS_INTENT" || body["message"] == nil || body["hint"] == nil {
		t.Errorf("error member %v", body)
	}
	if _, ok := m["links"].([]any); !ok {
		t.Errorf("links member %v", m["links"])
	}
	if _, ok := m["errors"]; ok {
		t.Error("errors appears without field errors")
	}
	plain, _ := json.Marshal((&contracts.Error{Code: contracts.CodeNotFound, Message: "not found"}).Envelope())
	if string(plain) != `{"error":{"code":"not-found","message":"not found"},"links":[]}` {
		t.Errorf("minimal envelope %s", plain)
	}
}

func TestScopes(t *testing.T) {
	scopes := contracts.Scopes()
	want := []contracts.Scope{"approvals:write", "capabilities:admin", "capabilities:read", "config:write", "context:read", "coverage:read", "coverage:write",
		"lexicon:write", "memory:read", "missions:read", "missions:write", "skills:read", "tokens:write", "traces:read", "world:read"}
	if !slices.Equal(scopes, want) {
		t.Errorf("Scopes() = %v\nwant       %v", scopes, want)
	}
	operators := 0
	for _, s := range scopes {
		if !s.Known() || s.Description() == "" {
			t.Errorf("%s: known %v, description %q", s, s.Known(), s.Description())
		}
		if s.Operator() {
			operators++
		}
	}
	if operators != 6 {
		t.Errorf("%d operator scopes, want 6", operators)
	}
	for _, s := range []contracts.Scope{"MISSIONS:READ", "missions:read ", "admin", ""} {
		if s.Known() || s.Description() != "" || s.Operator() {
			t.Errorf("%q is treated as a scope", s)
		}
	}
	// Every tool needs one of the nine agent scopes.
	for _, tool := range contracts.Tools() {
		if !tool.RequiredScope.Known() || tool.RequiredScope.Operator() {
			t.Errorf("%s: requiredScope %s", tool.Name, tool.RequiredScope)
		}
	}
}

// TestCodesGolden pins the registry as clients see it: code, HTTP status,
// problem type URI, title and the retry and stop advice.
func TestCodesGolden(t *testing.T) {
	type row struct {
		contracts.CodeInfo
		Type string `json:"type"`
	}
	var rows []row
	for _, info := range contracts.Codes() {
		rows = append(rows, row{info, info.Code.TypeURI()})
	}
	golden.Check(t, "testdata/codes.golden.json", marshalGolden(t, rows), "")
}
