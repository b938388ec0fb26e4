-- The run a start stores with its start lease (issue 27 item 7): the
-- missions row (status 'starting', version 0) written in the lease's own
-- transaction, which the start's transaction replaces, a release deletes
-- and a resolution as outcome-unknown keeps, so that a start whose call may
-- have acted leaves an object to read back. '' for the leases taken
-- before.
ALTER TABLE start_leases ADD COLUMN workflow_id TEXT NOT NULL DEFAULT '';
