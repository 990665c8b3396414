-- Moves the heads of chains from where a writer last saw them, in the order given (the
-- locking order: organization, then ledger): each only if it is still there. Otherwise it
-- raises SQLSTATE RH001 and the writer's transaction aborts: another writer moved the chain,
-- and the rows must be linked again from the heads locked. This lets the group commit write a
-- group in one round trip, without reading the heads first.
CREATE FUNCTION advance_ledger_heads(
    orgs uuid[], ledgers text[], seen_positions bigint[], seen_hashes bytea[],
    positions bigint[], hashes bytea[]
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. coalesce(cardinality(orgs), 0) LOOP
        UPDATE ledger_heads SET position = positions[i], hash = hashes[i]
        WHERE organization_id = orgs[i] AND ledger = ledgers[i]
            AND position = seen_positions[i] AND hash = seen_hashes[i];
        IF NOT FOUND THEN
            RAISE EXCEPTION 'the head of the % chain of % moved since it was read',
                ledgers[i], orgs[i] USING ERRCODE = 'RH001';
        END IF;
    END LOOP;
END $$;
