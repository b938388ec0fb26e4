package certs

import (
	"reflect"
	"testing"
)

// FuzzParse: any bytes are refused or parse into a certificate whose
// canonical form parses back to the same certificate.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"id":"c1","issuer":"lab","subject":"model-x","claims":{"a":1},"issuedAt":"2026-01-01T00:00:00Z","expiresAt":"2027-01-01T00:00:00Z","signature":"AA"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		back, err := Parse(Marshal(c))
		if err != nil || !reflect.DeepEqual(c, back) {
			t.Fatalf("%q: %+v, round trip %+v (%v)", data, c, back, err)
		}
	})
}
