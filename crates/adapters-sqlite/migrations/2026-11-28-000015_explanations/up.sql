-- The explanation of a download: besides a reviewer's CONFIRMED and EXPLANATION_REQUESTED, the
-- person who downloaded records EXPLAINED and a reviewer REJECTED. SQLite changes a CHECK by
-- rebuilding the table; its rows are copied as they are.
CREATE TABLE privacy_download_decisions_next (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL,
    month TEXT NOT NULL CHECK (month GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]'),
    entry_id BLOB NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('CONFIRMED', 'EXPLANATION_REQUESTED', 'EXPLAINED', 'REJECTED')),
    reason TEXT NOT NULL,
    user_id BLOB NOT NULL,
    token_id BLOB NOT NULL,
    decided_at INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    PRIMARY KEY (organization_id, id)
) STRICT;
INSERT INTO privacy_download_decisions_next SELECT * FROM privacy_download_decisions;
DROP TABLE privacy_download_decisions;
ALTER TABLE privacy_download_decisions_next RENAME TO privacy_download_decisions;
CREATE INDEX privacy_download_decisions_month
    ON privacy_download_decisions (organization_id, month, decided_at, id);
CREATE INDEX privacy_download_decisions_entry
    ON privacy_download_decisions (organization_id, entry_id, decided_at, id);
CREATE TRIGGER privacy_download_decisions_no_update BEFORE UPDATE ON privacy_download_decisions
BEGIN SELECT RAISE(ABORT, 'the privacy_download_decisions ledger is append-only: UPDATE is refused'); END;
CREATE TRIGGER privacy_download_decisions_no_delete BEFORE DELETE ON privacy_download_decisions
BEGIN SELECT RAISE(ABORT, 'the privacy_download_decisions ledger is append-only: DELETE is refused'); END;
