//! Rows of the SQLite tables and their translation to and from domain types. Identifiers are
//! 16-byte BLOBs, times microseconds, lists JSON text; anything that does not decode is a
//! corrupt row, reported as [`StoreError::Other`].

use diesel::prelude::*;
use diesel::sqlite::Sqlite;
use recruit_domain::model::*;
use recruit_domain::{
    AccountId, Candidate, Id, PrivacyAuditLog, Resource, Scope, TaskQueue, Timestamp, User, Uuid,
};
use recruit_ports::{
    ApiToken, AuditEntry, Interface, LedgerEntry, NewApiToken, NewJob, OrganizationRecord,
    StoreError, SubjectColumns, ToolAuditEntry,
};

use crate::schema::*;

pub(crate) fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::other(format!("corrupt row in the SQLite store: {what}"))
}

pub(crate) fn blob(uuid: Uuid) -> Vec<u8> {
    uuid.as_bytes().to_vec()
}

pub(crate) fn uuid(bytes: &[u8]) -> Result<Uuid, StoreError> {
    Uuid::from_slice(bytes).map_err(|_| corrupt("an identifier is not 16 bytes"))
}

pub(crate) fn id<R: Resource>(bytes: &[u8]) -> Result<Id<R>, StoreError> {
    uuid(bytes).map(Id::from_uuid)
}

pub(crate) fn time(micros: i64) -> Result<Timestamp, StoreError> {
    Timestamp::from_unix_micros(micros).map_err(|_| corrupt("a time is out of range"))
}

pub(crate) fn list<T: serde::Serialize>(values: &T) -> String {
    serde_json::to_string(values).unwrap_or_else(|_| "[]".into())
}

pub(crate) fn unlist<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(format!("a JSON column: {e}")))
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = organizations, check_for_backend(Sqlite))]
pub(crate) struct OrganizationRow {
    id: Vec<u8>,
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
    keywords_out_of_office: String,
    keywords_avoid: String,
    keywords_available_if_needed: String,
    keywords_recruiting_block: String,
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = organization_work_hours, check_for_backend(Sqlite))]
pub(crate) struct WorkHoursRow {
    organization_id: Vec<u8>,
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
            id: blob(o.id.uuid()),
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
            keywords_out_of_office: list(&s.conflict_keywords.out_of_office),
            keywords_avoid: list(&s.conflict_keywords.avoid),
            keywords_available_if_needed: list(&s.conflict_keywords.available_if_needed),
            keywords_recruiting_block: list(&s.conflict_keywords.recruiting_block),
        };
        let hours = s
            .work_hours
            .iter()
            .zip(0..)
            .map(|(h, position)| WorkHoursRow {
                organization_id: blob(o.id.uuid()),
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
            id: id(&self.id)?,
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
                    out_of_office: unlist(&self.keywords_out_of_office)?,
                    avoid: unlist(&self.keywords_avoid)?,
                    available_if_needed: unlist(&self.keywords_available_if_needed)?,
                    recruiting_block: unlist(&self.keywords_recruiting_block)?,
                },
            },
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(Sqlite))]
pub(crate) struct UserRow {
    organization_id: Vec<u8>,
    id: Vec<u8>,
    name: String,
    email: String,
    role: String,
}

impl UserRow {
    pub(crate) fn new(u: &User) -> Self {
        Self {
            organization_id: blob(u.organization_id.uuid()),
            id: blob(u.id.uuid()),
            name: u.name.clone(),
            email: u.email.clone(),
            role: u.role.as_str().into(),
        }
    }

