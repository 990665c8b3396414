-- Log streams: where an organization's ledger is pushed (its SIEM), with how far delivery has
-- got (see PostgreSQL's migration of the same name). Instants are microseconds since the epoch.
CREATE TABLE log_streams (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL,
    name TEXT NOT NULL,
    ledger TEXT NOT NULL CHECK (ledger IN ('privacy')),
    destination TEXT NOT NULL,
    secrets TEXT NOT NULL,
    paused INTEGER NOT NULL CHECK (paused IN (0, 1)),
    created_by BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    delivered_position INTEGER NOT NULL CHECK (delivered_position >= 0),
    delivered_hash BLOB NOT NULL,
    delivered_at INTEGER,
    health TEXT NOT NULL CHECK (health IN ('OK', 'FAILING', 'SUSPENDED')),
    failing_since INTEGER,
    attempts INTEGER NOT NULL,
    next_attempt_at INTEGER,
    last_error TEXT,
    pending TEXT,
    lease_holder BLOB,
    lease_epoch INTEGER NOT NULL,
    lease_expires_at INTEGER,
    PRIMARY KEY (organization_id, id)
) STRICT;
CREATE INDEX log_streams_lease ON log_streams (lease_expires_at);
