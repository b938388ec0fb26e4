-- The lexicon overlay: terms defined at run time on top of the
-- configuration's lexicon. Gateway-wide, not per tenant.
CREATE TABLE lexicon_terms (
    key        TEXT   NOT NULL,
    term       TEXT   NOT NULL,
    entry      BYTEA  NOT NULL,
    version    BIGINT NOT NULL,
    tenant     TEXT   NOT NULL,
    subject    TEXT   NOT NULL,
    client_id  TEXT   NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (key)
);
