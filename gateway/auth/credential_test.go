package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestCredentialNeverFormats: however a credential is printed, logged or
// marshalled, by pointer or by value, the token does not show; only Token
// gives it.
func TestCredentialNeverFormats(t *testing.T) {
	const raw = "eyJraw.token.value-0123456789"
	c := NewCredential(raw, &Principal{Issuer: "https://idp.test", Tenant: "acme", Subject: "alice", TokenID: "j1", Expiry: time.Now().Add(time.Hour)})
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	log.Info("call", "cred", c, "value", *c)
	jp, _ := json.Marshal(c)
	jv, _ := json.Marshal(*c)
	jm, _ := json.Marshal(map[string]any{"c": c})
	for _, s := range []string{
		fmt.Sprintf("%v %+v %#v %s", c, c, c, c),
		fmt.Sprintf("%v %+v %#v %s", *c, *c, *c, *c),
		fmt.Sprint(c), logs.String(), string(jp), string(jv), string(jm),
		fmt.Errorf("wrapped: %v", c).Error(),
	} {
		if strings.Contains(s, raw) || strings.Contains(s, "value-0123456789") {
			t.Errorf("the token shows in %q", s)
		}
		if !strings.Contains(s, "[redacted]") {
			t.Errorf("%q does not say [redacted]", s)
		}
	}
	if c.Token() != raw {
		t.Errorf("Token() = %q", c.Token())
	}
	ctx := WithCredential(context.Background(), c)
	if got, ok := CredentialFrom(ctx); !ok || got != c {
		t.Errorf("CredentialFrom = %v, %v", got, ok)
	}
	if _, ok := CredentialFrom(context.Background()); ok {
		t.Error("a context without a credential carries one")
	}
	for _, tc := range []struct {
		name string
		c    *Credential
		at   time.Time
		want bool
	}{
		{"live", c, time.Now(), true},
		{"at expiry", c, c.Expiry, false},
		{"after", c, c.Expiry.Add(time.Second), false},
		{"nil", nil, time.Now(), false},
		{"empty token", NewCredential("", &Principal{}), time.Now(), false},
	} {
		if got := tc.c.Live(tc.at); got != tc.want {
			t.Errorf("%s: Live = %v, want %v", tc.name, got, tc.want)
		}
	}
}
