-- Retention. Every ledger entry records when it was written (`recorded_at`, microseconds):
-- the clock when the row is inserted, inside the write transaction, which holds the database's
-- one write lock, so that within a chain it never decreases as positions grow. Retention removes
-- what was recorded before a boundary, a prefix of each chain thereby, and records a signed cut
-- (recruit_domain::chain::RetentionCut) at the last position removed, so that the chain that
-- remains is proven whole from there.
--
-- SQLite adds no column with a computed default to a table, so each ledger is built again.
-- Entries already stored get the latest time of their chain up to them (running maximum of their
-- `access_time` or `at` in the order of positions, those not linked yet last, as the chain's
-- backfill links them), capped at now: never decreasing, never after this migration, and never
-- before the entry's own time unless that time is in the future.

-- The signed cuts, kept as signed, never changed or removed.
CREATE TABLE ledger_retention_cuts (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    ledger TEXT NOT NULL CHECK (ledger IN ('privacy', 'api', 'tool')),
    position INTEGER NOT NULL CHECK (position >= 1),
    hash BLOB NOT NULL CHECK (length(hash) = 32),
    recorded_before INTEGER NOT NULL,
    signed_at INTEGER NOT NULL,
    key_id TEXT NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (organization_id, ledger, position)
) STRICT;
CREATE TRIGGER ledger_retention_cuts_no_update BEFORE UPDATE ON ledger_retention_cuts
BEGIN SELECT RAISE(ABORT, 'the ledger_retention_cuts ledger is append-only: UPDATE is refused'); END;
CREATE TRIGGER ledger_retention_cuts_no_delete BEFORE DELETE ON ledger_retention_cuts
BEGIN SELECT RAISE(ABORT, 'the ledger_retention_cuts ledger is append-only: DELETE is refused'); END;

CREATE TABLE privacy_audit_logs_retained (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL CHECK (length(id) = 16),
    access_time INTEGER NOT NULL,
    account_id BLOB NOT NULL,
    ip_addresses TEXT NOT NULL,
    subject_type TEXT NOT NULL CHECK (subject_type IN ('EMPLOYEE', 'CANDIDATE', 'BULK')),
    subject_user_id BLOB,
    subject_candidate_id BLOB,
    bulk_count INTEGER,
    query_type TEXT,
    query_ids TEXT,
    query_values TEXT,
    query_scope TEXT,
    access_data TEXT NOT NULL,
    access_menu TEXT NOT NULL,
    access_menu_path TEXT NOT NULL,
    activity_category TEXT NOT NULL,
    position INTEGER,
    prev_hash BLOB,
    hash BLOB,
    recorded_at INTEGER NOT NULL DEFAULT (CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)),
    PRIMARY KEY (organization_id, id)
) STRICT, WITHOUT ROWID;
INSERT INTO privacy_audit_logs_retained (organization_id, id, access_time, account_id, ip_addresses, subject_type, subject_user_id, subject_candidate_id, bulk_count, query_type, query_ids, query_values, query_scope, access_data, access_menu, access_menu_path, activity_category, position, prev_hash, hash, recorded_at)
SELECT organization_id, id, access_time, account_id, ip_addresses, subject_type, subject_user_id, subject_candidate_id, bulk_count, query_type, query_ids, query_values, query_scope, access_data, access_menu, access_menu_path, activity_category, position, prev_hash, hash, min((CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)), max(access_time) OVER (
    PARTITION BY organization_id ORDER BY position NULLS LAST, access_time, id
    ROWS UNBOUNDED PRECEDING))
FROM privacy_audit_logs;
DROP TABLE privacy_audit_logs;
ALTER TABLE privacy_audit_logs_retained RENAME TO privacy_audit_logs;
CREATE INDEX privacy_audit_logs_page
    ON privacy_audit_logs (organization_id, access_time DESC, id DESC);
CREATE UNIQUE INDEX privacy_audit_logs_chain ON privacy_audit_logs (organization_id, position);
CREATE TRIGGER privacy_audit_logs_no_update BEFORE UPDATE ON privacy_audit_logs
WHEN NOT (OLD.position IS NULL AND NEW.position IS NOT NULL
          AND EXISTS (SELECT 1 FROM ledger_chain_backfill))
BEGIN SELECT RAISE(ABORT, 'the privacy_audit_logs ledger is append-only: UPDATE is refused'); END;
-- An entry may be removed only once a cut covers it: recorded for its chain at its position
-- or after, with a boundary after the entry was recorded.
CREATE TRIGGER privacy_audit_logs_no_delete BEFORE DELETE ON privacy_audit_logs
WHEN NOT EXISTS (SELECT 1 FROM ledger_retention_cuts c
                 WHERE c.organization_id = OLD.organization_id AND c.ledger = 'privacy'
                   AND c.position >= OLD.position AND c.recorded_before > OLD.recorded_at)
BEGIN SELECT RAISE(ABORT, 'the privacy_audit_logs ledger is append-only: DELETE is refused below no retention cut'); END;

