-- The lexicon overlay: terms defined at run time on top of the
-- configuration's lexicon. Gateway-wide, not per tenant; the writer of a
-- term is recorded beside it.
CREATE TABLE lexicon_terms (
    key        TEXT    NOT NULL,
    term       TEXT    NOT NULL,
    entry      BLOB    NOT NULL,
    version    INTEGER NOT NULL,
    tenant     TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    client_id  TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (key)
) STRICT, WITHOUT ROWID;
