-- The ledger's two questions that must not scan it: whose data an account accessed, and who
-- accessed a person's data (see the PostgreSQL migration of the same name).
CREATE INDEX privacy_audit_logs_account
    ON privacy_audit_logs (organization_id, account_id, access_time DESC, id DESC);
CREATE INDEX privacy_audit_logs_subject
    ON privacy_audit_logs (organization_id, coalesce(subject_user_id, subject_candidate_id),
                           access_time DESC, id DESC);
