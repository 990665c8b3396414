-- Tamper evidence: every entry of each ledger gets a position in its organization's chain, the
-- hash of the entry before it and its own hash (recruit_domain::chain). Writers hold the
-- database's write lock while they extend a chain, so every chain has one order.
CREATE TABLE ledger_heads (
    organization_id BLOB NOT NULL REFERENCES organizations (id) DEFERRABLE INITIALLY DEFERRED,
    ledger TEXT NOT NULL CHECK (ledger IN ('privacy', 'api', 'tool')),
    position INTEGER NOT NULL CHECK (position >= 0),
    hash BLOB NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (organization_id, ledger)
);

ALTER TABLE privacy_audit_logs ADD COLUMN position INTEGER;
ALTER TABLE privacy_audit_logs ADD COLUMN prev_hash BLOB;
ALTER TABLE privacy_audit_logs ADD COLUMN hash BLOB;
CREATE UNIQUE INDEX privacy_audit_logs_chain ON privacy_audit_logs (organization_id, position);

ALTER TABLE api_audit_log ADD COLUMN position INTEGER;
ALTER TABLE api_audit_log ADD COLUMN prev_hash BLOB;
ALTER TABLE api_audit_log ADD COLUMN hash BLOB;
CREATE UNIQUE INDEX api_audit_log_chain ON api_audit_log (organization_id, position);

ALTER TABLE tool_audit_log ADD COLUMN position INTEGER;
ALTER TABLE tool_audit_log ADD COLUMN prev_hash BLOB;
ALTER TABLE tool_audit_log ADD COLUMN hash BLOB;
CREATE UNIQUE INDEX tool_audit_log_chain ON tool_audit_log (organization_id, position);

-- Entries stored before this migration are linked once, by the next migration run, while this
-- row exists; until then, and only for them, the ledgers accept that update.
CREATE TABLE ledger_chain_backfill (pending BOOLEAN PRIMARY KEY);
INSERT INTO ledger_chain_backfill VALUES (1);

DROP TRIGGER privacy_audit_logs_no_update;
CREATE TRIGGER privacy_audit_logs_no_update BEFORE UPDATE ON privacy_audit_logs
WHEN NOT (OLD.position IS NULL AND NEW.position IS NOT NULL
          AND EXISTS (SELECT 1 FROM ledger_chain_backfill))
BEGIN SELECT RAISE(ABORT, 'the privacy_audit_logs ledger is append-only: UPDATE is refused'); END;

DROP TRIGGER api_audit_log_no_update;
CREATE TRIGGER api_audit_log_no_update BEFORE UPDATE ON api_audit_log
WHEN NOT (OLD.position IS NULL AND NEW.position IS NOT NULL
          AND EXISTS (SELECT 1 FROM ledger_chain_backfill))
BEGIN SELECT RAISE(ABORT, 'the api_audit_log ledger is append-only: UPDATE is refused'); END;

DROP TRIGGER tool_audit_log_no_update;
CREATE TRIGGER tool_audit_log_no_update BEFORE UPDATE ON tool_audit_log
WHEN NOT (OLD.position IS NULL AND NEW.position IS NOT NULL
          AND EXISTS (SELECT 1 FROM ledger_chain_backfill))
BEGIN SELECT RAISE(ABORT, 'the tool_audit_log ledger is append-only: UPDATE is refused'); END;
