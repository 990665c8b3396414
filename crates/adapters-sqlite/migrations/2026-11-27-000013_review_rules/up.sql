-- The rules an organization's monthly access review flags accounts by (holidays and
-- thresholds), as JSON; '{}' reads as the defaults.
ALTER TABLE organizations ADD COLUMN review_rules TEXT NOT NULL DEFAULT '{}';
