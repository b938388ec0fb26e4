package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/gatewaytest"
)

// This file tests the OpenTelemetry export against a real receiver:
// Jaeger v2 (github.com/jaegertracing/jaeger/cmd/jaeger, built from the
// module of its own in tools/jaeger, whose dependencies are not the
// gateway's; go tool caches the binary in the build cache), started as a
// process with an OTLP receiver and its in-memory store on free ports, and
// read back through its query API (/api/v3/traces/ID).

// jaegerBinary builds Jaeger (go tool -modfile=tools/jaeger/go.mod -n
// jaeger) once per test process and returns its path. Outside CI it skips
// when the tool module cannot be built here (no module proxy, say); in CI
// it fails.
func jaegerBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs Jaeger; skipped in -short")
	}
	jaegerOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			jaegerErr = fmt.Errorf("no go tool: %w", err)
			return
		}
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			jaegerErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goTool, "tool", "-modfile="+filepath.Join(root, "tools", "jaeger", "go.mod"), "-n", "jaeger")
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			jaegerErr = fmt.Errorf("go tool -modfile=tools/jaeger/go.mod -n jaeger: %v\n%s", err, stderr.String())
			return
		}
		jaegerPath = strings.TrimSpace(string(out))
	})
	if jaegerErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Jaeger, the tests' OpenTelemetry receiver, cannot be built: %v", jaegerErr)
		}
		t.Skipf("Jaeger, the tests' OpenTelemetry receiver, cannot be built here (CI builds it): %v", jaegerErr)
	}
	return jaegerPath
}

var (
	jaegerOnce sync.Once
	jaegerPath string
	jaegerErr  error
)

// jaeger is one running Jaeger: OTLP in (HTTP and gRPC), its query API
// out.
type jaeger struct {
	// OTLPHTTP and OTLPGRPC are the base URLs of its OTLP receiver.
	OTLPHTTP, OTLPGRPC string
	// query is the base URL of its query API.
	query string
	log   *gatewaytest.LogBuffer
}

// stopOnCleanup interrupts cmd when t ends and waits for done (closed
// once it exited), killing it after 20s.
func stopOnCleanup(t *testing.T, cmd *exec.Cmd, done <-chan struct{}) {
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

// freePorts returns n distinct free loopback ports.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err, "free port")
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// startJaeger runs Jaeger on free loopback ports until t ends, and waits
// until its query API answers.
func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	bin := jaegerBinary(t)
	p := freePorts(t, 4)
	cfg := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`, p[0], p[1], p[2], p[3])
	path := filepath.Join(t.TempDir(), "jaeger.yaml")
	must(t, os.WriteFile(path, []byte(cfg), 0o600), "jaeger config")
	j := &jaeger{OTLPGRPC: fmt.Sprintf("http://127.0.0.1:%d", p[2]), OTLPHTTP: fmt.Sprintf("http://127.0.0.1:%d", p[3]),
		query: fmt.Sprintf("http://127.0.0.1:%d", p[0]), log: &gatewaytest.LogBuffer{}}
	cmd := exec.Command(bin, "--config", path)
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = j.log, j.log
	must(t, cmd.Start(), "start jaeger")
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stopOnCleanup(t, cmd, done)
	exited := false
	up := gatewaytest.Poll(60*time.Second, func() bool {
		res, err := http.Get(j.query + "/api/v3/services")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case <-done:
			exited = true
		default:
		}
		return exited
	})
	switch {
	case exited:
		t.Fatalf("jaeger exited before its query API answered:\n%s", j.log.String())
	case !up:
		t.Fatalf("jaeger's query API did not answer within 60s:\n%s", j.log.String())
	}
	return j
}

// otlpSpan is a span as Jaeger's query API answers it (OTLP JSON).
type otlpSpan struct {
	TraceID      string          `json:"traceId"`
	SpanID       string          `json:"spanId"`
	ParentSpanID string          `json:"parentSpanId"`
	Name         string          `json:"name"`
	Kind         json.RawMessage `json:"kind"`
	Attributes   []struct {
		Key   string         `json:"key"`
		Value map[string]any `json:"value"`
	} `json:"attributes"`
	Links []struct {
		TraceID string `json:"traceId"`
		SpanID  string `json:"spanId"`
	} `json:"links"`
	// Service is the service.name of the span's resource.
	Service string `json:"-"`
}

// attr returns the value of the attribute key as text ("" when absent).
func (s otlpSpan) attr(key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			for _, v := range a.Value {
				return fmt.Sprint(v)
			}
		}
	}
	return ""
}

// kind is the span's kind as OTLP names it (SPAN_KIND_SERVER, ...).
func (s otlpSpan) kind() string {
	var name string
	if json.Unmarshal(s.Kind, &name) == nil {
		return name
	}
	var n int
	json.Unmarshal(s.Kind, &n)
	return [...]string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT",
		"SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}[min(max(n, 0), 5)]
}

// trace reads the spans of trace id from Jaeger; nil when it has none.
func (j *jaeger) trace(t *testing.T, id string) []otlpSpan {
	t.Helper()
	res, err := http.Get(j.query + "/api/v3/traces/" + id)
	must(t, err, "jaeger trace %s", id)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusNotFound {
		return nil
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("jaeger trace %s answered %d: %s", id, res.StatusCode, body)
	}
	var doc struct {
		Result struct {
			ResourceSpans []struct {
				Resource struct {
					Attributes []struct {
						Key   string         `json:"key"`
						Value map[string]any `json:"value"`
					} `json:"attributes"`
				} `json:"resource"`
				ScopeSpans []struct {
					Spans []otlpSpan `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		} `json:"result"`
	}
	must(t, json.Unmarshal(body, &doc), "jaeger trace %s: %s", id, body)
	var spans []otlpSpan
	for _, rs := range doc.Result.ResourceSpans {
		service := ""
		for _, a := range rs.Resource.Attributes {
			if a.Key == "service.name" {
				service = fmt.Sprint(a.Value["stringValue"])
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				s.Service = service
				spans = append(spans, s)
			}
		}
	}
	return spans
}

