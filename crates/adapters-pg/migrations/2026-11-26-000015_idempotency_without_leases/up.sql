-- A key is stored only with its response, in the transaction of its request's writes: no
-- lease, so a request that fails leaves nothing to wait out. Claims held by an earlier version
-- are dropped: their requests either committed (and completed them) or never will.
DELETE FROM idempotency_keys WHERE response IS NULL;
ALTER TABLE idempotency_keys DROP COLUMN locked_until;
