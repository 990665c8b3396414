//! The tables of the SQLite schema, as diesel sees them (see `migrations/`).

diesel::table! {
    organizations (id) {
        id -> Binary,
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
        keywords_out_of_office -> Text,
        keywords_avoid -> Text,
        keywords_available_if_needed -> Text,
        keywords_recruiting_block -> Text,
        name_source -> Text,
        title_source -> Text,
        manager_source -> Text,
        linkedin_url_source -> Text,
        time_zone -> Text,
        review_rules -> Text,
    }
}

diesel::table! {
    organization_work_hours (organization_id, position) {
        organization_id -> Binary,
        position -> Integer,
        day -> Text,
        start_time -> Text,
        end_time -> Text,
    }
}

diesel::table! {
    users (organization_id, id) {
        organization_id -> Binary,
        id -> Binary,
        name -> Text,
        email -> Text,
        role -> Text,
        title -> Nullable<Text>,
        manager_id -> Nullable<Binary>,
        linkedin_url -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    task_queues (organization_id, id) {
        organization_id -> Binary,
        id -> Binary,
        name -> Text,
    }
}

diesel::table! {
    candidates (organization_id, id) {
        organization_id -> Binary,
        id -> Binary,
        name -> Text,
        email -> Text,
        phone -> Text,
    }
}

diesel::table! {
    jobs (organization_id, id) {
        organization_id -> Binary,
        id -> Binary,
        name -> Text,
        status -> Text,
        confidential -> Bool,
        locations -> Text,
        ats_type -> Text,
        ats_id -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
        default_task_queue_id -> Binary,
        remote_ats_id -> Text,
        remote_name -> Text,
        remote_status -> Text,
        locale -> Text,
    }
}

diesel::table! {
    job_settings (organization_id, job_id) {
        organization_id -> Binary,
        job_id -> Binary,
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
        organization_id -> Binary,
        job_id -> Binary,
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
        organization_id -> Binary,
        job_id -> Binary,
        position -> Integer,
        role -> Text,
        user_id -> Binary,
    }
}

diesel::table! {
    api_tokens (organization_id, id) {
        organization_id -> Binary,
        id -> Binary,
        user_id -> Binary,
        name -> Text,
        scopes -> Text,
        secret_hash -> Binary,
        created_at -> BigInt,
        expires_at -> Nullable<BigInt>,
        revoked_at -> Nullable<BigInt>,
        last_used_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    privacy_audit_logs (organization_id, id) {
        organization_id -> Binary,
        id -> Binary,
        access_time -> BigInt,
        account_id -> Binary,
        ip_addresses -> Text,
        subject_type -> Text,
        subject_user_id -> Nullable<Binary>,
        subject_candidate_id -> Nullable<Binary>,
        bulk_count -> Nullable<BigInt>,
        query_type -> Nullable<Text>,
        query_ids -> Nullable<Text>,
        query_values -> Nullable<Text>,
        query_scope -> Nullable<Text>,
        access_data -> Text,
        access_menu -> Text,
        access_menu_path -> Text,
        activity_category -> Text,
        purpose -> Nullable<Text>,
        position -> Nullable<BigInt>,
        prev_hash -> Nullable<Binary>,
        hash -> Nullable<Binary>,
        recorded_at -> BigInt,
    }
}

diesel::table! {
    api_audit_log (organization_id, id) {
        organization_id -> Binary,
        id -> Binary,
        at -> BigInt,
        token_id -> Binary,
        user_id -> Binary,
        operation -> Text,
        request_id -> Text,
        client_ip -> Nullable<Text>,
        filters -> Text,
        entries_returned -> Integer,
        interface -> Text,
        tool_name -> Nullable<Text>,
        position -> Nullable<BigInt>,
        prev_hash -> Nullable<Binary>,
        hash -> Nullable<Binary>,
        recorded_at -> BigInt,
    }
}

diesel::table! {
    tool_audit_log (organization_id, id) {
        organization_id -> Binary,
        id -> Binary,
        at -> BigInt,
        token_id -> Binary,
        user_id -> Binary,
        tool_name -> Text,
        arguments -> Text,
        entries_returned -> Integer,
        request_id -> Text,
        position -> Nullable<BigInt>,
        prev_hash -> Nullable<Binary>,
        hash -> Nullable<Binary>,
        recorded_at -> BigInt,
    }
}

diesel::table! {
    ledger_checkpoints (organization_id, ledger, position, key_id) {
        organization_id -> Binary,
        ledger -> Text,
        position -> BigInt,
        head_hash -> Binary,
        signed_at -> BigInt,
        key_id -> Text,
        signature -> Text,
    }
}

diesel::table! {
    ledger_retention_cuts (organization_id, ledger, position) {
        organization_id -> Binary,
        ledger -> Text,
        position -> BigInt,
        hash -> Binary,
        recorded_before -> BigInt,
        signed_at -> BigInt,
        key_id -> Text,
        signature -> Text,
    }
}

diesel::table! {
    ledger_heads (organization_id, ledger) {
        organization_id -> Binary,
        ledger -> Text,
        position -> BigInt,
        hash -> Binary,
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
        created_at -> BigInt,
    }
}

diesel::table! {
    idempotency_keys (organization_id, key) {
        organization_id -> Binary,
        key -> Text,
        fingerprint -> Binary,
        expires_at -> BigInt,
        status -> Nullable<Integer>,
        response -> Nullable<Binary>,
        created_at -> BigInt,
    }
}

diesel::table! {
    organization_scheduling_defaults (organization_id) {
        organization_id -> Binary,
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
        organization_id -> Binary,
        job_id -> Binary,
        position -> Integer,
        id -> Binary,
        name -> Text,
    }
}

diesel::table! {
    privacy_download_decisions (organization_id, id) {
        organization_id -> Binary,
        id -> Binary,
        month -> Text,
        entry_id -> Binary,
        status -> Text,
        reason -> Text,
        user_id -> Binary,
        token_id -> Binary,
        decided_at -> BigInt,
        request_id -> Text,
    }
}

diesel::table! {
    privacy_review_sign_offs (organization_id, month) {
        organization_id -> Binary,
        month -> Text,
        user_id -> Binary,
        signed_at -> BigInt,
        note -> Nullable<Text>,
        body -> Text,
    }
}

diesel::table! {
    console_sessions (organization_id, id) {
        organization_id -> Binary,
        id -> Binary,
        user_id -> Binary,
        token_id -> Binary,
        secret_hash -> Binary,
        created_at -> BigInt,
        last_seen_at -> BigInt,
        expires_at -> BigInt,
        ended_at -> Nullable<BigInt>,
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
