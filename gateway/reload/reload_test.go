package reload_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/reload"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
)

func parse(t *testing.T, src string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("praxec.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Defaults("127.0.0.1:0")
	return cfg
}

// TestReloadReachesFeatures reloads a service on memstore: a feature
// (knowledge) is staged with the rest and swapped in by an accepted
// reload; a feature that refuses to stage refuses the reload whole, and
// so does a changed lease TTL; every attempt is one audit event.
func TestReloadReachesFeatures(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	defer st.Close()
	start := parse(t, gatewaytest.DeployWorkflowYAML)
	conns, workflows, _, err := connect.Setup(ctx, start, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := gateway.New(st, &gateway.Options{Workflows: workflows, LeaseTTL: start.LeaseTTL()})
	defer svc.Close(ctx)
	k := knowledge.New(st, nil)
	svc.Register(k.Operations()...)
	sw := connect.NewSwitch(conns)
	defer sw.Close(ctx)

	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	next := func() *config.Config { return parse(t, gatewaytest.DeployWorkflowYAML) }
	var load func() *config.Config
	r := &reload.Reloader{Service: svc, Store: st, Switch: sw, Features: []op.Reloadable{k},
		Load: func(context.Context) (*config.Config, []byte, error) { return load(), nil, nil }}
	defer r.Close()
	reloadAs := func(trace string) (*reload.Result, error) {
		return r.Reload(ctx, reload.Trigger{Via: reload.ViaEndpoint, TraceID: trace,
			Principal: &auth.Principal{Tenant: "ops", Subject: "root"}})
	}

	// Accepted: the feature staged the new issuer, which the answer counts.
	load = func() *config.Config {
		c := next()
		c.Certificates.Issuers = []config.CertificateIssuer{{ID: "lab", PublicKey: base64.StdEncoding.EncodeToString(pub)}}
		return c
	}
	res, err := reloadAs("t-ok")
	if err != nil || !res.Reloaded || res.CertificateIssuers != 1 || res.Workflows == 0 {
		t.Fatalf("an accepted reload = %+v, %v", res, err)
	}

	// Refused by the feature: a key that does not decode (a configuration
	// built in code; a file's is checked when it loads).
	load = func() *config.Config {
		c := next()
		c.Certificates.Issuers = []config.CertificateIssuer{{ID: "bad", PublicKey: "not a key"}}
		return c
	}
	if _, err := reloadAs("t-feature"); err == nil || !strings.HasPrefix(err.Error(), "certificate issuers: ") {
		t.Errorf("a reload the feature refuses: %v", err)
	}

	// Refused before anything is built: the lease TTL is read at start.
	load = func() *config.Config {
		c := next()
		c.Server.LeaseTTL = config.Duration(start.LeaseTTL() + time.Minute)
		return c
	}
	if _, err := reloadAs("t-ttl"); err == nil || !strings.Contains(err.Error(), "server.leaseTTL is read at start only") {
		t.Errorf("a reload changing the lease TTL: %v", err)
	}

	for trace, want := range map[string]string{"t-ok": "config.reloaded", "t-feature": "config.reload_refused", "t-ttl": "config.reload_refused"} {
		var events []store.Event
		err := st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
			var err error
			events, err = tx.TraceEvents(ctx, "ops", trace, 10)
			return err
		})
		if err != nil || len(events) != 1 || events[0].Type != want || events[0].Operation != contracts.EndpointReloadConfig || events[0].Subject != "root" {
			t.Errorf("%s: events %+v, %v; want one %s", trace, events, err, want)
		}
	}

	r.Close()
	if _, err := reloadAs("t-closed"); err != reload.ErrClosed {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}
