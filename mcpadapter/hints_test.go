package mcpadapter_test

import (
	"testing"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/mcpadapter"
)

// TestDirectToolHints: a direct tool's annotations follow what the gateway
// knows of its executor; nothing it does not know lowers destructiveHint.
func TestDirectToolHints(t *testing.T) {
	rest := func(method string) *config.Executor {
		return &config.Executor{Kind: config.ExecutorREST, Connection: "api", Method: method, Path: "/x"}
	}
	for _, c := range []struct {
		name string
		x    *config.Executor
		want mcpadapter.Hints
	}{
		{"noop", nil, mcpadapter.Hints{ReadOnly: true, Idempotent: true}},
		{"rest GET", rest("GET"), mcpadapter.Hints{ReadOnly: true, Idempotent: true, OpenWorld: true}},
		{"rest head", rest("head"), mcpadapter.Hints{ReadOnly: true, Idempotent: true, OpenWorld: true}},
		{"rest PUT", rest("PUT"), mcpadapter.Hints{Destructive: true, Idempotent: true, OpenWorld: true}},
		{"rest POST", rest("POST"), mcpadapter.Hints{Destructive: true, OpenWorld: true}},
		{"mcp", &config.Executor{Kind: config.ExecutorMCP, Connection: "up", Tool: "echo"}, mcpadapter.Hints{Destructive: true, OpenWorld: true}},
		{"cli", &config.Executor{Kind: config.ExecutorCLI, Connection: "sh"}, mcpadapter.Hints{Destructive: true, OpenWorld: true}},
		{"script", &config.Executor{Kind: config.ExecutorScript, Script: "quote"}, mcpadapter.Hints{ReadOnly: true, Idempotent: true}},
	} {
		got := mcpadapter.DirectTools([]config.ExposedCapability{{ID: "t." + c.name, ExposeDirectly: true, Executor: c.x}})
		if len(got) != 1 || got[0].Hints == nil || *got[0].Hints != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got[0].Hints, c.want)
		}
	}
}
