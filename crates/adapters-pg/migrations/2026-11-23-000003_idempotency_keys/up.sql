-- Idempotency keys of create operations, per organization: the fingerprint of the request that
-- claimed the key, a lease while it runs, and its response once it completed; kept until
-- expires_at (24 hours after the claim), then purged.
CREATE TABLE idempotency_keys (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    fingerprint bytea NOT NULL CHECK (length(fingerprint) = 32),
    locked_until timestamptz,
    expires_at timestamptz NOT NULL,
    status integer CHECK (status BETWEEN 100 AND 599),
    response bytea,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, key),
    CHECK ((status IS NULL) = (response IS NULL))
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
