package workflow

import (
	"fmt"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/strictjson"
)

// A proxy capability may declare an outputSchema (config.Capability):
// seeds/002's "a successful result satisfies the tool's outputSchema". The
// output of every successful call of it (a move of a run, completed at
// once or when its sub-workflow ends, and a call on the light path) is
// checked against the schema, compiled once with the definition
// (AddProxy). An output that does not satisfy it is not handed over: the
// call is the upstream's failure (OutcomeFailed, recorded as a failed
// lastRun or light-path call, producing no evidence), its message naming
// the first violation's JSON Pointer, its output withheld.

// checkOutput checks output, the answer of a successful call of t,
// against t's output schema (nil when t has none or output satisfies it).
func (t *Transition) checkOutput(output map[string]any) *ExecutorError {
	if t.output == nil {
		return nil
	}
	if output == nil {
		output = map[string]any{}
	}
	err := contracts.Validate(t.output, jsonValue(output), "")
	if err == nil {
		return nil
	}
	where := "its root"
	var more string
	if ce := contracts.AsError(err); len(ce.Fields) > 0 {
		f := ce.Fields[0]
		if f.Pointer != "" {
			where = f.Pointer
		}
		where += " (" + f.Detail + ")"
		if n := len(ce.Fields) - 1; n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
	}
	xe := &ExecutorError{Outcome: OutcomeFailed, Kind: config.ExecutorNoop,
		Message: fmt.Sprintf("the output of %s does not satisfy its outputSchema at %s%s; it was withheld. The upstream answered and may have acted: read it back before calling again", t.Name, where, more)}
	if t.Executor != nil {
		xe.Kind, xe.Connection = t.Executor.Kind, t.Executor.Connection
	}
	return xe
}

// jsonValue returns v as the schema validator reads JSON: v itself when
// it is plain (strictjson.Plain), else v through its JSON encoding (an
// output holding an int, a []string or a struct), as seeds/002 detaches a
// result before validating it. A value that cannot be encoded is returned
// as it is, and the validator refuses it.
func jsonValue(v any) any {
	if strictjson.Plain(v) {
		return v
	}
	if w, ok := strictjson.ViaJSON(v); ok {
		return w
	}
	return v
}
