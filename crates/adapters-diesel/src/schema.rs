//! The tables both stores keep, declared once ([`tables!`](crate::tables)): each store names the
//! SQL types its columns have, and the macro declares diesel's tables with them.

/// Declares diesel's tables of recruitd's schema for one store (see each store's
/// `migrations/`), given the SQL type that store keeps for each kind of column that differs
/// between the stores:
///
/// | kind | PostgreSQL | SQLite |
/// |---|---|---|
/// | `Id` (a UUID) | `Uuid` | `Binary` (16 bytes) |
/// | `Stamp` (an instant) | `Timestamptz` | `BigInt` (microseconds) |
/// | `TextList` | `Array<Text>` | `Text` (a JSON array) |
/// | `IdList` | `Array<Uuid>` | `Text` (a JSON array) |
/// | `Document` | `Jsonb` | `Text` (JSON) |
///
/// It declares a module `types` with the five names beside the tables, and the joins both
/// stores query (`console_sessions_with_holders`).
#[macro_export]
macro_rules! tables {
    (Id = $id:ty, Stamp = $stamp:ty, TextList = $text_list:ty, IdList = $id_list:ty, Document = $document:ty $(,)?) => {
        /// The SQL types of this store's columns whose type differs between the stores.
        pub mod types {
            #[allow(unused_imports)]
            use diesel::sql_types::*;
            pub type Id = $id;
            pub type Stamp = $stamp;
            pub type TextList = $text_list;
            pub type IdList = $id_list;
            pub type Document = $document;
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            organizations (id) {
                id -> Id,
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
                keywords_out_of_office -> TextList,
                keywords_avoid -> TextList,
                keywords_available_if_needed -> TextList,
                keywords_recruiting_block -> TextList,
                name_source -> Text,
                title_source -> Text,
                manager_source -> Text,
                linkedin_url_source -> Text,
                time_zone -> Text,
                review_rules -> Document,
                sso -> Nullable<Document>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            organization_work_hours (organization_id, position) {
                organization_id -> Id,
                position -> Integer,
                day -> Text,
                start_time -> Text,
                end_time -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            users (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                name -> Text,
                email -> Text,
                role -> Text,
                title -> Nullable<Text>,
                manager_id -> Nullable<Id>,
                linkedin_url -> Nullable<Text>,
                created_at -> Stamp,
                updated_at -> Stamp,
                status -> Text,
                user_name -> Nullable<Text>,
                external_id -> Nullable<Text>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            task_queues (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                name -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            candidates (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                name -> Text,
                email -> Text,
                phone -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            jobs (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                name -> Text,
                status -> Text,
                confidential -> Bool,
                locations -> TextList,
                ats_type -> Text,
                ats_id -> Text,
                created_at -> Stamp,
                updated_at -> Stamp,
                default_task_queue_id -> Id,
                remote_ats_id -> Text,
                remote_name -> Text,
                remote_status -> Text,
                locale -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            job_settings (organization_id, job_id) {
                organization_id -> Id,
                job_id -> Id,
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
            use diesel::sql_types::*;
            use super::types::*;

            job_resolved_settings (organization_id, job_id) {
                organization_id -> Id,
                job_id -> Id,
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
            use diesel::sql_types::*;
            use super::types::*;

            job_hiring_team (organization_id, job_id, position) {
                organization_id -> Id,
                job_id -> Id,
                position -> Integer,
                role -> Text,
                user_id -> Id,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            api_tokens (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                user_id -> Id,
                name -> Text,
                scopes -> TextList,
                secret_hash -> Binary,
                created_at -> Stamp,
                expires_at -> Nullable<Stamp>,
                revoked_at -> Nullable<Stamp>,
                last_used_at -> Nullable<Stamp>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            privacy_audit_logs (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                access_time -> Stamp,
                account_id -> Id,
                ip_addresses -> TextList,
                subject_type -> Text,
                subject_user_id -> Nullable<Id>,
                subject_candidate_id -> Nullable<Id>,
                bulk_count -> Nullable<BigInt>,
                query_type -> Nullable<Text>,
                query_ids -> Nullable<IdList>,
                query_values -> Nullable<TextList>,
                query_scope -> Nullable<Text>,
                access_data -> TextList,
                access_menu -> Text,
                access_menu_path -> Text,
                activity_category -> Text,
                purpose -> Nullable<Text>,
                position -> Nullable<BigInt>,
                prev_hash -> Nullable<Binary>,
                hash -> Nullable<Binary>,
                recorded_at -> Stamp,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            api_audit_log (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                at -> Stamp,
                token_id -> Id,
                user_id -> Id,
                operation -> Text,
                request_id -> Text,
                client_ip -> Nullable<Text>,
                filters -> Document,
                entries_returned -> Integer,
                interface -> Text,
                tool_name -> Nullable<Text>,
                position -> Nullable<BigInt>,
                prev_hash -> Nullable<Binary>,
                hash -> Nullable<Binary>,
                recorded_at -> Stamp,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            tool_audit_log (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                at -> Stamp,
                token_id -> Id,
                user_id -> Id,
                tool_name -> Text,
                arguments -> Document,
                entries_returned -> Integer,
                request_id -> Text,
                position -> Nullable<BigInt>,
                prev_hash -> Nullable<Binary>,
                hash -> Nullable<Binary>,
                recorded_at -> Stamp,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            ledger_checkpoints (organization_id, ledger, position, key_id) {
                organization_id -> Id,
                ledger -> Text,
                position -> BigInt,
                head_hash -> Binary,
                signed_at -> Stamp,
                key_id -> Text,
                signature -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            ledger_retention_cuts (organization_id, ledger, position) {
                organization_id -> Id,
                ledger -> Text,
                position -> BigInt,
                hash -> Binary,
                recorded_before -> Stamp,
                signed_at -> Stamp,
                key_id -> Text,
                signature -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            ledger_heads (organization_id, ledger) {
                organization_id -> Id,
                ledger -> Text,
                position -> BigInt,
                hash -> Binary,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            ledger_chain_backfill (pending) {
                pending -> Bool,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            server_secrets (name) {
                name -> Text,
                value -> Binary,
                created_at -> Stamp,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            idempotency_keys (organization_id, key) {
                organization_id -> Id,
                key -> Text,
                fingerprint -> Binary,
                expires_at -> Stamp,
                status -> Nullable<Integer>,
                response -> Nullable<Binary>,
                created_at -> Stamp,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            organization_scheduling_defaults (organization_id) {
                organization_id -> Id,
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
            use diesel::sql_types::*;
            use super::types::*;

            job_stages (organization_id, job_id, position) {
                organization_id -> Id,
                job_id -> Id,
                position -> Integer,
                id -> Id,
                name -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            privacy_download_decisions (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                month -> Text,
                entry_id -> Id,
                status -> Text,
                reason -> Text,
                user_id -> Id,
                token_id -> Id,
                decided_at -> Stamp,
                request_id -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            privacy_review_sign_offs (organization_id, month) {
                organization_id -> Id,
                month -> Text,
                user_id -> Id,
                signed_at -> Stamp,
                note -> Nullable<Text>,
                body -> Document,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            console_sessions (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                user_id -> Id,
                token_id -> Id,
                secret_hash -> Binary,
                created_at -> Stamp,
                last_seen_at -> Stamp,
                expires_at -> Stamp,
                ended_at -> Nullable<Stamp>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use super::types::*;

            log_streams (organization_id, id) {
                organization_id -> Id,
                id -> Id,
                name -> Text,
                ledger -> Text,
                destination -> Document,
                secrets -> Document,
                paused -> Bool,
                created_by -> Id,
                created_at -> Stamp,
                updated_at -> Stamp,
                delivered_position -> BigInt,
                delivered_hash -> Binary,
                delivered_at -> Nullable<Stamp>,
                health -> Text,
                failing_since -> Nullable<Stamp>,
                attempts -> Integer,
                next_attempt_at -> Nullable<Stamp>,
                last_error -> Nullable<Document>,
                pending -> Nullable<Document>,
                lease_holder -> Nullable<Id>,
                lease_epoch -> BigInt,
                lease_expires_at -> Nullable<Stamp>,
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
            log_streams,
        );

        /// The console sessions joined to their tokens and the tokens' users: what
        /// `Tokens::console_session` selects from.
        #[diesel::dsl::auto_type]
        pub fn console_sessions_with_holders() -> _ {
            use diesel::{BoolExpressionMethods, ExpressionMethods, JoinOnDsl, QueryDsl};
            console_sessions::table
                .inner_join(
                    api_tokens::table.on(api_tokens::organization_id
                        .eq(console_sessions::organization_id)
                        .and(api_tokens::id.eq(console_sessions::token_id))),
                )
                .inner_join(
                    users::table.on(users::organization_id
                        .eq(api_tokens::organization_id)
                        .and(users::id.eq(api_tokens::user_id))),
                )
        }
    };
}
