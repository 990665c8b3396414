-- The initial schema of recruitd on SQLite: the same tables as on PostgreSQL.
-- Identifiers are 16-byte BLOBs (their byte order is the order of the canonical strings),
-- times are INTEGER microseconds since 1970-01-01T00:00:00Z, lists are JSON arrays in TEXT.

CREATE TABLE organizations (
    id BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 16),
    name TEXT NOT NULL,
    domain TEXT NOT NULL,
    daily_max_limit INTEGER NOT NULL,
    daily_max_type TEXT NOT NULL,
    daily_min_interviews INTEGER NOT NULL,
    daily_min_minutes INTEGER NOT NULL,
    weekly_max_limit INTEGER NOT NULL,
    weekly_max_type TEXT NOT NULL,
    weekly_min_interviews INTEGER NOT NULL,
    weekly_min_minutes INTEGER NOT NULL,
    buffer_before_minutes INTEGER NOT NULL,
    buffer_after_minutes INTEGER NOT NULL,
    feedback_writing_time_minutes INTEGER NOT NULL,
    keywords_out_of_office TEXT NOT NULL,
    keywords_avoid TEXT NOT NULL,
    keywords_available_if_needed TEXT NOT NULL,
    keywords_recruiting_block TEXT NOT NULL
) STRICT;

CREATE TABLE organization_work_hours (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    position INTEGER NOT NULL,
    day TEXT NOT NULL,
    start_time TEXT NOT NULL,
    end_time TEXT NOT NULL,
    PRIMARY KEY (organization_id, position)
) STRICT;

CREATE TABLE users (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL CHECK (length(id) = 16),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
    PRIMARY KEY (organization_id, id)
) STRICT;
CREATE INDEX users_id ON users (id);

CREATE TABLE task_queues (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL CHECK (length(id) = 16),
    name TEXT NOT NULL,
    PRIMARY KEY (organization_id, id)
) STRICT;
CREATE INDEX task_queues_id ON task_queues (id);

CREATE TABLE candidates (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL CHECK (length(id) = 16),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    phone TEXT NOT NULL,
    PRIMARY KEY (organization_id, id)
) STRICT;
CREATE INDEX candidates_id ON candidates (id);

CREATE TABLE jobs (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL CHECK (length(id) = 16),
    name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('DRAFT', 'OPEN', 'CLOSED')),
    confidential INTEGER NOT NULL CHECK (confidential IN (0, 1)),
    locations TEXT NOT NULL,
    ats_type TEXT NOT NULL,
    ats_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    default_task_queue_id BLOB NOT NULL,
    remote_ats_id TEXT NOT NULL,
    remote_name TEXT NOT NULL,
    remote_status TEXT NOT NULL,
    locale TEXT NOT NULL,
    PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, default_task_queue_id) REFERENCES task_queues (organization_id, id)
) STRICT;
CREATE INDEX jobs_id ON jobs (id);

CREATE TABLE job_settings (
    organization_id BLOB NOT NULL,
    job_id BLOB NOT NULL,
    name_is_custom INTEGER NOT NULL,
    name_show_interview_name INTEGER NOT NULL,
    name_is_locked INTEGER NOT NULL,
    name_level TEXT NOT NULL,
    info_is_custom INTEGER NOT NULL,
    info_can_show_info INTEGER NOT NULL,
    info_can_show_full_name INTEGER NOT NULL,
    info_can_show_job_title INTEGER NOT NULL,
    info_can_show_linkedin INTEGER NOT NULL,
    info_can_show_email INTEGER NOT NULL,
    info_can_show_profile_picture INTEGER NOT NULL,
    info_can_show_pronouns INTEGER NOT NULL,
    info_can_show_bio INTEGER NOT NULL,
    info_is_locked INTEGER NOT NULL,
    info_level TEXT NOT NULL,
    contact_is_custom INTEGER NOT NULL,
    contact_show_recruiter INTEGER NOT NULL,
    contact_show_coordinator INTEGER NOT NULL,
    contact_can_show_job_title INTEGER NOT NULL,
    contact_can_show_linkedin INTEGER NOT NULL,
    contact_can_show_profile_picture INTEGER NOT NULL,
    contact_can_show_pronouns INTEGER NOT NULL,
    contact_can_show_bio INTEGER NOT NULL,
    contact_can_show_phone INTEGER NOT NULL,
    contact_is_locked INTEGER NOT NULL,
    contact_level TEXT NOT NULL,
    PRIMARY KEY (organization_id, job_id),
    FOREIGN KEY (organization_id, job_id) REFERENCES jobs (organization_id, id)
) STRICT;

