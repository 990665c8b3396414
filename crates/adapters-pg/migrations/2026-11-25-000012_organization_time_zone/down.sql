ALTER TABLE organizations DROP COLUMN time_zone;
