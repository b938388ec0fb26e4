-- The operator console shows a mission's history: the events that name
-- its workflow (MissionEvents). Events outside a mission name none, so
-- the index is partial.
CREATE INDEX events_workflow ON events (tenant, workflow_id, at, seq) WHERE workflow_id <> '';
