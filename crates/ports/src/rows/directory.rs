//! The translations of the directory's rows: organizations (with their scheduling defaults and
//! work hours), users, task queues, candidates, jobs and API tokens.

use recruit_domain::model::{
    Ats, AtsType, ConflictKeywords, ContactInfoValues, FieldSource, HiringTeamMember,
    HiringTeamRole, InterviewBuffer, InterviewNameSetting, InterviewNameValues,
    InterviewerInfoSetting, InterviewerInfoValues, InterviewerLoadLimits, JobSettings, JobStage,
    JobStatus, LoadLimit, LoadLimitType, MaximumLoad, MinimumLoad, OrgDefault,
    OrganizationSettings, ProfileFieldSources, RecruitingTeamContactInfoSetting,
    RemoteAtsHiringProcess, RemoteProcessStatus, Resolved, Role, SchedulingDefaults,
    SchedulingOverrides, UserRef, UserStatus, Weekday, WorkHours,
};
use recruit_domain::{Candidate, Id, Scope, TaskQueue, User};

use super::{
    CandidateRow, HiringTeamRow, JobRow, JobSettingsRow, JobStageRow, OrganizationRow,
    ResolvedSettingsRow, SchedulingDefaultsRow, TaskQueueRow, TokenRow, UserRow, WorkHoursRow,
    column, corrupt,
};
use crate::{ApiToken, JobRecord, NewApiToken, NewJob, OrganizationRecord, SecretHash, StoreError};

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
            time_zone: o.time_zone.name().into(),
            review_rules: serde_json::to_value(&o.review_rules).unwrap_or_default(),
            sso: o.sso.as_ref().map(|s| serde_json::to_value(s).unwrap_or_default()),
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
        let time_zone =
            self.time_zone.parse().map_err(|_| corrupt("an unknown time zone is stored"))?;
        let review_rules = serde_json::from_value(self.review_rules)
            .map_err(|_| corrupt("review rules that do not read are stored"))?;
        let sso = self
            .sso
            .map(serde_json::from_value)
            .transpose()
            .map_err(|_| corrupt("single sign-on settings that do not read are stored"))?;
        Ok(OrganizationRecord {
            sso,
            id: Id::from_uuid(self.id),
            time_zone,
            review_rules,
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
            status: u.status.as_str().into(),
            user_name: u.user_name.clone(),
            external_id: u.external_id.clone(),
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
            status: UserStatus::from_wire(&self.status)
                .ok_or_else(|| corrupt("unknown user status"))?,
            user_name: self.user_name,
            external_id: self.external_id,
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
            secret_hash: secret_hash(&self.secret_hash)?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
            last_used_at: self.last_used_at,
        })
    }
}

impl super::ConsoleSessionRow {
    /// The row of a session.
    pub fn new(s: &crate::ConsoleSession) -> Self {
        Self {
            organization_id: s.organization_id.uuid(),
            id: s.id,
            user_id: s.user_id.uuid(),
            token_id: s.token_id.uuid(),
            secret_hash: s.secret_hash.0.to_vec(),
            created_at: s.created_at,
            last_seen_at: s.last_seen_at,
            expires_at: s.expires_at,
            ended_at: s.ended_at,
        }
    }

    /// The session.
    pub fn into_session(self) -> Result<crate::ConsoleSession, StoreError> {
        Ok(crate::ConsoleSession {
            id: self.id,
            organization_id: Id::from_uuid(self.organization_id),
            user_id: Id::from_uuid(self.user_id),
            token_id: Id::from_uuid(self.token_id),
            secret_hash: secret_hash(&self.secret_hash)?,
            created_at: self.created_at,
            last_seen_at: self.last_seen_at,
            expires_at: self.expires_at,
            ended_at: self.ended_at,
        })
    }
}

/// A stored secret hash.
fn secret_hash(stored: &[u8]) -> Result<SecretHash, StoreError> {
    let hash = stored.try_into().map_err(|_| corrupt("a secret hash is not 32 bytes"))?;
    Ok(SecretHash(hash))
}
