package workflow

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/redact"
)

// This file writes what a capability's audit block asks the events of its
// calls to record (config.CapabilityAudit.Record): the values of paths
// into the call's arguments and output, redacted before anything stores
// them. The events of a capability's calls also name it (the capability
// attribute), which is how the gateway routes them to the capability's
// audit sinks.

// capabilityAttributes adds to attrs, the attributes of an event of a
// call of t, a transition of proxy_default, the capability's id and the
// values its audit block records of args and output (output nil: the
// call did not run).
func (t *Transition) capabilityAttributes(attrs, args, output map[string]any) map[string]any {
	attrs["capability"] = t.Name
	for k, v := range t.recorded(args, output) {
		attrs[k] = v
	}
	return attrs
}

// recorded returns what t's audit block records of a call's args and
// output: {"arguments": {...}, "output": {...}}, each value at the place
// its path names, redacted by name (package redact), a value larger than
// config.MaxRecordedBytes as JSON replaced by a note of its size. A path
// that names nothing records nothing. nil when t records nothing.
func (t *Transition) recorded(args, output map[string]any) map[string]any {
	if len(t.record) == 0 {
		return nil
	}
	roots := map[string]map[string]any{"arguments": args, "output": output}
	out := map[string]any{}
	for _, path := range t.record {
		steps := strings.Split(strings.TrimPrefix(path, "$."), ".")
		var v any = roots[steps[0]]
		if roots[steps[0]] == nil {
			continue
		}
		for _, s := range steps[1:] {
			m, _ := v.(map[string]any)
			if v = m[s]; v == nil {
				break
			}
		}
		if v == nil {
			continue
		}
		put(out, steps, recordedValue(v))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// recordedValue is v as an event records it: redacted, and no larger than
// config.MaxRecordedBytes as JSON.
func recordedValue(v any) any {
	v = redact.Value(v)
	if b, err := json.Marshal(v); err != nil || len(b) > config.MaxRecordedBytes {
		return fmt.Sprintf("[omitted: %d bytes, more than the %d an audit record holds]", len(b), config.MaxRecordedBytes)
	}
	return v
}

// put sets v in out at steps, making the objects on the way (a value
// recorded whole before, by a shorter path, is extended in place: it is
// a copy already).
func put(out map[string]any, steps []string, v any) {
	for _, s := range steps[:len(steps)-1] {
		next, ok := out[s].(map[string]any)
		if !ok {
			next = map[string]any{}
			out[s] = next
		}
		out = next
	}
	out[steps[len(steps)-1]] = v
}
