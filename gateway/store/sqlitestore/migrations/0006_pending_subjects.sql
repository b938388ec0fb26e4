-- Commands paused on an unknown lexicon subject (SUBJECT_NEEDS_DEFINITION):
-- one row per tenant, unknown subject key and queued command fingerprint,
-- so that every replica and a restart see the pause; cancel_pending_subject
-- drops the rows of a subject, a completed retry the rows of its command.
CREATE TABLE pending_subjects (
    tenant      TEXT    NOT NULL,
    subject_key TEXT    NOT NULL,
    command_key TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    doc         BLOB    NOT NULL,
    created_by  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant, subject_key, command_key)
) STRICT, WITHOUT ROWID;

CREATE INDEX pending_subjects_command ON pending_subjects (tenant, command_key);
