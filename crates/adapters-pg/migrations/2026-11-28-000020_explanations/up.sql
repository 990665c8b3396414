-- The explanation of a download: besides a reviewer's CONFIRMED and EXPLANATION_REQUESTED, the
-- person who downloaded records EXPLAINED and a reviewer REJECTED.
ALTER TABLE privacy_download_decisions DROP CONSTRAINT privacy_download_decisions_status_check;
ALTER TABLE privacy_download_decisions ADD CONSTRAINT privacy_download_decisions_status_check
    CHECK (status IN ('CONFIRMED', 'EXPLANATION_REQUESTED', 'EXPLAINED', 'REJECTED'));
