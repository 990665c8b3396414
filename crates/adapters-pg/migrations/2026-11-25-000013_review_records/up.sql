-- The records of the monthly access review: a reviewer's decisions on the month's downloads
-- and the month's sign-off. Each request that writes one is recorded in the chained API audit
-- ledger in the same transaction. Kept as written, never changed or removed: a later decision
-- on a download is a new row, and a month is signed off once.
CREATE TABLE privacy_download_decisions (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    id uuid NOT NULL,
    month text NOT NULL CHECK (month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    entry_id uuid NOT NULL,
    status text NOT NULL CHECK (status IN ('CONFIRMED', 'EXPLANATION_REQUESTED')),
    reason text NOT NULL,
    user_id uuid NOT NULL,
    token_id uuid NOT NULL,
    decided_at timestamptz NOT NULL,
    request_id text NOT NULL,
    PRIMARY KEY (organization_id, id)
);
CREATE INDEX privacy_download_decisions_month
    ON privacy_download_decisions (organization_id, month, decided_at, id);
CREATE INDEX privacy_download_decisions_entry
    ON privacy_download_decisions (organization_id, entry_id, decided_at, id);

CREATE TABLE privacy_review_sign_offs (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    month text NOT NULL CHECK (month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    user_id uuid NOT NULL,
    signed_at timestamptz NOT NULL,
    note text,
    body jsonb NOT NULL,
    PRIMARY KEY (organization_id, month)
);

CREATE TRIGGER privacy_download_decisions_append_only
    BEFORE UPDATE OR DELETE ON privacy_download_decisions
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER privacy_download_decisions_no_truncate BEFORE TRUNCATE ON privacy_download_decisions
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER privacy_review_sign_offs_append_only
    BEFORE UPDATE OR DELETE ON privacy_review_sign_offs
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER privacy_review_sign_offs_no_truncate BEFORE TRUNCATE ON privacy_review_sign_offs
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_refuse_ledger_change();
