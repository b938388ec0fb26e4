-- A mission whose move parks on a sub-workflow (a workflow executor whose
-- child waits for a move) records when that wait times out: the
-- executor's timeoutMs after the park, in unix nanoseconds; 0 when the
-- mission is not parked or waits without a timeout. The wait sweeper
-- (gateway/waits.go) lists the parked missions past it (ExpiredWaits): a
-- range of this partial index, which holds only the parked ones.
ALTER TABLE missions ADD COLUMN wait_deadline BIGINT NOT NULL DEFAULT 0;
CREATE INDEX missions_wait_deadline ON missions (wait_deadline, id) WHERE wait_deadline > 0;
