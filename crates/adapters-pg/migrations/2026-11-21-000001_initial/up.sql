-- The initial schema of recruitd on PostgreSQL.
-- Every table is keyed by organization first, so the schema can be distributed by organization;
-- identifiers are UUIDs, times are timestamptz with microsecond precision.

CREATE TABLE organizations (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    domain text NOT NULL,
    daily_max_limit integer NOT NULL,
    daily_max_type text NOT NULL,
    daily_min_interviews integer NOT NULL,
    daily_min_minutes integer NOT NULL,
    weekly_max_limit integer NOT NULL,
    weekly_max_type text NOT NULL,
    weekly_min_interviews integer NOT NULL,
    weekly_min_minutes integer NOT NULL,
    buffer_before_minutes integer NOT NULL,
    buffer_after_minutes integer NOT NULL,
    feedback_writing_time_minutes integer NOT NULL,
    keywords_out_of_office text[] NOT NULL,
    keywords_avoid text[] NOT NULL,
    keywords_available_if_needed text[] NOT NULL,
    keywords_recruiting_block text[] NOT NULL
);

CREATE TABLE organization_work_hours (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    position integer NOT NULL,
    day text NOT NULL,
    start_time text NOT NULL,
    end_time text NOT NULL,
    PRIMARY KEY (organization_id, position)
);

CREATE TABLE users (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    id uuid NOT NULL,
    name text NOT NULL,
    email text NOT NULL,
    role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
    PRIMARY KEY (organization_id, id)
);
CREATE INDEX users_id ON users (id);

CREATE TABLE task_queues (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    id uuid NOT NULL,
    name text NOT NULL,
    PRIMARY KEY (organization_id, id)
);
CREATE INDEX task_queues_id ON task_queues (id);

CREATE TABLE candidates (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    id uuid NOT NULL,
    name text NOT NULL,
    email text NOT NULL,
    phone text NOT NULL,
    PRIMARY KEY (organization_id, id)
);
CREATE INDEX candidates_id ON candidates (id);

CREATE TABLE jobs (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    id uuid NOT NULL,
    name text NOT NULL,
    status text NOT NULL CHECK (status IN ('DRAFT', 'OPEN', 'CLOSED')),
    confidential boolean NOT NULL,
    locations text[] NOT NULL,
    ats_type text NOT NULL,
    ats_id text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    default_task_queue_id uuid NOT NULL,
    remote_ats_id text NOT NULL,
    remote_name text NOT NULL,
    remote_status text NOT NULL,
    locale text NOT NULL,
    PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, default_task_queue_id) REFERENCES task_queues (organization_id, id)
);
CREATE INDEX jobs_id ON jobs (id);

-- The display settings of a job, one row per job.
CREATE TABLE job_settings (
    organization_id uuid NOT NULL,
    job_id uuid NOT NULL,
    name_is_custom boolean NOT NULL,
    name_show_interview_name boolean NOT NULL,
    name_is_locked boolean NOT NULL,
    name_level text NOT NULL,
    info_is_custom boolean NOT NULL,
    info_can_show_info boolean NOT NULL,
    info_can_show_full_name boolean NOT NULL,
    info_can_show_job_title boolean NOT NULL,
    info_can_show_linkedin boolean NOT NULL,
    info_can_show_email boolean NOT NULL,
    info_can_show_profile_picture boolean NOT NULL,
    info_can_show_pronouns boolean NOT NULL,
    info_can_show_bio boolean NOT NULL,
    info_is_locked boolean NOT NULL,
    info_level text NOT NULL,
    contact_is_custom boolean NOT NULL,
    contact_show_recruiter boolean NOT NULL,
    contact_show_coordinator boolean NOT NULL,
    contact_can_show_job_title boolean NOT NULL,
    contact_can_show_linkedin boolean NOT NULL,
    contact_can_show_profile_picture boolean NOT NULL,
    contact_can_show_pronouns boolean NOT NULL,
    contact_can_show_bio boolean NOT NULL,
    contact_can_show_phone boolean NOT NULL,
    contact_is_locked boolean NOT NULL,
    contact_level text NOT NULL,
    PRIMARY KEY (organization_id, job_id),
    FOREIGN KEY (organization_id, job_id) REFERENCES jobs (organization_id, id)
);

CREATE TABLE job_hiring_team (
    organization_id uuid NOT NULL,
    job_id uuid NOT NULL,
    position integer NOT NULL,
    role text NOT NULL,
    user_id uuid NOT NULL,
    PRIMARY KEY (organization_id, job_id, position),
    UNIQUE (organization_id, job_id, user_id),
    FOREIGN KEY (organization_id, job_id) REFERENCES jobs (organization_id, id),
    FOREIGN KEY (organization_id, user_id) REFERENCES users (organization_id, id)
);

CREATE TABLE api_tokens (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    user_id uuid NOT NULL,
    name text NOT NULL,
    scopes text[] NOT NULL,
    secret_hash bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    last_used_at timestamptz,
    PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, user_id) REFERENCES users (organization_id, id)
);
CREATE UNIQUE INDEX api_tokens_id ON api_tokens (id);

-- The privacy audit ledger: append-only, read newest first by keyset pagination.
CREATE TABLE privacy_audit_logs (
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
    PRIMARY KEY (organization_id, id)
);
-- The page query: one organization, a time window, newest first, ties by id.
CREATE INDEX privacy_audit_logs_page
    ON privacy_audit_logs (organization_id, access_time DESC, id DESC);

-- Reads of the privacy ledger, as the API audit ledger records them.
CREATE TABLE api_audit_log (
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
    PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX api_audit_log_id ON api_audit_log (id);
CREATE INDEX api_audit_log_recent ON api_audit_log (organization_id, at DESC, id DESC);
CREATE INDEX api_audit_log_recent_all ON api_audit_log (at DESC, id DESC);

-- Tool calls that read the privacy ledger, as the tool-interface audit ledger records them.
CREATE TABLE tool_audit_log (
    organization_id uuid NOT NULL REFERENCES organizations (id),
    id uuid NOT NULL,
    at timestamptz NOT NULL,
    token_id uuid NOT NULL,
    user_id uuid NOT NULL,
    tool_name text NOT NULL,
    arguments jsonb NOT NULL,
    entries_returned integer NOT NULL,
    request_id text NOT NULL,
    PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX tool_audit_log_id ON tool_audit_log (id);
CREATE INDEX tool_audit_log_recent ON tool_audit_log (organization_id, at DESC, id DESC);
CREATE INDEX tool_audit_log_recent_all ON tool_audit_log (at DESC, id DESC);

-- The ledgers are records: rows are appended, never changed or removed.
CREATE FUNCTION recruitd_refuse_ledger_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the % ledger is append-only: % is refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER privacy_audit_logs_append_only BEFORE UPDATE OR DELETE ON privacy_audit_logs
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER privacy_audit_logs_no_truncate BEFORE TRUNCATE ON privacy_audit_logs
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER api_audit_log_append_only BEFORE UPDATE OR DELETE ON api_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER api_audit_log_no_truncate BEFORE TRUNCATE ON api_audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER tool_audit_log_append_only BEFORE UPDATE OR DELETE ON tool_audit_log
    FOR EACH ROW EXECUTE FUNCTION recruitd_refuse_ledger_change();
CREATE TRIGGER tool_audit_log_no_truncate BEFORE TRUNCATE ON tool_audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION recruitd_refuse_ledger_change();

-- Secrets the server keeps across restarts, such as the cursor signing key.
CREATE TABLE server_secrets (
    name text PRIMARY KEY,
    value bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
