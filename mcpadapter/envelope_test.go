package mcpadapter

import "testing"

// BenchmarkParseEnvelope: what the edge adds to every /mcp request, on a
// typical tools/call.
func BenchmarkParseEnvelope(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"aura_get_mission",` +
		`"arguments":{"runId":"wf_0123456789abcdef"},"_meta":{"progressToken":3}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseEnvelope(body); err != nil {
			b.Fatal(err)
		}
	}
}
