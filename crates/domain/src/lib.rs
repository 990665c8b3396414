//! Identifiers, models, error codes and input rules of the recruitd API.
//!
#![doc = include_str!("../README.md")]

mod auth;
#[cfg(feature = "chain")]
mod canonical;
#[cfg(feature = "chain")]
pub mod chain;
mod error;
mod id;
mod input;
pub mod model;
mod month;
mod open_enum;
mod retention;
pub mod retry;
#[cfg(feature = "chain")]
pub mod review;
mod time;

pub use auth::{ParseScopeError, Permission, Scope};
pub use error::{ErrorBody, ErrorCode, ErrorDetail, ErrorResponse};
pub use id::{
    AccountId, ApiTokenId, CANONICAL_LEN, CandidateId, Expected, Id, JobId, JobStageId,
    LogStreamId, OrganizationId, ParseIdError, ParseIdErrorKind, Prefix, PrivacyAuditLogId,
    Resource, TaskQueueId, UserId, resource,
};
pub use input::{IdFilter, IdFilterError, PageLimit, PageLimitError, TimeWindow, TimeWindowError};
pub use model::{
    Candidate, Job, Me, Organization, Page, Pagination, PrivacyAuditLog, Role, TaskQueue, User,
    UserStatus,
};
pub use month::{Month, MonthError};
pub use open_enum::UnknownValue;
pub use retention::{Retention, RetentionError};
pub use time::{ParseTimestampError, Timestamp};

/// The UUID type identifiers wrap, re-exported so callers need not depend on `uuid` themselves.
pub use uuid::Uuid;
