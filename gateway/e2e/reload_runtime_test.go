package e2e_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/certs"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/reload"
	"github.com/praxa/praxa/gateway/store"
)

// skillFile is a skill's markdown file.
func skillFile(id, title string) string {
	return fmt.Sprintf("---\nid: %s\nversion: 1.0.0\ntitle: %s\ntags: [reload]\nevidence:\n  state: reviewed\n---\n# %s\n\nA skill of the reload test.\n", id, title, title)
}

// contextConfig is a configuration whose skills are those of dir and
// whose trusted certificate issuers are issuers (id -> base64 key).
func contextConfig(dir string, issuers map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "skills:\n  dir: %s\n", dir)
	if len(issuers) > 0 {
		b.WriteString("certificates:\n  issuers:\n")
		for id, key := range issuers {
			fmt.Fprintf(&b, "    - id: %s\n      publicKey: %s\n", id, key)
		}
	}
	return b.String()
}

// fileGateway starts a gateway on the configuration file path, read again
// on every reload as serve reads its --config.
func fileGateway(t *testing.T, ti *gatewaytest.Issuer, path string) (*gatewaytest.Gateway, *gw) {
	t.Helper()
	g := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:     ti,
		ConfigFile: path,
		Edit:       func(cfg *config.Config) { cfg.Auth.Resource = resource },
	})
	return g, wrapGateway(g)
}

// certificateVerification lists the certificates and returns the
// verification result of id.
func certificateVerification(t *testing.T, w *gw, tok, id string) string {
	t.Helper()
	res := w.do(t, req{method: http.MethodGet, path: "/v8/world-model/certificates", token: tok})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	list, _ := res.Object(t)["certificates"].([]any)
	for _, c := range list {
		if m, _ := c.(map[string]any); m["id"] == id {
			v, _ := m["verification"].(string)
			return v
		}
	}
	t.Fatalf("certificate %s is not listed: %s", id, res.Body)
	return ""
}

