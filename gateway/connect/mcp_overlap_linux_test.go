//go:build linux

package connect_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
)

// helperBarrierServer serves barrierServer(HELPER_K) over stdio: the test
// binary as an MCP child.
func helperBarrierServer() {
	k, err := strconv.Atoi(os.Getenv("HELPER_K"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "HELPER_K:", err)
		os.Exit(2)
	}
	s, _ := barrierServer(k)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestMCPCallsOverlapOverStdio: calls to one child over stdio overlap:
// k calls of a tool that answers only once k of its calls are in flight
// at once all succeed, round after round, through the one child.
func TestMCPCallsOverlapOverStdio(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const k = 8
	m := connect.New(map[string]config.Connection{"child": {Kind: "mcp", Command: self,
		Env: map[string]string{"PRAXA_CONNECT_HELPER": "barrier", "HELPER_K": strconv.Itoa(k)}}}, &connect.Options{Logger: quiet()})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	x := config.Executor{Kind: "mcp", Connection: "child", Tool: "wait", TimeoutMs: 30000}
	for i := range 5 {
		together(t, ctx, m.Runners()["mcp"], x, k)
		if t.Failed() {
			t.Fatalf("round %d", i+1)
		}
	}
	if n := m.Starts("child"); n != 1 {
		t.Errorf("%d children started, want 1", n)
	}
}
