package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// accessLogFlushEvery is how long an access-log line may wait in memory
// before it is written out.
const accessLogFlushEvery = 100 * time.Millisecond

// accessLogBuffer is the size at which buffered access-log lines are
// written out at once, whatever their age.
const accessLogBuffer = 32 << 10

// bufferedLog buffers the per-request access log of praxa serve: one line
// per request written straight to stderr costs a write system call per
// request, a sizeable share of a request answered from memory. Lines are
// written out when accessLogBuffer bytes are waiting, every
// accessLogFlushEvery, and at Close, so a line reaches stderr at most
// 100 ms after its request ended and the order of lines is kept. A process
// killed by SIGKILL loses at most the last 100 ms of access lines; the
// audit trail, which is durable in the store, is not affected. The other
// log lines (warnings, errors, lifecycle) are not buffered.
type bufferedLog struct {
	mu   sync.Mutex
	w    *bufio.Writer
	err  error // the first write error; later writes are dropped
	stop chan struct{}
	done chan struct{}
}

// newBufferedLog starts the writer's flusher; Close stops it.
func newBufferedLog(w io.Writer, every time.Duration) *bufferedLog {
	b := &bufferedLog{w: bufio.NewWriterSize(w, accessLogBuffer), stop: make(chan struct{}), done: make(chan struct{})}
	go b.flushLoop(every)
	return b
}

// Write buffers one line (slog's handlers write each record in one call).
func (b *bufferedLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return len(p), nil
	}
	if _, err := b.w.Write(p); err != nil {
		b.err = err
	}
	return len(p), nil
}

// Flush writes out what is buffered.
func (b *bufferedLog) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = b.w.Flush()
	}
	return b.err
}

func (b *bufferedLog) flushLoop(every time.Duration) {
	defer close(b.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.mu.Lock()
			if b.err == nil && b.w.Buffered() > 0 {
				b.err = b.w.Flush()
			}
			b.mu.Unlock()
		}
	}
}

// Close stops the flusher and writes out what is buffered.
func (b *bufferedLog) Close() error {
	close(b.stop)
	<-b.done
	return b.Flush()
}

// syncWriter serializes the writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p to the underlying writer under the lock.
func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
