CREATE OR REPLACE FUNCTION recruitd_refuse_ledger_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the % ledger is append-only: % is refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
DROP TABLE ledger_chain_backfill;
DROP INDEX privacy_audit_logs_chain, api_audit_log_chain, tool_audit_log_chain;
ALTER TABLE privacy_audit_logs DROP COLUMN position, DROP COLUMN prev_hash, DROP COLUMN hash;
ALTER TABLE api_audit_log DROP COLUMN position, DROP COLUMN prev_hash, DROP COLUMN hash;
ALTER TABLE tool_audit_log DROP COLUMN position, DROP COLUMN prev_hash, DROP COLUMN hash;
DROP TABLE ledger_heads;
