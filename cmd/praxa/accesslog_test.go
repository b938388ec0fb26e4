package main

import (
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/gatewaytest"
)

func TestBufferedLogHoldsLinesUntilFlushOrClose(t *testing.T) {
	var out gatewaytest.LogBuffer
	b := newBufferedLog(&out, time.Hour) // the ticker never fires in this test
	b.Write([]byte("one\n"))
	b.Write([]byte("two\n"))
	if got := out.String(); got != "" {
		t.Fatalf("written before a flush: %q", got)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "one\ntwo\n" {
		t.Fatalf("after Flush: %q", got)
	}
	b.Write([]byte("three\n"))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "one\ntwo\nthree\n" {
		t.Fatalf("after Close: %q", got)
	}
}

func TestBufferedLogWritesOutAFullBufferAtOnce(t *testing.T) {
	var out gatewaytest.LogBuffer
	b := newBufferedLog(&out, time.Hour)
	defer b.Close()
	line := strings.Repeat("x", 1023) + "\n"
	for range accessLogBuffer/len(line) + 1 {
		b.Write([]byte(line))
	}
	if got := len(out.String()); got < accessLogBuffer {
		t.Fatalf("%d bytes written out once more than the buffer was filled, want at least %d", got, accessLogBuffer)
	}
}

func TestBufferedLogFlushesOnItsTicker(t *testing.T) {
	var out gatewaytest.LogBuffer
	b := newBufferedLog(&out, time.Millisecond)
	defer b.Close()
	b.Write([]byte("late\n"))
	if !gatewaytest.Poll(10*time.Second, func() bool { return out.String() == "late\n" }) {
		t.Fatalf("the flusher never wrote the line out: %q", out.String())
	}
}

func TestGCPercentFor(t *testing.T) {
	if got := gcPercentFor(false); got != serveGCPercent {
		t.Errorf("GOGC unset: %d, want %d", got, serveGCPercent)
	}
	if got := gcPercentFor(true); got != -1 {
		t.Errorf("GOGC set by the operator: %d, want -1 (left alone)", got)
	}
}
