package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse holds Parse to three promises: it never panics, it fails only
// with a *LoadError that says something, and what it accepts survives a
// round trip: the decoded configuration, marshalled to JSON (which is YAML),
// parses again to the same configuration.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("server: {limits: {ratePerSecond: 1e-7, maxBodyBytes: 1e3}}"))
	f.Add([]byte("auth: {claims: {tenant: \"\\u2028\\x01\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("fuzz.yaml", data)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Parse failed with %T %v, want a *LoadError", err, err)
			}
			if len(le.Problems) == 0 {
				t.Fatal("a LoadError without problems")
			}
			for _, p := range le.Problems {
				if p.Message == "" || p.Line < 0 || p.Column < 0 {
					t.Fatalf("malformed problem %+v", p)
				}
			}
			return
		}
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("an accepted configuration does not marshal: %v", err)
		}
		again, err := Parse("fuzz.json", b)
		if err != nil {
			t.Fatalf("the re-marshalled configuration does not parse:\n%s\n%v", b, err)
		}
		b2, err := json.Marshal(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Fatalf("the round trip changed the configuration:\n%s\n%s", b, b2)
		}
	})
}
