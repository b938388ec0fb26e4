-- Idempotency records written by a binary from before 0018 (a replica not
-- yet upgraded during a rolling upgrade, or the previous version again
-- after a rollback) leave object, forget_at and sweep_at at their
-- defaults. forget_at 0 hides such a record from this version's reads
-- (forget_at >= now), so a retry of its key on an upgraded replica would
-- act a second time, and sweep_at 0 lets the next sweep delete it at once.
-- This trigger completes such a row as 0018 completed the rows before it:
-- a tombstone for the default window (30 days from its creation), its
-- answer dropped at its expiry. A row this version writes has forget_at >=
-- expires_at (sqlrow.ForgetAt), the sweep keeps that so, and the trigger
-- leaves it alone: it costs this version's writes the WHEN test only.
-- It may go once no binary from before 0018 writes to the database (issue
-- 30 part 2; docs/decisions.md, Rolling upgrades).
CREATE FUNCTION idempotency_complete_previous() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.forget_at := GREATEST(NEW.expires_at, NEW.created_at + 2592000000000000);
    NEW.sweep_at := NEW.expires_at;
    RETURN NEW;
END
$$;

CREATE TRIGGER idempotency_previous_writers BEFORE INSERT OR UPDATE ON idempotency
    FOR EACH ROW WHEN (NEW.forget_at < NEW.expires_at)
    EXECUTE FUNCTION idempotency_complete_previous();

-- The rows such a binary wrote between 0018 and this migration, as the
-- trigger completes them from now on.
UPDATE idempotency SET forget_at = GREATEST(expires_at, created_at + 2592000000000000), sweep_at = expires_at
    WHERE forget_at < expires_at;
