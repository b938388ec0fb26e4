package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
)

// stdioDrain lets `praxa mcp` answer every request it read before its
// stdin ended. The SDK closes the session when its reader meets EOF, and
// requests still being handled then are dropped unanswered (a piped
// create got no answer and did not run). The reader wrapper holds EOF back
// until the writer wrapper has seen an answer to every request the reader
// passed on, or ctx ends (SIGINT, SIGTERM).
//
// Messages are newline-delimited JSON-RPC (the stdio transport): a line
// with a method and an id is a request, a line with an id and no method a
// response. Notifications need no answer; the server's own requests to
// the client are not counted.
type stdioDrain struct {
	ctx context.Context

	mu       sync.Mutex
	answered chan struct{} // closed and replaced whenever a response is written
	read     map[string]bool
	inLine   []byte
	outLine  []byte
}

func newStdioDrain(ctx context.Context) *stdioDrain {
	return &stdioDrain{ctx: ctx, answered: make(chan struct{}), read: map[string]bool{}}
}

// reader wraps r.
func (d *stdioDrain) reader(r io.Reader) io.ReadCloser { return drainReader{d: d, r: r} }

// writer wraps w.
func (d *stdioDrain) writer(w io.Writer) io.WriteCloser { return drainWriter{d: d, w: w} }

type drainReader struct {
	d *stdioDrain
	r io.Reader
}

func (r drainReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.d.mu.Lock()
	r.d.inLine = scanLines(append(r.d.inLine, b[:n]...), r.d.noteRequest)
	if err == io.EOF {
		// A last message without its newline is a message too.
		scanLines(append(r.d.inLine, '\n'), r.d.noteRequest)
		r.d.inLine = nil
	}
	r.d.mu.Unlock()
	if err == io.EOF {
		r.d.waitAnswered()
	}
	return n, err
}

// noteRequest counts line as a request read, if it is one; d.mu is held.
func (d *stdioDrain) noteRequest(line []byte) {
	if id, method := messageOf(line); id != "" && method != "" {
		d.read[id] = true
	}
}

func (drainReader) Close() error { return nil }

type drainWriter struct {
	d *stdioDrain
	w io.Writer
}

func (w drainWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	w.d.mu.Lock()
	answered := false
	w.d.outLine = scanLines(append(w.d.outLine, b[:n]...), func(line []byte) {
		if id, method := messageOf(line); id != "" && method == "" && w.d.read[id] {
			delete(w.d.read, id)
			answered = true
		}
	})
	if answered {
		close(w.d.answered)
		w.d.answered = make(chan struct{})
	}
	w.d.mu.Unlock()
	return n, err
}

func (drainWriter) Close() error { return nil }

// waitAnswered returns once every request read has been answered, or ctx
// ends.
func (d *stdioDrain) waitAnswered() {
	for {
		d.mu.Lock()
		pending, next := len(d.read), d.answered
		d.mu.Unlock()
		if pending == 0 {
			return
		}
		select {
		case <-next:
		case <-d.ctx.Done():
			return
		}
	}
}

// scanLines calls fn for each complete line of buf and returns the rest
// (the start of the next line).
func scanLines(buf []byte, fn func([]byte)) []byte {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return buf
		}
		fn(buf[:i])
		buf = buf[i+1:]
	}
}

// messageOf reads the id (its JSON text, "" when absent or null) and the
// method of a JSON-RPC message.
func messageOf(line []byte) (id, method string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return "", ""
	}
	return string(m.ID), m.Method
}
