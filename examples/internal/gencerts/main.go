// Command gencerts regenerates the example model capability certificates,
// examples/certificates.jsonl, and the public key examples/praxec.yaml
// trusts for them.
//
//	go run ./examples/internal/gencerts
//
// Every run makes a fresh Ed25519 key for the example issuer, signs the
// certificates with it, writes its public half into praxec.yaml and forgets
// the private half: nothing can sign another certificate under the example
// issuer afterwards. The file holds one certificate of each verification
// result a listing can give (valid, expired, not yet valid, bad signature,
// unknown issuer). It is not a go:generate step: a fresh key changes the
// files on every run.
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/praxa/praxa/gateway/certs"
)

// Issuer is the example issuer's id, as praxec.yaml names it.
const Issuer = "praxa-example-evals"

func main() {
	dir := flag.String("dir", "examples", "the examples directory")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gencerts:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	_, stranger, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	cert := func(id, issuer, subject, issued, expires string, caps ...string) certs.Certificate {
		return certs.Certificate{ID: id, Issuer: issuer, Subject: subject, Capabilities: caps, IssuedAt: issued, ExpiresAt: expires}
	}
	valid := cert("cert-tool-use-2025", Issuer, "example-model-1", "2025-01-01T00:00:00Z", "2035-01-01T00:00:00Z", "tool-use", "code-review")
	expired := cert("cert-summaries-2023", Issuer, "example-model-0", "2023-01-01T00:00:00Z", "2024-01-01T00:00:00Z", "summarization")
	future := cert("cert-planning-2099", Issuer, "example-model-2", "2099-01-01T00:00:00Z", "2100-01-01T00:00:00Z", "planning")
	tampered := cert("cert-tampered", Issuer, "example-model-1", "2025-01-01T00:00:00Z", "2035-01-01T00:00:00Z", "tool-use")
	unknown := cert("cert-unlisted-lab", "unlisted-lab", "example-model-1", "2025-01-01T00:00:00Z", "2035-01-01T00:00:00Z", "tool-use")
	for _, c := range []*certs.Certificate{&valid, &expired, &future, &tampered} {
		certs.Sign(c, priv)
	}
	certs.Sign(&unknown, stranger)
	// Altered after signing: its signature no longer covers what it says.
	tampered.Capabilities = append(tampered.Capabilities, "deploy-production")

	var out bytes.Buffer
	for _, c := range []certs.Certificate{valid, expired, future, tampered, unknown} {
		out.Write(certs.Marshal(c))
		out.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "certificates.jsonl"), out.Bytes(), 0o644); err != nil {
		return err
	}
	yamlPath := filepath.Join(dir, "praxec.yaml")
	y, err := os.ReadFile(yamlPath)
	if err != nil {
		return err
	}
	re := regexp.MustCompile(`(?m)^(\s+publicKey: )\S+( # example issuer key)$`)
	if n := len(re.FindAll(y, -1)); n != 1 {
		return fmt.Errorf("%s: want exactly one line 'publicKey: KEY # example issuer key', found %d", yamlPath, n)
	}
	y = re.ReplaceAll(y, []byte("${1}"+base64.StdEncoding.EncodeToString(pub)+"${2}"))
	return os.WriteFile(yamlPath, y, 0o644)
}