CREATE TABLE job_hiring_team (
    organization_id BLOB NOT NULL,
    job_id BLOB NOT NULL,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    user_id BLOB NOT NULL,
    PRIMARY KEY (organization_id, job_id, position),
    UNIQUE (organization_id, job_id, user_id),
    FOREIGN KEY (organization_id, job_id) REFERENCES jobs (organization_id, id),
    FOREIGN KEY (organization_id, user_id) REFERENCES users (organization_id, id)
) STRICT;

CREATE TABLE api_tokens (
    organization_id BLOB NOT NULL,
    id BLOB NOT NULL CHECK (length(id) = 16),
    user_id BLOB NOT NULL,
    name TEXT NOT NULL,
    scopes TEXT NOT NULL,
    secret_hash BLOB NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER,
    last_used_at INTEGER,
    PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, user_id) REFERENCES users (organization_id, id)
) STRICT;
CREATE UNIQUE INDEX api_tokens_id ON api_tokens (id);

CREATE TABLE privacy_audit_logs (
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
    PRIMARY KEY (organization_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX privacy_audit_logs_page
    ON privacy_audit_logs (organization_id, access_time DESC, id DESC);

CREATE TABLE api_audit_log (
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
    PRIMARY KEY (organization_id, id)
) STRICT;
CREATE UNIQUE INDEX api_audit_log_id ON api_audit_log (id);
CREATE INDEX api_audit_log_recent ON api_audit_log (organization_id, at DESC, id DESC);
CREATE INDEX api_audit_log_recent_all ON api_audit_log (at DESC, id DESC);

CREATE TABLE tool_audit_log (
    organization_id BLOB NOT NULL REFERENCES organizations (id),
    id BLOB NOT NULL CHECK (length(id) = 16),
    at INTEGER NOT NULL,
    token_id BLOB NOT NULL,
    user_id BLOB NOT NULL,
    tool_name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    entries_returned INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    PRIMARY KEY (organization_id, id)
) STRICT;
CREATE UNIQUE INDEX tool_audit_log_id ON tool_audit_log (id);
CREATE INDEX tool_audit_log_recent ON tool_audit_log (organization_id, at DESC, id DESC);
CREATE INDEX tool_audit_log_recent_all ON tool_audit_log (at DESC, id DESC);

-- The ledgers are records: rows are appended, never changed or removed.
CREATE TRIGGER privacy_audit_logs_no_update BEFORE UPDATE ON privacy_audit_logs
BEGIN SELECT RAISE(ABORT, 'the privacy_audit_logs ledger is append-only: UPDATE is refused'); END;
CREATE TRIGGER privacy_audit_logs_no_delete BEFORE DELETE ON privacy_audit_logs
BEGIN SELECT RAISE(ABORT, 'the privacy_audit_logs ledger is append-only: DELETE is refused'); END;
CREATE TRIGGER api_audit_log_no_update BEFORE UPDATE ON api_audit_log
BEGIN SELECT RAISE(ABORT, 'the api_audit_log ledger is append-only: UPDATE is refused'); END;
CREATE TRIGGER api_audit_log_no_delete BEFORE DELETE ON api_audit_log
BEGIN SELECT RAISE(ABORT, 'the api_audit_log ledger is append-only: DELETE is refused'); END;
CREATE TRIGGER tool_audit_log_no_update BEFORE UPDATE ON tool_audit_log
BEGIN SELECT RAISE(ABORT, 'the tool_audit_log ledger is append-only: UPDATE is refused'); END;
CREATE TRIGGER tool_audit_log_no_delete BEFORE DELETE ON tool_audit_log
BEGIN SELECT RAISE(ABORT, 'the tool_audit_log ledger is append-only: DELETE is refused'); END;

CREATE TABLE server_secrets (
    name TEXT PRIMARY KEY NOT NULL,
    value BLOB NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
