DROP FUNCTION advance_ledger_heads(uuid[], text[], bigint[], bytea[], bigint[], bytea[]);
