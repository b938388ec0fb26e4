package main

import (
	"flag"
	"io"
	"testing"
)

// TestParseVerbFlags: a verb's argument may begin with "-" (a jti is
// base64url, one in 64 begins so): only a word that names one of the
// verb's flags, help, or "--" is read as a flag.
func TestParseVerbFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rest    []string
		takes   bool
		wantArg string
		wantErr bool
		reason  string
	}{
		{name: "plain id", rest: []string{"abc", "--reason", "r"}, takes: true, wantArg: "abc", reason: "r"},
		{name: "id beginning with a dash", rest: []string{"-Xk9q2", "--reason", "r"}, takes: true, wantArg: "-Xk9q2", reason: "r"},
		{name: "id beginning with two dashes", rest: []string{"--Xk9q2"}, takes: true, wantArg: "--Xk9q2"},
		{name: "a flag first, no id", rest: []string{"--reason", "r"}, takes: true, reason: "r"},
		{name: "a flag with its value inline", rest: []string{"-reason=r"}, takes: true, reason: "r"},
		{name: "the terminator", rest: []string{"--", "-Xk9q2"}, takes: true},
		{name: "help", rest: []string{"-h"}, takes: true, wantErr: true},
		{name: "a verb without an argument", rest: []string{"-Xk9q2"}, takes: false, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("tokens", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			reason := fs.String("reason", "", "")
			arg, err := parseVerbFlags(fs, tc.rest, tc.takes)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseVerbFlags(%q) error %v, want error %v", tc.rest, err, tc.wantErr)
			}
			if err == nil && (arg != tc.wantArg || *reason != tc.reason) {
				t.Errorf("parseVerbFlags(%q) = %q, reason %q; want %q, %q", tc.rest, arg, *reason, tc.wantArg, tc.reason)
			}
		})
	}
}
