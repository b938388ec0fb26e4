package gatewaytest

import (
	"testing"

	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway/certs"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/skills"
)

// ExampleKnowledge is the embedded example configuration
// (examples.PraxecYAML) with what the knowledge reads of it: its skills
// (from examples.FS) and its certificate issuers. It fails t on any error.
func ExampleKnowledge(t testing.TB) (*config.Config, *skills.Catalog, certs.Issuers) {
	t.Helper()
	cfg, err := config.Parse(examples.PraxecYAMLName, examples.PraxecYAML)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := skills.FromConfig(cfg, examples.FS, examples.Root)
	if err != nil {
		t.Fatal(err)
	}
	issuers, err := knowledge.CertificateIssuers(cfg.Certificates)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, cat, issuers
}
