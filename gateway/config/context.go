package config

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strconv"
)

// Skills configures the governed skills. Skills are gateway-wide
// configuration, like workflows and the lexicon: every tenant reads the same
// skills, and nothing a tenant does changes them.
type Skills struct {
	// Dir is the directory the skills are loaded from: every *.md file in
	// it and below. A relative path is resolved against the directory of
	// the configuration file.
	Dir string `json:"dir,omitempty"`
}

// Certificates configures the model capability certificates the gateway
// lists. Certificates are information: they grant no authority anywhere.
type Certificates struct {
	// Issuers are the trusted certificate issuers.
	Issuers []CertificateIssuer `json:"issuers,omitempty"`
}

// CertificateIssuer is one trusted certificate issuer.
type CertificateIssuer struct {
	// ID is the issuer's id, as certificates name it.
	ID string `json:"id"`
	// PublicKey is the issuer's Ed25519 public key, standard base64.
	PublicKey string `json:"publicKey"`
}

// Key decodes the issuer's public key.
func (i CertificateIssuer) Key() (ed25519.PublicKey, error) {
	return decodeEd25519PublicKey(i.PublicKey)
}

func decodeEd25519PublicKey(s string) (ed25519.PublicKey, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("is not standard base64 (with padding)")
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("decodes to %d bytes; an Ed25519 public key has %d", len(b), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// contextSections checks what the schema cannot say about the skills and
// certificates sections: issuer ids are unique and every public key is a
// well-formed Ed25519 key. (Whether skills.dir exists is checked when the
// skills are loaded, relative to the file.)
func (c *checker) contextSections() {
	issuers, _ := c.list("/certificates/issuers")
	seen := map[string]int{}
	for i := range issuers {
		base := "/certificates/issuers/" + strconv.Itoa(i)
		if id, ok := c.str(base + "/id"); ok && idRE.MatchString(id) {
			if first, dup := seen[id]; dup {
				c.report(base+"/id", "duplicates certificates.issuers[%d] (line %d)", first, c.doc.at(fmt.Sprintf("/certificates/issuers/%d/id", first)).Line)
			} else {
				seen[id] = i
			}
		}
		if key, ok := c.str(base + "/publicKey"); ok {
			if _, err := decodeEd25519PublicKey(key); err != nil {
				c.report(base+"/publicKey", "%v", err)
			}
		}
	}
}
