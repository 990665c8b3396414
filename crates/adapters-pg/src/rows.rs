//! Rows of the PostgreSQL tables and their translation to and from domain types. Identifiers
//! are `uuid`, times `timestamptz`, lists `text[]`; anything that does not decode is a corrupt
//! row, reported as [`StoreError::Other`].

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use recruit_domain::model::*;
use recruit_domain::{
    AccountId, Candidate, Id, PrivacyAuditLog, Scope, TaskQueue, Timestamp, User, Uuid,
};
use recruit_ports::{
    ApiToken, AuditEntry, Interface, LedgerEntry, NewApiToken, NewJob, OrganizationRecord,
    StoreError, SubjectColumns, ToolAuditEntry,
};

use crate::schema::*;

pub(crate) fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::other(format!("corrupt row in the PostgreSQL store: {what}"))
}

pub(crate) fn time(t: DateTime<Utc>) -> Result<Timestamp, StoreError> {
    Timestamp::from_datetime(t).map_err(|_| corrupt("a time is out of range"))
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = organizations, check_for_backend(Pg))]
pub(crate) struct OrganizationRow {
    id: Uuid,
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
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = organization_work_hours, check_for_backend(Pg))]
pub(crate) struct WorkHoursRow {
    organization_id: Uuid,
    position: i32,
    day: String,
    start_time: String,
    end_time: String,
}

