-- Retention. Every ledger entry records when it was written (`recorded_at`): the database's
-- clock when the row is inserted, which is after the writer locked its chain's head, so that
-- within a chain it never decreases as positions grow. Retention removes what was recorded
-- before a boundary, which is thereby a prefix of each chain, and records a signed cut
-- (recruit_domain::chain::RetentionCut) at the last position removed, so that the chain that
-- remains is proven whole from there.
--
-- Entries already stored get the latest time of their chain up to them (running maximum of
-- their `access_time` or `at` in the order of positions, those not linked yet last, as the
-- chain's backfill links them), capped at now: never decreasing, never after this
-- migration, and never before the entry's own time unless that time is in the future.
ALTER TABLE privacy_audit_logs DISABLE TRIGGER privacy_audit_logs_append_only;
ALTER TABLE api_audit_log DISABLE TRIGGER api_audit_log_append_only;
ALTER TABLE tool_audit_log DISABLE TRIGGER tool_audit_log_append_only;

ALTER TABLE privacy_audit_logs ADD COLUMN recorded_at timestamptz;
UPDATE privacy_audit_logs l SET recorded_at = b.recorded_at
FROM (SELECT organization_id, id, least(now(), max(access_time) OVER (
          PARTITION BY organization_id ORDER BY position NULLS LAST, access_time, id
          ROWS UNBOUNDED PRECEDING)) AS recorded_at
      FROM privacy_audit_logs) b
WHERE l.organization_id = b.organization_id AND l.id = b.id;
ALTER TABLE privacy_audit_logs
    ALTER COLUMN recorded_at SET DEFAULT clock_timestamp(),
    ALTER COLUMN recorded_at SET NOT NULL;

ALTER TABLE api_audit_log ADD COLUMN recorded_at timestamptz;
UPDATE api_audit_log l SET recorded_at = b.recorded_at
FROM (SELECT organization_id, id, least(now(), max(at) OVER (
          PARTITION BY organization_id ORDER BY position NULLS LAST, at, id
          ROWS UNBOUNDED PRECEDING)) AS recorded_at
      FROM api_audit_log) b
WHERE l.organization_id = b.organization_id AND l.id = b.id;
ALTER TABLE api_audit_log
    ALTER COLUMN recorded_at SET DEFAULT clock_timestamp(),
    ALTER COLUMN recorded_at SET NOT NULL;

ALTER TABLE tool_audit_log ADD COLUMN recorded_at timestamptz;
UPDATE tool_audit_log l SET recorded_at = b.recorded_at
FROM (SELECT organization_id, id, least(now(), max(at) OVER (
          PARTITION BY organization_id ORDER BY position NULLS LAST, at, id
          ROWS UNBOUNDED PRECEDING)) AS recorded_at
      FROM tool_audit_log) b
WHERE l.organization_id = b.organization_id AND l.id = b.id;
ALTER TABLE tool_audit_log
    ALTER COLUMN recorded_at SET DEFAULT clock_timestamp(),
    ALTER COLUMN recorded_at SET NOT NULL;

ALTER TABLE privacy_audit_logs ENABLE TRIGGER privacy_audit_logs_append_only;
ALTER TABLE api_audit_log ENABLE TRIGGER api_audit_log_append_only;
ALTER TABLE tool_audit_log ENABLE TRIGGER tool_audit_log_append_only;

-- The signed cuts, kept as signed, never changed or removed.
CREATE TABLE ledger_retention_cuts (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    ledger text NOT NULL CHECK (ledger IN ('privacy', 'api', 'tool')),
    position bigint NOT NULL CHECK (position >= 1),
    hash bytea NOT NULL CHECK (length(hash) = 32),
    recorded_before timestamptz NOT NULL,
    signed_at timestamptz NOT NULL,
    key_id text NOT NULL,
    signature text NOT NULL,
    PRIMARY KEY (organization_id, ledger, position)
);
CREATE TRIGGER ledger_retention_cuts_append_only BEFORE UPDATE OR DELETE ON ledger_retention_cuts
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER ledger_retention_cuts_no_truncate BEFORE TRUNCATE ON ledger_retention_cuts
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_refuse_ledger_change();

-- A ledger entry may be removed only once a cut covers it: recorded for its chain at its
-- position or after, with a boundary after the entry was recorded.
CREATE FUNCTION recruitd_remove_retained() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM ledger_retention_cuts c
               WHERE c.organization_id = OLD.organization_id AND c.ledger = TG_ARGV[0]
                 AND c.position >= OLD.position AND c.recorded_before > OLD.recorded_at) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the % ledger is append-only: DELETE is refused below no retention cut',
        TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END;
$$;

DROP TRIGGER privacy_audit_logs_append_only ON privacy_audit_logs;
CREATE TRIGGER privacy_audit_logs_append_only BEFORE UPDATE ON privacy_audit_logs
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER privacy_audit_logs_retained BEFORE DELETE ON privacy_audit_logs
    FOR EACH ROW EXECUTE FUNCTION recruitd_remove_retained('privacy');
DROP TRIGGER api_audit_log_append_only ON api_audit_log;
CREATE TRIGGER api_audit_log_append_only BEFORE UPDATE ON api_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER api_audit_log_retained BEFORE DELETE ON api_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_remove_retained('api');
DROP TRIGGER tool_audit_log_append_only ON tool_audit_log;
CREATE TRIGGER tool_audit_log_append_only BEFORE UPDATE ON tool_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER tool_audit_log_retained BEFORE DELETE ON tool_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_remove_retained('tool');