// reloadEvent reads the one reload event of a trace.
func reloadEvent(t *testing.T, g *gatewaytest.Gateway, tenant, trace string) store.Event {
	t.Helper()
	var found []store.Event
	for _, e := range g.Events(t, tenant, trace) {
		if strings.HasPrefix(e.Type, "config.reload") {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("trace %s holds %d reload events, want 1: %+v", trace, len(found), found)
	}
	return found[0]
}

func sha256Hex(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestReloadSkillsAndCertificateIssuers: a reload swaps in the skills and
// the trusted certificate issuers with the rest; a broken skill or an
// issuer key that does not decode refuses the whole reload and the
// running ones stay. Every attempt is an audit event naming the operator,
// the file and its digest.
func TestReloadSkillsAndCertificateIssuers(t *testing.T) {
	ti := newIssuer(t)
	skillsDir := t.TempDir()
	writeFile(t, filepath.Join(skillsDir, "alpha.md"), skillFile("alpha", "Alpha"))
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, contextConfig(skillsDir, nil))
	g, w := fileGateway(t, ti, path)
	tok := mint(t, ti, tenantA, userA)
	operator := mint(t, ti, tenantA, operatorA, string(contracts.ScopeConfigWrite))

	// A certificate of an issuer the configuration does not trust yet.
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert := certs.Certificate{ID: "cert-reload", Issuer: "reload-lab", Subject: "model-1", Capabilities: []string{"tool-use"},
		IssuedAt: "2025-01-01T00:00:00Z", ExpiresAt: "2099-01-01T00:00:00Z"}
	certs.Sign(&cert, priv)
	if _, err := g.Knowledge.ImportCertificates(context.Background(), nil, "reload.jsonl", bytes.NewReader(append(certs.Marshal(cert), '\n'))); err != nil {
		t.Fatal(err)
	}
	if v := certificateVerification(t, w, tok, "cert-reload"); v != "unknown_issuer" {
		t.Fatalf("before the reload the certificate is %s, want unknown_issuer", v)
	}
	gatewaytest.WantStatus(t, w.do(t, req{method: http.MethodGet, path: "/v8/skills/alpha", token: tok}), http.StatusOK)
	wantProblem(t, w.do(t, req{method: http.MethodGet, path: "/v8/skills/beta", token: tok}), http.StatusNotFound, contracts.CodeNotFound)

	// The reload adds a skill and trusts the issuer.
	writeFile(t, filepath.Join(skillsDir, "beta.md"), skillFile("beta", "Beta"))
	key := base64.StdEncoding.EncodeToString(pub)
	writeFile(t, path, contextConfig(skillsDir, map[string]string{"reload-lab": key}))
	accepted := newTraceID()
	res := w.do(t, req{method: http.MethodPost, path: "/v8/config/reload", token: operator, body: map[string]any{}, trace: accepted})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	out := res.Object(t)
	if err := contracts.ValidateEndpointOutput(contracts.EndpointReloadConfig, out); err != nil {
		t.Errorf("reload answer: %v\n%s", err, res.Body)
	}
	digest := sha256Hex(t, path)
	if out["skills"] != json.Number("2") || out["certificateIssuers"] != json.Number("1") || out["sha256"] != digest {
		t.Errorf("reload answer %s, want 2 skills, 1 issuer, sha256 %s", res.Body, digest)
	}
	gatewaytest.WantStatus(t, w.do(t, req{method: http.MethodGet, path: "/v8/skills/beta", token: tok}), http.StatusOK)
	res = w.query(t, tok, map[string]any{"subject": "beta"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if k := str(t, res.Object(t), "kind"); k != "skill" {
		t.Errorf("describe beta answered kind %q: %s", k, res.Body)
	}
	if v := certificateVerification(t, w, tok, "cert-reload"); v != "valid" {
		t.Errorf("after the reload the certificate is %s, want valid", v)
	}

	// The audit event of the accepted reload.
	e := reloadEvent(t, g, tenantA, accepted)
	if e.Type != "config.reloaded" || e.Outcome != "allowed" || e.Subject != operatorA || e.Operation != contracts.EndpointReloadConfig {
		t.Errorf("accepted reload event %+v", e)
	}
	a := e.Attributes
	if a["via"] != reload.ViaEndpoint || a["source"] != path || a["sha256"] != digest ||
		fmt.Sprint(a["skills"]) != "2" || fmt.Sprint(a["certificateIssuers"]) != "1" ||
		fmt.Sprint(a["workflows"]) == "" || a["capabilities"] == nil || a["connections"] == nil {
		t.Errorf("accepted reload event attributes %v", a)
	}

	// A skill with broken front matter refuses the whole reload: the
	// other change of the file (no issuer) is not applied either.
	writeFile(t, filepath.Join(skillsDir, "gamma.md"), "---\nid: gamma\nversion: [\n---\nbody\n")
	writeFile(t, path, contextConfig(skillsDir, nil))
	refused := newTraceID()
	res = w.do(t, req{method: http.MethodPost, path: "/v8/config/reload", token: operator, body: map[string]any{}, trace: refused})
	p := wantProblem(t, res, http.StatusBadRequest, contracts.CodeInvalidParams)
	if len(p.Errors) == 0 || !strings.Contains(p.Errors[0].Detail, "gamma.md") {
		t.Errorf("the refusal does not name the broken skill: %s", res.Body)
	}
	gatewaytest.WantStatus(t, w.do(t, req{method: http.MethodGet, path: "/v8/skills/beta", token: tok}), http.StatusOK)
	if v := certificateVerification(t, w, tok, "cert-reload"); v != "valid" {
		t.Errorf("a refused reload changed the issuers: the certificate is %s", v)
	}
	e = reloadEvent(t, g, tenantA, refused)
	if e.Type != "config.reload_refused" || e.Outcome != "refused" || e.Subject != operatorA || e.Code != string(contracts.CodeInvalidParams) {
		t.Errorf("refused reload event %+v", e)
	}
	if problems := fmt.Sprint(e.Attributes["problems"]); !strings.Contains(problems, "gamma.md") ||
		e.Attributes["sha256"] != sha256Hex(t, path) {
		t.Errorf("refused reload event attributes %v", e.Attributes)
	}
	if err := os.Remove(filepath.Join(skillsDir, "gamma.md")); err != nil {
		t.Fatal(err)
	}

	// An issuer key that does not decode is refused with the file's
	// problems; the trusted issuer stays.
	writeFile(t, path, contextConfig(skillsDir, map[string]string{"reload-lab": "bm90IGEga2V5"}))
	res = w.do(t, req{method: http.MethodPost, path: "/v8/config/reload", token: operator, body: map[string]any{}})
	p = wantProblem(t, res, http.StatusBadRequest, contracts.CodeInvalidParams)
	if len(p.Errors) == 0 || !strings.Contains(p.Errors[0].Detail, "publicKey") {
		t.Errorf("the refusal does not name the key: %s", res.Body)
	}
	if v := certificateVerification(t, w, tok, "cert-reload"); v != "valid" {
		t.Errorf("a refused reload changed the issuers: the certificate is %s", v)
	}

	// A reload that drops the skill and the issuer.
	if err := os.Remove(filepath.Join(skillsDir, "beta.md")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, contextConfig(skillsDir, nil))
	gatewaytest.WantStatus(t, w.reload(t, operator), http.StatusOK)
	wantProblem(t, w.do(t, req{method: http.MethodGet, path: "/v8/skills/beta", token: tok}), http.StatusNotFound, contracts.CodeNotFound)
	if v := certificateVerification(t, w, tok, "cert-reload"); v != "unknown_issuer" {
		t.Errorf("after a reload that drops the issuer the certificate is %s", v)
	}
}

// TestReloadBySignalAudited: a reload by signal (what serve's SIGHUP
// handler asks for) is audited too, accepted or refused, under the
// trigger's trace and with "signal" as its subject.
func TestReloadBySignalAudited(t *testing.T) {
	ti := newIssuer(t)
	skillsDir := t.TempDir()
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, contextConfig(skillsDir, nil))
	g, _ := fileGateway(t, ti, path)

	trace := newTraceID()
	res, err := g.Reloader.Reload(context.Background(), reload.Trigger{Via: reload.ViaSignal, TraceID: trace})
	if err != nil {
		t.Fatal(err)
	}
	e := reloadEvent(t, g, "", trace)
	if e.Type != "config.reloaded" || e.Subject != reload.ViaSignal || e.Attributes["via"] != reload.ViaSignal ||
		e.Attributes["sha256"] != res.SHA256 || res.SHA256 != sha256Hex(t, path) || e.Attributes["source"] != path {
		t.Errorf("signal reload event %+v (answer %+v)", e, res)
	}

	writeFile(t, path, "skills: [\n")
	trace = newTraceID()
	if _, err := g.Reloader.Reload(context.Background(), reload.Trigger{Via: reload.ViaSignal, TraceID: trace}); err == nil {
		t.Fatal("a bad file was reloaded")
	}
	e = reloadEvent(t, g, "", trace)
	if e.Type != "config.reload_refused" || e.Subject != reload.ViaSignal || e.Attributes["problems"] == nil ||
		e.Attributes["sha256"] != sha256Hex(t, path) {
		t.Errorf("refused signal reload event %+v", e)
	}
}
