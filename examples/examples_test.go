package examples_test

import (
	"bufio"
	"bytes"
	"testing"
	"time"

	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway/certs"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestExampleCertificates: the checked-in certificates verify against the
// key praxec.yaml trusts with one of each result, so the examples hold
// together without the private key (which is not kept anywhere).
func TestExampleCertificates(t *testing.T) {
	_, _, issuers := gatewaytest.ExampleKnowledge(t)
	data, err := examples.FS.ReadFile("certificates.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cert-tool-use-2025":  certs.Valid,
		"cert-summaries-2023": certs.Expired,
		"cert-planning-2099":  certs.NotYetValid,
		"cert-tampered":       certs.BadSignature,
		"cert-unlisted-lab":   certs.UnknownIssuer,
	}
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		c, err := certs.Parse(sc.Bytes())
		if err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		if got, detail := certs.Verify(c, issuers, at); got != want[c.ID] {
			t.Errorf("%s: %s (%s), want %s", c.ID, got, detail, want[c.ID])
		}
	}
	if n != len(want) {
		t.Errorf("%d certificates, want %d", n, len(want))
	}
}

// TestExampleSkills: the embedded configuration finds its skills in FS.
func TestExampleSkills(t *testing.T) {
	_, cat, _ := gatewaytest.ExampleKnowledge(t)
	if cat.Len() != 2 {
		t.Errorf("%d skills: %v", cat.Len(), cat.IDs())
	}
}
