package httpapi

// mcpRoute is the route pattern of the MCP endpoint.
const mcpRoute = "/mcp"

// mcpMethods are the JSON-RPC methods of MCP (every revision up to
// 2026-07-28, the Tasks extension's included) a client may name in
// Mcp-Method: the values the mcp_method metric label takes as they are.
var mcpMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true, "subscriptions/listen": true,
	"tools/list": true, "tools/call": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, "logging/setLevel": true,
	"tasks/get": true, "tasks/update": true, "tasks/cancel": true, "tasks/list": true, "tasks/result": true,
	"notifications/initialized": true, "notifications/cancelled": true, "notifications/progress": true,
	"notifications/roots/list_changed": true,
}

// mcpLabels bounds the MCP labels of a request's metrics: outside /mcp
// both are empty; on /mcp the method is the Mcp-Method header when it
// names an MCP method, "other" when it names anything else, empty when
// the client sent none (revisions before 2026-07-28 have no such header);
// the tool is set for tools/call only: the Mcp-Name header when it names a
// tool the MCP server registers (Options.MCPTool), else "other". A client
// choosing header values cannot add series beyond those.
func (s *server) mcpLabels(route, method, name string) (labelMethod, labelTool string) {
	if route != mcpRoute || method == "" {
		return "", ""
	}
	if !mcpMethods[method] {
		return "other", ""
	}
	if method != "tools/call" {
		return method, ""
	}
	if s.MCPTool != nil && s.MCPTool(name) {
		return method, name
	}
	return method, "other"
}
