//! The stored rows, declared once for every store.
//!
//! [`stored_rows!`](crate::stored_rows) lists each table's row: its name, its table and its
//! columns, each with a neutral column type ([`column`](mod@column)). This module expands it into plain
//! structs and writes, once, the translation between them and the domain's types; a storage
//! adapter expands the same list into its own row structs (diesel's, with its column types: a
//! UUID as `uuid` or as a 16-byte blob, a time as `timestamptz` or as integer microseconds) and
//! converts each column between the neutral type and its own. A new column is one line in the
//! list, one in each store's migration and schema, and its translation here.

use std::collections::HashSet;

use recruit_domain::model::*;
use recruit_domain::{
    AccountId, Candidate, Id, OrganizationId, PrivacyAuditLog, PrivacyAuditLogId, Scope, TaskQueue,
    User,
};

use crate::columns::SubjectColumns;
use crate::{
    AccessesWrite, ApiToken, AuditEntry, ImportDocument, ImportSummary, Interface, JobRecord,
    KeyClaim, LedgerEntry, NewApiToken, NewJob, OrganizationRecord, SecretHash, StoreError,
    StoredKey, StoredResponse, ToolAuditEntry,
};

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
                locked_until: Option<$crate::rows::column::Timestamp>,
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

impl OrganizationRow {
    /// The rows of an organization: its own and its work hours'.
    pub fn new(o: &OrganizationRecord) -> (Self, Vec<WorkHoursRow>) {
        let s = &o.settings;
        let (daily, weekly) = (&s.interviewer_load_limits.daily, &s.interviewer_load_limits.weekly);
        let row = Self {
            id: o.id.uuid(),
            name: o.name.clone(),
            domain: o.domain.clone(),
            daily_max_limit: daily.maximum.limit,
            daily_max_type: daily.maximum.kind.as_str().into(),
            daily_min_interviews: daily.minimum.interviews,
            daily_min_minutes: daily.minimum.minutes,
            weekly_max_limit: weekly.maximum.limit,
            weekly_max_type: weekly.maximum.kind.as_str().into(),
            weekly_min_interviews: weekly.minimum.interviews,
            weekly_min_minutes: weekly.minimum.minutes,
            buffer_before_minutes: s.interview_buffer.before_minutes,
            buffer_after_minutes: s.interview_buffer.after_minutes,
            feedback_writing_time_minutes: s.feedback_writing_time_minutes,
            keywords_out_of_office: s.conflict_keywords.out_of_office.clone(),
            keywords_avoid: s.conflict_keywords.avoid.clone(),
            keywords_available_if_needed: s.conflict_keywords.available_if_needed.clone(),
            keywords_recruiting_block: s.conflict_keywords.recruiting_block.clone(),
            name_source: o.profile_field_sources.name.as_str().into(),
            title_source: o.profile_field_sources.title.as_str().into(),
            manager_source: o.profile_field_sources.manager.as_str().into(),
            linkedin_url_source: o.profile_field_sources.linkedin_url.as_str().into(),
        };
        let hours = s
            .work_hours
            .iter()
            .zip(0..)
            .map(|(h, position)| WorkHoursRow {
                organization_id: o.id.uuid(),
                position,
                day: h.day.as_str().into(),
                start_time: h.start.clone(),
                end_time: h.end.clone(),
            })
            .collect();
        (row, hours)
    }