impl OrganizationRow {
    pub(crate) fn new(o: &OrganizationRecord) -> (Self, Vec<WorkHoursRow>) {
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

    pub(crate) fn into_record(
        self,
        hours: Vec<WorkHoursRow>,
    ) -> Result<OrganizationRecord, StoreError> {
        let limit = |limit, kind: &str, interviews, minutes| LoadLimit {
            maximum: MaximumLoad { limit, kind: LoadLimitType::from(kind) },
            minimum: MinimumLoad { interviews, minutes },
        };
        Ok(OrganizationRecord {
            id: Id::from_uuid(self.id),
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

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(Pg))]
pub(crate) struct UserRow {
    organization_id: Uuid,
    id: Uuid,
    name: String,
    email: String,
    role: String,
}

impl UserRow {
    pub(crate) fn new(u: &User) -> Self {
        Self {
            organization_id: u.organization_id.uuid(),
            id: u.id.uuid(),
            name: u.name.clone(),
            email: u.email.clone(),
            role: u.role.as_str().into(),
        }
    }

    pub(crate) fn into_user(self) -> Result<User, StoreError> {
        Ok(User {
            id: Id::from_uuid(self.id),
            organization_id: Id::from_uuid(self.organization_id),
            name: self.name,
            email: self.email,
            role: Role::from_wire(&self.role).ok_or_else(|| corrupt("unknown role"))?,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = task_queues, check_for_backend(Pg))]
pub(crate) struct TaskQueueRow {
    organization_id: Uuid,
    id: Uuid,
    name: String,
}

impl TaskQueueRow {
    pub(crate) fn new(q: &TaskQueue) -> Self {
        Self { organization_id: q.organization_id.uuid(), id: q.id.uuid(), name: q.name.clone() }
    }

    pub(crate) fn into_queue(self) -> Result<TaskQueue, StoreError> {
        Ok(TaskQueue {
            id: Id::from_uuid(self.id),
            organization_id: Id::from_uuid(self.organization_id),
            name: self.name,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = candidates, check_for_backend(Pg))]
pub(crate) struct CandidateRow {
    organization_id: Uuid,
    id: Uuid,
    name: String,
    email: String,
    phone: String,
}

impl CandidateRow {
    pub(crate) fn new(c: &Candidate) -> Self {
        Self {
            organization_id: c.organization_id.uuid(),
            id: c.id.uuid(),
            name: c.name.clone(),
            email: c.email.clone(),
            phone: c.phone.clone(),
        }
    }

    pub(crate) fn into_candidate(self) -> Result<Candidate, StoreError> {
        Ok(Candidate {
            id: Id::from_uuid(self.id),
            organization_id: Id::from_uuid(self.organization_id),
            name: self.name,
            email: self.email,
            phone: self.phone,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = jobs, check_for_backend(Pg))]
pub(crate) struct JobRow {
    pub(crate) organization_id: Uuid,
    pub(crate) id: Uuid,
    pub(crate) name: String,
    pub(crate) status: String,
    pub(crate) confidential: bool,
    pub(crate) locations: Vec<String>,
    pub(crate) ats_type: String,
    pub(crate) ats_id: String,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) updated_at: DateTime<Utc>,
    pub(crate) default_task_queue_id: Uuid,
    pub(crate) remote_ats_id: String,
    pub(crate) remote_name: String,
    pub(crate) remote_status: String,
    pub(crate) locale: String,
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = job_settings, check_for_backend(Pg))]
pub(crate) struct JobSettingsRow {
    organization_id: Uuid,
    job_id: Uuid,
    name_is_custom: bool,
    name_show_interview_name: bool,
    name_is_locked: bool,
    name_level: String,
    info_is_custom: bool,
    info_can_show_info: bool,
    info_can_show_full_name: bool,
    info_can_show_job_title: bool,
    info_can_show_linkedin: bool,
    info_can_show_email: bool,
    info_can_show_profile_picture: bool,
    info_can_show_pronouns: bool,
    info_can_show_bio: bool,
    info_is_locked: bool,
    info_level: String,
    contact_is_custom: bool,
    contact_show_recruiter: bool,
    contact_show_coordinator: bool,
    contact_can_show_job_title: bool,
    contact_can_show_linkedin: bool,
    contact_can_show_profile_picture: bool,
    contact_can_show_pronouns: bool,
    contact_can_show_bio: bool,
    contact_can_show_phone: bool,
    contact_is_locked: bool,
    contact_level: String,
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = job_hiring_team, check_for_backend(Pg))]
pub(crate) struct HiringTeamRow {
    organization_id: Uuid,
    job_id: Uuid,
    position: i32,
    role: String,
    user_id: Uuid,
}

/// The rows of a job to import.
pub(crate) fn job_rows(j: &NewJob) -> (JobRow, JobSettingsRow, Vec<HiringTeamRow>) {
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
        created_at: j.created_at.as_datetime(),
        updated_at: j.updated_at.as_datetime(),
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
        name_is_locked: n.is_locked,
        name_level: n.level.as_str().into(),
        info_is_custom: i.is_custom,
        info_can_show_info: i.can_show_info,
        info_can_show_full_name: i.can_show_full_name,
        info_can_show_job_title: i.can_show_job_title,
        info_can_show_linkedin: i.can_show_linkedin,
        info_can_show_email: i.can_show_email,
        info_can_show_profile_picture: i.can_show_profile_picture,
        info_can_show_pronouns: i.can_show_pronouns,
        info_can_show_bio: i.can_show_bio,
        info_is_locked: i.is_locked,
        info_level: i.level.as_str().into(),
        contact_is_custom: c.is_custom,
        contact_show_recruiter: c.show_recruiter,
        contact_show_coordinator: c.show_coordinator,
        contact_can_show_job_title: c.can_show_job_title,
        contact_can_show_linkedin: c.can_show_linkedin,
        contact_can_show_profile_picture: c.can_show_profile_picture,
        contact_can_show_pronouns: c.can_show_pronouns,
        contact_can_show_bio: c.can_show_bio,
        contact_can_show_phone: c.can_show_phone,
        contact_is_locked: c.is_locked,
        contact_level: c.level.as_str().into(),
    };
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
    (row, settings, team)
}

/// A stored job, from its rows and its hiring team as (role, user id, user name).
pub(crate) fn job_record(
    j: JobRow,
    s: JobSettingsRow,
    team: Vec<(String, Uuid, String)>,
) -> Result<recruit_ports::JobRecord, StoreError> {
    Ok(recruit_ports::JobRecord {
        organization_id: Id::from_uuid(j.organization_id),
        id: Id::from_uuid(j.id),
        name: j.name,
        status: JobStatus::from_wire(&j.status).ok_or_else(|| corrupt("unknown job status"))?,
        confidential: j.confidential,
        locations: j.locations,
        hiring_team: team
            .into_iter()
            .map(|(role, user, name)| {
                Ok(HiringTeamMember {
                    role: HiringTeamRole::from(role.as_str()),
                    user: UserRef { id: Id::from_uuid(user), name },
                })
            })
            .collect::<Result<_, StoreError>>()?,
        ats: Ats { kind: AtsType::from(j.ats_type.as_str()), id: j.ats_id },
        created_at: time(j.created_at)?,
        updated_at: time(j.updated_at)?,
        settings: JobSettings {
            interview_name_setting: InterviewNameSetting {
                is_custom: s.name_is_custom,
                show_interview_name: s.name_show_interview_name,
                is_locked: s.name_is_locked,
                level: SettingLevel::from(s.name_level.as_str()),
            },
            interviewer_info_setting: InterviewerInfoSetting {
                is_custom: s.info_is_custom,
                can_show_info: s.info_can_show_info,
                can_show_full_name: s.info_can_show_full_name,
                can_show_job_title: s.info_can_show_job_title,
                can_show_linkedin: s.info_can_show_linkedin,
                can_show_email: s.info_can_show_email,
                can_show_profile_picture: s.info_can_show_profile_picture,
                can_show_pronouns: s.info_can_show_pronouns,
                can_show_bio: s.info_can_show_bio,
                is_locked: s.info_is_locked,
                level: SettingLevel::from(s.info_level.as_str()),
            },
            recruiting_team_contact_info_setting: RecruitingTeamContactInfoSetting {
                is_custom: s.contact_is_custom,
                show_recruiter: s.contact_show_recruiter,
                show_coordinator: s.contact_show_coordinator,
                can_show_job_title: s.contact_can_show_job_title,
                can_show_linkedin: s.contact_can_show_linkedin,
                can_show_profile_picture: s.contact_can_show_profile_picture,
                can_show_pronouns: s.contact_can_show_pronouns,
                can_show_bio: s.contact_can_show_bio,
                can_show_phone: s.contact_can_show_phone,
                is_locked: s.contact_is_locked,
                level: SettingLevel::from(s.contact_level.as_str()),
            },
            default_task_queue_id: Id::from_uuid(j.default_task_queue_id),
            remote_ats_hiring_process: RemoteAtsHiringProcess {
                ats_id: j.remote_ats_id,
                name: j.remote_name,
                status: RemoteProcessStatus::from(j.remote_status.as_str()),
            },
            locale: j.locale,
        },
    })
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = api_tokens, check_for_backend(Pg))]
pub(crate) struct TokenRow {
    organization_id: Uuid,
    id: Uuid,
    user_id: Uuid,
    name: String,
    scopes: Vec<String>,
    secret_hash: Vec<u8>,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
}

impl TokenRow {
    pub(crate) fn new(t: &NewApiToken) -> Self {
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
            created_at: t.created_at.as_datetime(),
            expires_at: t.expires_at.map(Timestamp::as_datetime),
            revoked_at: None,
            last_used_at: None,
        }
    }

    pub(crate) fn into_token(self) -> Result<ApiToken, StoreError> {
        let names: Vec<String> = self.scopes;
        let mut scopes = names
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
            secret_hash: recruit_ports::SecretHash(
                self.secret_hash
                    .as_slice()
                    .try_into()
                    .map_err(|_| corrupt("a secret hash is not 32 bytes"))?,
            ),
            created_at: time(self.created_at)?,
            expires_at: self.expires_at.map(time).transpose()?,
            revoked_at: self.revoked_at.map(time).transpose()?,
            last_used_at: self.last_used_at.map(time).transpose()?,
        })
    }
}

#[derive(Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = privacy_audit_logs, check_for_backend(Pg))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct LedgerRow {
    organization_id: Uuid,
    id: Uuid,
    access_time: DateTime<Utc>,
    account_id: Uuid,
    ip_addresses: Vec<String>,
    subject_type: String,
    subject_user_id: Option<Uuid>,
    subject_candidate_id: Option<Uuid>,
    bulk_count: Option<i64>,
    query_type: Option<String>,
    query_ids: Option<Vec<Uuid>>,
    query_values: Option<Vec<String>>,
    query_scope: Option<String>,
    access_data: Vec<String>,
    access_menu: String,
    access_menu_path: String,
    activity_category: String,
}

