-- The pins of capabilities imported from upstream MCP servers
-- (proxy.import): the SHA-256 and canonical JSON of the tool definition
-- accepted, and the different one the upstream offers since, if any
-- (empty offered_sha256: none). Gateway-wide, not per tenant, as
-- capabilities are.
CREATE TABLE capability_pins (
    capability         TEXT   NOT NULL,
    connection         TEXT   NOT NULL,
    tool               TEXT   NOT NULL,
    sha256             TEXT   NOT NULL,
    definition         BYTEA  NOT NULL,
    offered_sha256     TEXT   NOT NULL,
    offered_definition BYTEA  NOT NULL,
    offered_at         BIGINT NOT NULL,
    version            BIGINT NOT NULL,
    accepted_by        TEXT   NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    PRIMARY KEY (capability)
);
