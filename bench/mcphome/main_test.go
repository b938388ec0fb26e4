package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/bench/internal/benchmcp"
)

const home = `{"kind":"home","links":[{"rel":"search","method":"praxec.query","args":{"kind":"capability"}}],"n":1}`

// session serves srv the way the harness does and returns a client
// session on it, with token as bearer.
func session(t *testing.T, h http.Handler, token string) *mcp.ClientSession {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	cs, err := benchmcp.Connect(context.Background(), "test", hs.URL, benchmcp.Client(token))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestServerAnswersTheBody(t *testing.T) {
	srv, err := newServer([]byte(home+"\n"), "praxec.query")
	if err != nil {
		t.Fatal(err)
	}
	cs := session(t, benchmcp.Handler(srv), "")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "praxec.query", Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != home {
		t.Errorf("text %q, want the body byte for byte", got)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	var a, b any
	json.Unmarshal(sc, &a)
	json.Unmarshal([]byte(home), &b)
	if ja, _ := json.Marshal(a); string(ja) != mustJSON(t, b) {
		t.Errorf("structuredContent %s, want the body", sc)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServerRefusesANonObject(t *testing.T) {
	for _, body := range []string{"", "[1]", `{"a":`, "null"} {
		if _, err := newServer([]byte(body), "praxec.query"); err == nil {
			t.Errorf("newServer(%q) accepted it", body)
		}
	}
}

// praxa stands in for a running gateway: POST /v8/praxec/query and
// praxec.query on /mcp answer home to the bearer token "tok" only.
func praxa(t *testing.T) string {
	srv, err := newServer([]byte(home), "praxec.query")
	if err != nil {
		t.Fatal(err)
	}
	mcpHandler := benchmcp.Handler(srv)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v8/praxec/query", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(home + "\n"))
	})
	mux.Handle("/mcp", mcpHandler)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestHomeFrom(t *testing.T) {
	url := praxa(t)
	for _, tc := range []struct {
		name string
		get  func() ([]byte, error)
		want string
	}{
		{"rest", func() ([]byte, error) { return homeREST(url, "tok") }, home + "\n"},
		{"mcp", func() ([]byte, error) { return homeMCP(url, "tok") }, home},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.get()
			if err != nil || string(got) != tc.want {
				t.Errorf("%q, %v", got, err)
			}
		})
	}
	if _, err := homeREST(url, "wrong"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a refused token: %v", err)
	}
}

func TestRunRefusesConflictingSources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "home.json")
	os.WriteFile(file, []byte(home), 0o600)
	for _, tc := range []struct{ from, via, file, want string }{
		{"http://127.0.0.1:1", "rest", file, "not both"},
		{"", "rest", "", "is required"},
		{"http://127.0.0.1:1", "grpc", "", "want rest or mcp"},
	} {
		if err := run("127.0.0.1:0", tc.from, tc.via, tc.file, "", "praxec.query"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q, %q, %q): %v, want %q", tc.from, tc.via, tc.file, err, tc.want)
		}
	}
}
