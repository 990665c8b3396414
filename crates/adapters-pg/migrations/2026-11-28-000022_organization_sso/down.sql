ALTER TABLE organizations DROP COLUMN sso;
