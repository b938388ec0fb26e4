package connect_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

// docSnippet returns the YAML block of docs/connections.md that declares
// an executor of kind, dedented.
func docSnippet(t *testing.T, kind string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "connections.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)\n( *)```yaml\n(.*?)\n *```").FindAllStringSubmatch(string(b), -1) {
		indent, body := m[1], m[2]
		if !strings.Contains(body, "kind: "+kind+"\n") {
			continue
		}
		lines := strings.Split(body, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, indent)
		}
		return strings.Join(lines, "\n") + "\n"
	}
	t.Fatalf("docs/connections.md shows no YAML block with an executor of kind %s", kind)
	return ""
}

// runSnippet loads a snippet of the docs as praxa serve would, with the base
// URLs of its connections pointed at local servers, and runs capability
// id with args as the first move of a proxy_default run.
func runSnippet(t *testing.T, yaml string, urls map[string]string, env map[string]string, id string, args map[string]any) map[string]any {
	t.Helper()
	cfg, err := config.Parse("docs/connections.md", []byte(yaml))
	if err != nil {
		t.Fatalf("the snippet does not load: %v\n%s", err, yaml)
	}
	for name, u := range urls {
		c, ok := cfg.Connections[name]
		if !ok {
			t.Fatalf("the snippet declares no connection %s", name)
		}
		c.BaseURL = u
		cfg.Connections[name] = c
	}
	m, reg, problems, err := connect.Setup(context.Background(), cfg, &connect.Options{Logger: quiet(), Getenv: func(k string) string { return env[k] }})
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	t.Cleanup(func() { m.Close() })
	e := &workflow.Engine{Registry: reg, Runners: m.Runners(), NewID: func(p string) string { return p + "_1" }}
	out, err := e.Start(context.Background(), workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow,
		Input: map[string]any{"capability": id}, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	last := out.Instance.Context[workflow.LastRunKey].(map[string]any)
	if last["ok"] != true {
		t.Fatalf("lastRun %v", last)
	}
	return last["output"].(map[string]any)
}

// TestDocParallel runs the parallel snippet of docs/connections.md against
// a local REST upstream.
func TestDocParallel(t *testing.T) {
	api := newBranchAPI(t, 0)
	out := runSnippet(t, docSnippet(t, "parallel"), map[string]string{"ci": api.srv.URL, "tracker": api.srv.URL}, nil,
		"release.status", map[string]any{"ref": "v1.2.0"})
	build, _ := out["build"].(map[string]any)
	issues, _ := out["issues"].(map[string]any)
	if b, _ := build["body"].(map[string]any); b["path"] != "/builds/v1.2.0" {
		t.Errorf("build %v", out["build"])
	}
	if b, _ := issues["body"].(map[string]any); b["path"] != "/issues" {
		t.Errorf("issues %v", out["issues"])
	}
}

// TestDocLLM runs the llm snippet of docs/connections.md against the
// protocol-level chat-completions server.
func TestDocLLM(t *testing.T) {
	s := newChatServer(t, func(int, chatRequest) reply { return reply{content: `{"risk":"high","reason":"drops a table"}`} })
	out := runSnippet(t, docSnippet(t, "llm"), map[string]string{"local_model": s.srv.URL + "/v1"}, map[string]string{"OPENAI_API_KEY": "sk-doc"},
		"review.classify", map[string]any{"diff": "DROP TABLE users;"})
	if j, _ := out["json"].(map[string]any); j["risk"] != "high" {
		t.Errorf("output %v", out)
	}
	reqs, auth := s.got()
	if len(reqs) != 1 || auth[0] != "Bearer sk-doc" || !strings.Contains(reqs[0].lastUser(), "DROP TABLE users;") {
		t.Errorf("requests %v, auth %v", reqs, auth)
	}
}

// TestDocAuth runs the auth snippet of docs/connections.md: tickets (token-exchange) and
// metrics (client-credentials) against a local token endpoint and REST
// upstream; the upstream sees the exchanged token and the gateway's own.
func TestDocAuth(t *testing.T) {
	cfg, err := config.Parse("docs/connections.md", []byte(docSnippet(t, "token-exchange")))
	if err != nil {
		t.Fatalf("the auth snippet does not load: %v", err)
	}
	te := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		if r.ParseForm() != nil || id != "praxa-gateway" || secret != "idp-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		tok := "gateway-own"
		if r.PostForm.Get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange" {
			tok = "for-" + r.PostForm.Get("subject_token") + "-at-" + r.PostForm.Get("audience")
		}
		w.Write([]byte(`{"access_token":"` + tok + `","token_type":"Bearer","expires_in":600}`))
	}))
	t.Cleanup(te.Close)
	api := newBearerAPI(t)
	for _, name := range []string{"tickets", "metrics"} {
		c := cfg.Connections[name]
		c.BaseURL = api.srv.URL
		a := *c.Auth
		a.TokenEndpoint = te.URL
		c.Auth = &a
		cfg.Connections[name] = c
	}
	m, reg, problems, err := connect.Setup(context.Background(), cfg, &connect.Options{Logger: quiet(),
		Getenv: func(k string) string { return map[string]string{"PRAXA_IDP_SECRET": "idp-secret"}[k] }})
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	t.Cleanup(func() { m.Close() })
	e := &workflow.Engine{Registry: reg, Runners: m.Runners(), NewID: func(p string) string { return p + "_1" }}
	ctx := auth.WithCredential(context.Background(), auth.NewCredential("alice-token",
		&auth.Principal{Issuer: "https://idp.example.com", Tenant: "acme", Subject: "alice", TokenID: "j1", Expiry: time.Now().Add(time.Hour)}))
	for _, id := range []string{"tickets.create", "metrics.read"} {
		out, err := e.Start(ctx, workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow,
			Input: map[string]any{"capability": id}, Arguments: map[string]any{"title": "T"}})
		if err != nil {
			t.Fatal(err)
		}
		if last := out.Instance.Context[workflow.LastRunKey].(map[string]any); last["ok"] != true {
			t.Fatalf("%s: lastRun %v", id, last)
		}
	}
	want := "Bearer for-alice-token-at-https://tickets.example.com,Bearer gateway-own"
	if got := strings.Join(api.got(), ","); got != want {
		t.Errorf("the upstream saw %s, want %s", got, want)
	}
}
