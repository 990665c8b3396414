ALTER TABLE privacy_download_decisions DROP CONSTRAINT privacy_download_decisions_status_check;
ALTER TABLE privacy_download_decisions ADD CONSTRAINT privacy_download_decisions_status_check
    CHECK (status IN ('CONFIRMED', 'EXPLANATION_REQUESTED'));
