package workflow

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
)

// A transition's guards run immediately before its executor (and before a
// human approval is queued, and again when it is granted). An evidence
// guard reads the instance's evidence, an argument guard the move's
// arguments, a schedule guard the clock (Engine.Now). Every guard is
// checked, so a refusal lists everything that failed.

// compiledGuard is a guard with what the engine needs to check it
// prepared once: the pattern of matches, the zone and windows of a
// schedule.
type compiledGuard struct {
	config.Guard
	pattern  *regexp.Regexp
	loc      *time.Location
	weekdays []time.Weekday
	windows  []config.HourWindow
}

// compileGuards prepares the guards of t; the loader checked them, so an
// error here means a configuration built in code is wrong.
func compileGuards(where string, guards []config.Guard) ([]compiledGuard, error) {
	out := make([]compiledGuard, len(guards))
	for i, g := range guards {
		cg := compiledGuard{Guard: g}
		var err error
		switch g.Kind {
		case config.GuardEvidence:
		case config.GuardArgument:
			if g.Argument == "" {
				err = fmt.Errorf("an argument guard names no argument")
			} else if g.Matches != "" {
				cg.pattern, err = config.GuardPattern(g.Matches)
			}
		case config.GuardSchedule:
			if cg.loc, err = config.GuardLocation(g.Timezone); err != nil {
				break
			}
			for _, d := range g.Weekdays {
				wd, ok := config.GuardWeekday(d)
				if !ok {
					err = fmt.Errorf("%q is not a weekday (mon … sun)", d)
					break
				}
				cg.weekdays = append(cg.weekdays, wd)
			}
			for _, h := range g.Hours {
				w, werr := config.ParseHourWindow(h)
				if werr != nil {
					err = fmt.Errorf("hours %q: %w", h, werr)
					break
				}
				cg.windows = append(cg.windows, w)
			}
		default:
			err = fmt.Errorf("the guard kind %q is not supported", g.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("workflow: %s.guards[%d]: %w", where, i, err)
		}
		out[i] = cg
	}
	return out, nil
}

// guardFailure is one argument or schedule guard that refused a move.
type guardFailure struct {
	kind string
	// argument is the argument an argument guard checked.
	argument string
	// detail says what failed, in words, for the caller: it may quote
	// the argument's value.
	detail string
	// reason says what failed without the argument's value, for the audit
	// event: an argument may hold a secret, which an event must not.
	reason string
	// fix is the argument value that would pass (an equals guard), nil
	// when there is none to offer.
	fix any
}

// record renders f for the guard.rejected audit event.
func (f guardFailure) record() map[string]any {
	reason := f.reason
	if reason == "" {
		reason = f.detail
	}
	r := map[string]any{"kind": f.kind, "detail": reason}
	if f.argument != "" {
		r["argument"] = f.argument
	}
	return r
}

// guardError is a refusal by the guards of a transition: the evidence
// missing, and the other guards that failed.
type guardError struct {
	missing []string
	failed  []guardFailure
}

func (g *guardError) Error() string { return "guard rejected" }

// attributes are the guard.rejected event's attributes beside the
// transition.
func (g *guardError) attributes(transition string) map[string]any {
	a := map[string]any{"transition": transition, "missing": g.missing}
	if len(g.failed) > 0 {
		failed := make([]any, len(g.failed))
		for i, f := range g.failed {
			failed[i] = f.record()
		}
		a["failed"] = failed
	}
	return a
}

func (g *guardError) contract(in *Instance, t *Transition) *contracts.Error {
	var msgs, hints []string
	if len(g.missing) > 0 {
		msgs = append(msgs, fmt.Sprintf("transition %s needs evidence %s, which this workflow does not hold yet", t.Name, strings.Join(g.missing, ", ")))
		hints = append(hints, "Take the moves that produce "+strings.Join(g.missing, ", ")+" first; the links show what is legal now.")
	}
	for _, f := range g.failed {
		msgs = append(msgs, fmt.Sprintf("transition %s: %s guard: %s", t.Name, f.kind, f.detail))
	}
	if slices.ContainsFunc(g.failed, func(f guardFailure) bool { return f.kind == config.GuardArgument }) {
		hints = append(hints, "Call again with arguments the guard accepts.")
	}
	if slices.ContainsFunc(g.failed, func(f guardFailure) bool { return f.kind == config.GuardSchedule }) {
		hints = append(hints, "Call again within the allowed schedule.")
	}
	return &contracts.Error{Code: contracts.CodeGuardRejected, Message: strings.Join(msgs, "; "), Hint: strings.Join(hints, " "),
		Links: []contracts.Link{{Rel: "get", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": in.ID}}}}
}

// guards checks every guard of t against the instance, the move's
// arguments and the clock at now; it runs right before the executor.
func guards(t *Transition, in *Instance, args map[string]any, now time.Time) error {
	ge := &guardError{}
	for _, g := range t.guards {
		switch g.Kind {
		case config.GuardEvidence:
			for _, ev := range g.Requires {
				if !slices.Contains(in.Evidence, ev) && !slices.Contains(ge.missing, ev) {
					ge.missing = append(ge.missing, ev)
				}
			}
		case config.GuardArgument:
			if detail, reason, fix, ok := g.checkArgument(args); !ok {
				ge.failed = append(ge.failed, guardFailure{kind: g.Kind, argument: g.Argument, detail: detail, reason: reason, fix: fix})
			}
		case config.GuardSchedule:
			if detail, ok := g.checkSchedule(now); !ok {
				ge.failed = append(ge.failed, guardFailure{kind: g.Kind, detail: detail})
			}
		default:
			// compileGuards refused it; fail closed all the same.
			ge.failed = append(ge.failed, guardFailure{kind: g.Kind, detail: "this gateway does not check guards of this kind"})
		}
	}
	if len(ge.missing) > 0 || len(ge.failed) > 0 {
		return ge
	}
	return nil
}

// maxShownValue bounds how much of an argument's value a refusal quotes.
const maxShownValue = 80

// show renders v for a refusal, bounded.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > maxShownValue {
		// Cut on a rune boundary: the message stays valid UTF-8.
		return strings.ToValidUTF8(string(b[:maxShownValue]), "") + "…"
	}
	return string(b)
}

// checkArgument checks the argument guard g against args. On a refusal
// it says what failed, with the value (detail) and without it (reason),
// and, for equals, the value that would pass.
func (g compiledGuard) checkArgument(args map[string]any) (detail, reason string, fix any, ok bool) {
	v, has := args[g.Argument]
	if !has || v == nil {
		msg := fmt.Sprintf("the argument %s is required", g.Argument)
		return msg, msg, g.Equals, false
	}
	var failed []string
	if g.Equals != nil && !sameJSON(v, g.Equals) {
		failed = append(failed, "must equal "+show(g.Equals))
	}
	if len(g.In) > 0 && !slices.ContainsFunc(g.In, func(x any) bool { return sameJSON(v, x) }) {
		failed = append(failed, "must be one of "+show(g.In))
	}
	if g.pattern != nil {
		s, isString := v.(string)
		switch {
		case !isString:
			failed = append(failed, "must be a string matching "+show(g.Matches))
		case !g.pattern.MatchString(s):
			failed = append(failed, "must match "+show(g.Matches))
		}
	}
	if g.Min != nil || g.Max != nil {
		n, isNumber := number(v)
		switch {
		case !isNumber:
			failed = append(failed, "must be a number")
		case g.Min != nil && n < *g.Min:
			failed = append(failed, fmt.Sprintf("must be at least %v", *g.Min))
		case g.Max != nil && n > *g.Max:
			failed = append(failed, fmt.Sprintf("must be at most %v", *g.Max))
		}
	}
	if len(failed) == 0 {
		return "", "", nil, true
	}
	return fmt.Sprintf("the argument %s is %s; it %s", g.Argument, show(v), strings.Join(failed, " and ")),
		fmt.Sprintf("the argument %s %s", g.Argument, strings.Join(failed, " and ")), g.Equals, false
}

// number reads v as a number: a decoded JSON number of either form.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n)
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// sameJSON reports whether a and b are the same JSON value: numbers by
// value whatever their Go type, objects member by member, arrays in
// order.
func sameJSON(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, has := b[k]
			if !has || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, sameJSON)
	default:
		return a == b
	}
}

