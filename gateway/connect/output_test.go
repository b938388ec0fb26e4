package connect

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/strictjson"
)

// throughJSON is how resultOutput read a result before it converted once:
// every content item and structuredContent through its JSON.
func throughJSON(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Content           []any `json:"content"`
		StructuredContent any   `json:"structuredContent"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{"content": wire.Content, "text": ""}
	if wire.Content == nil {
		out["content"] = []any{}
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	for i, s := range texts {
		if i > 0 {
			out["text"] = out["text"].(string) + "\n"
		}
		out["text"] = out["text"].(string) + s
	}
	if res.StructuredContent != nil {
		out["structuredContent"] = wire.StructuredContent
	}
	return out
}

// TestResultOutput: converting a result once gives the values its JSON
// gives, for every kind of content and structuredContent.
func TestResultOutput(t *testing.T) {
	type record struct {
		N    int    `json:"n"`
		Name string `json:"name"`
	}
	for name, res := range map[string]*mcp.CallToolResult{
		"text":             {Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}},
		"two texts":        {Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: ""}}},
		"text with meta":   {Content: []mcp.Content{&mcp.TextContent{Text: "a", Meta: mcp.Meta{"k": "v"}, Annotations: &mcp.Annotations{Priority: 0.5}}}},
		"image":            {Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}, &mcp.TextContent{Text: "x"}}},
		"decoded struct":   {Content: []mcp.Content{}, StructuredContent: map[string]any{"a": []any{1.5, "x", nil, true, map[string]any{}}}},
		"go struct":        {StructuredContent: record{N: 3, Name: "x"}},
		"map with go ints": {StructuredContent: map[string]any{"n": 3}},
		"nothing":          {},
	} {
		t.Run(name, func(t *testing.T) {
			if got, want := resultOutput(res), throughJSON(t, res); !reflect.DeepEqual(got, want) {
				t.Errorf("resultOutput = %#v\nthrough JSON   %#v", got, want)
			}
		})
	}
}

// TestScrubValue: the upstream token is replaced in every string, keys
// included, at any depth; a value without it is returned as it is, and the
// caller's values are never changed.
func TestScrubValue(t *testing.T) {
	const secret = "tok-0123456789"
	in := map[string]any{
		"clean": "nothing here",
		"list":  []any{"a", "Bearer " + secret, 3.0, map[string]any{secret: "k"}},
		"deep":  map[string]any{"x": map[string]any{"y": "…" + secret + "…" + secret}},
	}
	before, _ := json.Marshal(in)
	out := scrub(in, secret)
	after, _ := json.Marshal(in)
	if string(before) != string(after) {
		t.Fatalf("scrub changed its input:\n%s\n%s", before, after)
	}
	want := map[string]any{
		"clean": "nothing here",
		"list":  []any{"a", "Bearer [redacted]", 3.0, map[string]any{"[redacted]": "k"}},
		"deep":  map[string]any{"x": map[string]any{"y": "…[redacted]…[redacted]"}},
	}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("scrub = %#v\nwant    %#v", out, want)
	}
	clean := map[string]any{"a": []any{"b"}}
	if got := scrub(clean, secret); reflect.ValueOf(got).Pointer() != reflect.ValueOf(clean).Pointer() {
		t.Error("a value without the secret was copied")
	}
	if got := scrub(in, "ab"); !reflect.DeepEqual(got, in) {
		t.Error("a secret shorter than minSecret was searched for")
	}
}

// BenchmarkResultOutput: an echo tool's answer (one text item and its
// structuredContent, as the client decoded it), converted once; the
// "json" case is the conversion through JSON it replaced.
func BenchmarkResultOutput(b *testing.B) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}},
		StructuredContent: map[string]any{"text": "hi", "n": 1.0}}
	b.Run("once", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = resultOutput(res)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out := map[string]any{}
			content := []any{}
			for _, ct := range res.Content {
				v, _ := strictjson.ViaJSON(ct)
				content = append(content, v)
			}
			out["content"] = content
			out["text"] = "hi"
			out["structuredContent"], _ = strictjson.ViaJSON(res.StructuredContent)
		}
	})
}
