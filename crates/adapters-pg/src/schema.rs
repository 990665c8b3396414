//! The tables of the PostgreSQL schema, as diesel sees them (see `migrations/`).

diesel::table! {
    organizations (id) {
        id -> Uuid,
        name -> Text,
        domain -> Text,
        daily_max_limit -> Integer,
        daily_max_type -> Text,
        daily_min_interviews -> Integer,
        daily_min_minutes -> Integer,
        weekly_max_limit -> Integer,
        weekly_max_type -> Text,
        weekly_min_interviews -> Integer,
        weekly_min_minutes -> Integer,
        buffer_before_minutes -> Integer,
        buffer_after_minutes -> Integer,
        feedback_writing_time_minutes -> Integer,
        keywords_out_of_office -> Array<Text>,
        keywords_avoid -> Array<Text>,
        keywords_available_if_needed -> Array<Text>,
        keywords_recruiting_block -> Array<Text>,
        name_source -> Text,
        title_source -> Text,
        manager_source -> Text,
        linkedin_url_source -> Text,
        time_zone -> Text,
        review_rules -> Jsonb,
    }
}

diesel::table! {
    organization_work_hours (organization_id, position) {
        organization_id -> Uuid,
        position -> Integer,
        day -> Text,
        start_time -> Text,
        end_time -> Text,
    }
}

