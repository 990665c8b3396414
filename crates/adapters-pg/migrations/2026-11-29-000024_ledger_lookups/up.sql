-- The ledger's two questions that must not scan it: whose data an account accessed, and who
-- accessed a person's data. Each is a page of one organization's ledger, newest first, under
-- a filter that may match a handful of entries among millions; without these the page query
-- reads the whole window to find them. A data subject is one column or the other by its type
-- (EMPLOYEE: subject_user_id, CANDIDATE: subject_candidate_id, BULK: neither).
CREATE INDEX privacy_audit_logs_account
    ON privacy_audit_logs (organization_id, account_id, access_time DESC, id DESC);
CREATE INDEX privacy_audit_logs_subject
    ON privacy_audit_logs (organization_id, (coalesce(subject_user_id, subject_candidate_id)),
                           access_time DESC, id DESC);
