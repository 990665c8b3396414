-- The purpose an access was stated for (a download's reason, in the words of whoever
-- downloaded), which the monthly review confirms. Covered by the entry's hash when present.
ALTER TABLE privacy_audit_logs ADD COLUMN purpose text;