    pub(crate) fn into_user(self) -> Result<User, StoreError> {
        Ok(User {
            id: id(&self.id)?,
            organization_id: id(&self.organization_id)?,
            name: self.name,
            email: self.email,
            role: Role::from_wire(&self.role).ok_or_else(|| corrupt("unknown role"))?,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = task_queues, check_for_backend(Sqlite))]
pub(crate) struct TaskQueueRow {
    organization_id: Vec<u8>,
    id: Vec<u8>,
    name: String,
}

impl TaskQueueRow {
    pub(crate) fn new(q: &TaskQueue) -> Self {
        Self {
            organization_id: blob(q.organization_id.uuid()),
            id: blob(q.id.uuid()),
            name: q.name.clone(),
        }
    }

    pub(crate) fn into_queue(self) -> Result<TaskQueue, StoreError> {
        Ok(TaskQueue {
            id: id(&self.id)?,
            organization_id: id(&self.organization_id)?,
            name: self.name,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = candidates, check_for_backend(Sqlite))]
pub(crate) struct CandidateRow {
    organization_id: Vec<u8>,
    id: Vec<u8>,
    name: String,
    email: String,
    phone: String,
}

impl CandidateRow {
    pub(crate) fn new(c: &Candidate) -> Self {
        Self {
            organization_id: blob(c.organization_id.uuid()),
            id: blob(c.id.uuid()),
            name: c.name.clone(),
            email: c.email.clone(),
            phone: c.phone.clone(),
        }
    }

    pub(crate) fn into_candidate(self) -> Result<Candidate, StoreError> {
        Ok(Candidate {
            id: id(&self.id)?,
            organization_id: id(&self.organization_id)?,
            name: self.name,
            email: self.email,
            phone: self.phone,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = jobs, check_for_backend(Sqlite))]
pub(crate) struct JobRow {
    pub(crate) organization_id: Vec<u8>,
    pub(crate) id: Vec<u8>,
    pub(crate) name: String,
    pub(crate) status: String,
    pub(crate) confidential: bool,
    pub(crate) locations: String,
    pub(crate) ats_type: String,
    pub(crate) ats_id: String,
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
    pub(crate) default_task_queue_id: Vec<u8>,
    pub(crate) remote_ats_id: String,
    pub(crate) remote_name: String,
    pub(crate) remote_status: String,
    pub(crate) locale: String,
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = job_settings, check_for_backend(Sqlite))]
pub(crate) struct JobSettingsRow {
    organization_id: Vec<u8>,
    job_id: Vec<u8>,
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
#[diesel(table_name = job_hiring_team, check_for_backend(Sqlite))]
pub(crate) struct HiringTeamRow {
    organization_id: Vec<u8>,
    job_id: Vec<u8>,
    position: i32,
    role: String,
    user_id: Vec<u8>,
}

/// The rows of a job to import.
pub(crate) fn job_rows(j: &NewJob) -> (JobRow, JobSettingsRow, Vec<HiringTeamRow>) {
    let (org, job) = (blob(j.organization_id.uuid()), blob(j.id.uuid()));
    let s = &j.settings;
    let (n, i, c) = (
        &s.interview_name_setting,
        &s.interviewer_info_setting,
        &s.recruiting_team_contact_info_setting,
    );
    let row = JobRow {
        organization_id: org.clone(),
        id: job.clone(),
        name: j.name.clone(),
        status: j.status.as_str().into(),
        confidential: j.confidential,
        locations: list(&j.locations),
        ats_type: j.ats.kind.as_str().into(),
        ats_id: j.ats.id.clone(),
        created_at: j.created_at.unix_micros(),
        updated_at: j.updated_at.unix_micros(),
        default_task_queue_id: blob(s.default_task_queue_id.uuid()),
        remote_ats_id: s.remote_ats_hiring_process.ats_id.clone(),
        remote_name: s.remote_ats_hiring_process.name.clone(),
        remote_status: s.remote_ats_hiring_process.status.as_str().into(),
        locale: s.locale.clone(),
    };
    let settings = JobSettingsRow {
        organization_id: org.clone(),
        job_id: job.clone(),
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
            organization_id: org.clone(),
            job_id: job.clone(),
            position,
            role: m.role.as_str().into(),
            user_id: blob(m.user_id.uuid()),
        })
        .collect();
    (row, settings, team)
}

/// A stored job, from its rows and its hiring team as (role, user id, user name).
pub(crate) fn job_record(
    j: JobRow,
    s: JobSettingsRow,
    team: Vec<(String, Vec<u8>, String)>,
) -> Result<recruit_ports::JobRecord, StoreError> {
    Ok(recruit_ports::JobRecord {
        organization_id: id(&j.organization_id)?,
        id: id(&j.id)?,
        name: j.name,
        status: JobStatus::from_wire(&j.status).ok_or_else(|| corrupt("unknown job status"))?,
        confidential: j.confidential,
        locations: unlist(&j.locations)?,
        hiring_team: team
            .into_iter()
            .map(|(role, user, name)| {
                Ok(HiringTeamMember {
                    role: HiringTeamRole::from(role.as_str()),
                    user: UserRef { id: id(&user)?, name },
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
            default_task_queue_id: id(&j.default_task_queue_id)?,
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
#[diesel(table_name = api_tokens, check_for_backend(Sqlite))]
pub(crate) struct TokenRow {
    organization_id: Vec<u8>,
    id: Vec<u8>,
    user_id: Vec<u8>,
    name: String,
    scopes: String,
    secret_hash: Vec<u8>,
    created_at: i64,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
    last_used_at: Option<i64>,
}

impl TokenRow {
    pub(crate) fn new(t: &NewApiToken) -> Self {
        let mut scopes: Vec<&str> = t.scopes.iter().map(|s| s.as_str()).collect();
        scopes.sort_unstable();
        scopes.dedup();
        Self {
            organization_id: blob(t.organization_id.uuid()),
            id: blob(t.id.uuid()),
            user_id: blob(t.user_id.uuid()),
            name: t.name.clone(),
            scopes: list(&scopes),
            secret_hash: t.secret_hash.0.to_vec(),
            created_at: t.created_at.unix_micros(),
            expires_at: t.expires_at.map(Timestamp::unix_micros),
            revoked_at: None,
            last_used_at: None,
        }
    }

    pub(crate) fn into_token(self) -> Result<ApiToken, StoreError> {
        let names: Vec<String> = unlist(&self.scopes)?;
        let mut scopes = names
            .iter()
            .map(|s| s.parse::<Scope>().map_err(|_| corrupt("unknown scope")))
            .collect::<Result<Vec<_>, _>>()?;
        scopes.sort_unstable();
        scopes.dedup();
        Ok(ApiToken {
            id: id(&self.id)?,
            organization_id: id(&self.organization_id)?,
            user_id: id(&self.user_id)?,
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

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = privacy_audit_logs, check_for_backend(Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct LedgerRow {
    organization_id: Vec<u8>,
    id: Vec<u8>,
    access_time: i64,
    account_id: Vec<u8>,
    ip_addresses: String,
    subject_type: String,
    subject_user_id: Option<Vec<u8>>,
    subject_candidate_id: Option<Vec<u8>>,
    bulk_count: Option<i64>,
    query_type: Option<String>,
    query_ids: Option<String>,
    query_values: Option<String>,
    query_scope: Option<String>,
    access_data: String,
    access_menu: String,
    access_menu_path: String,
    activity_category: String,
}

impl LedgerRow {
    pub(crate) fn new(e: &LedgerEntry) -> Result<Self, StoreError> {
        let l = &e.entry;
        let s = SubjectColumns::from_subject(&l.data_subject)?;
        let access_data: Vec<&str> = l.access_data.iter().map(|a| a.as_str()).collect();
        Ok(Self {
            organization_id: blob(e.organization_id.uuid()),
            id: blob(l.id.uuid()),
            access_time: l.access_time.unix_micros(),
            account_id: blob(l.account_id.uuid()),
            ip_addresses: list(&l.ip_addresses),
            subject_type: s.subject_type,
            subject_user_id: s.user_id.map(blob),
            subject_candidate_id: s.candidate_id.map(blob),
            bulk_count: s.bulk_count,
            query_type: s.query_type,
            query_ids: s
                .query_ids
                .map(|ids| list(&ids.iter().map(|u| u.simple().to_string()).collect::<Vec<_>>())),
            query_values: s.query_values.map(|v| list(&v)),
            query_scope: s.query_scope,
            access_data: list(&access_data),
            access_menu: l.access_menu.clone(),
            access_menu_path: l.access_menu_path.clone(),
            activity_category: l.activity_category.as_str().into(),
        })
    }

    /// The entry with the organization whose ledger holds it.
    pub(crate) fn into_ledger_entry(self) -> Result<LedgerEntry, StoreError> {
        let organization_id = id(&self.organization_id)?;
        Ok(LedgerEntry { organization_id, entry: self.into_entry()? })
    }

    pub(crate) fn into_entry(self) -> Result<PrivacyAuditLog, StoreError> {
        let query_ids = self
            .query_ids
            .map(|text| {
                unlist::<Vec<String>>(&text)?
                    .iter()
                    .map(|s| Uuid::try_parse(s).map_err(|_| corrupt("a query id")))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        let subject = SubjectColumns {
            subject_type: self.subject_type,
            user_id: self.subject_user_id.as_deref().map(uuid).transpose()?,
            candidate_id: self.subject_candidate_id.as_deref().map(uuid).transpose()?,
            bulk_count: self.bulk_count,
            query_type: self.query_type,
            query_ids,
            query_values: self.query_values.as_deref().map(unlist).transpose()?,
            query_scope: self.query_scope,
        };
        let access_data: Vec<String> = unlist(&self.access_data)?;
        Ok(PrivacyAuditLog {
            id: id(&self.id)?,
            access_time: time(self.access_time)?,
            account_id: AccountId::from_uuid(uuid(&self.account_id)?),
            ip_addresses: unlist(&self.ip_addresses)?,
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
#[diesel(table_name = api_audit_log, check_for_backend(Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct AuditRow {
    organization_id: Vec<u8>,
    id: Vec<u8>,
    at: i64,
    token_id: Vec<u8>,
    user_id: Vec<u8>,
    operation: String,
    request_id: String,
    client_ip: Option<String>,
    filters: String,
    entries_returned: i32,
    interface: String,
    tool_name: Option<String>,
}

impl AuditRow {
    pub(crate) fn new(e: &AuditEntry, entries_returned: i32) -> Self {
        Self {
            organization_id: blob(e.organization_id.uuid()),
            id: blob(e.id),
            at: e.at.unix_micros(),
            token_id: blob(e.token_id.uuid()),
            user_id: blob(e.user_id.uuid()),
            operation: e.operation.clone(),
            request_id: e.request_id.clone(),
            client_ip: e.client_ip.clone(),
            filters: e.filters.to_string(),
            entries_returned,
            interface: e.interface.as_str().into(),
            tool_name: e.tool_name.clone(),
        }
    }

    pub(crate) fn into_entry(self) -> Result<AuditEntry, StoreError> {
        Ok(AuditEntry {
            id: uuid(&self.id)?,
            at: time(self.at)?,
            organization_id: id(&self.organization_id)?,
            token_id: id(&self.token_id)?,
            user_id: id(&self.user_id)?,
            operation: self.operation,
            request_id: self.request_id,
            client_ip: self.client_ip,
            filters: unlist(&self.filters)?,
            entries_returned: u32::try_from(self.entries_returned)
                .map_err(|_| corrupt("a negative count"))?,
            interface: Interface::from_stored(&self.interface)
                .ok_or_else(|| corrupt("unknown interface"))?,
            tool_name: self.tool_name,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = tool_audit_log, check_for_backend(Sqlite))]
pub(crate) struct ToolAuditRow {
    organization_id: Vec<u8>,
    id: Vec<u8>,
    at: i64,
    token_id: Vec<u8>,
    user_id: Vec<u8>,
    tool_name: String,
    arguments: String,
    entries_returned: i32,
    request_id: String,
}

impl ToolAuditRow {
    pub(crate) fn new(e: &ToolAuditEntry, entries_returned: i32) -> Self {
        Self {
            organization_id: blob(e.organization_id.uuid()),
            id: blob(e.id),
            at: e.at.unix_micros(),
            token_id: blob(e.token_id.uuid()),
            user_id: blob(e.user_id.uuid()),
            tool_name: e.tool_name.clone(),
            arguments: e.arguments.to_string(),
            entries_returned,
            request_id: e.request_id.clone(),
        }
    }

    pub(crate) fn into_entry(self) -> Result<ToolAuditEntry, StoreError> {
        Ok(ToolAuditEntry {
            id: uuid(&self.id)?,
            at: time(self.at)?,
            organization_id: id(&self.organization_id)?,
            token_id: id(&self.token_id)?,
            user_id: id(&self.user_id)?,
            tool_name: self.tool_name,
            arguments: unlist(&self.arguments)?,
            entries_returned: u32::try_from(self.entries_returned)
                .map_err(|_| corrupt("a negative count"))?,
            request_id: self.request_id,
        })
    }
}
