-- Signed checkpoints of the ledgers' chains (recruit_domain::chain::Checkpoint): that the chain
-- of `ledger` of an organization had the entry hashed `head_hash` at `position` when the key
-- `key_id` signed it at `signed_at`. Kept as signed, never changed or removed.
CREATE TABLE ledger_checkpoints (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    ledger text NOT NULL CHECK (ledger IN ('privacy', 'api', 'tool')),
    position bigint NOT NULL CHECK (position >= 1),
    head_hash bytea NOT NULL CHECK (length(head_hash) = 32),
    signed_at timestamptz NOT NULL,
    key_id text NOT NULL,
    signature text NOT NULL,
    PRIMARY KEY (organization_id, ledger, position, key_id)
);

CREATE TRIGGER ledger_checkpoints_append_only BEFORE UPDATE OR DELETE ON ledger_checkpoints
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER ledger_checkpoints_no_truncate BEFORE TRUNCATE ON ledger_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_refuse_ledger_change();
