-- The ledgers become range partitions by month of `recorded_at` (UTC), so that retention
-- drops whole months instead of deleting row by row. A default partition catches what no
-- monthly partition holds, so that no write ever fails for a missing month; monthly
-- partitions are created ahead (recruitd_ledger_partitions, at every start and daily).
--
-- A partitioned table's unique constraints must include its partition key. An entry's id is
-- therefore kept unique within its organization by a table of its own
-- (privacy_audit_log_ids), filled by a statement trigger from what each statement inserted:
-- a duplicate id is the same unique violation as before. The audit ledgers' ids are made by
-- the server (UUID v7) and are not checked again; their chain positions, like the privacy
-- ledger's, are unique by construction (given under the chain head's lock).

-- Creates the monthly partitions of the ledger table `ledger` from the month of `first`
-- through the month of `last` (UTC) that do not exist yet; returns how many. A month that
-- has entries in the default partition already is left to it (they are read like any
-- other), and so is a month another session is creating at the same time.
CREATE FUNCTION recruitd_ledger_partitions(ledger text, first timestamptz, last timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    month timestamptz := date_trunc('month', first AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    next timestamptz;
    name text;
    busy boolean;
    created integer := 0;
BEGIN
    WHILE month <= last LOOP
        next := ((month AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
        name := format('%s_%s', ledger, to_char(month AT TIME ZONE 'UTC', 'YYYY_MM'));
        IF to_regclass(name) IS NULL THEN
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE recorded_at >= $1 '
                           'AND recorded_at < $2)', ledger || '_default')
                INTO busy USING month, next;
            IF NOT busy THEN
                BEGIN
                    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                                   name, ledger, month, next);
                    created := created + 1;
                EXCEPTION WHEN duplicate_table OR check_violation THEN
                    -- Created by another session meanwhile, or entries of the month reached
                    -- the default partition meanwhile: left as it is.
                    NULL;
                END;
            END IF;
        END IF;
        month := next;
    END LOOP;
    RETURN created;
END;
$$;

CREATE TABLE privacy_audit_logs_partitioned (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    id uuid NOT NULL,
    access_time timestamptz NOT NULL,
    account_id uuid NOT NULL,
    ip_addresses text[] NOT NULL,
    subject_type text NOT NULL CHECK (subject_type IN ('EMPLOYEE', 'CANDIDATE', 'BULK')),
    subject_user_id uuid,
    subject_candidate_id uuid,
    bulk_count bigint,
    query_type text,
    query_ids uuid[],
    query_values text[],
    query_scope text,
    access_data text[] NOT NULL,
    access_menu text NOT NULL,
    access_menu_path text NOT NULL,
    activity_category text NOT NULL,
    position bigint,
    prev_hash bytea,
    hash bytea,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (organization_id, id, recorded_at)
) PARTITION BY RANGE (recorded_at);

CREATE TABLE api_audit_log_partitioned (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    id uuid NOT NULL,
    at timestamptz NOT NULL,
    token_id uuid NOT NULL,
    user_id uuid NOT NULL,
    operation text NOT NULL,
    request_id text NOT NULL,
    client_ip text,
    filters jsonb NOT NULL,
    entries_returned integer NOT NULL,
    interface text NOT NULL CHECK (interface IN ('REST', 'TOOL')),
    tool_name text,
    position bigint,
    prev_hash bytea,
    hash bytea,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (organization_id, id, recorded_at)
) PARTITION BY RANGE (recorded_at);

CREATE TABLE tool_audit_log_partitioned (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    id uuid NOT NULL,
    at timestamptz NOT NULL,
    token_id uuid NOT NULL,
    user_id uuid NOT NULL,
    tool_name text NOT NULL,
    arguments jsonb NOT NULL,
    entries_returned integer NOT NULL,
    request_id text NOT NULL,
    position bigint,
    prev_hash bytea,
    hash bytea,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (organization_id, id, recorded_at)
) PARTITION BY RANGE (recorded_at);

CREATE TABLE privacy_audit_logs_partitioned_default
    PARTITION OF privacy_audit_logs_partitioned DEFAULT;
CREATE TABLE api_audit_log_partitioned_default PARTITION OF api_audit_log_partitioned DEFAULT;
CREATE TABLE tool_audit_log_partitioned_default PARTITION OF tool_audit_log_partitioned DEFAULT;

-- Every month that holds entries, and this month and the next, get their partition before
-- the entries are moved in.
-- Only months that hold entries (a stray date decades back makes one partition, not hundreds).
SELECT recruitd_ledger_partitions('privacy_audit_logs_partitioned', now(), now() + interval '1 month');
SELECT recruitd_ledger_partitions('api_audit_log_partitioned', now(), now() + interval '1 month');
SELECT recruitd_ledger_partitions('tool_audit_log_partitioned', now(), now() + interval '1 month');
SELECT recruitd_ledger_partitions('privacy_audit_logs_partitioned', m, m)
FROM (SELECT DISTINCT date_trunc('month', recorded_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m
      FROM privacy_audit_logs) months;
SELECT recruitd_ledger_partitions('api_audit_log_partitioned', m, m)
FROM (SELECT DISTINCT date_trunc('month', recorded_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m
      FROM api_audit_log) months;
SELECT recruitd_ledger_partitions('tool_audit_log_partitioned', m, m)
FROM (SELECT DISTINCT date_trunc('month', recorded_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m
      FROM tool_audit_log) months;

INSERT INTO privacy_audit_logs_partitioned (organization_id, id, access_time, account_id,
    ip_addresses, subject_type, subject_user_id, subject_candidate_id, bulk_count, query_type,
    query_ids, query_values, query_scope, access_data, access_menu, access_menu_path,
    activity_category, position, prev_hash, hash, recorded_at)
SELECT organization_id, id, access_time, account_id, ip_addresses, subject_type,
    subject_user_id, subject_candidate_id, bulk_count, query_type, query_ids, query_values,
    query_scope, access_data, access_menu, access_menu_path, activity_category, position,
    prev_hash, hash, recorded_at
FROM privacy_audit_logs;
INSERT INTO api_audit_log_partitioned (organization_id, id, at, token_id, user_id, operation,
    request_id, client_ip, filters, entries_returned, interface, tool_name, position, prev_hash,
    hash, recorded_at)
SELECT organization_id, id, at, token_id, user_id, operation, request_id, client_ip, filters,
    entries_returned, interface, tool_name, position, prev_hash, hash, recorded_at
FROM api_audit_log;
INSERT INTO tool_audit_log_partitioned (organization_id, id, at, token_id, user_id, tool_name,
    arguments, entries_returned, request_id, position, prev_hash, hash, recorded_at)
SELECT organization_id, id, at, token_id, user_id, tool_name, arguments, entries_returned,
    request_id, position, prev_hash, hash, recorded_at
FROM tool_audit_log;

CREATE TABLE privacy_audit_log_ids (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    recorded_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, id)
);
CREATE INDEX privacy_audit_log_ids_recorded ON privacy_audit_log_ids (recorded_at);
INSERT INTO privacy_audit_log_ids SELECT organization_id, id, recorded_at FROM privacy_audit_logs;

DROP TABLE privacy_audit_logs;
DROP TABLE api_audit_log;
DROP TABLE tool_audit_log;
ALTER TABLE privacy_audit_logs_partitioned RENAME TO privacy_audit_logs;
ALTER TABLE api_audit_log_partitioned RENAME TO api_audit_log;
ALTER TABLE tool_audit_log_partitioned RENAME TO tool_audit_log;
-- Partitions are named after their ledger and month.
DO $$
DECLARE
    part record;
BEGIN
    FOR part IN
        SELECT c.relname AS name, p.relname AS ledger
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relname IN ('privacy_audit_logs', 'api_audit_log', 'tool_audit_log')
    LOOP
        EXECUTE format('ALTER TABLE %I RENAME TO %I', part.name,
                       replace(part.name, part.ledger || '_partitioned', part.ledger));
    END LOOP;
    FOR part IN
        SELECT c.relname AS name
        FROM pg_class c
        WHERE c.relkind IN ('i', 'I') AND c.relname LIKE '%\_partitioned%'
          AND (c.relname LIKE 'privacy_audit_logs%' OR c.relname LIKE 'api_audit_log%'
               OR c.relname LIKE 'tool_audit_log%')
    LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', part.name,
                       replace(part.name, '_partitioned', ''));
    END LOOP;
END;
$$;

CREATE INDEX privacy_audit_logs_page
    ON privacy_audit_logs (organization_id, access_time DESC, id DESC);
CREATE INDEX privacy_audit_logs_chain ON privacy_audit_logs (organization_id, position);
CREATE INDEX api_audit_log_id ON api_audit_log (id);
CREATE INDEX api_audit_log_recent ON api_audit_log (organization_id, at DESC, id DESC);
CREATE INDEX api_audit_log_recent_all ON api_audit_log (at DESC, id DESC);
CREATE INDEX api_audit_log_chain ON api_audit_log (organization_id, position);
CREATE INDEX tool_audit_log_id ON tool_audit_log (id);
CREATE INDEX tool_audit_log_recent ON tool_audit_log (organization_id, at DESC, id DESC);
CREATE INDEX tool_audit_log_recent_all ON tool_audit_log (at DESC, id DESC);
CREATE INDEX tool_audit_log_chain ON tool_audit_log (organization_id, position);

CREATE FUNCTION recruitd_keep_entry_ids() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO privacy_audit_log_ids (organization_id, id, recorded_at)
    SELECT organization_id, id, recorded_at FROM added;
    RETURN NULL;
END;
$$;
CREATE TRIGGER privacy_audit_logs_ids AFTER INSERT ON privacy_audit_logs
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION recruitd_keep_entry_ids();

CREATE TRIGGER privacy_audit_logs_append_only BEFORE UPDATE ON privacy_audit_logs
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER privacy_audit_logs_retained BEFORE DELETE ON privacy_audit_logs
    FOR EACH ROW EXECUTE FUNCTION recruitd_remove_retained('privacy');
CREATE TRIGGER privacy_audit_logs_no_truncate BEFORE TRUNCATE ON privacy_audit_logs
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER api_audit_log_append_only BEFORE UPDATE ON api_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER api_audit_log_retained BEFORE DELETE ON api_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_remove_retained('api');
CREATE TRIGGER api_audit_log_no_truncate BEFORE TRUNCATE ON api_audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER tool_audit_log_append_only BEFORE UPDATE ON tool_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER tool_audit_log_retained BEFORE DELETE ON tool_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_remove_retained('tool');
CREATE TRIGGER tool_audit_log_no_truncate BEFORE TRUNCATE ON tool_audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_refuse_ledger_change();
