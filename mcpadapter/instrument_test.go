package mcpadapter_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/httpapi"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/mcpadapter"
)

// idsBackend answers every call with the request and trace ids in its
// context, and panics for the tool named panicTool.
type idsBackend struct{ panicTool string }

func (b idsBackend) Call(ctx context.Context, tool string, _ json.RawMessage) mcpadapter.Outcome {
	if tool == b.panicTool {
		panic("backend broke")
	}
	body, _ := json.Marshal(map[string]string{"requestId": telemetry.RequestID(ctx), "traceId": telemetry.TraceID(ctx)})
	return mcpadapter.Outcome{Body: body}
}

// logLines decodes the JSON lines written to s.
func logLines(t *testing.T, s *gatewaytest.LogBuffer) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestInstrument: on stdio each request gets its own ids (the backend sees
// them; a _meta.traceparent joins its trace), a panic answers an internal
// error and the session goes on, and every request is counted under route
// stdio and logged with the fields of /mcp's lines.
func TestInstrument(t *testing.T) {
	var logs gatewaytest.LogBuffer
	log := telemetry.Logger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	opts := &mcpadapter.Options{ToolSet: contracts.SetAll, Logger: log, JoinTrace: telemetry.JoinTrace}
	srv, err := mcpadapter.New(idsBackend{panicTool: contracts.ToolListGoals}, opts)
	if err != nil {
		t.Fatal(err)
	}
	metrics := httpapi.NewMetrics()
	srv.AddReceivingMiddleware(mcpadapter.Instrument(telemetry.NewRecorder(metrics.Requests(), log, opts.Registers), log))
	cs := connectServer(t, srv)

	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	var seen []map[string]string
	for _, meta := range []mcp.Meta{nil, {"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"}} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolPraxecQuery, Arguments: map[string]any{}, Meta: meta})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %v", err, res)
		}
		var ids map[string]string
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &ids); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, ids)
	}
	if seen[0]["requestId"] == "" || seen[0]["requestId"] == seen[1]["requestId"] || len(seen[0]["traceId"]) != 32 {
		t.Errorf("each request its own ids: %v", seen)
	}
	if seen[1]["traceId"] != trace {
		t.Errorf("the _meta.traceparent's trace was not joined: %v", seen[1])
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolListGoals, Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("a panicking call answered %v, want an internal error", err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolPraxecQuery, Arguments: map[string]any{}}); err != nil {
		t.Errorf("the session did not survive the panic: %v", err)
	}

	var calls, panics []map[string]any
	for _, l := range logLines(t, &logs) {
		switch {
		case l["msg"] == "request" && l["mcp_method"] == "tools/call":
			calls = append(calls, l)
		case l["msg"] == "panic serving request":
			panics = append(panics, l)
		}
		if _, ok := l["method"]; ok && l["msg"] == "request" {
			t.Errorf("a stdio line has an HTTP method: %v", l)
		}
	}
	if len(calls) != 4 || calls[1]["trace_id"] != trace || calls[1]["request_id"] != seen[1]["requestId"] ||
		calls[0]["route"] != mcpadapter.StdioRoute || calls[0]["mcp_name"] != contracts.ToolPraxecQuery {
		t.Errorf("tools/call lines %v", calls)
	}
	if len(panics) != 1 || panics[0]["request_id"] != calls[2]["request_id"] || calls[2]["status"] != float64(500) || calls[2]["level"] != "ERROR" {
		t.Errorf("panic lines %v, call line %v", panics, calls[2])
	}
	w := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`praxa_http_requests_total{mcp_method="tools/call",mcp_tool="praxec.query",method="",route="stdio",status="200"} 3`,
		`praxa_http_requests_total{mcp_method="tools/call",mcp_tool="` + contracts.ToolListGoals + `",method="",route="stdio",status="500"} 1`,
		`praxa_http_requests_total{mcp_method="server/discover",mcp_tool="",method="",route="stdio",status="200"} 1`,
	} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("/metrics lacks %s\n%s", want, w.Body)
		}
	}
}
