DROP TRIGGER privacy_audit_logs_review_counts ON privacy_audit_logs;
DROP FUNCTION recruitd_recount_review(timestamptz);
DROP FUNCTION recruitd_count_for_review();
DROP FUNCTION recruitd_review_counts_sql(text);
DROP INDEX privacy_audit_logs_downloads;
DROP TABLE privacy_review_addresses;
DROP TABLE privacy_review_subjects;
DROP TABLE privacy_review_slots;
