// Command prserver is a small MCP server over stdio standing in for
// GitHub's github-mcp-server in examples/seed-004.yaml: its one tool,
// create_pull_request, takes the arguments GitHub's takes (title, head,
// base, body) and answers with the pull request it "opened", numbered from
// 1 in the order of the calls. It keeps nothing: it is the upstream the
// gateway's guarded move reaches, nothing more.
package main

import (
	"context"
	"fmt"
	"log"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// prArgs are create_pull_request's arguments.
type prArgs struct {
	Title string `json:"title" jsonschema:"the pull request's title"`
	Head  string `json:"head" jsonschema:"the branch to merge"`
	Base  string `json:"base" jsonschema:"the branch to merge into"`
	Body  string `json:"body,omitempty" jsonschema:"the description"`
}

// pullRequest is what create_pull_request answers.
type pullRequest struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	Title  string `json:"title"`
	Head   string `json:"head"`
	Base   string `json:"base"`
	State  string `json:"state"`
}

func main() {
	var next atomic.Int64
	s := mcp.NewServer(&mcp.Implementation{Name: "prserver", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "create_pull_request", Description: "Open a pull request from head into base."},
		func(_ context.Context, _ *mcp.CallToolRequest, a prArgs) (*mcp.CallToolResult, pullRequest, error) {
			if a.Title == "" || a.Head == "" || a.Base == "" {
				return nil, pullRequest{}, fmt.Errorf("title, head and base are required")
			}
			n := int(next.Add(1))
			return nil, pullRequest{Number: n, URL: fmt.Sprintf("https://github.example/praxa/praxa/pull/%d", n),
				Title: a.Title, Head: a.Head, Base: a.Base, State: "open"}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
