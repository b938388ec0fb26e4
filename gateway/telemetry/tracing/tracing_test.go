package tracing

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestBounded cuts on a UTF-8 boundary at MaxAttributeLength.
func TestBounded(t *testing.T) {
	long := strings.Repeat("a", MaxAttributeLength-1) + "é" + "tail"
	got := Bounded(long)
	if len(got) != MaxAttributeLength-1 || !strings.HasPrefix(long, got) {
		t.Errorf("Bounded: %d bytes", len(got))
	}
	if Bounded("short") != "short" {
		t.Error("Bounded changed a short value")
	}
}

// TestOff: with export off, no span starts and End takes nil.
func TestOff(t *testing.T) {
	ctx := context.Background()
	if On() {
		t.Fatal("On with export off")
	}
	got, span := StartChild(ctx, "x", 0)
	if span != nil || got != ctx {
		t.Errorf("StartChild with export off: %v", span)
	}
	End(nil, nil, "")
	Annotate(ctx, "t", "o", "c", "r", "ok")
}

// TestTraceparent: the traceparent of a span context, sampled or not, is
// the W3C form (its trace id at [3:35]).
func TestTraceparent(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	for _, c := range []struct {
		flags trace.TraceFlags
		want  string
	}{
		{trace.FlagsSampled, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{0, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"},
	} {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: c.flags})
		got := Traceparent(sc)
		if got != c.want || got[3:35] != tid.String() {
			t.Errorf("Traceparent: %s, want %s", got, c.want)
		}
	}
}