impl LedgerRow {
    /// The columns in the order of [`LedgerRow::COPY_TYPES`] and [`LedgerRow::copy_values`].
    pub(crate) const COPY_COLUMNS: &str = "organization_id, id, access_time, account_id, \
        ip_addresses, subject_type, subject_user_id, subject_candidate_id, bulk_count, \
        query_type, query_ids, query_values, query_scope, access_data, access_menu, \
        access_menu_path, activity_category";

    /// The PostgreSQL type of each column, for binary `COPY`.
    pub(crate) const COPY_TYPES: [tokio_postgres::types::Type; 17] = {
        use tokio_postgres::types::Type;
        [
            Type::UUID,
            Type::UUID,
            Type::TIMESTAMPTZ,
            Type::UUID,
            Type::TEXT_ARRAY,
            Type::TEXT,
            Type::UUID,
            Type::UUID,
            Type::INT8,
            Type::TEXT,
            Type::UUID_ARRAY,
            Type::TEXT_ARRAY,
            Type::TEXT,
            Type::TEXT_ARRAY,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
        ]
    };

    /// The row's values, for binary `COPY`.
    pub(crate) fn copy_values(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 17] {
        [
            &self.organization_id,
            &self.id,
            &self.access_time,
            &self.account_id,
            &self.ip_addresses,
            &self.subject_type,
            &self.subject_user_id,
            &self.subject_candidate_id,
            &self.bulk_count,
            &self.query_type,
            &self.query_ids,
            &self.query_values,
            &self.query_scope,
            &self.access_data,
            &self.access_menu,
            &self.access_menu_path,
            &self.activity_category,
        ]
    }

