package tracing

import (
	"context"
	"strings"
	"testing"
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
