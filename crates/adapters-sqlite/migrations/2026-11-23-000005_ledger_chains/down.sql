DROP TRIGGER privacy_audit_logs_no_update;
CREATE TRIGGER privacy_audit_logs_no_update BEFORE UPDATE ON privacy_audit_logs
BEGIN SELECT RAISE(ABORT, 'the privacy_audit_logs ledger is append-only: UPDATE is refused'); END;
DROP INDEX privacy_audit_logs_chain;
ALTER TABLE privacy_audit_logs DROP COLUMN hash;
ALTER TABLE privacy_audit_logs DROP COLUMN prev_hash;
ALTER TABLE privacy_audit_logs DROP COLUMN position;
DROP TRIGGER api_audit_log_no_update;
CREATE TRIGGER api_audit_log_no_update BEFORE UPDATE ON api_audit_log
BEGIN SELECT RAISE(ABORT, 'the api_audit_log ledger is append-only: UPDATE is refused'); END;
DROP INDEX api_audit_log_chain;
ALTER TABLE api_audit_log DROP COLUMN hash;
ALTER TABLE api_audit_log DROP COLUMN prev_hash;
ALTER TABLE api_audit_log DROP COLUMN position;
DROP TRIGGER tool_audit_log_no_update;
CREATE TRIGGER tool_audit_log_no_update BEFORE UPDATE ON tool_audit_log
BEGIN SELECT RAISE(ABORT, 'the tool_audit_log ledger is append-only: UPDATE is refused'); END;
DROP INDEX tool_audit_log_chain;
ALTER TABLE tool_audit_log DROP COLUMN hash;
ALTER TABLE tool_audit_log DROP COLUMN prev_hash;
ALTER TABLE tool_audit_log DROP COLUMN position;
DROP TABLE ledger_chain_backfill;
DROP TABLE ledger_heads;