    /// The organization, with its work hours in order.
    pub fn into_record(
        self,
        hours: Vec<WorkHoursRow>,
        defaults: SchedulingDefaultsRow,
    ) -> Result<OrganizationRecord, StoreError> {
        let limit = |limit, kind: &str, interviews, minutes| LoadLimit {
            maximum: MaximumLoad { limit, kind: LoadLimitType::from(kind) },
            minimum: MinimumLoad { interviews, minutes },
        };
        let source =
            |s: &str| FieldSource::from_wire(s).ok_or_else(|| corrupt("unknown field source"));
        let profile_field_sources = ProfileFieldSources {
            name: source(&self.name_source)?,
            title: source(&self.title_source)?,
            manager: source(&self.manager_source)?,
            linkedin_url: source(&self.linkedin_url_source)?,
        };
        Ok(OrganizationRecord {
            id: Id::from_uuid(self.id),
            profile_field_sources,
            scheduling_defaults: defaults.into_defaults(),
            name: self.name,
            domain: self.domain,
            settings: OrganizationSettings {
                work_hours: hours
                    .into_iter()
                    .map(|h| WorkHours {
                        day: Weekday::from(h.day.as_str()),
                        start: h.start_time,
                        end: h.end_time,
                    })
                    .collect(),
                interviewer_load_limits: InterviewerLoadLimits {
                    daily: limit(
                        self.daily_max_limit,
                        &self.daily_max_type,
                        self.daily_min_interviews,
                        self.daily_min_minutes,
                    ),
                    weekly: limit(
                        self.weekly_max_limit,
                        &self.weekly_max_type,
                        self.weekly_min_interviews,
                        self.weekly_min_minutes,
                    ),
                },
                interview_buffer: InterviewBuffer {
                    before_minutes: self.buffer_before_minutes,
                    after_minutes: self.buffer_after_minutes,
                },
                feedback_writing_time_minutes: self.feedback_writing_time_minutes,
                conflict_keywords: ConflictKeywords {
                    out_of_office: self.keywords_out_of_office,
                    avoid: self.keywords_avoid,
                    available_if_needed: self.keywords_available_if_needed,
                    recruiting_block: self.keywords_recruiting_block,
                },
            },
        })
    }
}

impl SchedulingDefaultsRow {
    /// The row of an organization's scheduling defaults.
    pub fn new(o: &OrganizationRecord) -> Self {
        let d = &o.scheduling_defaults;
        let (n, i, c) = (
            &d.interview_name_setting,
            &d.interviewer_info_setting,
            &d.recruiting_team_contact_info_setting,
        );
        Self {
            organization_id: o.id.uuid(),
            name_show_interview_name: n.values.show_interview_name,
            name_is_locked: n.is_locked,
            info_can_show_info: i.values.can_show_info,
            info_can_show_full_name: i.values.can_show_full_name,
            info_can_show_job_title: i.values.can_show_job_title,
            info_can_show_linkedin: i.values.can_show_linkedin,
            info_can_show_email: i.values.can_show_email,
            info_can_show_profile_picture: i.values.can_show_profile_picture,
            info_can_show_pronouns: i.values.can_show_pronouns,
            info_can_show_bio: i.values.can_show_bio,
            info_is_locked: i.is_locked,
            contact_show_recruiter: c.values.show_recruiter,
            contact_show_coordinator: c.values.show_coordinator,
            contact_can_show_job_title: c.values.can_show_job_title,
            contact_can_show_linkedin: c.values.can_show_linkedin,
            contact_can_show_profile_picture: c.values.can_show_profile_picture,
            contact_can_show_pronouns: c.values.can_show_pronouns,
            contact_can_show_bio: c.values.can_show_bio,
            contact_can_show_phone: c.values.can_show_phone,
            contact_is_locked: c.is_locked,
        }
    }

    /// The defaults.
    pub fn into_defaults(self) -> SchedulingDefaults {
        SchedulingDefaults {
            interview_name_setting: OrgDefault {
                values: InterviewNameValues { show_interview_name: self.name_show_interview_name },
                is_locked: self.name_is_locked,
            },
            interviewer_info_setting: OrgDefault {
                values: InterviewerInfoValues {
                    can_show_info: self.info_can_show_info,
                    can_show_full_name: self.info_can_show_full_name,
                    can_show_job_title: self.info_can_show_job_title,
                    can_show_linkedin: self.info_can_show_linkedin,
                    can_show_email: self.info_can_show_email,
                    can_show_profile_picture: self.info_can_show_profile_picture,
                    can_show_pronouns: self.info_can_show_pronouns,
                    can_show_bio: self.info_can_show_bio,
                },
                is_locked: self.info_is_locked,
            },
            recruiting_team_contact_info_setting: OrgDefault {
                values: ContactInfoValues {
                    show_recruiter: self.contact_show_recruiter,
                    show_coordinator: self.contact_show_coordinator,
                    can_show_job_title: self.contact_can_show_job_title,
                    can_show_linkedin: self.contact_can_show_linkedin,
                    can_show_profile_picture: self.contact_can_show_profile_picture,
                    can_show_pronouns: self.contact_can_show_pronouns,
                    can_show_bio: self.contact_can_show_bio,
                    can_show_phone: self.contact_can_show_phone,
                },
                is_locked: self.contact_is_locked,
            },
        }
    }
}

