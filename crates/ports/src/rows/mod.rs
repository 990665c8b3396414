//! The stored rows, declared once for every store.
//!
//! [`stored_rows!`](crate::stored_rows) lists each table's row: its name, its table and its
//! columns, each with a neutral column type ([`column`](mod@column)). This module expands it into plain
//! structs and writes, once, the translation between them and the domain's types; a storage
//! adapter expands the same list into its own row structs (diesel's, with its column types: a
//! UUID as `uuid` or as a 16-byte blob, a time as `timestamptz` or as integer microseconds) and
//! converts each column between the neutral type and its own. A new column is one line in the
//! list, one in each store's migration and schema, and its translation here.

mod directory;
mod import;
mod ledgers;
mod review;

pub use directory::{TeamMemberColumns, job_record, job_rows};
pub use import::{DocumentRows, LedgerKeys};
pub use ledgers::{AccessRows, ReadRecords, RecordedPage};

use crate::StoreError;

/// The neutral column types rows are declared with. Besides these: `String`, `bool`, `i32`,
/// `i64`, `Vec<String>` (a list of texts), `Vec<Uuid>` (a list of identifiers), `Vec<u8>`
/// (bytes), and `Option` of any of them for a nullable column.
pub mod column {
    pub use recruit_domain::{Timestamp, Uuid};

    /// A JSON document.
    pub type Json = serde_json::Value;
}

