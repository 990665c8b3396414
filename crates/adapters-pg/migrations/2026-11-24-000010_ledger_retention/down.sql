-- Entries retention removed are gone; this only puts the schema back.
DROP TRIGGER privacy_audit_logs_retained ON privacy_audit_logs;
DROP TRIGGER api_audit_log_retained ON api_audit_log;
DROP TRIGGER tool_audit_log_retained ON tool_audit_log;
DROP TRIGGER privacy_audit_logs_append_only ON privacy_audit_logs;
DROP TRIGGER api_audit_log_append_only ON api_audit_log;
DROP TRIGGER tool_audit_log_append_only ON tool_audit_log;
CREATE TRIGGER privacy_audit_logs_append_only BEFORE UPDATE OR DELETE ON privacy_audit_logs
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER api_audit_log_append_only BEFORE UPDATE OR DELETE ON api_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER tool_audit_log_append_only BEFORE UPDATE OR DELETE ON tool_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
DROP FUNCTION recruitd_remove_retained();
DROP TABLE ledger_retention_cuts;
ALTER TABLE privacy_audit_logs DROP COLUMN recorded_at;
ALTER TABLE api_audit_log DROP COLUMN recorded_at;
ALTER TABLE tool_audit_log DROP COLUMN recorded_at;
