package mcpadapter_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/mcpadapter"
)

// directBefore and directAfter are the configurations of the reload test:
// the reload changes notes.ping's input schema, drops notes.gone, adds
// notes.added, and leaves notes.hidden reachable through praxec only.
//
//go:embed testdata/direct-before.yaml
var directBefore string

//go:embed testdata/direct-after.yaml
var directAfter string

// toolsByName lists the tools of cs by name.
func toolsByName(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tl.Name] = tl
	}
	return out
}

// schemaHas says whether a tool's input schema declares property name.
func schemaHas(t *testing.T, tl *mcp.Tool, name string) bool {
	t.Helper()
	b, err := json.Marshal(tl.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	_, ok := s.Properties[name]
	return ok
}

// callDirect calls a direct tool without arguments and requires a
// successful answer with its links.
func callDirect(t *testing.T, cs *mcp.ClientSession, name string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError || res.Meta[mcpadapter.LinksMetaKey] == nil {
		t.Fatalf("%s: isError %v, _meta %v: %s", name, res.IsError, res.Meta, textOf(t, res))
	}
}

// checkDirect checks that tools holds every contract tool and, beyond
// them, exactly the direct tools want.
func checkDirect(t *testing.T, where string, tools map[string]*mcp.Tool, want ...string) {
	t.Helper()
	var direct []string
	for name := range tools {
		if _, contract := contracts.Lookup(name); !contract {
			direct = append(direct, name)
		}
	}
	slices.Sort(direct)
	slices.Sort(want)
	if !slices.Equal(direct, want) {
		t.Errorf("%s: direct tools %v, want %v", where, direct, want)
	}
	for tl := range contracts.All() {
		if tools[tl.Name] == nil {
			t.Errorf("%s: the contract tool %s is not listed", where, tl.Name)
		}
	}
}

// TestReloadReplacesDirectTools: after POST /v8/config/reload, tools/list
// over /mcp (the real router, the go-sdk client over streamable HTTP) and
// over a stdio-like session of a server sharing the gateway's DirectSet
// (as praxa mcp runs) shows the new direct tools: added ones appear,
// removed ones disappear (a call answers the protocol's unknown-tool
// error), a changed schema is updated; the contract's tools stay. A
// refused reload changes nothing.
func TestReloadReplacesDirectTools(t *testing.T) {
	path := configFile(t, directBefore)
	g := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: path})
	h := &harness{iss: g.Issuer.Issuer, issURL: g.Issuer.URL, cfg: g.Config, dbPath: g.DBPath,
		service: g.Service, verifier: g.Verifier, url: g.URL, client: g.Client, g: g}
	tok := h.token(t, nil, nil)
	cs := h.overHTTP(t, tok)

	// A stdio-like session: a second server on the same DirectSet, bound
	// to the token as praxa mcp binds its credential, which tells its
	// session when the list changes.
	stdio, changed := g.StdioSession(t, tok)

	before := toolsByName(t, cs)
	checkDirect(t, "/mcp before the reload", before, "notes.ping", "notes.gone")
	if schemaHas(t, before["notes.ping"], "loud") {
		t.Errorf("notes.ping declares loud before the reload")
	}
	checkDirect(t, "stdio before the reload", toolsByName(t, stdio), "notes.ping", "notes.gone")
	callDirect(t, cs, "notes.gone")

	reload := func() (*gatewaytest.Response, []byte) {
		return h.rest(t, http.MethodPost, "/v8/config/reload", "{}", map[string]string{"Authorization": "Bearer " + tok})
	}
	if err := os.WriteFile(path, []byte(directAfter), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, body := reload(); res.Status != http.StatusOK {
		t.Fatalf("reload answered %d: %s", res.Status, body)
	}

	after := toolsByName(t, cs)
	checkDirect(t, "/mcp after the reload", after, "notes.ping", "notes.added")
	if tl := after["notes.ping"]; tl == nil || !schemaHas(t, tl, "loud") || tl.Description != "Answer at once, louder." {
		t.Errorf("notes.ping was not updated by the reload: %+v", tl)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes.gone", Arguments: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("a call of the removed notes.gone answered %v, want the unknown-tool protocol error", err)
	}
	callDirect(t, cs, "notes.added")
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Error("the stdio session was not told that the tool list changed")
	}
	checkDirect(t, "stdio after the reload", toolsByName(t, stdio), "notes.ping", "notes.added")
	if _, err := stdio.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes.gone", Arguments: map[string]any{}}); err == nil {
		t.Error("stdio: a call of the removed notes.gone succeeded")
	}
	callDirect(t, stdio, "notes.added")

	// A file that does not load is refused: the tools stay.
	if err := os.WriteFile(path, []byte("proxy: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, body := reload(); res.Status != http.StatusBadRequest {
		t.Fatalf("reload of a bad file answered %d: %s", res.Status, body)
	}
	checkDirect(t, "/mcp after a refused reload", toolsByName(t, cs), "notes.ping", "notes.added")

	// A reload that changes no tool tells no session the list changed.
	time.Sleep(100 * time.Millisecond) // past the SDK's notification debounce, a real-time timer inside the SDK
	for len(changed) > 0 {
		<-changed
	}
	if err := os.WriteFile(path, []byte(directAfter), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, body := reload(); res.Status != http.StatusOK {
		t.Fatalf("reload answered %d: %s", res.Status, body)
	}
	select {
	case <-changed:
		t.Error("a reload that changed no direct tool notified the session")
	case <-time.After(300 * time.Millisecond):
	}
	checkDirect(t, "/mcp after an unchanged reload", toolsByName(t, cs), "notes.ping", "notes.added")
}