/// Calls the macro `$expand` with the declaration of every stored row:
///
/// ```text
/// /// docs
/// RowName in table_name { column: Type, … }
/// …
/// ```
///
/// Types are [`column`](mod@column)'s, spelled as full paths so that they mean the same wherever the list
/// is expanded. The order of the columns is the order of the table's columns.
#[macro_export]
macro_rules! stored_rows {
    ($expand:ident) => {
        $expand! {
            /// An organization and its scheduling defaults.
            OrganizationRow in organizations {
                id: $crate::rows::column::Uuid,
                name: String,
                domain: String,
                daily_max_limit: i32,
                daily_max_type: String,
                daily_min_interviews: i32,
                daily_min_minutes: i32,
                weekly_max_limit: i32,
                weekly_max_type: String,
                weekly_min_interviews: i32,
                weekly_min_minutes: i32,
                buffer_before_minutes: i32,
                buffer_after_minutes: i32,
                feedback_writing_time_minutes: i32,
                keywords_out_of_office: Vec<String>,
                keywords_avoid: Vec<String>,
                keywords_available_if_needed: Vec<String>,
                keywords_recruiting_block: Vec<String>,
                name_source: String,
                title_source: String,
                manager_source: String,
                linkedin_url_source: String,
                time_zone: String,
                review_rules: $crate::rows::column::Json,
                sso: Option<$crate::rows::column::Json>,
            }
            /// An organization's defaults of the scheduling settings its jobs inherit.
            SchedulingDefaultsRow in organization_scheduling_defaults {
                organization_id: $crate::rows::column::Uuid,
                name_show_interview_name: bool,
                name_is_locked: bool,
                info_can_show_info: bool,
                info_can_show_full_name: bool,
                info_can_show_job_title: bool,
                info_can_show_linkedin: bool,
                info_can_show_email: bool,
                info_can_show_profile_picture: bool,
                info_can_show_pronouns: bool,
                info_can_show_bio: bool,
                info_is_locked: bool,
                contact_show_recruiter: bool,
                contact_show_coordinator: bool,
                contact_can_show_job_title: bool,
                contact_can_show_linkedin: bool,
                contact_can_show_profile_picture: bool,
                contact_can_show_pronouns: bool,
                contact_can_show_bio: bool,
                contact_can_show_phone: bool,
                contact_is_locked: bool,
            }
            /// One day's work hours of an organization, in its list's order.
            WorkHoursRow in organization_work_hours {
                organization_id: $crate::rows::column::Uuid,
                position: i32,
                day: String,
                start_time: String,
                end_time: String,
            }
            /// A user of an organization and their profile.
            UserRow in users {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                name: String,
                email: String,
                role: String,
                title: Option<String>,
                manager_id: Option<$crate::rows::column::Uuid>,
                linkedin_url: Option<String>,
                created_at: $crate::rows::column::Timestamp,
                updated_at: $crate::rows::column::Timestamp,
                status: String,
                user_name: Option<String>,
                external_id: Option<String>,
            }
            /// A task queue.
            TaskQueueRow in task_queues {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                name: String,
            }
            /// A candidate.
            CandidateRow in candidates {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                name: String,
                email: String,
                phone: String,
            }
            /// A job, without its settings and hiring team.
            JobRow in jobs {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                name: String,
                status: String,
                confidential: bool,
                locations: Vec<String>,
                ats_type: String,
                ats_id: String,
                created_at: $crate::rows::column::Timestamp,
                updated_at: $crate::rows::column::Timestamp,
                default_task_queue_id: $crate::rows::column::Uuid,
                remote_ats_id: String,
                remote_name: String,
                remote_status: String,
                locale: String,
            }
            /// A job's overrides of its organization's three scheduling settings: a setting's
            /// values count only when its `*_is_custom` says the job overrides it.
            JobSettingsRow in job_settings {
                organization_id: $crate::rows::column::Uuid,
                job_id: $crate::rows::column::Uuid,
                name_is_custom: bool,
                name_show_interview_name: bool,
                info_is_custom: bool,
                info_can_show_info: bool,
                info_can_show_full_name: bool,
                info_can_show_job_title: bool,
                info_can_show_linkedin: bool,
                info_can_show_email: bool,
                info_can_show_profile_picture: bool,
                info_can_show_pronouns: bool,
                info_can_show_bio: bool,
                contact_is_custom: bool,
                contact_show_recruiter: bool,
                contact_show_coordinator: bool,
                contact_can_show_job_title: bool,
                contact_can_show_linkedin: bool,
                contact_can_show_profile_picture: bool,
                contact_can_show_pronouns: bool,
                contact_can_show_bio: bool,
                contact_can_show_phone: bool,
            }
            /// A job's three scheduling settings as resolved from its overrides and its
            /// organization's defaults (`SchedulingDefaults::resolve`), kept by the store in the
            /// transaction that writes either: what the job read returns.
            ResolvedSettingsRow in job_resolved_settings {
                organization_id: $crate::rows::column::Uuid,
                job_id: $crate::rows::column::Uuid,
                name_is_custom: bool,
                name_is_locked: bool,
                name_show_interview_name: bool,
                info_is_custom: bool,
                info_is_locked: bool,
                info_can_show_info: bool,
                info_can_show_full_name: bool,
                info_can_show_job_title: bool,
                info_can_show_linkedin: bool,
                info_can_show_email: bool,
                info_can_show_profile_picture: bool,
                info_can_show_pronouns: bool,
                info_can_show_bio: bool,
                contact_is_custom: bool,
                contact_is_locked: bool,
                contact_show_recruiter: bool,
                contact_show_coordinator: bool,
                contact_can_show_job_title: bool,
                contact_can_show_linkedin: bool,
                contact_can_show_profile_picture: bool,
                contact_can_show_pronouns: bool,
                contact_can_show_bio: bool,
                contact_can_show_phone: bool,
            }
            /// A stage of a job's hiring process, in the process's order.
            JobStageRow in job_stages {
                organization_id: $crate::rows::column::Uuid,
                job_id: $crate::rows::column::Uuid,
                position: i32,
                id: $crate::rows::column::Uuid,
                name: String,
            }
            /// A member of a job's hiring team, in the team's order.
            HiringTeamRow in job_hiring_team {
                organization_id: $crate::rows::column::Uuid,
                job_id: $crate::rows::column::Uuid,
                position: i32,
                role: String,
                user_id: $crate::rows::column::Uuid,
            }
            /// An API token; its secret only as a hash.
            TokenRow in api_tokens {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                user_id: $crate::rows::column::Uuid,
                name: String,
                scopes: Vec<String>,
                secret_hash: Vec<u8>,
                created_at: $crate::rows::column::Timestamp,
                expires_at: Option<$crate::rows::column::Timestamp>,
                revoked_at: Option<$crate::rows::column::Timestamp>,
                last_used_at: Option<$crate::rows::column::Timestamp>,
            }
            /// An entry of the privacy audit ledger, its data subject in columns.
            LedgerRow in privacy_audit_logs {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                access_time: $crate::rows::column::Timestamp,
                account_id: $crate::rows::column::Uuid,
                ip_addresses: Vec<String>,
                subject_type: String,
                subject_user_id: Option<$crate::rows::column::Uuid>,
                subject_candidate_id: Option<$crate::rows::column::Uuid>,
                bulk_count: Option<i64>,
                query_type: Option<String>,
                query_ids: Option<Vec<$crate::rows::column::Uuid>>,
                query_values: Option<Vec<String>>,
                query_scope: Option<String>,
                access_data: Vec<String>,
                access_menu: String,
                access_menu_path: String,
                activity_category: String,
                purpose: Option<String>,
                position: Option<i64>,
                prev_hash: Option<Vec<u8>>,
                hash: Option<Vec<u8>>,
            }
            /// An entry of the API audit ledger: one read of the privacy ledger.
            AuditRow in api_audit_log {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                at: $crate::rows::column::Timestamp,
                token_id: $crate::rows::column::Uuid,
                user_id: $crate::rows::column::Uuid,
                operation: String,
                request_id: String,
                client_ip: Option<String>,
                filters: $crate::rows::column::Json,
                entries_returned: i32,
                interface: String,
                tool_name: Option<String>,
                position: Option<i64>,
                prev_hash: Option<Vec<u8>>,
                hash: Option<Vec<u8>>,
            }
            /// An idempotency key of a create operation.
            IdempotencyRow in idempotency_keys {
                organization_id: $crate::rows::column::Uuid,
                key: String,
                fingerprint: Vec<u8>,
                expires_at: $crate::rows::column::Timestamp,
                status: Option<i32>,
                response: Option<Vec<u8>>,
                created_at: $crate::rows::column::Timestamp,
            }
            /// An entry of the tool-interface audit ledger: one tool call that read the
            /// privacy ledger.
            ToolAuditRow in tool_audit_log {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                at: $crate::rows::column::Timestamp,
                token_id: $crate::rows::column::Uuid,
                user_id: $crate::rows::column::Uuid,
                tool_name: String,
                arguments: $crate::rows::column::Json,
                entries_returned: i32,
                request_id: String,
                position: Option<i64>,
                prev_hash: Option<Vec<u8>>,
                hash: Option<Vec<u8>>,
            }
            /// The head of an organization's chain of one ledger: the position and hash of
            /// its last entry (0 and zeros before the first).
            LedgerHeadRow in ledger_heads {
                organization_id: $crate::rows::column::Uuid,
                ledger: String,
                position: i64,
                hash: Vec<u8>,
            }
            /// A signed checkpoint of a chain (`recruit_domain::chain::Checkpoint`).
            CheckpointRow in ledger_checkpoints {
                organization_id: $crate::rows::column::Uuid,
                ledger: String,
                position: i64,
                head_hash: Vec<u8>,
                signed_at: $crate::rows::column::Timestamp,
                key_id: String,
                signature: String,
            }
            /// A signed retention cut of a chain (`recruit_domain::chain::RetentionCut`).
            RetentionCutRow in ledger_retention_cuts {
                organization_id: $crate::rows::column::Uuid,
                ledger: String,
                position: i64,
                hash: Vec<u8>,
                recorded_before: $crate::rows::column::Timestamp,
                signed_at: $crate::rows::column::Timestamp,
                key_id: String,
                signature: String,
            }
            /// A reviewer's decision on a download of a month's review: kept as made, a later
            /// decision on the same entry added beside it.
            DownloadDecisionRow in privacy_download_decisions {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                month: String,
                entry_id: $crate::rows::column::Uuid,
                status: String,
                reason: String,
                user_id: $crate::rows::column::Uuid,
                token_id: $crate::rows::column::Uuid,
                decided_at: $crate::rows::column::Timestamp,
                request_id: String,
            }
            /// A session of the review console: the token it stands for, its secret only as
            /// a hash.
            ConsoleSessionRow in console_sessions {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                user_id: $crate::rows::column::Uuid,
                token_id: $crate::rows::column::Uuid,
                secret_hash: Vec<u8>,
                created_at: $crate::rows::column::Timestamp,
                last_seen_at: $crate::rows::column::Timestamp,
                expires_at: $crate::rows::column::Timestamp,
                ended_at: Option<$crate::rows::column::Timestamp>,
            }
            /// A log stream: its settings, and how far its delivery has got (the lease of the
            /// replica delivering it, whose epoch fences every advance).
            LogStreamRow in log_streams {
                organization_id: $crate::rows::column::Uuid,
                id: $crate::rows::column::Uuid,
                name: String,
                ledger: String,
                destination: $crate::rows::column::Json,
                secrets: $crate::rows::column::Json,
                paused: bool,
                created_by: $crate::rows::column::Uuid,
                created_at: $crate::rows::column::Timestamp,
                updated_at: $crate::rows::column::Timestamp,
                delivered_position: i64,
                delivered_hash: Vec<u8>,
                delivered_at: Option<$crate::rows::column::Timestamp>,
                health: String,
                failing_since: Option<$crate::rows::column::Timestamp>,
                attempts: i32,
                next_attempt_at: Option<$crate::rows::column::Timestamp>,
                last_error: Option<$crate::rows::column::Json>,
                pending: Option<$crate::rows::column::Json>,
                lease_holder: Option<$crate::rows::column::Uuid>,
                lease_epoch: i64,
                lease_expires_at: Option<$crate::rows::column::Timestamp>,
            }
            /// The sign-off of an organization's month of review, one per month, as signed.
            SignOffRow in privacy_review_sign_offs {
                organization_id: $crate::rows::column::Uuid,
                month: String,
                user_id: $crate::rows::column::Uuid,
                signed_at: $crate::rows::column::Timestamp,
                note: Option<String>,
                body: $crate::rows::column::Json,
            }
        }
    };
}

/// Expands the declarations into the neutral row structs.
macro_rules! neutral_rows {
    ($($(#[$doc:meta])* $row:ident in $table:ident { $($field:ident: $ty:ty),* $(,)? })*) => {$(
        $(#[$doc])*
        ///
        #[doc = concat!("The columns of the table `", stringify!($table), "`, in its order.")]
        #[derive(Clone, Debug, PartialEq)]
        #[expect(missing_docs, reason = "each field is the table's column of the same name")]
        pub struct $row {
            $(pub $field: $ty,)*
        }
    )*};
}

crate::stored_rows!(neutral_rows);

/// A stored row that does not decode: the store's data is corrupt.
pub fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::other(format!("corrupt row in the store: {what}"))
}
