package mcpadapter

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/plainjson"
)

// resultTypeField is the index of CallToolResult's unexported resultType
// in go-sdk's struct (nil when a version of go-sdk has none by that name
// or of another kind: the fast encoding is then never taken).
var resultTypeField = func() []int {
	f, ok := reflect.TypeFor[mcp.CallToolResult]().FieldByName("resultType")
	if !ok || f.Type.Kind() != reflect.String {
		return nil
	}
	return f.Index
}()

// appendToolResult appends to b the bytes json.Marshal gives res (go-sdk's
// CallToolResult.MarshalJSON, whose nested Marshalers encoding/json
// compacts again at every level: three passes over a result's text and
// structured content), in one pass over each, for the shape every
// contract and direct tool answers: at most one plain text content (no
// _meta, no annotations), structured content of any kind, no input
// requests, request state or result type. It reports false, having
// appended nothing, when res has another shape or its structured content
// does not encode: the caller then takes json.Marshal.
//
// The bytes are json.Marshal's to the byte (TestToolResultEncoding,
// FuzzToolResultEncoding): its field order (_meta, content,
// structuredContent, isError), HTML escaping of strings, a json.RawMessage
// compacted and HTML-escaped, and a map's sorted keys.
func appendToolResult(b *bytes.Buffer, res *mcp.CallToolResult) bool {
	if resultTypeField == nil || res.InputRequests != nil || res.RequestState != "" || len(res.Content) > 1 ||
		reflect.ValueOf(res).Elem().FieldByIndex(resultTypeField).String() != "" {
		return false
	}
	var text *mcp.TextContent
	if len(res.Content) == 1 {
		t, ok := res.Content[0].(*mcp.TextContent)
		if !ok || t == nil || len(t.Meta) > 0 || t.Annotations != nil {
			return false
		}
		text = t
	}
	mark := b.Len()
	undo := func() bool { b.Truncate(mark); return false }
	b.WriteByte('{')
	if len(res.Meta) > 0 {
		b.WriteString(`"_meta":`)
		if !plainjson.Append(b, map[string]any(res.Meta)) {
			return undo()
		}
		b.WriteByte(',')
	}
	b.WriteString(`"content":`)
	switch {
	case res.Content == nil:
		b.WriteString("null")
	case text == nil:
		b.WriteString("[]")
	default:
		b.WriteString(`[{"type":"text","text":`)
		b.Write(plainjson.AppendString(b.AvailableBuffer(), text.Text))
		b.WriteString("}]")
	}
	if res.StructuredContent != nil {
		b.WriteString(`,"structuredContent":`)
		if !appendValue(b, res.StructuredContent) {
			return undo()
		}
	}
	if res.IsError {
		b.WriteString(`,"isError":true`)
	}
	b.WriteByte('}')
	return true
}

// appendValue appends v as json.Marshal encodes it inside another value
// (plainjson.Append). It reports false when v does not encode, or is a
// nil pointer or nil json.RawMessage (whose encoding the caller leaves to
// json.Marshal).
func appendValue(b *bytes.Buffer, v any) bool {
	if raw, ok := v.(json.RawMessage); ok && raw == nil {
		return false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return false
	}
	return plainjson.Append(b, v)
}
