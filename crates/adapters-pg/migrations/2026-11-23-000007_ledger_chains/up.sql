-- Tamper evidence: every entry of each ledger gets a position in its organization's chain, the
-- hash of the entry before it and its own hash (recruit_domain::chain). Writers lock a chain's
-- head, the row below, until they commit, so every chain has one order.
CREATE TABLE ledger_heads (
    -- Checked at commit: an import locks the heads of organizations it creates before their
    -- rows are written.
    organization_id uuid NOT NULL REFERENCES organizations (id) DEFERRABLE INITIALLY DEFERRED,
    ledger text NOT NULL CHECK (ledger IN ('privacy', 'api', 'tool')),
    position bigint NOT NULL CHECK (position >= 0),
    hash bytea NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (organization_id, ledger)
);

ALTER TABLE privacy_audit_logs
    ADD COLUMN position bigint, ADD COLUMN prev_hash bytea, ADD COLUMN hash bytea;
ALTER TABLE api_audit_log
    ADD COLUMN position bigint, ADD COLUMN prev_hash bytea, ADD COLUMN hash bytea;
ALTER TABLE tool_audit_log
    ADD COLUMN position bigint, ADD COLUMN prev_hash bytea, ADD COLUMN hash bytea;

CREATE UNIQUE INDEX privacy_audit_logs_chain ON privacy_audit_logs (organization_id, position);
CREATE UNIQUE INDEX api_audit_log_chain ON api_audit_log (organization_id, position);
CREATE UNIQUE INDEX tool_audit_log_chain ON tool_audit_log (organization_id, position);

-- Entries stored before this migration are linked once, by the server's next migration run,
-- while this row exists; until then, and only for them, the ledgers accept that update.
CREATE TABLE ledger_chain_backfill (pending boolean PRIMARY KEY);
INSERT INTO ledger_chain_backfill VALUES (true);

CREATE OR REPLACE FUNCTION recruitd_refuse_ledger_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.position IS NULL AND NEW.position IS NOT NULL
            AND EXISTS (SELECT 1 FROM ledger_chain_backfill) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'the % ledger is append-only: % is refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
