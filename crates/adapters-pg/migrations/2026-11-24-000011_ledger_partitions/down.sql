DO $$ BEGIN RAISE EXCEPTION 'the ledgers stay partitioned: restore a backup taken before this migration to go back'; END $$;
