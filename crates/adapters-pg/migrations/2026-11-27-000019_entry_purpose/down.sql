ALTER TABLE privacy_audit_logs DROP COLUMN purpose;
