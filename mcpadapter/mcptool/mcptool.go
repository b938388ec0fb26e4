// Package mcptool declares a contract tool to go-sdk: the one place that
// says how contracts.Tool becomes an *mcp.Tool (name, title, description,
// input and output schema, annotations). mcpadapter registers every tool
// with it; bench/mcphome, the bare server Praxa's home read is compared
// with, declares praxec.query with it too, so that both pay the SDK's
// per-call work on the same declaration. It imports only contracts and
// go-sdk.
package mcptool

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
)

// Tool is t as go-sdk registers and lists it.
func Tool(t contracts.Tool) *mcp.Tool {
	destructive, openWorld := t.Annotations.DestructiveHint, t.Annotations.OpenWorldHint
	return &mcp.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.Annotations.ReadOnlyHint,
			DestructiveHint: &destructive, IdempotentHint: t.Annotations.IdempotentHint, OpenWorldHint: &openWorld},
	}
}
