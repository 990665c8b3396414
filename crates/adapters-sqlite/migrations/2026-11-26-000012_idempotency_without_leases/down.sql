ALTER TABLE idempotency_keys ADD COLUMN locked_until INTEGER;
