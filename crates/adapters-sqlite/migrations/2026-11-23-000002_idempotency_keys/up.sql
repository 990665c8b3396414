-- Idempotency keys of create operations, per organization: the fingerprint of the request that
-- claimed the key, a lease while it runs, and its response once it completed; kept until
-- expires_at (24 hours after the claim), then purged. Times are microseconds since the epoch.
CREATE TABLE idempotency_keys (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    fingerprint BLOB NOT NULL CHECK (length(fingerprint) = 32),
    locked_until INTEGER,
    expires_at INTEGER NOT NULL,
    status INTEGER CHECK (status BETWEEN 100 AND 599),
    response BLOB,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (organization_id, key),
    CHECK ((status IS NULL) = (response IS NULL))
) STRICT;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
