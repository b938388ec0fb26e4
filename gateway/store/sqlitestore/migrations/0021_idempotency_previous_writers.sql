-- Idempotency records written by a binary from before 0019 (the previous
-- version run again on this file after a rollback) leave object, forget_at
-- and sweep_at at their defaults: forget_at 0 hides such a record from this
-- version's reads, so once upgraded again a retry of its key would act a
-- second time, and sweep_at 0 lets the next sweep delete it at once. These
-- triggers complete such a row as 0019 completed the rows before it: a
-- tombstone for the default window (30 days from its creation), its answer
-- dropped at its expiry. A row this version writes has forget_at >=
-- expires_at (sqlrow.ForgetAt), the sweep keeps that so, and the triggers
-- leave it alone: they cost this version's writes the WHEN test only. They
-- may go once no binary from before 0019 opens the file (issue 30 part 2;
-- docs/decisions.md, Rolling upgrades; pgstore 0020 is the same).
CREATE TRIGGER idempotency_previous_inserts AFTER INSERT ON idempotency
    WHEN NEW.forget_at < NEW.expires_at
BEGIN
    UPDATE idempotency SET forget_at = max(NEW.expires_at, NEW.created_at + 2592000000000000), sweep_at = NEW.expires_at
        WHERE namespace = NEW.namespace AND key = NEW.key;
END;

CREATE TRIGGER idempotency_previous_updates AFTER UPDATE ON idempotency
    WHEN NEW.forget_at < NEW.expires_at
BEGIN
    UPDATE idempotency SET forget_at = max(NEW.expires_at, NEW.created_at + 2592000000000000), sweep_at = NEW.expires_at
        WHERE namespace = NEW.namespace AND key = NEW.key;
END;

-- The rows such a binary wrote since 0019, as the triggers complete them
-- from now on.
UPDATE idempotency SET forget_at = max(expires_at, created_at + 2592000000000000), sweep_at = expires_at
    WHERE forget_at < expires_at;
