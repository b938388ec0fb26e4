CREATE TABLE coverage_runs (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT   NOT NULL UNIQUE,
    tenant      TEXT   NOT NULL,
    subject     TEXT   NOT NULL,
    recorded_at BIGINT NOT NULL,
    doc         BYTEA  NOT NULL
);
CREATE INDEX coverage_runs_recorded ON coverage_runs (recorded_at, seq);
