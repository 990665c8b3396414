DROP INDEX privacy_audit_logs_subject;
DROP INDEX privacy_audit_logs_account;
