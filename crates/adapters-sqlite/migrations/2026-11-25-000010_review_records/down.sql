DROP TABLE privacy_review_sign_offs;
DROP TABLE privacy_download_decisions;
