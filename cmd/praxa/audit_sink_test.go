package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestServeAuditSink starts praxa serve on a configuration naming an
// audit sink (a file relative to the configuration's directory, then the
// standard error), makes a mutation and a refusal in one trace, and reads
// the sink: it holds both events, each as aura_get_trace shows it, with
// the tenant and the trace; the store still answers aura_get_trace.
func TestServeAuditSink(t *testing.T) {
	for _, sink := range []string{"audit.jsonl", "stderr"} {
		t.Run(sink, func(t *testing.T) {
			cfgDir := t.TempDir()
			cfgPath := filepath.Join(cfgDir, "praxec.yaml")
			yaml := "version: \"1.0.0\"\naudit:\n  sink: " + sink + "\n"
			if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			s := serveInProcess(t, serveFlags{dataDir: t.TempDir(), config: cfgPath, dev: true, tools: contracts.SetAll})
			a, stderr, tok := s.app, s.log, devToken(t, s.log)
			const trace = "0af7651916cd43dd8448eb211c80319c"
			send := func(method, path, key, body string) *gatewaytest.Response {
				opts := append([]gatewaytest.RequestOption{gatewaytest.Bearer(tok)}, gatewaytest.KeyTrace(key, trace)...)
				return gatewaytest.NewClient(a.url, nil).Do(t, method, path, body, opts...)
			}
			if res := send(http.MethodPost, "/v8/intents", "6f1c3a52-4a7e-4d0e-9a53-1b1f0c1d2e3f", `{"intent":"deploy the payments service"}`); res.Status != http.StatusCreated && res.Status != http.StatusOK {
				t.Fatalf("submit: %s", res)
			}
			if res := send(http.MethodPost, "/v8/intents", "", `{"intent":"no key"}`); res.Status != http.StatusBadRequest {
				t.Fatalf("submit without a key: %d", res.Status)
			}
			// The refusal's event goes through the Auditor's batches,
			// written within moments: read the trace until it is there.
			var got struct {
				Events []map[string]any `json:"events"`
			}
			gatewaytest.Poll(10*time.Second, func() bool {
				res := send(http.MethodGet, "/v8/traces/"+trace, "", "")
				if err := json.Unmarshal(res.Body, &got); err != nil || res.Status != http.StatusOK {
					t.Fatalf("aura_get_trace: %d %v", res.Status, err)
				}
				return len(got.Events) >= 2
			})
			if err := s.stop(); err != nil { // the sink file is synced and closed
				t.Fatal(err)
			}

			var out string
			if sink == "stderr" {
				out = stderr.String()
			} else {
				b, err := os.ReadFile(filepath.Join(cfgDir, sink))
				if err != nil {
					t.Fatal(err)
				}
				out = string(b)
			}
			lines := map[string]map[string]any{}
			sc := bufio.NewScanner(strings.NewReader(out))
			for sc.Scan() {
				var l map[string]any
				if json.Unmarshal(sc.Bytes(), &l) != nil || l["traceId"] != trace {
					continue // a log line, or another trace's event
				}
				lines[str(l["type"])+"/"+str(l["code"])+"/"+str(l["requestId"])] = l
			}
			if len(got.Events) < 2 {
				t.Fatalf("the trace holds %d events: %v", len(got.Events), got.Events)
			}
			for _, ev := range got.Events {
				k := str(ev["type"]) + "/" + str(ev["code"]) + "/" + str(ev["requestId"])
				l, ok := lines[k]
				if !ok {
					t.Errorf("the trace shows %s, the sink does not:\n%s", k, out)
					continue
				}
				if l["tenant"] != devTenant || l["at"] != ev["at"] || l["outcome"] != ev["outcome"] || l["requestId"] != ev["requestId"] ||
					!jsonEqual(l["attributes"], ev["attributes"]) {
					t.Errorf("%s: sink line %v, trace shows %v", k, l, ev)
				}
			}
			for _, want := range []string{"intent.submitted/", "request.refused/" + string(contracts.CodeIdempotencyKeyMissing) + "/"} {
				found := false
				for k := range lines {
					found = found || strings.HasPrefix(k, want)
				}
				if !found {
					t.Errorf("the sink has no %s line:\n%s", want, out)
				}
			}
		})
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