// waitTrace reads trace id from Jaeger until it holds a span of every name
// in names and, for every name in hops, both its client and its server
// span (at most 30s: the gateway and the upstream export in batches of
// their own).
func (j *jaeger) waitTrace(t *testing.T, id string, hops []string, names ...string) []otlpSpan {
	t.Helper()
	var spans []otlpSpan
	missing := ""
	if !gatewaytest.Poll(30*time.Second, func() bool {
		spans, missing = j.trace(t, id), ""
		for _, n := range names {
			if findSpan(spans, n) == nil {
				missing = n
				break
			}
		}
		for _, n := range hops {
			if missing == "" && !hasHop(spans, n) {
				missing = n + " (client and server)"
			}
		}
		return missing == ""
	}) {
		t.Fatalf("trace %s has no span %q within 30s; it has:\n%s\njaeger's log:\n%s", id, missing, describeSpans(spans), j.log.String())
	}
	return spans
}

// hasHop reports whether spans hold both a client and a server span named
// name.
func hasHop(spans []otlpSpan, name string) bool {
	kinds := map[string]bool{}
	for _, s := range spans {
		if s.Name == name {
			kinds[s.kind()] = true
		}
	}
	return kinds["SPAN_KIND_CLIENT"] && kinds["SPAN_KIND_SERVER"]
}

// findSpan returns the first span named name, nil when none is.
func findSpan(spans []otlpSpan, name string) *otlpSpan {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

// describeSpans lists spans, one a line, for a failure's message.
func describeSpans(spans []otlpSpan) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "  %s %q %s parent=%s service=%s\n", s.SpanID, s.Name, s.kind(), s.ParentSpanID, s.Service)
	}
	return b.String()
}

// checkChild fails t unless child's parent is parent.
func checkChild(t *testing.T, spans []otlpSpan, parent, child *otlpSpan) {
	t.Helper()
	if child.ParentSpanID != parent.SpanID {
		t.Errorf("span %q's parent is %s, not %q (%s); the trace:\n%s", child.Name, child.ParentSpanID, parent.Name, parent.SpanID, describeSpans(spans))
	}
}

// checkNoSecret fails t when an attribute of a span holds one of secrets.
func checkNoSecret(t *testing.T, spans []otlpSpan, secrets ...string) {
	t.Helper()
	for _, s := range spans {
		for _, a := range s.Attributes {
			v := fmt.Sprint(a.Value)
			for _, secret := range secrets {
				if strings.Contains(v, secret) {
					t.Errorf("span %q attribute %s holds a secret: %s", s.Name, a.Key, v)
				}
			}
		}
	}
}

