-- Commands paused on an unknown lexicon subject (SUBJECT_NEEDS_DEFINITION).
CREATE TABLE pending_subjects (
    tenant      TEXT   NOT NULL,
    subject_key TEXT   NOT NULL,
    command_key TEXT   NOT NULL,
    subject     TEXT   NOT NULL,
    doc         BYTEA  NOT NULL,
    created_by  TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (tenant, subject_key, command_key)
);
CREATE INDEX pending_subjects_command ON pending_subjects (tenant, command_key);
