package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
	"github.com/praxa/praxa/internal/testkit"
)

func ptr(f float64) *float64 { return &f }

// guardEngine is an engine whose proxy_default offers one noop capability
// per guard, named after it, and whose clock reads *now.
func guardEngine(t testing.TB, now *time.Time, guards map[string][]config.Guard) *workflow.Engine {
	t.Helper()
	reg, err := workflow.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	var caps []config.ExposedCapability
	for id, gs := range guards {
		caps = append(caps, config.ExposedCapability{ID: id, Guards: gs})
	}
	if err := reg.AddProxy(caps); err != nil {
		t.Fatal(err)
	}
	n := 0
	return &workflow.Engine{Registry: reg, Now: func() time.Time { return *now },
		NewID: func(p string) string { n++; return p + "_" + strings.Repeat("a", n) }}
}

// wantRefusal holds the outcome err of the call what to its table row: a
// pass when refusal is "", otherwise a GUARD_REJECTED whose message holds
// refusal. It returns that refusal, nil when the call passed or failed the
// row (reported).
func wantRefusal(t *testing.T, what string, err error, refusal string) *contracts.Error {
	t.Helper()
	if refusal == "" {
		if err != nil {
			t.Errorf("%s: refused: %v", what, err)
		}
		return nil
	}
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeGuardRejected || !strings.Contains(ce.Message, refusal) {
		t.Errorf("%s: %v, want GUARD_REJECTED with %q", what, err, refusal)
		return nil
	}
	return ce
}

// call starts a run with capability id and arguments args, as a JSON
// request body would carry them.
func call(t *testing.T, e *workflow.Engine, id, args string) (*workflow.Outcome, error) {
	t.Helper()
	return e.Start(context.Background(), workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow,
		Input: map[string]any{"capability": id}, Arguments: testkit.MustDecodeObject(t, args)})
}

// TestArgumentGuard: each predicate of an argument guard, passing and
// refusing; a refusal is GUARD_REJECTED naming the argument, its value and
// what it must be, and it fires nothing.
func TestArgumentGuard(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	e := guardEngine(t, &now, map[string][]config.Guard{
		"equals":  {{Kind: config.GuardArgument, Argument: "base", Equals: "main"}},
		"number":  {{Kind: config.GuardArgument, Argument: "n", Equals: float64(3)}},
		"object":  {{Kind: config.GuardArgument, Argument: "o", Equals: map[string]any{"a": []any{float64(1), "x"}}}},
		"in":      {{Kind: config.GuardArgument, Argument: "env", In: []any{"staging", "prod"}}},
		"matches": {{Kind: config.GuardArgument, Argument: "branch", Matches: `feature/[a-z0-9-]+`}},
		"range":   {{Kind: config.GuardArgument, Argument: "shards", Min: ptr(1), Max: ptr(8)}},
		"both": {{Kind: config.GuardArgument, Argument: "env", In: []any{"staging", "prod"}},
			{Kind: config.GuardArgument, Argument: "shards", Max: ptr(2)}},
	})
	tests := []struct {
		capability, args string
		// refusal is what the GUARD_REJECTED message must hold; "" when the
		// call passes.
		refusal string
	}{
		{"equals", `{"base":"main"}`, ""},
		{"equals", `{"base":"dev"}`, `the argument base is "dev"; it must equal "main"`},
		{"equals", `{}`, "the argument base is required"},
		{"equals", `{"base":null}`, "the argument base is required"},
		{"number", `{"n":3.0}`, ""},
		{"number", `{"n":"3"}`, `it must equal 3`},
		{"object", `{"o":{"a":[1,"x"]}}`, ""},
		{"object", `{"o":{"a":["x",1]}}`, `must equal {"a":[1,"x"]}`},
		{"in", `{"env":"prod"}`, ""},
		{"in", `{"env":"dev"}`, `it must be one of ["staging","prod"]`},
		{"matches", `{"branch":"feature/login-2"}`, ""},
		{"matches", `{"branch":"feature/login-2; rm -rf /"}`, `must match "feature/[a-z0-9-]+"`}, // anchored: the whole value
		{"matches", `{"branch":"xfeature/a"}`, `must match`},
		{"matches", `{"branch":7}`, `must be a string matching`},
		{"range", `{"shards":1}`, ""},
		{"range", `{"shards":8}`, ""},
		{"range", `{"shards":0.5}`, "must be at least 1"},
		{"range", `{"shards":9}`, "must be at most 8"},
		{"range", `{"shards":"4"}`, "must be a number"},
		{"both", `{"env":"dev","shards":3}`, `argument guard: the argument env is "dev"; it must be one of ["staging","prod"]; transition both: argument guard: the argument shards is 3; it must be at most 2`},
	}
	for _, tc := range tests {
		out, err := call(t, e, tc.capability, tc.args)
		if wantRefusal(t, tc.capability+" "+tc.args, err, tc.refusal) == nil {
			continue
		}
		for _, ev := range out.Events {
			if ev.Type == "transition.fired" {
				t.Errorf("%s %s: refused, yet it fired", tc.capability, tc.args)
			}
		}
		last := out.Events[len(out.Events)-1]
		if last.Type != "guard.rejected" || last.Attributes["failed"] == nil {
			t.Errorf("%s %s: last event %+v, want guard.rejected with what failed", tc.capability, tc.args, last)
		}
		// The event says what failed, never the value sent: an argument
		// may hold a secret.
		if b, _ := json.Marshal(last.Attributes); strings.Contains(tc.args, `"dev"`) && strings.Contains(string(b), `dev`) {
			t.Errorf("%s %s: the event quotes the value: %s", tc.capability, tc.args, b)
		}
	}
}

