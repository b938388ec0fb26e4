package assembly_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/assembly"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/reload"
	"github.com/praxa/praxa/gateway/restclient"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/issuer"
)

const module = "github.com/praxa/praxa"

// TestOnlyRuntimesImportIt: of the module's packages, only the binary and
// gatewaytest import the assembly; the packages it wires never do.
func TestOnlyRuntimesImportIt(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not available")
	}
	out, err := exec.Command(gobin, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{module + "/cmd/praxa": true, module + "/gateway/gatewaytest": true}
	importers := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if imp != module+"/gateway/assembly" {
				continue
			}
			if !allowed[f[0]] {
				t.Errorf("%s imports gateway/assembly: only the runtimes may", f[0])
			}
			importers++
		}
	}
	if importers != len(allowed) {
		t.Errorf("%d packages import gateway/assembly, want %d (cmd/praxa and gatewaytest)", importers, len(allowed))
	}
}

// built assembles a gateway on the default configuration and a new SQLite
// file, trusting a static issuer it returns, and closes it when t ends.
func built(t *testing.T, opts *assembly.Options) (*assembly.Gateway, *issuer.Issuer) {
	t.Helper()
	ctx := context.Background()
	cfg := config.Default()
	cfg.Defaults("127.0.0.1:8080")
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "praxa.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	is, err := issuer.New(issuer.Options{Algorithms: []string{issuer.EdDSA}})
	if err != nil {
		t.Fatal(err)
	}
	is.SetIssuer("https://issuer.assembly.test")
	keys := []auth.StaticKey{}
	for _, k := range is.PublicKeys() {
		keys = append(keys, auth.StaticKey{KeyID: k.KeyID, Algorithm: k.Algorithm, Key: k.Key})
	}
	o := assembly.Options{}
	if opts != nil {
		o = *opts
	}
	o.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	o.StaticIssuers = []auth.StaticIssuer{{Issuer: is.Issuer(), Keys: keys}}
	g, err := assembly.Build(ctx, cfg, st, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return g, is
}

// TestRunAndClose: the background jobs run until Close, which stops them
// and returns (twice, the second doing nothing); a reload after it is
// refused.
func TestRunAndClose(t *testing.T) {
	g, _ := built(t, nil)
	g.Run(context.Background())
	done := make(chan error, 1)
	go func() { done <- errors.Join(g.Close(context.Background()), g.Close(context.Background())) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return: a background job did not stop")
	}
	if _, err := g.Reloader.Reload(context.Background(), reload.Trigger{Via: reload.ViaSignal}); !errors.Is(err, reload.ErrClosed) {
		t.Errorf("a reload after Close: %v", err)
	}
}

// TestNoReloadSource: a gateway built without Options.Load refuses a
// reload and keeps its configuration.
func TestNoReloadSource(t *testing.T) {
	g, _ := built(t, nil)
	_, err := g.Reloader.Reload(context.Background(), reload.Trigger{Via: reload.ViaSignal})
	if err == nil || !strings.Contains(err.Error(), "no configuration source") {
		t.Errorf("reload: %v", err)
	}
}

// TestHTTPHandler: the handler announces the static issuers, serves the
// service's metrics beside the request metrics, and counts its requests.
func TestHTTPHandler(t *testing.T) {
	g, is := built(t, nil)
	h, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	if meta := get("/.well-known/oauth-protected-resource"); !strings.Contains(meta, is.Issuer()) {
		t.Errorf("the resource metadata does not announce %s: %s", is.Issuer(), meta)
	}
	get("/healthz")
	metrics := get("/metrics")
	for _, name := range []string{"praxa_audit_queue_waits_total", "praxa_leases_swept_total", "praxa_runs_expired_total",
		`praxa_http_requests_total{mcp_method="",mcp_tool="",method="GET",route="/healthz",status="200"} 1`} {
		if !strings.Contains(metrics, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

// TestStdioServer: a token the verifier refuses starts no server; an
// accepted one serves the tools it allows, each request recorded under
// route stdio.
func TestStdioServer(t *testing.T) {
	g, is := built(t, nil)
	ctx := context.Background()
	if _, _, err := g.StdioServer(ctx, assembly.StdioCredential{Token: restclient.StaticToken("not-a-token")}); err == nil || !strings.Contains(err.Error(), "the credential is not accepted") {
		t.Errorf("a refused token: %v", err)
	}
	tok, err := is.Mint(is.Issuer(), g.Config.Auth.Resource, "alice", "acme", []string{string(contracts.ScopeCapabilitiesRead)}, time.Hour,
		map[string]any{"tools": []string{contracts.ToolPraxecQuery}})
	if err != nil {
		t.Fatal(err)
	}
	srv, p, err := g.StdioServer(ctx, assembly.StdioCredential{Token: restclient.StaticToken(tok)})
	if err != nil || p.Subject != "alice" || p.Tenant != "acme" {
		t.Fatalf("StdioServer: %v, %+v", err, p)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != contracts.ToolPraxecQuery {
		t.Errorf("tools/list shows %d tools, want the one the token allows", len(list.Tools))
	}
	rec := httptest.NewRecorder()
	g.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := `praxa_http_requests_total{mcp_method="tools/list",mcp_tool="",method="",route="stdio",status="200"} 1`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}