// traceOf is the trace id of a traceparent header.
func traceOf(t *testing.T, traceparent string) string {
	t.Helper()
	parts := strings.Split(traceparent, "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		t.Fatalf("not a traceparent: %q", traceparent)
	}
	return parts[1]
}

// TestOpenTelemetryJaeger runs praxa serve --dev exporting to a real
// Jaeger over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT alone turns export on)
// and a real upstream MCP server (bench/mcpecho, exporting its own spans
// over OTLP/gRPC), and reads the traces back from Jaeger:
//   - a guarded mission move by REST (praxec.command start of a capability
//     with an argument guard, whose executor calls the upstream): the REST
//     server span, the executor's span under it, the MCP client span under
//     that, and the upstream's own server span under the client span; its
//     trace is the audit events' (aura_get_trace finds them by it);
//   - a proxied /mcp call (tools/call up.echo at 2026-07-28): the HTTP
//     server span, the MCP server span, the upstream hop and the
//     upstream's span;
//   - an /mcp call with a _meta.traceparent: its MCP span in the caller's
//     trace, linked to the HTTP span, and its audit events in that trace;
//
// and no attribute of any span holds the bearer token or an argument's
// value.
func TestOpenTelemetryJaeger(t *testing.T) {
	j := startJaeger(t)
	bin := buildPraxa(t)
	echo := buildEcho(t)
	upstream := startEcho(t, echo, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + j.OTLPGRPC,
		"OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_BSP_SCHEDULE_DELAY=100",
	})
	cfg := filepath.Join(t.TempDir(), "praxec.yaml")
	must(t, os.WriteFile(cfg, []byte(`connections:
  upstream:
    kind: mcp
    url: `+upstream+`
proxy:
  import:
    - connection: upstream
      prefix: up
      include: [echo]
      exposeDirectly: true
  expose:
    - name: guarded.echo
      inputSchema:
        type: object
        properties:
          text: {type: string}
        required: [text]
      guards:
        - kind: argument
          argument: text
          matches: "[a-z-]+"
      executor: {kind: mcp, connection: upstream, tool: echo, map: {text: "$.arguments.text"}}
`), 0o600), "config")
	dataDir := t.TempDir()
	s := startServeEnv(t, bin, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + j.OTLPHTTP,
		"OTEL_SERVICE_NAME=praxa-test",
		"OTEL_BSP_SCHEDULE_DELAY=100",
	}, "--dev", "--data-dir", dataDir, "--config", cfg)
	token := mintToken(t, bin, dataDir)
	const secret = "argument-value-that-must-not-leak"

	t.Run("GuardedMoveByREST", func(t *testing.T) {
		body := `{"definitionId":"proxy_default","input":{"capability":"guarded.echo","text":"` + secret + `"}}`
		req, err := http.NewRequest(http.MethodPost, s.url+"/v8/praxec/command", strings.NewReader(body))
		must(t, err, "request")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "0d6c1f9e-6a57-4f0e-9d57-2a9a4f3b8c11")
		res, err := http.DefaultClient.Do(req)
		must(t, err, "POST /v8/praxec/command")
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 300 || !strings.Contains(string(out), secret) {
			t.Fatalf("POST /v8/praxec/command answered %d: %s", res.StatusCode, out)
		}
		trace := traceOf(t, res.Header.Get("Traceparent"))
		spans := j.waitTrace(t, trace, []string{"tools/call echo"}, "POST /v8/praxec/command", "executor mcp", "store.update")
		write, exec := findSpan(spans, "POST /v8/praxec/command"), findSpan(spans, "executor mcp")
		client, server := hop(t, spans, "tools/call echo")
		checkChild(t, spans, write, exec)
		checkChild(t, spans, exec, client)
		if write.kind() != "SPAN_KIND_SERVER" || write.attr("http.route") != "/v8/praxec/command" || write.attr("http.response.status_code") == "" ||
			write.attr("praxa.tenant") != devTenant || write.attr("praxa.capability") != "guarded.echo" || write.attr("praxa.outcome") != "ok" ||
			write.Service != "praxa-test" {
			t.Errorf("the REST write's span: %+v", *write)
		}
		if exec.attr("praxa.executor") != "mcp" || exec.attr("praxa.connection") != "upstream" || exec.attr("praxa.run.id") == "" ||
			exec.attr("praxa.outcome") != "ok" {
			t.Errorf("the executor's span: %+v", *exec)
		}
		if client.attr("mcp.method.name") != "tools/call" || client.attr("gen_ai.tool.name") != "echo" || server.attr("gen_ai.tool.name") != "echo" {
			t.Errorf("the upstream hop's spans: %+v %+v", *client, *server)
		}
		checkNoSecret(t, spans, token, secret)
		// The audit events of the move carry the span's trace id.
		status, events := getTrace(t, s.url, token, trace)
		if status != http.StatusOK || !strings.Contains(string(events), trace) || !strings.Contains(string(events), "guarded.echo") {
			t.Errorf("the audit trail has no event in the span's trace %s: %d %s", trace, status, events)
		}
	})

	// callMCP sends one tools/call at 2026-07-28 (the stateless path) with
	// the further _meta members meta, and returns the answer's Traceparent.
	callMCP := func(t *testing.T, tool, args, meta string) string {
		t.Helper()
		msg := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"otel-test","version":"1"}` + meta + `}}}`
		req, err := http.NewRequest(http.MethodPost, s.url+"/mcp", strings.NewReader(msg))
		must(t, err, "request")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tool)
		res, err := http.DefaultClient.Do(req)
		must(t, err, "POST /mcp")
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(out), `"result"`) || strings.Contains(string(out), `"isError":true`) {
			t.Fatalf("POST /mcp %s answered %d: %s", tool, res.StatusCode, out)
		}
		return res.Header.Get("Traceparent")
	}

	t.Run("ProxiedMCPCall", func(t *testing.T) {
		trace := traceOf(t, callMCP(t, "up.echo", `{"text":"`+secret+`"}`, ""))
		spans := j.waitTrace(t, trace, []string{"tools/call echo"}, "POST /mcp", "tools/call up.echo")
		httpSpan, call := findSpan(spans, "POST /mcp"), findSpan(spans, "tools/call up.echo")
		client, _ := hop(t, spans, "tools/call echo")
		checkChild(t, spans, httpSpan, call)
		if exec := findSpan(spans, "executor light"); exec != nil {
			checkChild(t, spans, call, exec)
			checkChild(t, spans, exec, client)
		} else {
			t.Errorf("the proxied call has no executor span:\n%s", describeSpans(spans))
		}
		if call.kind() != "SPAN_KIND_SERVER" || call.attr("mcp.method.name") != "tools/call" || call.attr("gen_ai.tool.name") != "up.echo" ||
			call.attr("jsonrpc.request.id") != "7" || call.attr("mcp.protocol.version") != "2026-07-28" || call.attr("network.transport") != "tcp" ||
			call.attr("praxa.tenant") != devTenant {
			t.Errorf("the MCP call's span: %+v", *call)
		}
		checkNoSecret(t, spans, token, secret)
	})

	t.Run("CallersTraceparent", func(t *testing.T) {
		// The caller's sampled flag is set; the ratio (1 here) decides.
		const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		answered := callMCP(t, "praxec.query", `{"query":"`+secret+`"}`, `,"traceparent":"00-`+callerTrace+`-00f067aa0ba902b7-01"`)
		if traceOf(t, answered) != callerTrace {
			t.Errorf("a call with a _meta.traceparent answered Traceparent %q, not in the caller's trace", answered)
		}
		spans := j.waitTrace(t, callerTrace, nil, "tools/call praxec.query")
		call := findSpan(spans, "tools/call praxec.query")
		if call.ParentSpanID != "00f067aa0ba902b7" || len(call.Links) != 1 {
			t.Errorf("the MCP span of a call with a _meta.traceparent: parent %s, links %v", call.ParentSpanID, call.Links)
		}
		checkNoSecret(t, spans, token, secret)
		// A read's audit event is batched (committed after the answer):
		// wait for it rather than read once.
		var (
			status int
			events []byte
		)
		gatewaytest.Eventually(t, "the audit event in the caller's trace", 10*time.Second, func() bool {
			status, events = getTrace(t, s.url, token, callerTrace)
			return status == http.StatusOK && strings.Contains(string(events), callerTrace)
		})
	})

	t.Run("StdioBridge", func(t *testing.T) {
		// praxa mcp --gateway: its MCP server on stdio is a span (network
		// transport pipe) in the trace its client's _meta names, and its
		// call to the gateway carries that trace on (Traceparent), so the
		// gateway's spans join it.
		cs, _, stderr := startStdio(t, bin, childEnv("PRAXA_TOKEN="+token, "OTEL_EXPORTER_OTLP_ENDPOINT="+j.OTLPHTTP,
			"OTEL_SERVICE_NAME=praxa-bridge", "OTEL_BSP_SCHEDULE_DELAY=100"), nil, "mcp", "--gateway", s.url)
		const callerTrace = "5ce929d0e0e47364bf92f3577b34da6a"
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "praxec.query",
			Arguments: map[string]any{"query": secret}, Meta: mcp.Meta{"traceparent": "00-" + callerTrace + "-00f067aa0ba902b7-01"}})
		if err != nil || res.IsError {
			t.Fatalf("praxec.query through praxa mcp --gateway: %v %+v\n%s", err, res, stderr.String())
		}
		cs.Close()
		spans := j.waitTrace(t, callerTrace, nil, "tools/call praxec.query", "POST /v8/praxec/query")
		call, rest := findSpan(spans, "tools/call praxec.query"), findSpan(spans, "POST /v8/praxec/query")
		if call.Service != "praxa-bridge" || call.attr("network.transport") != "pipe" || call.ParentSpanID != "00f067aa0ba902b7" {
			t.Errorf("the bridge's MCP span: %+v", *call)
		}
		if rest.Service != "praxa-test" || rest.attr("praxa.tenant") != devTenant {
			t.Errorf("the gateway's span of the bridge's call: %+v", *rest)
		}
		var client *otlpSpan
		for i := range spans {
			if spans[i].SpanID == rest.ParentSpanID {
				client = &spans[i]
			}
		}
		if client == nil || client.Service != "praxa-bridge" || client.kind() != "SPAN_KIND_CLIENT" {
			t.Fatalf("the gateway's span's parent is not the bridge's HTTP client span:\n%s", describeSpans(spans))
		}
		checkChild(t, spans, call, client)
		checkNoSecret(t, spans, token, secret)
	})
}

// hop returns the gateway's MCP client span named name in spans and the
// upstream's server span under it (the upstream's service, mcpecho).
func hop(t *testing.T, spans []otlpSpan, name string) (client, server *otlpSpan) {
	t.Helper()
	for i := range spans {
		s := &spans[i]
		if s.Name != name {
			continue
		}
		switch s.kind() {
		case "SPAN_KIND_CLIENT":
			client = s
		case "SPAN_KIND_SERVER":
			server = s
		}
	}
	if client == nil || server == nil {
		t.Fatalf("no client and server span %q in the trace:\n%s", name, describeSpans(spans))
	}
	if server.Service != "mcpecho" || client.Service == "mcpecho" {
		t.Errorf("the hop's services: client %s, server %s", client.Service, server.Service)
	}
	checkChild(t, spans, client, server)
	return client, server
}

// buildEcho builds bench/mcpecho, the upstream MCP server.
func buildEcho(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpecho")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../../bench/mcpecho").CombinedOutput(); err != nil {
		t.Fatalf("go build bench/mcpecho: %v\n%s", err, out)
	}
	return bin
}

// startEcho runs mcpecho with env until t ends and returns its URL.
func startEcho(t *testing.T, bin string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = childEnv(env...)
	stderr, err := cmd.StderrPipe()
	must(t, err, "mcpecho stderr")
	must(t, cmd.Start(), "start mcpecho")
	urlc := make(chan string, 1)
	log := &gatewaytest.LogBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := stderr.Read(buf)
			log.Write(buf[:n])
			if i := strings.Index(log.String(), "listening on "); i >= 0 {
				if line, _, ok := strings.Cut(log.String()[i+len("listening on "):], "\n"); ok {
					select {
					case urlc <- line:
					default:
					}
				}
			}
			if err != nil {
				cmd.Wait()
				return
			}
		}
	}()
	stopOnCleanup(t, cmd, done)
	select {
	case u := <-urlc:
		return u
	case <-done:
		t.Fatalf("mcpecho exited:\n%s", log.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("mcpecho printed no address within 30s:\n%s", log.String())
	}
	return ""
}

// getTrace reads the audit events of trace through GET /v8/traces/{id}.
func getTrace(t *testing.T, base, token, trace string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/v8/traces/"+trace, nil)
	must(t, err, "request")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	must(t, err, "GET /v8/traces")
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}
