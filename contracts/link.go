package contracts

import (
	"encoding/json"
	"maps"
)

// Link is one entry of a response's links[]: a pre-filled next call a model
// copies verbatim. Method names the tool to call (praxec.query,
// praxec.command or an aura_* tool), or "cli" for an informational operator
// path.
type Link struct {
	Rel   string `json:"rel"`
	Title string `json:"title,omitempty"`
	// Description is a JSON string, or null where a transition declares
	// none (the seeds/000 link shape shows the member as null).
	Description json.RawMessage `json:"description,omitempty"`
	Method      string          `json:"method"`
	// Actor is who may take a transition link: agent, human or
	// deterministic.
	Actor       string          `json:"actor,omitempty"`
	Args        map[string]any  `json:"args"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// InputSchemaSnake is the same member spelt input_schema, as the
	// seeds/000 describe link of a proxy capability spells it. A link
	// carries one spelling or the other, never both.
	InputSchemaSnake json.RawMessage `json:"input_schema,omitempty"`
	Hint             string          `json:"hint,omitempty"`
}

// Clone returns a deep copy of l.
func (l Link) Clone() Link {
	l.Args = cloneJSONMap(l.Args)
	l.InputSchema = cloneRaw(l.InputSchema)
	l.InputSchemaSnake = cloneRaw(l.InputSchemaSnake)
	l.Description = cloneRaw(l.Description)
	return l
}

func cloneLinks(ls []Link) []Link {
	if ls == nil {
		return nil
	}
	out := make([]Link, len(ls))
	for i, l := range ls {
		out[i] = l.Clone()
	}
	return out
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

// cloneJSONMap deep-copies a decoded JSON object.
func cloneJSONMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = cloneJSONValue(v)
	}
	return out
}

func cloneJSONValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneJSONMap(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneJSONValue(e)
		}
		return out
	default:
		return v
	}
}
