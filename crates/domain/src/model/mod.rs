//! The resources of the API specification, field for field, in the API's JSON shapes.
//!
//! Which fields of a job or an organization are required or nullable is not given by the
//! specification; every field here is required and never null (see `docs/decisions.md`).
//! Unknown fields are ignored when deserializing, so clients keep working when fields are
//! added.

mod job;
mod log_stream;
mod me;
mod organization;
mod page;
mod people;
mod privacy;
mod profile;
mod review_rules;
mod scheduling;
mod single_sign_on;

pub use job::{
    Ats, AtsType, HiringTeamMember, HiringTeamRole, InterviewNameSetting, InterviewerInfoSetting,
    Job, JobSettings, JobStage, JobStatus, RecruitingTeamContactInfoSetting,
    RemoteAtsHiringProcess, RemoteProcessStatus, SettingLevel, UserRef,
};
pub use log_stream::{
    BatchFormat, DeliveryError, LogStream, LogStreamDestination, LogStreamSettings, LogStreamState,
    STREAMED_LEDGER, SYSLOG_TLS_PORT, WriteOnly,
};
pub use me::{Me, MeToken, MeUser};
pub use organization::{
    ConflictKeywords, InterviewBuffer, InterviewerLoadLimits, LoadLimit, LoadLimitType,
    MaximumLoad, MinimumLoad, Organization, OrganizationSettings, Weekday, WorkHours,
};
pub use page::{Page, Pagination};
pub use people::{Candidate, Role, TaskQueue, User, UserStatus};
pub use privacy::{
    AccessData, ActivityCategory, BulkQuery, BulkScope, DataSubject, PrivacyAuditLog,
};
pub use profile::{FieldSource, ProfileField, ProfileFieldSources, UserProfile};
pub use review_rules::ReviewRules;
pub use scheduling::{
    ContactInfoValues, InterviewNameValues, InterviewerInfoValues, OrgDefault, Resolved,
    SchedulingDefaults, SchedulingOverrides, resolve,
};
pub use single_sign_on::{
    DEFAULT_USER_CLAIM, SSO_REDIRECT_PATH, SingleSignOn, SingleSignOnSettings,
};