impl UserRow {
    /// The row of a user.
    pub fn new(u: &User) -> Self {
        Self {
            organization_id: u.organization_id.uuid(),
            id: u.id.uuid(),
            name: u.name.clone(),
            email: u.email.clone(),
            role: u.role.as_str().into(),
            title: u.title.clone(),
            manager_id: u.manager.map(|m| m.uuid()),
            linkedin_url: u.linkedin_url.clone(),
            created_at: u.created_at,
            updated_at: u.updated_at,
        }
    }

    /// The user.
    pub fn into_user(self) -> Result<User, StoreError> {
        Ok(User {
            id: Id::from_uuid(self.id),
            organization_id: Id::from_uuid(self.organization_id),
            name: self.name,
            email: self.email,
            role: Role::from_wire(&self.role).ok_or_else(|| corrupt("unknown role"))?,
            title: self.title,
            manager: self.manager_id.map(Id::from_uuid),
            linkedin_url: self.linkedin_url,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

impl TaskQueueRow {
    /// The row of a task queue.
    pub fn new(q: &TaskQueue) -> Self {
        Self { organization_id: q.organization_id.uuid(), id: q.id.uuid(), name: q.name.clone() }
    }
}

impl CandidateRow {
    /// The row of a candidate.
    pub fn new(c: &Candidate) -> Self {
        Self {
            organization_id: c.organization_id.uuid(),
            id: c.id.uuid(),
            name: c.name.clone(),
            email: c.email.clone(),
            phone: c.phone.clone(),
        }
    }
}

/// The rows of a job to import: its own, its settings' and its hiring team's.
/// The rows of a job: its own, its settings' overrides (a setting with `is_custom` is the job's
/// override; the others take the organization's default, and their `is_locked` and `level`
/// are derived on read, never stored), its hiring team's and its stages'.
pub fn job_rows(j: &NewJob) -> (JobRow, JobSettingsRow, Vec<HiringTeamRow>, Vec<JobStageRow>) {
    let (org, job) = (j.organization_id.uuid(), j.id.uuid());
    let s = &j.settings;
    let (n, i, c) = (
        &s.interview_name_setting,
        &s.interviewer_info_setting,
        &s.recruiting_team_contact_info_setting,
    );
    let row = JobRow {
        organization_id: org,
        id: job,
        name: j.name.clone(),
        status: j.status.as_str().into(),
        confidential: j.confidential,
        locations: j.locations.clone(),
        ats_type: j.ats.kind.as_str().into(),
        ats_id: j.ats.id.clone(),
        created_at: j.created_at,
        updated_at: j.updated_at,
        default_task_queue_id: s.default_task_queue_id.uuid(),
        remote_ats_id: s.remote_ats_hiring_process.ats_id.clone(),
        remote_name: s.remote_ats_hiring_process.name.clone(),
        remote_status: s.remote_ats_hiring_process.status.as_str().into(),
        locale: s.locale.clone(),
    };
    let settings = JobSettingsRow {
        organization_id: org,
        job_id: job,
        name_is_custom: n.is_custom,
        name_show_interview_name: n.show_interview_name,
        info_is_custom: i.is_custom,
        info_can_show_info: i.can_show_info,
        info_can_show_full_name: i.can_show_full_name,
        info_can_show_job_title: i.can_show_job_title,
        info_can_show_linkedin: i.can_show_linkedin,
        info_can_show_email: i.can_show_email,
        info_can_show_profile_picture: i.can_show_profile_picture,
        info_can_show_pronouns: i.can_show_pronouns,
        info_can_show_bio: i.can_show_bio,
        contact_is_custom: c.is_custom,
        contact_show_recruiter: c.show_recruiter,
        contact_show_coordinator: c.show_coordinator,
        contact_can_show_job_title: c.can_show_job_title,
        contact_can_show_linkedin: c.can_show_linkedin,
        contact_can_show_profile_picture: c.can_show_profile_picture,
        contact_can_show_pronouns: c.can_show_pronouns,
        contact_can_show_bio: c.can_show_bio,
        contact_can_show_phone: c.can_show_phone,
    };
    let stages = j
        .job_stages
        .iter()
        .zip(0..)
        .map(|(stage, position)| JobStageRow {
            organization_id: org,
            job_id: job,
            position,
            id: stage.id.uuid(),
            name: stage.name.clone(),
        })
        .collect();
    let team = j
        .hiring_team
        .iter()
        .zip(0..)
        .map(|(m, position)| HiringTeamRow {
            organization_id: org,
            job_id: job,
            position,
            role: m.role.as_str().into(),
            user_id: m.user_id.uuid(),
        })
        .collect();
    (row, settings, team, stages)
}

/// A member of a stored job's hiring team, as read with the user's name: role, user id, name.
pub type TeamMemberColumns = (String, column::Uuid, String);

impl JobSettingsRow {
    /// The job's overrides: a setting's values where the job overrides it.
    pub fn overrides(&self) -> SchedulingOverrides {
        let s = self;
        SchedulingOverrides {
            interview_name_setting: s
                .name_is_custom
                .then_some(InterviewNameValues { show_interview_name: s.name_show_interview_name }),
            interviewer_info_setting: s.info_is_custom.then_some(InterviewerInfoValues {
                can_show_info: s.info_can_show_info,
                can_show_full_name: s.info_can_show_full_name,
                can_show_job_title: s.info_can_show_job_title,
                can_show_linkedin: s.info_can_show_linkedin,
                can_show_email: s.info_can_show_email,
                can_show_profile_picture: s.info_can_show_profile_picture,
                can_show_pronouns: s.info_can_show_pronouns,
                can_show_bio: s.info_can_show_bio,
            }),
            recruiting_team_contact_info_setting: s.contact_is_custom.then_some(
                ContactInfoValues {
                    show_recruiter: s.contact_show_recruiter,
                    show_coordinator: s.contact_show_coordinator,
                    can_show_job_title: s.contact_can_show_job_title,
                    can_show_linkedin: s.contact_can_show_linkedin,
                    can_show_profile_picture: s.contact_can_show_profile_picture,
                    can_show_pronouns: s.contact_can_show_pronouns,
                    can_show_bio: s.contact_can_show_bio,
                    can_show_phone: s.contact_can_show_phone,
                },
            ),
        }
    }
}

impl ResolvedSettingsRow {
    /// The settings of the job of `overrides`, resolved against its organization's `defaults`.
    pub fn new(overrides: &JobSettingsRow, defaults: SchedulingDefaultsRow) -> Self {
        let (n, i, c) = defaults.into_defaults().resolve(&overrides.overrides());
        Self {
            organization_id: overrides.organization_id,
            job_id: overrides.job_id,
            name_is_custom: n.is_custom,
            name_is_locked: n.is_locked,
            name_show_interview_name: n.show_interview_name,
            info_is_custom: i.is_custom,
            info_is_locked: i.is_locked,
            info_can_show_info: i.can_show_info,
            info_can_show_full_name: i.can_show_full_name,
            info_can_show_job_title: i.can_show_job_title,
            info_can_show_linkedin: i.can_show_linkedin,
            info_can_show_email: i.can_show_email,
            info_can_show_profile_picture: i.can_show_profile_picture,
            info_can_show_pronouns: i.can_show_pronouns,
            info_can_show_bio: i.can_show_bio,
            contact_is_custom: c.is_custom,
            contact_is_locked: c.is_locked,
            contact_show_recruiter: c.show_recruiter,
            contact_show_coordinator: c.show_coordinator,
            contact_can_show_job_title: c.can_show_job_title,
            contact_can_show_linkedin: c.can_show_linkedin,
            contact_can_show_profile_picture: c.can_show_profile_picture,
            contact_can_show_pronouns: c.can_show_pronouns,
            contact_can_show_bio: c.can_show_bio,
            contact_can_show_phone: c.can_show_phone,
        }
    }

    /// The three settings as kept.
    pub fn into_settings(
        self,
    ) -> (InterviewNameSetting, InterviewerInfoSetting, RecruitingTeamContactInfoSetting) {
        let s = self;
        (
            InterviewNameSetting::from_resolved(Resolved::kept(
                InterviewNameValues { show_interview_name: s.name_show_interview_name },
                s.name_is_custom,
                s.name_is_locked,
            )),
            InterviewerInfoSetting::from_resolved(Resolved::kept(
                InterviewerInfoValues {
                    can_show_info: s.info_can_show_info,
                    can_show_full_name: s.info_can_show_full_name,
                    can_show_job_title: s.info_can_show_job_title,
                    can_show_linkedin: s.info_can_show_linkedin,
                    can_show_email: s.info_can_show_email,
                    can_show_profile_picture: s.info_can_show_profile_picture,
                    can_show_pronouns: s.info_can_show_pronouns,
                    can_show_bio: s.info_can_show_bio,
                },
                s.info_is_custom,
                s.info_is_locked,
            )),
            RecruitingTeamContactInfoSetting::from_resolved(Resolved::kept(
                ContactInfoValues {
                    show_recruiter: s.contact_show_recruiter,
                    show_coordinator: s.contact_show_coordinator,
                    can_show_job_title: s.contact_can_show_job_title,
                    can_show_linkedin: s.contact_can_show_linkedin,
                    can_show_profile_picture: s.contact_can_show_profile_picture,
                    can_show_pronouns: s.contact_can_show_pronouns,
                    can_show_bio: s.contact_can_show_bio,
                    can_show_phone: s.contact_can_show_phone,
                },
                s.contact_is_custom,
                s.contact_is_locked,
            )),
        )
    }
}

/// A stored job, from its rows, its resolved settings, its hiring team and its stages in
/// order.
pub fn job_record(
    j: JobRow,
    settings: ResolvedSettingsRow,
    team: Vec<TeamMemberColumns>,
    stages: Vec<JobStageRow>,
) -> Result<JobRecord, StoreError> {
    let (interview_name_setting, interviewer_info_setting, recruiting_team_contact_info_setting) =
        settings.into_settings();
    Ok(JobRecord {
        organization_id: Id::from_uuid(j.organization_id),
        id: Id::from_uuid(j.id),
        name: j.name,
        status: JobStatus::from_wire(&j.status).ok_or_else(|| corrupt("unknown job status"))?,
        confidential: j.confidential,
        locations: j.locations,
        hiring_team: team
            .into_iter()
            .map(|(role, user, name)| HiringTeamMember {
                role: HiringTeamRole::from(role.as_str()),
                user: UserRef { id: Id::from_uuid(user), name },
            })
            .collect(),
        ats: Ats { kind: AtsType::from(j.ats_type.as_str()), id: j.ats_id },
        created_at: j.created_at,
        updated_at: j.updated_at,
        settings: JobSettings {
            interview_name_setting,
            interviewer_info_setting,
            recruiting_team_contact_info_setting,
            default_task_queue_id: Id::from_uuid(j.default_task_queue_id),
            remote_ats_hiring_process: RemoteAtsHiringProcess {
                ats_id: j.remote_ats_id,
                name: j.remote_name,
                status: RemoteProcessStatus::from(j.remote_status.as_str()),
            },
            locale: j.locale,
        },
        job_stages: stages
            .into_iter()
            .map(|stage| {
                Ok(JobStage {
                    id: Id::from_uuid(stage.id),
                    name: stage.name,
                    position: u32::try_from(stage.position)
                        .map_err(|_| corrupt("a negative stage position"))?,
                })
            })
            .collect::<Result<_, StoreError>>()?,
    })
}

impl TokenRow {
    /// The row of a new token: not revoked, never used; its scopes sorted, each once.
    pub fn new(t: &NewApiToken) -> Self {
        let mut scopes: Vec<&str> = t.scopes.iter().map(|s| s.as_str()).collect();
        scopes.sort_unstable();
        scopes.dedup();
        Self {
            organization_id: t.organization_id.uuid(),
            id: t.id.uuid(),
            user_id: t.user_id.uuid(),
            name: t.name.clone(),
            scopes: scopes.into_iter().map(str::to_owned).collect(),
            secret_hash: t.secret_hash.0.to_vec(),
            created_at: t.created_at,
            expires_at: t.expires_at,
            revoked_at: None,
            last_used_at: None,
        }
    }

    /// The token.
    pub fn into_token(self) -> Result<ApiToken, StoreError> {
        let mut scopes = self
            .scopes
            .iter()
            .map(|s| s.parse::<Scope>().map_err(|_| corrupt("unknown scope")))
            .collect::<Result<Vec<_>, _>>()?;
        scopes.sort_unstable();
        scopes.dedup();
        Ok(ApiToken {
            id: Id::from_uuid(self.id),
            organization_id: Id::from_uuid(self.organization_id),
            user_id: Id::from_uuid(self.user_id),
            name: self.name,
            scopes,
            secret_hash: SecretHash(
                self.secret_hash
                    .as_slice()
                    .try_into()
                    .map_err(|_| corrupt("a secret hash is not 32 bytes"))?,
            ),
            created_at: self.created_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
            last_used_at: self.last_used_at,
        })
    }
}

impl LedgerRow {
    /// The row of a ledger entry. Fails only for a bulk count no store can hold.
    pub fn new(e: &LedgerEntry) -> Result<Self, StoreError> {
        let l = &e.entry;
        let s = SubjectColumns::from_subject(&l.data_subject)?;
        Ok(Self {
            organization_id: e.organization_id.uuid(),
            id: l.id.uuid(),
            access_time: l.access_time,
            account_id: l.account_id.uuid(),
            ip_addresses: l.ip_addresses.clone(),
            subject_type: s.subject_type,
            subject_user_id: s.user_id,
            subject_candidate_id: s.candidate_id,
            bulk_count: s.bulk_count,
            query_type: s.query_type,
            query_ids: s.query_ids,
            query_values: s.query_values,
            query_scope: s.query_scope,
            access_data: l.access_data.iter().map(|a| a.as_str().to_owned()).collect(),
            access_menu: l.access_menu.clone(),
            access_menu_path: l.access_menu_path.clone(),
            activity_category: l.activity_category.as_str().into(),
            position: None,
            prev_hash: None,
            hash: None,
        })
    }

    /// The entry with the organization whose ledger holds it.
    pub fn into_ledger_entry(self) -> Result<LedgerEntry, StoreError> {
        let organization_id = Id::from_uuid(self.organization_id);
        Ok(LedgerEntry { organization_id, entry: self.into_entry()? })
    }

    /// The entry.
    pub fn into_entry(self) -> Result<PrivacyAuditLog, StoreError> {
        let subject = SubjectColumns {
            subject_type: self.subject_type,
            user_id: self.subject_user_id,
            candidate_id: self.subject_candidate_id,
            bulk_count: self.bulk_count,
            query_type: self.query_type,
            query_ids: self.query_ids,
            query_values: self.query_values,
            query_scope: self.query_scope,
        };
        Ok(PrivacyAuditLog {
            id: Id::from_uuid(self.id),
            access_time: self.access_time,
            account_id: AccountId::from_uuid(self.account_id),
            ip_addresses: self.ip_addresses,
            data_subject: subject.into_subject()?,
            access_data: self
                .access_data
                .iter()
                .map(|a| AccessData::from_wire(a).ok_or_else(|| corrupt("unknown access data")))
                .collect::<Result<_, _>>()?,
            access_menu: self.access_menu,
            access_menu_path: self.access_menu_path,
            activity_category: ActivityCategory::from(self.activity_category.as_str()),
        })
    }
}

/// The audit rows of several reads of the privacy ledger, written together (a group commit).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadRecords {
    /// The API audit ledger's rows, one per read.
    pub api: Vec<AuditRow>,
    /// The tool-interface audit ledger's rows, for the reads through a tool.
    pub tool: Vec<ToolAuditRow>,
}

/// A page of the privacy ledger as a store read it, and the audit rows that record the read.
#[derive(Debug)]
pub struct RecordedPage<T> {
    /// The page's rows, at most the limit.
    pub rows: Vec<T>,
    /// Whether more rows follow the page.
    pub more: bool,
    /// The API audit ledger's row.
    pub api: AuditRow,
    /// The tool-interface audit ledger's row, when the read came through a tool.
    pub tool: Option<ToolAuditRow>,
}

impl crate::ReadRecord {
    /// The page of `rows`, read with one more than `limit` to tell whether more follow, and
    /// the audit rows of this read, counting the entries the page returns.
    pub fn page<T>(&self, mut rows: Vec<T>, limit: usize) -> RecordedPage<T> {
        let more = rows.len() > limit;
        rows.truncate(limit);
        let api = AuditRow::new(&self.api, rows.len());
        let tool = self.tool.as_ref().map(|t| ToolAuditRow::new(t, rows.len()));
        RecordedPage { rows, more, api, tool }
    }
}

impl IdempotencyRow {
    /// The row of a key granted to `claim`: leased, without a response.
    pub fn claimed(claim: &KeyClaim) -> Self {
        Self {
            organization_id: claim.organization_id.uuid(),
            key: claim.key.clone(),
            fingerprint: claim.fingerprint.to_vec(),
            locked_until: Some(claim.lease_until),
            expires_at: claim.expires_at,
            status: None,
            response: None,
            created_at: claim.now,
        }
    }

    /// The row of `claim`'s key once its request completed with `response`: no lease, the
    /// response kept until the key expires.
    pub fn completed(claim: &KeyClaim, response: &StoredResponse) -> Self {
        Self {
            locked_until: None,
            status: Some(i32::from(response.status)),
            response: Some(response.body.clone()),
            ..Self::claimed(claim)
        }
    }

    /// What the store holds for the key.
    pub fn into_stored(self) -> Result<StoredKey, StoreError> {
        let response = match (self.status, self.response) {
            (Some(status), Some(body)) => Some(StoredResponse {
                status: u16::try_from(status).map_err(|_| corrupt("an HTTP status"))?,
                body,
            }),
            (None, None) => None,
            _ => return Err(corrupt("a response without its status, or a status without it")),
        };
        Ok(StoredKey {
            fingerprint: self.fingerprint,
            locked_until: self.locked_until,
            expires_at: self.expires_at,
            response,
        })
    }
}

/// The rows of recorded accesses: the ledger's, and the audit ledgers'.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessRows {
    /// The privacy ledger's rows.
    pub privacy_audit_logs: Vec<LedgerRow>,
    /// The API audit ledger's row.
    pub api: AuditRow,
    /// The tool-interface audit ledger's row, for a request through a tool.
    pub tool: Option<ToolAuditRow>,
}

impl AccessRows {
    /// The rows of `write`. Fails only for an entry no store can hold.
    pub fn new(write: &AccessesWrite) -> Result<Self, StoreError> {
        let n = write.entries.len();
        Ok(Self {
            privacy_audit_logs: write
                .entries
                .iter()
                .map(LedgerRow::new)
                .collect::<Result<_, _>>()?,
            api: AuditRow::new(&write.record.api, n),
            tool: write.record.tool.as_ref().map(|t| ToolAuditRow::new(t, n)),
        })
    }
}

/// A count of entries as stored (a 32-bit integer column), saturating.
fn stored_count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn count(stored: i32) -> Result<u32, StoreError> {
    u32::try_from(stored).map_err(|_| corrupt("a negative count"))
}

impl AuditRow {
    /// The row of an API audit entry that saw `entries_returned` entries.
    pub fn new(e: &AuditEntry, entries_returned: usize) -> Self {
        Self {
            organization_id: e.organization_id.uuid(),
            id: e.id,
            at: e.at,
            token_id: e.token_id.uuid(),
            user_id: e.user_id.uuid(),
            operation: e.operation.clone(),
            request_id: e.request_id.clone(),
            client_ip: e.client_ip.clone(),
            filters: e.filters.clone(),
            entries_returned: stored_count(entries_returned),
            interface: e.interface.as_str().into(),
            tool_name: e.tool_name.clone(),
            position: None,
            prev_hash: None,
            hash: None,
        }
    }

    /// The entry.
    pub fn into_entry(self) -> Result<AuditEntry, StoreError> {
        Ok(AuditEntry {
            id: self.id,
            at: self.at,
            organization_id: Id::from_uuid(self.organization_id),
            token_id: Id::from_uuid(self.token_id),
            user_id: Id::from_uuid(self.user_id),
            operation: self.operation,
            request_id: self.request_id,
            client_ip: self.client_ip,
            filters: self.filters,
            entries_returned: count(self.entries_returned)?,
            interface: Interface::from_stored(&self.interface)
                .ok_or_else(|| corrupt("unknown interface"))?,
            tool_name: self.tool_name,
        })
    }
}

impl ToolAuditRow {
    /// The row of a tool-interface audit entry that saw `entries_returned` entries.
    pub fn new(e: &ToolAuditEntry, entries_returned: usize) -> Self {
        Self {
            organization_id: e.organization_id.uuid(),
            id: e.id,
            at: e.at,
            token_id: e.token_id.uuid(),
            user_id: e.user_id.uuid(),
            tool_name: e.tool_name.clone(),
            arguments: e.arguments.clone(),
            entries_returned: stored_count(entries_returned),
            request_id: e.request_id.clone(),
            position: None,
            prev_hash: None,
            hash: None,
        }
    }

    /// The entry.
    pub fn into_entry(self) -> Result<ToolAuditEntry, StoreError> {
        Ok(ToolAuditEntry {
            id: self.id,
            at: self.at,
            organization_id: Id::from_uuid(self.organization_id),
            token_id: Id::from_uuid(self.token_id),
            user_id: Id::from_uuid(self.user_id),
            tool_name: self.tool_name,
            arguments: self.arguments,
            entries_returned: count(self.entries_returned)?,
            request_id: self.request_id,
        })
    }
}

/// The rows of an import document, table by table, in the order they are inserted (a row's
/// references before it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DocumentRows {
    /// `organizations`.
    pub organizations: Vec<OrganizationRow>,
    /// `organization_scheduling_defaults`.
    pub scheduling_defaults: Vec<SchedulingDefaultsRow>,
    /// `organization_work_hours`.
    pub work_hours: Vec<WorkHoursRow>,
    /// `users`.
    pub users: Vec<UserRow>,
    /// `task_queues`.
    pub task_queues: Vec<TaskQueueRow>,
    /// `candidates`.
    pub candidates: Vec<CandidateRow>,
    /// `jobs`.
    pub jobs: Vec<JobRow>,
    /// `job_settings`.
    pub job_settings: Vec<JobSettingsRow>,
    /// `job_hiring_team`.
    pub hiring_team: Vec<HiringTeamRow>,
    /// `job_stages`.
    pub job_stages: Vec<JobStageRow>,
    /// `privacy_audit_logs`.
    pub privacy_audit_logs: Vec<LedgerRow>,
}

impl DocumentRows {
    /// The rows of `doc`. Fails only for a ledger entry no store can hold.
    pub fn new(doc: &ImportDocument) -> Result<Self, StoreError> {
        let mut rows = Self::default();
        for o in &doc.organizations {
            let (row, hours) = OrganizationRow::new(o);
            rows.organizations.push(row);
            rows.scheduling_defaults.push(SchedulingDefaultsRow::new(o));
            rows.work_hours.extend(hours);
        }
        rows.users = doc.users.iter().map(UserRow::new).collect();
        rows.task_queues = doc.task_queues.iter().map(TaskQueueRow::new).collect();
        rows.candidates = doc.candidates.iter().map(CandidateRow::new).collect();
        for j in &doc.jobs {
            let (row, settings, team, stages) = job_rows(j);
            rows.jobs.push(row);
            rows.job_settings.push(settings);
            rows.hiring_team.extend(team);
            rows.job_stages.extend(stages);
        }
        rows.privacy_audit_logs =
            doc.privacy_audit_logs.iter().map(LedgerRow::new).collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// What inserting these rows imports.
    pub fn summary(&self) -> ImportSummary {
        ImportSummary {
            organizations: self.organizations.len(),
            users: self.users.len(),
            task_queues: self.task_queues.len(),
            candidates: self.candidates.len(),
            jobs: self.jobs.len(),
            privacy_audit_logs: self.privacy_audit_logs.len(),
        }
    }
}

/// The ledger entries of an import batch, for finding which are stored already: the
/// organizations and identifiers to look up (a store looks up every identifier within every
/// organization named, in chunks), and which of the rows found are the batch's.
#[derive(Clone, Debug)]
pub struct LedgerKeys {
    wanted: HashSet<(OrganizationId, PrivacyAuditLogId)>,
    /// The organizations of the batch's entries, each once.
    pub organizations: Vec<column::Uuid>,
    /// The identifiers of the batch's entries, each once.
    pub ids: Vec<column::Uuid>,
}

impl LedgerKeys {
    /// The keys of `batch`'s ledger entries.
    pub fn new(batch: &ImportDocument) -> Self {
        let wanted: HashSet<_> =
            batch.privacy_audit_logs.iter().map(|e| (e.organization_id, e.entry.id)).collect();
        let organizations =
            wanted.iter().map(|(o, _)| o.uuid()).collect::<HashSet<_>>().into_iter().collect();
        let ids = wanted.iter().map(|(_, id)| id.uuid()).collect();
        Self { wanted, organizations, ids }
    }

    /// The entries of `rows` (found by organization and identifier) that are the batch's.
    pub fn keep(
        &self,
        rows: impl IntoIterator<Item = LedgerRow>,
        found: &mut Vec<LedgerEntry>,
    ) -> Result<(), StoreError> {
        for row in rows {
            let entry = row.into_ledger_entry()?;
            if self.wanted.contains(&(entry.organization_id, entry.entry.id)) {
                found.push(entry);
            }
        }
        Ok(())
    }
}
