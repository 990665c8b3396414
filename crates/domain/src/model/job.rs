//! A job, its hiring team and its resolved scheduling settings (spec §2.6).

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{JobId, JobStageId, TaskQueueId, Timestamp, UserId};

/// A job with its resolved scheduling settings.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Job {
    /// The job's identifier.
    pub id: JobId,
    /// The job's name.
    pub name: String,
    /// Where the job is in its life.
    pub status: JobStatus,
    /// Whether only owners, admins and the hiring team may read the job.
    pub confidential: bool,
    /// Where the job is located.
    pub locations: Vec<String>,
    /// The people hiring for the job.
    pub hiring_team: Vec<HiringTeamMember>,
    /// The job in the external applicant-tracking system.
    pub ats: Ats,
    /// When the job was created.
    pub created_at: Timestamp,
    /// When the job last changed.
    pub updated_at: Timestamp,
    /// A link that opens the job in the web app.
    pub app_url: String,
    /// The resolved scheduling settings.
    pub settings: JobSettings,
    /// The stages of the job's hiring process, in order.
    pub job_stages: Vec<JobStage>,
}

/// A stage of a job's hiring process, such as a phone screen or an onsite interview.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct JobStage {
    /// The stage's identifier.
    pub id: JobStageId,
    /// The stage's name.
    pub name: String,
    /// The stage's place in the process: 0 for the first, one more for each next.
    pub position: u32,
}

/// The status of a job: a closed set of values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "SCREAMING_SNAKE_CASE"))]
pub enum JobStatus {
    /// Not yet published.
    Draft,
    /// Open for applications.
    Open,
    /// Closed.
    Closed,
}

impl JobStatus {
    /// The value as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "DRAFT",
            Self::Open => "OPEN",
            Self::Closed => "CLOSED",
        }
    }

    /// Parses the wire value, exactly.
    pub fn from_wire(s: &str) -> Option<Self> {
        [Self::Draft, Self::Open, Self::Closed].into_iter().find(|v| v.as_str() == s)
    }
}

/// One member of a job's hiring team.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct HiringTeamMember {
    /// The member's role on the team.
    pub role: HiringTeamRole,
    /// The member.
    pub user: UserRef,
}

/// A user as other resources show them: identifier and name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct UserRef {
    /// The user's identifier.
    pub id: UserId,
    /// The user's name.
    pub name: String,
}

open_enum! {
    /// The role of a member of a hiring team.
    pub enum HiringTeamRole {
        /// The manager the job is hired for.
        HiringManager = "HIRING_MANAGER",
    }
}

/// The job's record in an external applicant-tracking system.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Ats {
    /// Which kind of system.
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub kind: AtsType,
    /// The job's identifier in that system.
    pub id: String,
}

open_enum! {
    /// The kind of an external applicant-tracking system. The specification names no values,
    /// so every value is kept as `Other`.
    pub enum AtsType {}
}

/// A job's scheduling settings, resolved from the job, its organization and their defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct JobSettings {
    /// Whether and how interview names are shown.
    pub interview_name_setting: InterviewNameSetting,
    /// What candidates are shown about their interviewers.
    pub interviewer_info_setting: InterviewerInfoSetting,
    /// What candidates are shown about the recruiting team's contacts.
    pub recruiting_team_contact_info_setting: RecruitingTeamContactInfoSetting,
    /// The task queue new scheduling tasks of the job go to.
    pub default_task_queue_id: TaskQueueId,
    /// The hiring process of the job in the external applicant-tracking system.
    pub remote_ats_hiring_process: RemoteAtsHiringProcess,
    /// The locale of candidate-facing text, such as `en-US`.
    pub locale: String,
}

/// Whether interview names are shown.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct InterviewNameSetting {
    /// Whether the job overrides the inherited setting.
    pub is_custom: bool,
    /// Whether interview names are shown to candidates.
    pub show_interview_name: bool,
    /// Whether the setting is locked against change at lower levels.
    pub is_locked: bool,
    /// The level the setting was resolved from.
    pub level: SettingLevel,
}

/// What candidates are shown about their interviewers.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[expect(clippy::struct_excessive_bools, reason = "the API's shape: one flag per detail")]
pub struct InterviewerInfoSetting {
    /// Whether the job overrides the inherited setting.
    pub is_custom: bool,
    /// Whether interviewer information is shown at all.
    pub can_show_info: bool,
    /// Whether the full name is shown.
    pub can_show_full_name: bool,
    /// Whether the job title is shown.
    pub can_show_job_title: bool,
    /// Whether the LinkedIn profile is shown.
    pub can_show_linkedin: bool,
    /// Whether the email address is shown.
    pub can_show_email: bool,
    /// Whether the profile picture is shown.
    pub can_show_profile_picture: bool,
    /// Whether the pronouns are shown.
    pub can_show_pronouns: bool,
    /// Whether the biography is shown.
    pub can_show_bio: bool,
    /// Whether the setting is locked against change at lower levels.
    pub is_locked: bool,
    /// The level the setting was resolved from.
    pub level: SettingLevel,
}

/// What candidates are shown about the recruiting team's contacts.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[expect(clippy::struct_excessive_bools, reason = "the API's shape: one flag per detail")]
pub struct RecruitingTeamContactInfoSetting {
    /// Whether the job overrides the inherited setting.
    pub is_custom: bool,
    /// Whether the recruiter is shown.
    pub show_recruiter: bool,
    /// Whether the coordinator is shown.
    pub show_coordinator: bool,
    /// Whether the job title is shown.
    pub can_show_job_title: bool,
    /// Whether the LinkedIn profile is shown.
    pub can_show_linkedin: bool,
    /// Whether the profile picture is shown.
    pub can_show_profile_picture: bool,
    /// Whether the pronouns are shown.
    pub can_show_pronouns: bool,
    /// Whether the biography is shown.
    pub can_show_bio: bool,
    /// Whether the phone number is shown.
    pub can_show_phone: bool,
    /// Whether the setting is locked against change at lower levels.
    pub is_locked: bool,
    /// The level the setting was resolved from.
    pub level: SettingLevel,
}

open_enum! {
    /// The level a setting was resolved from.
    pub enum SettingLevel {
        /// The organization's default.
        Org = "ORG",
        /// The job's own value, overriding the organization's default.
        Job = "JOB",
    }
}

/// The hiring process of a job in the external applicant-tracking system.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct RemoteAtsHiringProcess {
    /// The process's identifier in that system.
    pub ats_id: String,
    /// The process's name.
    pub name: String,
    /// The process's status.
    pub status: RemoteProcessStatus,
}

open_enum! {
    /// The status of a job's hiring process in the external applicant-tracking system.
    pub enum RemoteProcessStatus {
        /// No process is linked.
        NotSet = "NOT_SET",
    }
}
