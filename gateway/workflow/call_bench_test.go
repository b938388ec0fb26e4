package workflow

import (
	"context"
	"testing"

	"github.com/praxa/praxa/gateway/config"
)

// BenchmarkCallStandalone measures the engine's own part of a proxied
// call without a run (the runner answers at once): looking the executor's
// kind up, the reliability, the attempt and its record.
func BenchmarkCallStandalone(b *testing.B) {
	for _, kind := range []config.Kind{config.ExecutorMCP, config.ExecutorLLM} {
		b.Run(string(kind), func(b *testing.B) {
			caps := []config.ExposedCapability{{ID: "up.call", Executor: &config.Executor{Kind: kind, Connection: "up", Tool: "echo"}}}
			_, d := proxyRegistry(b, caps)
			out := map[string]any{"text": "echo", "usage": map[string]any{"total_tokens": 3}}
			e := &Engine{Runners: map[config.Kind]Runner{kind: runnerFunc(func(context.Context, config.Executor, Scope) (map[string]any, error) {
				return out, nil
			})}}
			args, err := d.CheckArguments("up.call", map[string]any{"text": "hi"}, "/input")
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.CallStandalone(ctx, d, "up.call", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
