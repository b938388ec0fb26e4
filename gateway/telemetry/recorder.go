package telemetry

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Requests are the request metrics every surface records:
// praxa_http_requests_total and praxa_http_request_duration_seconds, by
// route, method, MCP method and tool (and status, for the counter). It is
// a prometheus.Collector: register it where the metrics are served.
type Requests struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	// bound caches the metrics bound to their labels (routeKey ->
	// *boundRequest), so that a request does not hash its labels into
	// the vectors again.
	bound sync.Map
}

// routeKey labels one request's metrics.
type routeKey struct {
	route, method      string
	mcpMethod, mcpTool string
	status             int
}

// boundRequest is the request counter and latency histogram of one routeKey.
type boundRequest struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// NewRequests returns the request metrics, registered nowhere yet.
func NewRequests() *Requests {
	return &Requests{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "praxa_http_requests_total", Help: "HTTP requests by route pattern, method and status; /mcp requests also by MCP method and tool (Mcp-Method, Mcp-Name).",
		}, []string{"route", "method", "status", "mcp_method", "mcp_tool"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "praxa_http_request_duration_seconds", Help: "HTTP request latency by route pattern and method; /mcp requests also by MCP method and tool.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method", "mcp_method", "mcp_tool"}),
	}
}

// Describe implements prometheus.Collector.
func (m *Requests) Describe(ch chan<- *prometheus.Desc) {
	m.requests.Describe(ch)
	m.latency.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *Requests) Collect(ch chan<- prometheus.Metric) {
	m.requests.Collect(ch)
	m.latency.Collect(ch)
}

// observe counts one request; mcpMethod and mcpTool are its bounded MCP
// labels (Recorder.mcpLabels), empty outside MCP.
func (m *Requests) observe(route, method, mcpMethod, mcpTool string, status int, d time.Duration) {
	k := routeKey{route: route, method: method, mcpMethod: mcpMethod, mcpTool: mcpTool, status: status}
	v, ok := m.bound.Load(k)
	if !ok {
		v, _ = m.bound.LoadOrStore(k, &boundRequest{
			requests: m.requests.WithLabelValues(route, method, strconv.Itoa(status), mcpMethod, mcpTool),
			latency:  m.latency.WithLabelValues(route, method, mcpMethod, mcpTool),
		})
	}
	b := v.(*boundRequest)
	b.requests.Inc()
	b.latency.Observe(d.Seconds())
}

// Observation is what a surface saw of one request it served.
type Observation struct {
	// Route is the route pattern that served it ("unmatched" when none
	// did; "stdio" for MCP on stdio).
	Route string
	// Method is the HTTP method (empty on stdio, and then not logged).
	Method string
	// MCPMethod and MCPName are the MCP method and the name it acts on
	// (the tool of tools/call) as the client sent them, empty outside
	// MCP: they are logged as sent, and labelled bounded (see Record).
	MCPMethod, MCPName string
	// Status is the HTTP status answered (on stdio, the status the same
	// answer would have over HTTP; see mcpadapter.Instrument).
	Status int
	// Duration is how long the request took.
	Duration time.Duration
}

// Recorder records the requests a surface serves: their metrics and one
// "request" log line each, at level Info, Error for a status of 500 or
// more.
type Recorder struct {
	metrics *Requests
	// log is the handler beneath Logger's: Record writes the ids itself,
	// first, in the one record the line needs.
	log slog.Handler
	// tool reports whether the MCP server registers a tool of that name
	// (nil: none).
	tool func(name string) bool
}

// NewRecorder returns a Recorder counting into metrics and logging to log.
// mcpTool reports whether the MCP server registers a tool of that name: a
// tools/call is labelled with its tool only then, with "other" otherwise
// (nil: always "other"), so that a client cannot add series.
func NewRecorder(metrics *Requests, log *slog.Logger, mcpTool func(name string) bool) *Recorder {
	return &Recorder{metrics: metrics, log: beneath(log.Handler()), tool: mcpTool}
}

// Record records the request in ctx as o says: it seals the request's
// trace (JoinTrace reports false from here on), counts it, and writes its
// log line: request_id, trace_id, method, route, status, duration, then
// mcp_method and mcp_name when set.
func (rec *Recorder) Record(ctx context.Context, o Observation) {
	var id, trace string
	if r := requestFrom(ctx); r != nil {
		id, trace = r.id, r.seal()
	}
	labelMethod, labelTool := rec.mcpLabels(o.MCPMethod, o.MCPName)
	rec.metrics.observe(o.Route, o.Method, labelMethod, labelTool, o.Status, o.Duration)
	if o.Method != "" {
		recordHTTPServer(ctx, o.Duration, o.Method, o.Route, o.Status) // over OTLP, while export is on
	}
	level := slog.LevelInfo
	if o.Status >= 500 {
		level = slog.LevelError
	}
	if !rec.log.Enabled(ctx, level) {
		return
	}
	var attrs [8]slog.Attr
	attrs[0], attrs[1] = slog.String("request_id", id), slog.String("trace_id", trace)
	n := 2
	if o.Method != "" {
		attrs[n] = slog.String("method", o.Method)
		n++
	}
	attrs[n], attrs[n+1], attrs[n+2] = slog.String("route", o.Route), slog.Int("status", o.Status), slog.Duration("duration", o.Duration)
	n += 3
	if o.MCPMethod != "" {
		attrs[n] = slog.String("mcp_method", o.MCPMethod)
		n++
	}
	if o.MCPName != "" {
		attrs[n] = slog.String("mcp_name", o.MCPName)
		n++
	}
	r := slog.NewRecord(time.Now(), level, "request", 0)
	r.AddAttrs(attrs[:n]...)
	_ = rec.log.Handle(ctx, r)
}

// mcpMethods are the JSON-RPC methods of MCP (every revision up to
// 2026-07-28, the Tasks extension's included) a client may name: the
// values the mcp_method label takes as they are.
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

// mcpLabels bounds the MCP labels of a request's metrics: both are empty
// when the request names no MCP method (outside MCP, or an /mcp request of
// a revision before 2026-07-28, which sends no Mcp-Method header); the
// method is the one named when it is an MCP method, "other" otherwise; the
// tool is set for tools/call only: the name when it names a tool the MCP
// server registers, else "other". A client choosing the values cannot add
// series beyond those.
func (rec *Recorder) mcpLabels(method, name string) (labelMethod, labelTool string) {
	if method == "" {
		return "", ""
	}
	if !mcpMethods[method] {
		return "other", ""
	}
	if method != "tools/call" {
		return method, ""
	}
	if rec.tool != nil && rec.tool(name) {
		return method, name
	}
	return method, "other"
}
