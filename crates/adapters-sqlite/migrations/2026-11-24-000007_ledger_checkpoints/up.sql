-- Signed checkpoints of the ledgers' chains (recruit_domain::chain::Checkpoint): that the chain
-- of `ledger` of an organization had the entry hashed `head_hash` at `position` when the key
-- `key_id` signed it at `signed_at`. Kept as signed, never changed or removed.
CREATE TABLE ledger_checkpoints (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    ledger TEXT NOT NULL CHECK (ledger IN ('privacy', 'api', 'tool')),
    position INTEGER NOT NULL CHECK (position >= 1),
    head_hash BLOB NOT NULL CHECK (length(head_hash) = 32),
    signed_at INTEGER NOT NULL,
    key_id TEXT NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (organization_id, ledger, position, key_id)
) STRICT;

CREATE TRIGGER ledger_checkpoints_no_update BEFORE UPDATE ON ledger_checkpoints
BEGIN SELECT RAISE(ABORT, 'the ledger_checkpoints ledger is append-only: UPDATE is refused'); END;
CREATE TRIGGER ledger_checkpoints_no_delete BEFORE DELETE ON ledger_checkpoints
BEGIN SELECT RAISE(ABORT, 'the ledger_checkpoints ledger is append-only: DELETE is refused'); END;
