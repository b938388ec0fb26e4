package mcpadapter_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/internal/testkit"
)

// BenchmarkProxiedCall compares one tools/call of an upstream's echo tool
// (a real go-sdk server over streamable HTTP in the same process) sent
// three ways, interleaved within each iteration:
//
//   - direct: a go-sdk client session straight to the upstream;
//   - light: through the gateway's /mcp, the tool exposed directly without
//     guard or evidence (the light path: one committed audit event);
//   - run: through /mcp, the same tool exposed directly but producing
//     evidence, so each call is a one-move run of proxy_default (a mission
//     row and its commit).
//
// With -cpu N the benchmark runs 8 workers, each with its own sessions
// (8 sessions per stack), so the ratios show whether concurrent calls
// overlap; the ratios are light/direct and run/direct of calls/s:
//
//	go test -run '^$' -bench BenchmarkProxiedCall -benchtime 3s -count 5 ./mcpadapter/
func BenchmarkProxiedCall(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("sessions=%d", workers), func(b *testing.B) { benchProxied(b, workers) })
	}
}

func benchProxied(b *testing.B, workers int) {
	up := newUpstream(b)
	path := filepath.Join(b.TempDir(), "praxec.yaml")
	if err := os.WriteFile(path, []byte(lightConfig(up.url)), 0o600); err != nil {
		b.Fatal(err)
	}
	g := gatewaytest.New(b, &gatewaytest.Options{ConfigFile: path, LogLevel: slog.LevelError})
	tok := g.Token(b, tenantA, userA, nil, nil)
	ctx := context.Background()
	connect := func(url string, rt http.RoundTripper) *mcp.ClientSession {
		cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
			HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	type stack struct {
		name string
		tool string
		cs   []*mcp.ClientSession
	}
	stacks := []*stack{{name: "direct", tool: "echo"}, {name: "light", tool: "up.echo"}, {name: "run", tool: "up.tests"}}
	transport := &http.Transport{MaxIdleConnsPerHost: 64}
	for range workers {
		stacks[0].cs = append(stacks[0].cs, connect(up.url, transport))
		stacks[1].cs = append(stacks[1].cs, connect(g.URL+"/mcp", &gatewaytest.BearerTransport{Token: tok, Base: transport}))
		stacks[2].cs = append(stacks[2].cs, connect(g.URL+"/mcp", &gatewaytest.BearerTransport{Token: tok, Base: transport}))
	}
	params := func(s *stack) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: s.tool, Arguments: map[string]any{"text": "hi"}}
	}
	// Each stack runs every worker's calls at once; a round runs the
	// stacks one after the other, starting at the next stack each round.
	spent := make([]time.Duration, len(stacks))
	round := 0
	for b.Loop() {
		for j := range stacks {
			i := (round + j) % len(stacks)
			s := stacks[i]
			start := time.Now()
			errs := testkit.Parallel(workers, func(w int) error {
				res, err := s.cs[w].CallTool(ctx, params(s))
				if err == nil && res.IsError {
					err = fmt.Errorf("%s: isError %v", s.name, res.Content)
				}
				return err
			})
			spent[i] += time.Since(start)
			for _, err := range errs {
				b.Fatal(err)
			}
		}
		round++
	}
	for i, s := range stacks {
		b.ReportMetric(float64(b.N*workers)/spent[i].Seconds(), s.name+"-calls/s")
	}
	b.ReportMetric(spent[0].Seconds()/spent[1].Seconds(), "light/direct")
	b.ReportMetric(spent[0].Seconds()/spent[2].Seconds(), "run/direct")
}
