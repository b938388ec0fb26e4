-- The run sweeper (gateway/runs_expire.go) lists the proxy_default runs
-- idle longer than the retention, oldest first, a page at a time
-- (IdleMissions): a range of this index, however many missions the store
-- holds. It also serves any later query of one definition's missions by
-- status and age (the expired runs, say).
CREATE INDEX missions_idle ON missions (definition_id, status, updated_at, id);