// TestArgumentGuardRetryLink: a refusal by an equals guard links the same
// call with the value that passes, and following the link passes.
func TestArgumentGuardRetryLink(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	e := guardEngine(t, &now, map[string][]config.Guard{
		"merge": {{Kind: config.GuardArgument, Argument: "base", Equals: "main"}},
	})
	_, err := call(t, e, "merge", `{"base":"dev","title":"T"}`)
	var ce *contracts.Error
	if !errors.As(err, &ce) || len(ce.Links) != 2 || ce.Links[0].Rel != "retry" || ce.Links[1].Rel != "describe" {
		t.Fatalf("refusal %v, want a retry link, then the capability's describe", err)
	}
	input, _ := ce.Links[0].Args["input"].(map[string]any)
	if input["base"] != "main" || input["title"] != "T" || input["capability"] != "merge" {
		t.Fatalf("retry link input %v", input)
	}
	args := map[string]any{"base": input["base"], "title": input["title"]}
	if _, err := e.Start(context.Background(), workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow,
		Input: map[string]any{"capability": "merge"}, Arguments: args}); err != nil {
		t.Errorf("following the retry link: %v", err)
	}
}

// TestScheduleGuard: a schedule guard reads the injected clock in its own
// time zone, across a daylight-saving change; a refusal says what the
// schedule allows, the time in the zone, and when it next allows a call.
func TestScheduleGuard(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	var now time.Time
	e := guardEngine(t, &now, map[string][]config.Guard{
		"deploy": {{Kind: config.GuardSchedule, Timezone: "Europe/Paris", Weekdays: []string{"mon", "tue", "wed", "thu", "fri"},
			Hours: []string{"09:00-12:00", "14:00-17:30"}}},
		"weekend": {{Kind: config.GuardSchedule, Timezone: "America/New_York", Weekdays: []string{"sat", "sun"}}},
		"night":   {{Kind: config.GuardSchedule, Timezone: "UTC", Hours: []string{"22:00-24:00", "00:00-06:00"}}},
	})
	tests := []struct {
		capability string
		at         time.Time
		refusal    string
	}{
		{"deploy", time.Date(2026, 12, 1, 9, 0, 0, 0, paris), ""},
		{"deploy", time.Date(2026, 12, 1, 11, 59, 59, 0, paris), ""},
		{"deploy", time.Date(2026, 12, 1, 12, 0, 0, 0, paris), "calls are allowed on mon, tue, wed, thu, fri 09:00-12:00, 14:00-17:30; it is tue 12:00 in Europe/Paris; the schedule next allows a call at 2026-12-01T14:00:00+01:00"},
		{"deploy", time.Date(2026, 12, 1, 16, 29, 0, 0, time.UTC), ""}, // 17:29 in Paris
		{"deploy", time.Date(2026, 12, 1, 16, 30, 0, 0, time.UTC), "it is tue 17:30 in Europe/Paris"},
		{"deploy", time.Date(2026, 12, 5, 10, 0, 0, 0, paris), "it is sat 10:00 in Europe/Paris; the schedule next allows a call at 2026-12-07T09:00:00+01:00"},
		// The Friday before the clocks go back: the next window is on
		// Monday, in winter time.
		{"deploy", time.Date(2026, 10, 23, 18, 0, 0, 0, paris), "next allows a call at 2026-10-26T09:00:00+01:00"},
		{"deploy", time.Date(2026, 10, 23, 10, 0, 0, 0, paris), ""},
		{"weekend", time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC), "it is fri 22:00 in America/New_York"}, // Saturday in UTC, Friday in New York
		{"weekend", time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC), ""},
		{"night", time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC), ""},
		{"night", time.Date(2026, 12, 1, 5, 59, 0, 0, time.UTC), ""},
		{"night", time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC), "next allows a call at 2026-12-01T22:00:00Z"},
	}
	for _, tc := range tests {
		now = tc.at
		_, err := call(t, e, tc.capability, `{}`)
		ce := wantRefusal(t, tc.capability+" at "+tc.at.String(), err, tc.refusal)
		if ce == nil {
			continue
		}
		// Only time satisfies it: the one next move is to read the
		// capability, its schedule included (issue 27: never links: []).
		if len(ce.Links) != 1 || ce.Links[0].Rel != "describe" || ce.Links[0].Args["subject"] != tc.capability {
			t.Errorf("%s: a schedule refusal links %v, want the capability's describe alone", tc.capability, ce.Links)
		}
	}
}

