package telemetry

import (
	"context"
	"log/slog"
)

// Logger returns a logger writing what l writes, each line logged in a
// request's context (NewContext) with that request's request_id and
// trace_id first, and each logged in the context of the gateway's own
// work (WithTrace) with its trace_id. A logger Logger returned already is
// returned as it is.
func Logger(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(*logHandler); ok {
		return l
	}
	return slog.New(NewLogHandler(l.Handler()))
}

// NewLogHandler returns a handler that hands next each record, with the
// request_id and trace_id of the request in the record's context (when
// there is one; only the trace_id of work outside a request, WithTrace)
// before its own attributes. They join the group the handler's logger
// opened, if any (the gateway's loggers open none).
func NewLogHandler(next slog.Handler) slog.Handler {
	if h, ok := next.(*logHandler); ok {
		return h
	}
	return &logHandler{next: next}
}

type logHandler struct {
	next slog.Handler
}

func (h *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	rq := requestFrom(ctx)
	if rq == nil {
		return h.next.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	var buf [8]slog.Attr
	attrs := buf[:0]
	if rq.id != "" {
		attrs = append(attrs, slog.String("request_id", rq.id))
	}
	attrs = append(attrs, slog.String("trace_id", rq.currentTrace()))
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	out.AddAttrs(attrs...)
	return h.next.Handle(ctx, out)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{next: h.next.WithAttrs(attrs)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{next: h.next.WithGroup(name)}
}

// beneath returns the handler under h's log handler, if it has one: the
// handler a Recorder writes its lines to, with the ids written by itself.
func beneath(h slog.Handler) slog.Handler {
	if lh, ok := h.(*logHandler); ok {
		return lh.next
	}
	return h
}