    pub(crate) fn new(e: &LedgerEntry) -> Result<Self, StoreError> {
        let l = &e.entry;
        let s = SubjectColumns::from_subject(&l.data_subject)?;
        let access_data: Vec<&str> = l.access_data.iter().map(|a| a.as_str()).collect();
        Ok(Self {
            organization_id: e.organization_id.uuid(),
            id: l.id.uuid(),
            access_time: l.access_time.as_datetime(),
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
            access_data: access_data.into_iter().map(str::to_owned).collect(),
            access_menu: l.access_menu.clone(),
            access_menu_path: l.access_menu_path.clone(),
            activity_category: l.activity_category.as_str().into(),
        })
    }

    /// The entry with the organization whose ledger holds it.
    pub(crate) fn into_ledger_entry(self) -> Result<LedgerEntry, StoreError> {
        let organization_id = Id::from_uuid(self.organization_id);
        Ok(LedgerEntry { organization_id, entry: self.into_entry()? })
    }

    pub(crate) fn into_entry(self) -> Result<PrivacyAuditLog, StoreError> {
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
        let access_data: Vec<String> = self.access_data;
        Ok(PrivacyAuditLog {
            id: Id::from_uuid(self.id),
            access_time: time(self.access_time)?,
            account_id: AccountId::from_uuid(self.account_id),
            ip_addresses: self.ip_addresses,
            data_subject: subject.into_subject()?,
            access_data: access_data
                .iter()
                .map(|a| AccessData::from_wire(a).ok_or_else(|| corrupt("unknown access data")))
                .collect::<Result<_, _>>()?,
            access_menu: self.access_menu,
            access_menu_path: self.access_menu_path,
            activity_category: ActivityCategory::from(self.activity_category.as_str()),
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = api_audit_log, check_for_backend(Pg))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct AuditRow {
    organization_id: Uuid,
    id: Uuid,
    at: DateTime<Utc>,
    token_id: Uuid,
    user_id: Uuid,
    operation: String,
    request_id: String,
    client_ip: Option<String>,
    filters: serde_json::Value,
    entries_returned: i32,
    interface: String,
    tool_name: Option<String>,
}

impl AuditRow {
    pub(crate) fn new(e: &AuditEntry, entries_returned: i32) -> Self {
        Self {
            organization_id: e.organization_id.uuid(),
            id: e.id,
            at: e.at.as_datetime(),
            token_id: e.token_id.uuid(),
            user_id: e.user_id.uuid(),
            operation: e.operation.clone(),
            request_id: e.request_id.clone(),
            client_ip: e.client_ip.clone(),
            filters: e.filters.clone(),
            entries_returned,
            interface: e.interface.as_str().into(),
            tool_name: e.tool_name.clone(),
        }
    }

    pub(crate) fn into_entry(self) -> Result<AuditEntry, StoreError> {
        Ok(AuditEntry {
            id: self.id,
            at: time(self.at)?,
            organization_id: Id::from_uuid(self.organization_id),
            token_id: Id::from_uuid(self.token_id),
            user_id: Id::from_uuid(self.user_id),
            operation: self.operation,
            request_id: self.request_id,
            client_ip: self.client_ip,
            filters: self.filters,
            entries_returned: u32::try_from(self.entries_returned)
                .map_err(|_| corrupt("a negative count"))?,
            interface: Interface::from_stored(&self.interface)
                .ok_or_else(|| corrupt("unknown interface"))?,
            tool_name: self.tool_name,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = tool_audit_log, check_for_backend(Pg))]
pub(crate) struct ToolAuditRow {
    organization_id: Uuid,
    id: Uuid,
    at: DateTime<Utc>,
    token_id: Uuid,
    user_id: Uuid,
    tool_name: String,
    arguments: serde_json::Value,
    entries_returned: i32,
    request_id: String,
}

impl ToolAuditRow {
    pub(crate) fn new(e: &ToolAuditEntry, entries_returned: i32) -> Self {
        Self {
            organization_id: e.organization_id.uuid(),
            id: e.id,
            at: e.at.as_datetime(),
            token_id: e.token_id.uuid(),
            user_id: e.user_id.uuid(),
            tool_name: e.tool_name.clone(),
            arguments: e.arguments.clone(),
            entries_returned,
            request_id: e.request_id.clone(),
        }
    }

    pub(crate) fn into_entry(self) -> Result<ToolAuditEntry, StoreError> {
        Ok(ToolAuditEntry {
            id: self.id,
            at: time(self.at)?,
            organization_id: Id::from_uuid(self.organization_id),
            token_id: Id::from_uuid(self.token_id),
            user_id: Id::from_uuid(self.user_id),
            tool_name: self.tool_name,
            arguments: self.arguments,
            entries_returned: u32::try_from(self.entries_returned)
                .map_err(|_| corrupt("a negative count"))?,
            request_id: self.request_id,
        })
    }
}