// TestGuardsCompiled: Compile refuses a guard the loader would have
// refused (configurations built in code), never checking it at run time.
func TestGuardsCompiled(t *testing.T) {
	for _, g := range []config.Guard{
		{Kind: config.GuardArgument, Argument: "x", Matches: "(unclosed"},
		{Kind: config.GuardArgument, Argument: "x", Matches: strings.Repeat("a", config.MaxGuardPatternLength+1)},
		{Kind: config.GuardArgument, Equals: "x"},
		{Kind: config.GuardSchedule, Timezone: "Mars/Olympus"},
		{Kind: config.GuardSchedule, Timezone: "UTC", Hours: []string{"17:00-09:00"}},
		{Kind: config.GuardSchedule, Timezone: "UTC", Weekdays: []string{"monday"}},
		{Kind: "vibes"},
	} {
		reg, _ := workflow.Compile(nil)
		if err := reg.AddProxy([]config.ExposedCapability{{ID: "c", Guards: []config.Guard{g}}}); err == nil {
			t.Errorf("%+v compiled", g)
		}
	}
}

// FuzzArgumentGuard holds the argument guards to their promise over any
// arguments a caller sends: no panic, a pass or a GUARD_REJECTED (never
// another error), and a refusal whose message quotes the value bounded.
func FuzzArgumentGuard(f *testing.F) {
	for _, s := range []string{`{"base":"main","n":3,"branch":"feature/x"}`, `{"base":{"a":[1,2]},"n":"x"}`, `{"n":1e308,"branch":"` + strings.Repeat("é", 300) + `"}`, `{}`} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	e := guardEngine(f, &now, map[string][]config.Guard{
		"c": {{Kind: config.GuardArgument, Argument: "base", Equals: map[string]any{"a": []any{float64(1), float64(2)}}},
			{Kind: config.GuardArgument, Argument: "branch", In: []any{"main", float64(7)}, Matches: `feature/.+|main`},
			{Kind: config.GuardArgument, Argument: "n", Min: ptr(-1), Max: ptr(10)}},
	})
	f.Fuzz(func(t *testing.T, args string) {
		a, err := testkit.DecodeObject(args)
		if err != nil || a == nil {
			return
		}
		_, err = e.Start(context.Background(), workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow,
			Input: map[string]any{"capability": "c"}, Arguments: a})
		if err == nil {
			return
		}
		var ce *contracts.Error
		if !errors.As(err, &ce) || ce.Code != contracts.CodeGuardRejected {
			t.Fatalf("%s: %v, want a pass or GUARD_REJECTED", args, err)
		}
		if len(ce.Message) > 2000 {
			t.Fatalf("a refusal of %d bytes quotes the arguments unbounded", len(ce.Message))
		}
	})
}
