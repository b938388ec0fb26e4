package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Group names a group of cases.
type Group string

// The groups, in report order.
const (
	GroupContract       Group = "contract"
	GroupAuthentication Group = "authentication"
	GroupScopes         Group = "scopes"
	GroupTenancy        Group = "tenancy"
	GroupIdempotency    Group = "idempotency"
	GroupValidation     Group = "validation"
	GroupErrors         Group = "errors"
	GroupMissions       Group = "missions"
	GroupMCP            Group = "mcp"
	GroupExecutors      Group = "executors"
)

// Groups returns every group in report order.
func Groups() []Group {
	return []Group{GroupContract, GroupAuthentication, GroupScopes, GroupTenancy, GroupIdempotency,
		GroupValidation, GroupErrors, GroupMissions, GroupMCP, GroupExecutors}
}

// Verdict is the outcome of one case.
type Verdict string

// The verdicts.
const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	Skip Verdict = "skip"
)

// Case is one conformance check, as data.
type Case struct {
	// ID is stable across versions of the suite: baselines and recorded
	// coverage refer to it.
	ID    string
	Title string
	Group Group
	// Proves names what the case proves: an item of the reliability and
	// security checklist ("standards #27") or a section of a seed or of
	// DESIGN.md.
	Proves string
	// Operations are the contract operationIds the case exercises.
	Operations []string
	// Run performs the case. It passes when it returns, fails through
	// T.Fatalf (or a panic) and is skipped through T.Skipf.
	Run func(t *T)
}

// T is what a running case sees: the target, tokens and helpers. A case
// ends at its first Fatalf or Skipf, as a test does.
type T struct {
	ctx      context.Context
	r        *run
	c        *Case
	cleanups []func()
}

// Context is the case's context; it ends when the case times out or the
// run is cancelled.
func (t *T) Context() context.Context { return t.ctx }

// outcome ends a case early; the runner recovers it.
type outcome struct {
	verdict Verdict
	reason  string
}

// Fatalf fails the case with a reason and ends it.
func (t *T) Fatalf(format string, args ...any) {
	panic(outcome{Fail, fmt.Sprintf(format, args...)})
}

// Skipf skips the case with a reason and ends it.
func (t *T) Skipf(format string, args ...any) {
	panic(outcome{Skip, fmt.Sprintf(format, args...)})
}

// Cleanup registers f to run when the case ends.
func (t *T) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }

// check fails the case with the formatted reason unless ok.
func (t *T) check(ok bool, format string, args ...any) {
	if !ok {
		t.Fatalf(format, args...)
	}
}

// Cases returns every case of the suite in its stable order: by group,
// then as each group declares them.
func Cases() []Case {
	var out []Case
	for _, g := range []func() []Case{contractCases, authenticationCases, scopeCases, tenancyCases, idempotencyCases,
		validationCases, errorCases, missionCases, mcpCases, executorCases} {
		out = append(out, g()...)
	}
	return out
}

// LookupCase returns the case with id.
func LookupCase(id string) (Case, bool) {
	for _, c := range Cases() {
		if c.ID == id {
			return c, true
		}
	}
	return Case{}, false
}

// Select returns the cases of the named groups (all groups when none) and
// the named cases (any group), in the suite's order. A name that is no
// group or case is an error.
func Select(groups []Group, ids []string) ([]Case, error) {
	all := Cases()
	for _, g := range groups {
		if !slices.Contains(Groups(), g) {
			return nil, fmt.Errorf("conformance: unknown group %q (known: %s)", g, joinGroups(Groups()))
		}
	}
	for _, id := range ids {
		if _, ok := LookupCase(id); !ok {
			return nil, fmt.Errorf("conformance: unknown case %q", id)
		}
	}
	if len(groups) == 0 && len(ids) == 0 {
		return all, nil
	}
	var out []Case
	for _, c := range all {
		if slices.Contains(groups, c.Group) || slices.Contains(ids, c.ID) {
			out = append(out, c)
		}
	}
	return out, nil
}

func joinGroups(gs []Group) string {
	s := make([]string, len(gs))
	for i, g := range gs {
		s[i] = string(g)
	}
	return strings.Join(s, ", ")
}
