ALTER TABLE organizations DROP COLUMN review_rules;
