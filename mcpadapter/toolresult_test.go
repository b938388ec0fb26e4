package mcpadapter

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
)

// toolResultCorpus is one of each shape a tool answers, and the shapes
// appendToolResult leaves to json.Marshal.
func toolResultCorpus() []*mcp.CallToolResult {
	home := json.RawMessage(`{"links":[{"rel":"start","tool":"praxec.command","args":{"a":"<b>&"}}],"text":"line\u2028two"}`)
	impl := &mcp.Implementation{Name: "praxa", Version: "v1 <dev>"}
	// A result whose unexported resultType is set (as go-sdk sets it)
	// encodes it: the fast encoding must decline it.
	withType := &mcp.CallToolResult{}
	if err := json.Unmarshal([]byte(`{"content":[{"type":"text","text":"x"}],"resultType":"input_required"}`), withType); err != nil {
		panic(err)
	}
	return []*mcp.CallToolResult{
		{StructuredContent: home, Content: []mcp.Content{&mcp.TextContent{Text: string(home)}},
			Meta: mcp.Meta{mcp.MetaKeyServerInfo: impl}},
		{StructuredContent: home, Content: []mcp.Content{&mcp.TextContent{Text: string(home)}},
			Meta: mcp.Meta{mcp.MetaKeyServerInfo: impl, ReplayedMetaKey: true}},
		{StructuredContent: json.RawMessage(" { \"a\" : [ 1 , 2 ] ,\n \"b\":\"\\u003c\" } "), Content: []mcp.Content{&mcp.TextContent{Text: ""}}},
		{StructuredContent: map[string]any{"text": "hi <there>", "n": 3, "z": nil}, Content: []mcp.Content{&mcp.TextContent{Text: "hi <there>"}},
			Meta: mcp.Meta{LinksMetaKey: []any{}, mcp.MetaKeyServerInfo: impl}},
		{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "failed\n{\"error\":\"\xff bad utf-8\"}"}}},
		{StructuredContent: map[string]any{"f": []any{1e-7, 1e21, 1e20, 123.456, math.Copysign(0, -1), 0.000001, -1.5e-9, 1e300, 42, int64(-7)},
			"s": "tab\t\b\f\x01\x7f<>&\u2028\u2029\xffé\"\\", "b": []any{true, false, nil}, "e": map[string]any{}, "a": []any{},
			"nm": map[string]any(nil), "na": []any(nil), "n": json.Number("12.50"), "k": []contracts.Link{{Rel: "start", Method: "praxec.command", Args: map[string]any{"x": "<"}}}},
			Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, Meta: mcp.Meta{LinksMetaKey: []contracts.Link{}, mcp.MetaKeyServerInfo: impl}},
		{StructuredContent: map[string]any{"bad": math.NaN()}, Content: []mcp.Content{&mcp.TextContent{Text: "x"}}},
		{StructuredContent: map[string]any{"bad": []any{func() {}}}, Content: []mcp.Content{&mcp.TextContent{Text: "x"}}},
		{StructuredContent: cyclic(), Content: []mcp.Content{&mcp.TextContent{Text: "x"}}},
		{Content: []mcp.Content{}},
		{},
		{StructuredContent: json.RawMessage(nil), Content: []mcp.Content{&mcp.TextContent{Text: "nil raw"}}},
		{StructuredContent: (*mcp.Implementation)(nil)},
		{StructuredContent: json.RawMessage(`{"broken":`), Content: []mcp.Content{&mcp.TextContent{Text: "x"}}},
		{StructuredContent: func() {}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "a", Meta: mcp.Meta{"k": "v"}}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "a"}}, RequestState: "opaque"},
		withType,
	}
}

// TestToolResultEncoding holds appendToolResult to json.Marshal's bytes
// for every shape it encodes, and to appending nothing for the others.
func TestToolResultEncoding(t *testing.T) {
	if resultTypeField == nil {
		t.Fatal("go-sdk's CallToolResult has no resultType string field: the fast encoding is never taken")
	}
	fast := 0
	for i, res := range toolResultCorpus() {
		checkToolResult(t, i, res)
		var b bytes.Buffer
		if appendToolResult(&b, res) {
			fast++
		}
	}
	if fast < 6 {
		t.Errorf("the fast encoding took %d results of the corpus, want the 6 of the common shape at least", fast)
	}
}

// checkToolResult fails unless appendToolResult appends json.Marshal's
// bytes for res after what the buffer holds, or reports false and leaves
// the buffer as it was.
func checkToolResult(t *testing.T, i int, res *mcp.CallToolResult) {
	t.Helper()
	want, werr := json.Marshal(res)
	b := bytes.NewBufferString("prefix:")
	ok := appendToolResult(b, res)
	got := b.Bytes()[len("prefix:"):]
	switch {
	case !ok && b.String() != "prefix:":
		t.Errorf("%d: declined but appended %q", i, got)
	case ok && werr != nil:
		t.Errorf("%d: encoded %q where json.Marshal fails: %v", i, got, werr)
	case ok && !bytes.Equal(got, want):
		t.Errorf("%d: encoded\n%s\nwant json.Marshal's\n%s", i, got, want)
	}
}

// FuzzToolResultEncoding: for any text, structured content bytes and
// flags, appendToolResult gives json.Marshal's bytes or declines.
func FuzzToolResultEncoding(f *testing.F) {
	f.Add("hello", []byte(`{"a":1}`), false, true)
	f.Add("<&>\u2028\xff", []byte(" [ \"<\" , {\"\\u2029\": null} ] "), true, false)
	f.Add("", []byte(`{"a":`), false, false)
	f.Add("k", []byte(`{"f":[1e-7,1e21,0.1,-0,1E+2,12345678901234567890],"s":"\u0000\u001f<>&\u2028","z":{"":[{}]}}`), false, true)
	f.Fuzz(func(t *testing.T, text string, raw []byte, isError, meta bool) {
		res := &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
		if raw != nil {
			res.StructuredContent = json.RawMessage(raw)
		}
		if meta {
			res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: &mcp.Implementation{Name: text}, ReplayedMetaKey: true}
		}
		checkToolResult(t, 0, res)
		// The same structured content as a decoded value, and the
		// text in a _meta map.
		var v any
		if json.Unmarshal(raw, &v) == nil {
			res.StructuredContent = v
			res.Meta = mcp.Meta{text: v, LinksMetaKey: []any{text}}
			checkToolResult(t, 0, res)
		}
	})
}

// cyclic is a map that holds itself: json.Marshal refuses it.
func cyclic() map[string]any {
	m := map[string]any{}
	m["m"] = m
	return m
}

// BenchmarkToolResultEncoding compares json.Marshal with appendToolResult
// on the MCP home read's result (structured content and the same JSON as
// text, the server's Implementation in _meta):
//
//	go test -run '^$' -bench ToolResultEncoding -count 5 ./mcpadapter/
func BenchmarkToolResultEncoding(b *testing.B) {
	res := toolResultCorpus()[0]
	body := bytes.Repeat([]byte(`{"rel":"describe","tool":"praxec.query","args":{"capability":"up.echo"}},`), 12)
	raw := json.RawMessage(`{"links":[` + string(body[:len(body)-1]) + `]}`)
	res.StructuredContent, res.Content = raw, []mcp.Content{&mcp.TextContent{Text: string(raw)}}
	b.Run("marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if !appendToolResult(&buf, res) {
				b.Fatal("declined")
			}
		}
	})
}
