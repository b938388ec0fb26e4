-- A praxec.command may name a trace of its own (its traceId argument);
-- aura_get_trace finds the call's events by it as well as by the request's
-- trace (TraceEvents). Most events name none, so the index is partial: an
-- event without one costs no index write. Events recorded before this
-- migration kept the caller's trace only as the callTraceId attribute of
-- the workflow engine's events: it is copied into the column.
ALTER TABLE events ADD COLUMN call_trace_id TEXT NOT NULL DEFAULT '';
UPDATE events SET call_trace_id = json_extract(attributes, '$.callTraceId')
    WHERE attributes LIKE '%"callTraceId"%' AND json_type(attributes, '$.callTraceId') = 'text';
CREATE INDEX events_call_trace ON events (tenant, call_trace_id, at, seq) WHERE call_trace_id <> '';
