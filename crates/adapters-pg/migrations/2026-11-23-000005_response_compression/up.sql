-- A stored response of a write (up to 1 000 entries as JSON) is compressed with LZ4 where the
-- server has it, many times faster to compress than the default pglz; elsewhere it stays pglz.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings
               WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE idempotency_keys ALTER COLUMN response SET COMPRESSION lz4;
    END IF;
END
$$;