// checkSchedule checks the schedule guard g at now. On a refusal it says
// what the schedule allows, what time it is in the zone, and when the
// schedule next allows a call.
func (g compiledGuard) checkSchedule(now time.Time) (string, bool) {
	local := now.In(g.loc)
	if g.allows(local) {
		return "", true
	}
	detail := fmt.Sprintf("calls are allowed %s; it is %s %s in %s", g.describe(), config.WeekdayName(local.Weekday()),
		local.Format("15:04"), g.Timezone)
	if next, ok := g.next(local); ok {
		detail += "; the schedule next allows a call at " + next.Format(time.RFC3339)
	}
	return detail, false
}

// allows reports whether the local time t is on an allowed weekday and
// within an allowed window.
func (g compiledGuard) allows(t time.Time) bool {
	if len(g.weekdays) > 0 && !slices.Contains(g.weekdays, t.Weekday()) {
		return false
	}
	if len(g.windows) == 0 {
		return true
	}
	m := t.Hour()*60 + t.Minute()
	return slices.ContainsFunc(g.windows, func(w config.HourWindow) bool { return w.Contains(m) })
}

// describe words the schedule: its weekdays and windows.
func (g compiledGuard) describe() string {
	days := "every day"
	if len(g.Weekdays) > 0 {
		days = "on " + strings.Join(g.Weekdays, ", ")
	}
	if len(g.Hours) == 0 {
		return days
	}
	return days + " " + strings.Join(g.Hours, ", ")
}

// next returns the first moment after t (local) the schedule allows: the
// start of an allowed window on an allowed day (or the start of an
// allowed day when there are no windows), looking a week and a day ahead.
func (g compiledGuard) next(t time.Time) (time.Time, bool) {
	starts := []int{0}
	if len(g.windows) > 0 {
		starts = starts[:0]
		for _, w := range g.windows {
			starts = append(starts, w.From)
		}
		slices.Sort(starts)
	}
	y, mo, d := t.Date()
	for day := range 9 {
		for _, m := range starts {
			c := time.Date(y, mo, d+day, m/60, m%60, 0, 0, g.loc)
			if c.After(t) && g.allows(c) {
				return c, true
			}
		}
	}
	return time.Time{}, false
}
