ALTER TABLE idempotency_keys ALTER COLUMN response SET COMPRESSION default;
