package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	// The schedule guard names IANA time zones: embedding the database
	// makes them load the same on every host, with or without zoneinfo.
	_ "time/tzdata"
)

// MaxGuardPatternLength bounds the regular expression of an argument
// guard's matches, in bytes. Go's regexp (RE2) runs in time linear in the
// input, so the bound is on the pattern: the size of the compiled program.
const MaxGuardPatternLength = 256

// GuardPattern compiles the matches pattern of an argument guard. The
// pattern must match the whole argument: it is anchored at both ends.
func GuardPattern(pattern string) (*regexp.Regexp, error) {
	if len(pattern) > MaxGuardPatternLength {
		return nil, fmt.Errorf("the pattern is %d bytes long, longer than %d", len(pattern), MaxGuardPatternLength)
	}
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return nil, fmt.Errorf("is not a regular expression (RE2 syntax): %v", err)
	}
	return re, nil
}

// weekdayNames are the names of Weekdays, Sunday first as time.Weekday.
var weekdayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// GuardWeekday returns the weekday a schedule guard's weekdays entry names.
func GuardWeekday(name string) (time.Weekday, bool) {
	i := slices.Index(weekdayNames, name)
	return time.Weekday(i), i >= 0
}

// WeekdayName is the name a schedule guard uses for d (mon … sun).
func WeekdayName(d time.Weekday) string { return weekdayNames[d] }

// HourWindow is one window of a schedule guard's hours, in minutes since
// the local midnight: From included, To excluded.
type HourWindow struct{ From, To int }

// Contains reports whether the minute of the day m falls in w.
func (w HourWindow) Contains(m int) bool { return m >= w.From && m < w.To }

// String renders w as written in the file.
func (w HourWindow) String() string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.From/60, w.From%60, w.To/60, w.To%60)
}

// ParseHourWindow reads "HH:MM-HH:MM": the start from 00:00 to 23:59, the
// end after it and at most 24:00. A window does not cross midnight: write
// "22:00-24:00" and "00:00-06:00" for a night.
func ParseHourWindow(s string) (HourWindow, error) {
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return HourWindow{}, fmt.Errorf("must be a window HH:MM-HH:MM such as 09:00-17:00")
	}
	f, err1 := clockMinute(from)
	t, err2 := clockMinute(to)
	switch {
	case err1 != nil || err2 != nil:
		return HourWindow{}, fmt.Errorf("must be a window HH:MM-HH:MM such as 09:00-17:00")
	case f >= 24*60:
		return HourWindow{}, fmt.Errorf("starts at 24:00: a window starts at 23:59 at the latest")
	case t <= f:
		return HourWindow{}, fmt.Errorf("ends before it starts: a window does not cross midnight (write 22:00-24:00 and 00:00-06:00 for a night)")
	}
	return HourWindow{From: f, To: t}, nil
}

// clockMinute reads HH:MM (00:00 to 24:00) as minutes since midnight.
func clockMinute(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, fmt.Errorf("not HH:MM")
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm > 59 || hh > 24 || hh == 24 && mm != 0 {
		return 0, fmt.Errorf("not HH:MM")
	}
	return hh*60 + mm, nil
}

// GuardLocation loads the time zone of a schedule guard. Only IANA names
// are accepted ("Local" would make the guard depend on the host).
func GuardLocation(name string) (*time.Location, error) {
	if name == "Local" || name == "" {
		return nil, fmt.Errorf("must name an IANA time zone such as Europe/Paris or UTC")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("is not a known IANA time zone (such as Europe/Paris, America/New_York or UTC)")
	}
	return loc, nil
}

// guards checks the guards of the list at ptr: what the schema cannot
// say about argument and schedule guards (patterns compile, zones exist,
// windows are well formed).
func (c *checker) guards(ptr string) {
	items, _ := c.list(ptr)
	for i := range items {
		gp := ptr + "/" + strconv.Itoa(i)
		if _, ok := c.obj(gp); !ok {
			continue
		}
		if s, ok := c.str(gp + "/matches"); ok {
			if _, err := GuardPattern(s); err != nil {
				c.report(gp+"/matches", "%v", err)
			}
		}
		if s, ok := c.str(gp + "/timezone"); ok {
			if _, err := GuardLocation(s); err != nil {
				c.report(gp+"/timezone", "%v", err)
			}
		}
		c.each(gp+"/hours", func(hp, s string) {
			if _, err := ParseHourWindow(s); err != nil {
				c.report(hp, "%v", err)
			}
		})
		if v, has := lookup(c.doc.value, gp+"/equals"); has && v == nil {
			c.report(gp+"/equals", "must not be null: write the value the argument must equal")
		}
		if in, ok := c.list(gp + "/in"); ok {
			for j, v := range in {
				if v == nil {
					c.report(gp+"/in/"+strconv.Itoa(j), "must not be null: list the values the argument may take")
				}
			}
		}
		minV, _ := lookup(c.doc.value, gp+"/min")
		maxV, _ := lookup(c.doc.value, gp+"/max")
		lo, okLo := minV.(json.Number)
		hi, okHi := maxV.(json.Number)
		if okLo && okHi {
			l, err1 := lo.Float64()
			h, err2 := hi.Float64()
			if err1 == nil && err2 == nil && h < l {
				c.report(gp+"/max", "is less than min (%s): no value would pass", lo)
			}
		}
	}
}

// guardMembers are the members each guard kind may have (schema.json's
// guard says the same).
var guardMembers = map[string][]string{
	GuardEvidence: {"kind", "requires"},
	GuardArgument: {"kind", "argument", "equals", "in", "matches", "min", "max"},
	GuardSchedule: {"kind", "timezone", "weekdays", "hours"},
}

// guardAlternatives are the members of which a guard of the kind needs at
// least one (the schema's anyOf).
var guardAlternatives = map[string][]string{
	GuardArgument: {"equals", "in", "matches", "min", "max"},
	GuardSchedule: {"weekdays", "hours"},
}

// hourWindowPattern is the pattern of a schedule guard's hours entry in
// schema.json; a violation of it is reported in words.
const hourWindowPattern = `^[0-9]{2}:[0-9]{2}-[0-9]{2}:[0-9]{2}$`

// lastToken is the last reference token of the JSON pointer ptr.
func lastToken(ptr string) string {
	toks := splitPointer(ptr)
	if len(toks) == 0 {
		return ""
	}
	return toks[len(toks)-1]
}

// guardKindAt returns the kind of the guard at ptr when ptr is a guard of
// a known kind.
func guardKindAt(doc *document, ptr string) (string, bool) {
	return memberKindAt[Guard](doc, ptr, guardMembers)
}

// memberKindAt returns the kind of the object at ptr when ptr is a T (a
// guard, an audit sink) whose kind is a key of members, the members of
// each kind.
func memberKindAt[T any](doc *document, ptr string, members map[string][]string) (string, bool) {
	if typeAt(ptr) != reflect.TypeFor[T]() {
		return "", false
	}
	v, _ := lookup(doc.value, ptr+"/kind")
	kind, _ := v.(string)
	_, ok := members[kind]
	return kind, ok
}

// unknownGuardMember words an unknown member name of a guard of the given
// kind.
func unknownGuardMember(kind, name string) string {
	what := "an " + kind + " guard"
	if kind == GuardSchedule {
		what = "a schedule guard"
	}
	var owners []string
	for _, k := range []string{GuardEvidence, GuardArgument, GuardSchedule} {
		if slices.Contains(guardMembers[k], name) {
			owners = append(owners, k)
		}
	}
	return unknownKindMember(what, "guards", name, guardMembers[kind], owners)
}
