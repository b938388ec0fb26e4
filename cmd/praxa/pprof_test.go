package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestStartPprof(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:6060", "localhost:0", "nonsense"} {
		t.Run("refuses "+addr, func(t *testing.T) {
			err := startPprof(t.Context(), addr, slog.New(slog.DiscardHandler))
			if err == nil || !strings.Contains(err.Error(), pprofEnv) {
				t.Fatalf("startPprof(%q) = %v, want a refusal naming %s", addr, err, pprofEnv)
			}
		})
	}
	t.Run("off when unset", func(t *testing.T) {
		if err := startPprof(t.Context(), "", slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("serves on loopback", func(t *testing.T) {
		var logs bytes.Buffer
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		if err := startPprof(ctx, "127.0.0.1:0", slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(logs.String())
		if m == nil {
			t.Fatalf("no address logged: %s", logs.String())
		}
		resp, err := http.Get("http://" + m[1] + "/debug/pprof/mutex?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "mutex") {
			t.Fatalf("GET /debug/pprof/mutex: %d %.200s", resp.StatusCode, body)
		}
	})
}