CREATE TABLE api_audit_log_retained (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL CHECK (length(id) = 16),
    at INTEGER NOT NULL,
    token_id BLOB NOT NULL,
    user_id BLOB NOT NULL,
    operation TEXT NOT NULL,
    request_id TEXT NOT NULL,
    client_ip TEXT,
    filters TEXT NOT NULL,
    entries_returned INTEGER NOT NULL,
    interface TEXT NOT NULL CHECK (interface IN ('REST', 'TOOL')),
    tool_name TEXT,
    position INTEGER,
    prev_hash BLOB,
    hash BLOB,
    recorded_at INTEGER NOT NULL DEFAULT (CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)),
    PRIMARY KEY (organization_id, id)
) STRICT;
INSERT INTO api_audit_log_retained (organization_id, id, at, token_id, user_id, operation, request_id, client_ip, filters, entries_returned, interface, tool_name, position, prev_hash, hash, recorded_at)
SELECT organization_id, id, at, token_id, user_id, operation, request_id, client_ip, filters, entries_returned, interface, tool_name, position, prev_hash, hash, min((CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)), max(at) OVER (
    PARTITION BY organization_id ORDER BY position NULLS LAST, at, id
    ROWS UNBOUNDED PRECEDING))
FROM api_audit_log;
DROP TABLE api_audit_log;
ALTER TABLE api_audit_log_retained RENAME TO api_audit_log;
CREATE UNIQUE INDEX api_audit_log_id ON api_audit_log (id);
CREATE INDEX api_audit_log_recent ON api_audit_log (organization_id, at DESC, id DESC);
CREATE INDEX api_audit_log_recent_all ON api_audit_log (at DESC, id DESC);
CREATE UNIQUE INDEX api_audit_log_chain ON api_audit_log (organization_id, position);
CREATE TRIGGER api_audit_log_no_update BEFORE UPDATE ON api_audit_log
WHEN NOT (OLD.position IS NULL AND NEW.position IS NOT NULL
          AND EXISTS (SELECT 1 FROM ledger_chain_backfill))
BEGIN SELECT RAISE(ABORT, 'the api_audit_log ledger is append-only: UPDATE is refused'); END;
-- An entry may be removed only once a cut covers it: recorded for its chain at its position
-- or after, with a boundary after the entry was recorded.
CREATE TRIGGER api_audit_log_no_delete BEFORE DELETE ON api_audit_log
WHEN NOT EXISTS (SELECT 1 FROM ledger_retention_cuts c
                 WHERE c.organization_id = OLD.organization_id AND c.ledger = 'api'
                   AND c.position >= OLD.position AND c.recorded_before > OLD.recorded_at)
BEGIN SELECT RAISE(ABORT, 'the api_audit_log ledger is append-only: DELETE is refused below no retention cut'); END;

CREATE TABLE tool_audit_log_retained (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL CHECK (length(id) = 16),
    at INTEGER NOT NULL,
    token_id BLOB NOT NULL,
    user_id BLOB NOT NULL,
    tool_name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    entries_returned INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    position INTEGER,
    prev_hash BLOB,
    hash BLOB,
    recorded_at INTEGER NOT NULL DEFAULT (CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)),
    PRIMARY KEY (organization_id, id)
) STRICT;
INSERT INTO tool_audit_log_retained (organization_id, id, at, token_id, user_id, tool_name, arguments, entries_returned, request_id, position, prev_hash, hash, recorded_at)
SELECT organization_id, id, at, token_id, user_id, tool_name, arguments, entries_returned, request_id, position, prev_hash, hash, min((CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)), max(at) OVER (
    PARTITION BY organization_id ORDER BY position NULLS LAST, at, id
    ROWS UNBOUNDED PRECEDING))
FROM tool_audit_log;
DROP TABLE tool_audit_log;
ALTER TABLE tool_audit_log_retained RENAME TO tool_audit_log;
CREATE UNIQUE INDEX tool_audit_log_id ON tool_audit_log (id);
CREATE INDEX tool_audit_log_recent ON tool_audit_log (organization_id, at DESC, id DESC);
CREATE INDEX tool_audit_log_recent_all ON tool_audit_log (at DESC, id DESC);
CREATE UNIQUE INDEX tool_audit_log_chain ON tool_audit_log (organization_id, position);
CREATE TRIGGER tool_audit_log_no_update BEFORE UPDATE ON tool_audit_log
WHEN NOT (OLD.position IS NULL AND NEW.position IS NOT NULL
          AND EXISTS (SELECT 1 FROM ledger_chain_backfill))
BEGIN SELECT RAISE(ABORT, 'the tool_audit_log ledger is append-only: UPDATE is refused'); END;
-- An entry may be removed only once a cut covers it: recorded for its chain at its position
-- or after, with a boundary after the entry was recorded.
CREATE TRIGGER tool_audit_log_no_delete BEFORE DELETE ON tool_audit_log
WHEN NOT EXISTS (SELECT 1 FROM ledger_retention_cuts c
                 WHERE c.organization_id = OLD.organization_id AND c.ledger = 'tool'
                   AND c.position >= OLD.position AND c.recorded_before > OLD.recorded_at)
BEGIN SELECT RAISE(ABORT, 'the tool_audit_log ledger is append-only: DELETE is refused below no retention cut'); END;
