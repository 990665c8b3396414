-- Log streams: where an organization's ledger is pushed (its SIEM), with how far delivery has
-- got. The settings are the API's (destination, write-only secrets, paused); the rest is the
-- delivering replica's: the last position and hash delivered, the stream's health, its last
-- error, an acknowledgement awaited, and the lease that lets one replica at a time deliver it
-- (its epoch fences every advance, so a replica that lost the lease never moves the cursor).
CREATE TABLE log_streams (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    id uuid NOT NULL,
    name text NOT NULL,
    ledger text NOT NULL CHECK (ledger IN ('privacy')),
    destination jsonb NOT NULL,
    secrets jsonb NOT NULL,
    paused boolean NOT NULL,
    created_by uuid NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    delivered_position bigint NOT NULL CHECK (delivered_position >= 0),
    delivered_hash bytea NOT NULL,
    delivered_at timestamptz,
    health text NOT NULL CHECK (health IN ('OK', 'FAILING', 'SUSPENDED')),
    failing_since timestamptz,
    attempts integer NOT NULL,
    next_attempt_at timestamptz,
    last_error jsonb,
    pending jsonb,
    lease_holder uuid,
    lease_epoch bigint NOT NULL,
    lease_expires_at timestamptz,
    PRIMARY KEY (organization_id, id)
);
-- The claim's scan: streams whose lease is free or run out.
CREATE INDEX log_streams_lease ON log_streams (lease_expires_at NULLS FIRST);
