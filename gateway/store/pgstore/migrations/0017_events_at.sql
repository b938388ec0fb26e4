-- The audit retention (audit.retention) deletes the events recorded before
-- a time, oldest first (DeleteEventsBefore).
CREATE INDEX events_at ON events (at, seq);