diesel::table! {
    users (organization_id, id) {
        organization_id -> Uuid,
        id -> Uuid,
        name -> Text,
        email -> Text,
        role -> Text,
        title -> Nullable<Text>,
        manager_id -> Nullable<Uuid>,
        linkedin_url -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    task_queues (organization_id, id) {
        organization_id -> Uuid,
        id -> Uuid,
        name -> Text,
    }
}

diesel::table! {
    candidates (organization_id, id) {
        organization_id -> Uuid,
        id -> Uuid,
        name -> Text,
        email -> Text,
        phone -> Text,
    }
}

diesel::table! {
    jobs (organization_id, id) {
        organization_id -> Uuid,
        id -> Uuid,
        name -> Text,
        status -> Text,
        confidential -> Bool,
        locations -> Array<Text>,
        ats_type -> Text,
        ats_id -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        default_task_queue_id -> Uuid,
        remote_ats_id -> Text,
        remote_name -> Text,
        remote_status -> Text,
        locale -> Text,
    }
}

diesel::table! {
    job_settings (organization_id, job_id) {
        organization_id -> Uuid,
        job_id -> Uuid,
        name_is_custom -> Bool,
        name_show_interview_name -> Bool,
        info_is_custom -> Bool,
        info_can_show_info -> Bool,
        info_can_show_full_name -> Bool,
        info_can_show_job_title -> Bool,
        info_can_show_linkedin -> Bool,
        info_can_show_email -> Bool,
        info_can_show_profile_picture -> Bool,
        info_can_show_pronouns -> Bool,
        info_can_show_bio -> Bool,
        contact_is_custom -> Bool,
        contact_show_recruiter -> Bool,
        contact_show_coordinator -> Bool,
        contact_can_show_job_title -> Bool,
        contact_can_show_linkedin -> Bool,
        contact_can_show_profile_picture -> Bool,
        contact_can_show_pronouns -> Bool,
        contact_can_show_bio -> Bool,
        contact_can_show_phone -> Bool,
    }
}

diesel::table! {
    job_resolved_settings (organization_id, job_id) {
        organization_id -> Uuid,
        job_id -> Uuid,
        name_is_custom -> Bool,
        name_is_locked -> Bool,
        name_show_interview_name -> Bool,
        info_is_custom -> Bool,
        info_is_locked -> Bool,
        info_can_show_info -> Bool,
        info_can_show_full_name -> Bool,
        info_can_show_job_title -> Bool,
        info_can_show_linkedin -> Bool,
        info_can_show_email -> Bool,
        info_can_show_profile_picture -> Bool,
        info_can_show_pronouns -> Bool,
        info_can_show_bio -> Bool,
        contact_is_custom -> Bool,
        contact_is_locked -> Bool,
        contact_show_recruiter -> Bool,
        contact_show_coordinator -> Bool,
        contact_can_show_job_title -> Bool,
        contact_can_show_linkedin -> Bool,
        contact_can_show_profile_picture -> Bool,
        contact_can_show_pronouns -> Bool,
        contact_can_show_bio -> Bool,
        contact_can_show_phone -> Bool,
    }
}

diesel::table! {
    job_hiring_team (organization_id, job_id, position) {
        organization_id -> Uuid,
        job_id -> Uuid,
        position -> Integer,
        role -> Text,
        user_id -> Uuid,
    }
}

diesel::table! {
    api_tokens (organization_id, id) {
        organization_id -> Uuid,
        id -> Uuid,
        user_id -> Uuid,
        name -> Text,
        scopes -> Array<Text>,
        secret_hash -> Binary,
        created_at -> Timestamptz,
        expires_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
        last_used_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    privacy_audit_logs (organization_id, id) {
        organization_id -> Uuid,
        id -> Uuid,
        access_time -> Timestamptz,
        account_id -> Uuid,
        ip_addresses -> Array<Text>,
        subject_type -> Text,
        subject_user_id -> Nullable<Uuid>,
        subject_candidate_id -> Nullable<Uuid>,
        bulk_count -> Nullable<BigInt>,
        query_type -> Nullable<Text>,
        query_ids -> Nullable<Array<Uuid>>,
        query_values -> Nullable<Array<Text>>,
        query_scope -> Nullable<Text>,
        access_data -> Array<Text>,
        access_menu -> Text,
        access_menu_path -> Text,
        activity_category -> Text,
        purpose -> Nullable<Text>,
        position -> Nullable<BigInt>,
        prev_hash -> Nullable<Bytea>,
        hash -> Nullable<Bytea>,
        recorded_at -> Timestamptz,
    }
}

diesel::table! {
    api_audit_log (organization_id, id) {
        organization_id -> Uuid,
        id -> Uuid,
        at -> Timestamptz,
        token_id -> Uuid,
        user_id -> Uuid,
        operation -> Text,
        request_id -> Text,
        client_ip -> Nullable<Text>,
        filters -> Jsonb,
        entries_returned -> Integer,
        interface -> Text,
        tool_name -> Nullable<Text>,
        position -> Nullable<BigInt>,
        prev_hash -> Nullable<Bytea>,
        hash -> Nullable<Bytea>,
        recorded_at -> Timestamptz,
    }
}

diesel::table! {
    tool_audit_log (organization_id, id) {
        organization_id -> Uuid,
        id -> Uuid,
        at -> Timestamptz,
        token_id -> Uuid,
        user_id -> Uuid,
        tool_name -> Text,
        arguments -> Jsonb,
        entries_returned -> Integer,
        request_id -> Text,
        position -> Nullable<BigInt>,
        prev_hash -> Nullable<Bytea>,
        hash -> Nullable<Bytea>,
        recorded_at -> Timestamptz,
    }
}

diesel::table! {
    ledger_checkpoints (organization_id, ledger, position, key_id) {
        organization_id -> Uuid,
        ledger -> Text,
        position -> BigInt,
        head_hash -> Bytea,
        signed_at -> Timestamptz,
        key_id -> Text,
        signature -> Text,
    }
}

diesel::table! {
    ledger_retention_cuts (organization_id, ledger, position) {
        organization_id -> Uuid,
        ledger -> Text,
        position -> BigInt,
        hash -> Bytea,
        recorded_before -> Timestamptz,
        signed_at -> Timestamptz,
        key_id -> Text,
        signature -> Text,
    }
}

diesel::table! {
    ledger_heads (organization_id, ledger) {
        organization_id -> Uuid,
        ledger -> Text,
        position -> BigInt,
        hash -> Bytea,
    }
}

diesel::table! {
    ledger_chain_backfill (pending) {
        pending -> Bool,
    }
}

diesel::table! {
    server_secrets (name) {
        name -> Text,
        value -> Binary,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    idempotency_keys (organization_id, key) {
        organization_id -> Uuid,
        key -> Text,
        fingerprint -> Binary,
        expires_at -> Timestamptz,
        status -> Nullable<Integer>,
        response -> Nullable<Binary>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    organization_scheduling_defaults (organization_id) {
        organization_id -> Uuid,
        name_show_interview_name -> Bool,
        name_is_locked -> Bool,
        info_can_show_info -> Bool,
        info_can_show_full_name -> Bool,
        info_can_show_job_title -> Bool,
        info_can_show_linkedin -> Bool,
        info_can_show_email -> Bool,
        info_can_show_profile_picture -> Bool,
        info_can_show_pronouns -> Bool,
        info_can_show_bio -> Bool,
        info_is_locked -> Bool,
        contact_show_recruiter -> Bool,
        contact_show_coordinator -> Bool,
        contact_can_show_job_title -> Bool,
        contact_can_show_linkedin -> Bool,
        contact_can_show_profile_picture -> Bool,
        contact_can_show_pronouns -> Bool,
        contact_can_show_bio -> Bool,
        contact_can_show_phone -> Bool,
        contact_is_locked -> Bool,
    }
}

diesel::table! {
    job_stages (organization_id, job_id, position) {
        organization_id -> Uuid,
        job_id -> Uuid,
        position -> Int4,
        id -> Uuid,
        name -> Text,
    }
}

diesel::table! {
    privacy_download_decisions (organization_id, id) {
        organization_id -> Uuid,
        id -> Uuid,
        month -> Text,
        entry_id -> Uuid,
        status -> Text,
        reason -> Text,
        user_id -> Uuid,
        token_id -> Uuid,
        decided_at -> Timestamptz,
        request_id -> Text,
    }
}

diesel::table! {
    privacy_review_sign_offs (organization_id, month) {
        organization_id -> Uuid,
        month -> Text,
        user_id -> Uuid,
        signed_at -> Timestamptz,
        note -> Nullable<Text>,
        body -> Jsonb,
    }
}

diesel::table! {
    console_sessions (organization_id, id) {
        organization_id -> Uuid,
        id -> Uuid,
        user_id -> Uuid,
        token_id -> Uuid,
        secret_hash -> Binary,
        created_at -> Timestamptz,
        last_seen_at -> Timestamptz,
        expires_at -> Timestamptz,
        ended_at -> Nullable<Timestamptz>,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    ledger_heads,
    ledger_checkpoints,
    ledger_retention_cuts,
    ledger_chain_backfill,
    organizations,
    organization_work_hours,
    users,
    task_queues,
    candidates,
    jobs,
    job_settings,
    job_resolved_settings,
    job_hiring_team,
    api_tokens,
    privacy_audit_logs,
    api_audit_log,
    tool_audit_log,
    server_secrets,
    idempotency_keys,
    organization_scheduling_defaults,
    job_stages,
    privacy_download_decisions,
    privacy_review_sign_offs,
    console_sessions,
);
