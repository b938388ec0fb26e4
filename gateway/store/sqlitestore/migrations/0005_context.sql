-- Purpose-filtered context (memory records and goals) and model capability
-- certificates.
--
-- A context record belongs to one tenant; its purposes are a JSON array of
-- strings that reads filter with json_each. Records are replaced whole on
-- re-import (kind, tenant, id is the key).
CREATE TABLE context_records (
    kind        TEXT    NOT NULL,
    tenant      TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    compartment TEXT    NOT NULL,
    purposes    TEXT    NOT NULL,
    tags        TEXT    NOT NULL,
    doc         BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (kind, tenant, id)
) STRICT, WITHOUT ROWID;

CREATE INDEX context_records_compartment ON context_records (kind, tenant, compartment, id);

-- Certificates are gateway-wide, not per tenant: they describe models.
CREATE TABLE world_certificates (
    id         TEXT    NOT NULL,
    issuer     TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    doc        BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (id)
) STRICT, WITHOUT ROWID;
