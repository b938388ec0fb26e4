-- Purpose-filtered context (memory records and goals) and model capability
-- certificates. A record's purposes are a JSON array of strings that reads
-- filter with jsonb containment.
CREATE TABLE context_records (
    kind        TEXT   NOT NULL,
    tenant      TEXT   NOT NULL,
    id          TEXT   NOT NULL,
    compartment TEXT   NOT NULL,
    purposes    TEXT   NOT NULL,
    tags        TEXT   NOT NULL,
    doc         BYTEA  NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (kind, tenant, id)
);
CREATE INDEX context_records_compartment ON context_records (kind, tenant, compartment, id);

-- Certificates are gateway-wide, not per tenant: they describe models.
CREATE TABLE world_certificates (
    id         TEXT   NOT NULL,
    issuer     TEXT   NOT NULL,
    subject    TEXT   NOT NULL,
    doc        BYTEA  NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (id)
);
