-- The records of the monthly access review: a reviewer's decisions on the month's downloads
-- and the month's sign-off. Each request that writes one is recorded in the chained API audit
-- ledger in the same transaction. Kept as written, never changed or removed: a later decision
-- on a download is a new row, and a month is signed off once.
CREATE TABLE privacy_download_decisions (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL,
    month TEXT NOT NULL CHECK (month GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]'),
    entry_id BLOB NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('CONFIRMED', 'EXPLANATION_REQUESTED')),
    reason TEXT NOT NULL,
    user_id BLOB NOT NULL,
    token_id BLOB NOT NULL,
    decided_at INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    PRIMARY KEY (organization_id, id)
) STRICT;
CREATE INDEX privacy_download_decisions_month
    ON privacy_download_decisions (organization_id, month, decided_at, id);
CREATE INDEX privacy_download_decisions_entry
    ON privacy_download_decisions (organization_id, entry_id, decided_at, id);

CREATE TABLE privacy_review_sign_offs (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    month TEXT NOT NULL CHECK (month GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]'),
    user_id BLOB NOT NULL,
    signed_at INTEGER NOT NULL,
    note TEXT,
    body TEXT NOT NULL,
    PRIMARY KEY (organization_id, month)
) STRICT;

CREATE TRIGGER privacy_download_decisions_no_update BEFORE UPDATE ON privacy_download_decisions
BEGIN SELECT RAISE(ABORT, 'the privacy_download_decisions ledger is append-only: UPDATE is refused'); END;
CREATE TRIGGER privacy_download_decisions_no_delete BEFORE DELETE ON privacy_download_decisions
BEGIN SELECT RAISE(ABORT, 'the privacy_download_decisions ledger is append-only: DELETE is refused'); END;
CREATE TRIGGER privacy_review_sign_offs_no_update BEFORE UPDATE ON privacy_review_sign_offs
BEGIN SELECT RAISE(ABORT, 'the privacy_review_sign_offs ledger is append-only: UPDATE is refused'); END;
CREATE TRIGGER privacy_review_sign_offs_no_delete BEFORE DELETE ON privacy_review_sign_offs
BEGIN SELECT RAISE(ABORT, 'the privacy_review_sign_offs ledger is append-only: DELETE is refused'); END;
