package strictjson_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/strictjson"
)

// benchBodies are bodies Decode reads on the hot paths: a tool's small
// arguments (the proxied MCP call), a REST write's body, and a nested
// document of about 20 KB (an import, a large tool input).
var benchBodies = []struct {
	name string
	body []byte
}{
	{"toolArgs", []byte(`{"query":"payments service","limit":10,"includeArchived":false}`)},
	{"intent", []byte(`{"idempotencyKey":"6f1c2b9e-8a4d-4c3e-9b7a-2d5e8f1a3c4b","intent":"deploy the payments service to staging, then run the smoke tests \u2014 \"quickly\"","tags":["deploy","staging","payments"]}`)},
	{"nested20KB", nestedDocument(20 << 10)},
}

// nestedDocument is a JSON document of at least size bytes: records of
// strings (some escaped), numbers, booleans, nulls, arrays and objects,
// nested three levels.
func nestedDocument(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"kind":"catalogue","version":3,"items":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"item-%04d","title":"Workflow %d: deploy \"svc-%d\"\nto staging","score":%d.%03d,"enabled":%t,"owner":null,`+
			`"labels":["team-%d","tier-%d","caf\u00e9"],"limits":{"maxDepth":%d,"maxElements":%d,"ratio":-%de-3,"nested":{"a":[1,2,3],"b":{"c":"d"}}}}`,
			i, i, i, i%100, i%1000, i%2 == 0, i%7, i%3, 8+i%5, 1000*i, i)
	}
	b.WriteString(`],"meta":{"generated":"2026-12-07T15:40:00Z","count":null}}`)
	return []byte(b.String())
}

func BenchmarkDecode(b *testing.B) {
	for _, bb := range benchBodies {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(bb.body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := strictjson.DecodeWith(bb.body, strictjson.Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
