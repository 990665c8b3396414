//! The operation model: what a transport hands the service. An [`Operation`] is one variant
//! per operation of the API with its input raw, as received; its [`OperationKind`] says
//! everything known before the input is looked at (its names, the scope and permission it
//! needs, its rate-limit class, whether it is recorded); an [`Outcome`] is what it returns.

use std::net::IpAddr;

use recruit_domain::model::UserProfile;
use recruit_domain::{
    ErrorDetail, Job, Organization, OrganizationId, Page, Permission, PrivacyAuditLog, Scope, User,
};
use recruit_ports::ApiToken;

use crate::error::ServiceError;
use crate::limits::{OperationClass, RateLimitStatus};

/// An authenticated caller: the token and the user it acts as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The token the request came with.
    pub token: ApiToken,
    /// The user the token acts as, with their current role.
    pub user: User,
}

impl Caller {
    pub(crate) fn require(&self, scope: Scope) -> Result<(), ServiceError> {
        if self.token.scopes.contains(&scope) {
            Ok(())
        } else {
            Err(ServiceError::insufficient_scope(scope))
        }
    }
}

/// Where a request came from, for the audit ledgers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestContext {
    /// The request's identifier.
    pub request_id: String,
    /// The client's IP address, when known. Failed authentications are counted per address.
    pub client_ip: Option<IpAddr>,
    /// The interface, and for the tool interface the tool and its arguments.
    pub via: Via,
}

/// The interface a request came through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Via {
    /// The REST API.
    Rest,
    /// The tool interface, calling `name` with `arguments`.
    Tool {
        /// The tool's name.
        name: String,
        /// The call's arguments, as received.
        arguments: serde_json::Value,
    },
}

/// The parameters of listing the privacy audit ledger, raw, as a transport received them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListParams {
    /// `timestamp_gte`, required.
    pub timestamp_gte: Option<String>,
    /// `timestamp_lt`, required.
    pub timestamp_lt: Option<String>,
    /// `limit`, 1 to 100, default 25.
    pub limit: Option<String>,
    /// The values of `ids`, when the parameter was given (possibly none).
    pub ids: Option<Vec<String>>,
    /// `cursor`, from the previous page.
    pub cursor: Option<String>,
    /// Problems the transport found itself (an unknown or repeated parameter, a value of the
    /// wrong JSON type), reported together with the service's own.
    pub problems: Vec<ErrorDetail>,
}

/// The parameters of exporting the privacy audit ledger, raw, as a transport received them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportParams {
    /// `timestamp_gte`, required.
    pub timestamp_gte: Option<String>,
    /// `timestamp_lt`, required.
    pub timestamp_lt: Option<String>,
    /// The values of `ids`, when the parameter was given (possibly none).
    pub ids: Option<Vec<String>>,
    /// Problems the transport found itself, reported together with the service's own.
    pub problems: Vec<ErrorDetail>,
}

/// The parameters of reading a job, raw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetJobParams {
    /// The job's identifier, in any accepted spelling.
    pub job_id: String,
    /// What the transport calls the identifier (`jobId` in the REST path, `job_id` among a
    /// tool's arguments), so that error details name what the client sent.
    pub name: &'static str,
    /// Problems the transport found itself, reported with the service's own.
    pub problems: Vec<ErrorDetail>,
}

/// The parameters of reading a user, raw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetUserParams {
    /// The user's identifier, in any accepted spelling.
    pub user_id: String,
    /// What the transport calls the identifier (`userId`, `user_id`).
    pub name: &'static str,
    /// Problems the transport found itself, reported with the service's own.
    pub problems: Vec<ErrorDetail>,
}

/// The input of changing a user's profile, raw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateUserParams {
    /// The user's identifier, in any accepted spelling.
    pub user_id: String,
    /// What the transport calls the identifier (`userId`, `user_id`).
    pub name: &'static str,
    /// The precondition: `*` or a list of entity tags, as the `If-Match` header carries it (the
    /// values of several fields joined with commas); `None` when the request has none.
    pub if_match: Option<String>,
    /// What the transport calls the precondition (`If-Match`, `if_match`).
    pub if_match_name: &'static str,
    /// The JSON Merge Patch (RFC 7396); `None` when the body is not JSON (the transport says
    /// why in `problems`).
    pub patch: Option<serde_json::Value>,
    /// Problems the transport found itself, reported with the service's own.
    pub problems: Vec<ErrorDetail>,
}

/// The input of recording accesses, raw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordParams {
    /// The idempotency key, out of its transport syntax (the REST header's Structured Field
    /// string, a tool's argument); `None` when the request has none.
    pub idempotency_key: Option<String>,
    /// What the transport calls the key (`Idempotency-Key`, `idempotency_key`), so that error
    /// details name what the client sent.
    pub key_name: &'static str,
    /// The body's JSON text, `{"entries": [ … ]}`, read by the service only when the batch's
    /// turn to be written has come; `None` when the transport found it unusable (and said why
    /// in `problems`).
    pub body: Option<Vec<u8>>,
    /// Problems the transport found itself, reported with the service's own.
    pub problems: Vec<ErrorDetail>,
}

/// An operation of the API, with its input raw, as a transport received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// One page of the privacy audit ledger.
    ListPrivacyAuditLogs(ListParams),
    /// Every entry of a window of the privacy audit ledger, streamed.
    ExportPrivacyAuditLogs(ExportParams),
    /// One job.
    GetJob(GetJobParams),
    /// Record accesses to personal data in the privacy ledger.
    RecordPrivacyAccesses(RecordParams),
    /// A user's profile.
    GetUser(GetUserParams),
    /// Change a user's profile.
    UpdateUser(UpdateUserParams),
    /// The caller's organization; it takes no input, so only the transport's problems (such
    /// as a parameter it does not have).
    GetOrganization {
        /// Problems the transport found.
        problems: Vec<ErrorDetail>,
    },
    /// The latest signed checkpoint of the caller's organization's privacy ledger chain; it
    /// takes no input either.
    GetLatestPrivacyAuditLogCheckpoint {
        /// Problems the transport found.
        problems: Vec<ErrorDetail>,
    },
}

impl Operation {
    /// What kind of operation it is.
    pub fn kind(&self) -> OperationKind {
        match self {
            Self::ListPrivacyAuditLogs(_) => OperationKind::ListPrivacyAuditLogs,
            Self::ExportPrivacyAuditLogs(_) => OperationKind::ExportPrivacyAuditLogs,
            Self::GetJob(_) => OperationKind::GetJob,
            Self::GetOrganization { .. } => OperationKind::GetOrganization,
            Self::RecordPrivacyAccesses(_) => OperationKind::RecordPrivacyAccesses,
            Self::GetUser(_) => OperationKind::GetUser,
            Self::UpdateUser(_) => OperationKind::UpdateUser,
            Self::GetLatestPrivacyAuditLogCheckpoint { .. } => {
                OperationKind::GetLatestPrivacyAuditLogCheckpoint
            }
        }
    }
}

/// Declares [`OperationKind`] and its [`OperationKind::ALL`] from one list, so that a new
/// kind is listed in `ALL` by construction.
macro_rules! operation_kinds {
    ($($(#[$doc:meta])* $kind:ident),* $(,)?) => {
        /// The operations of the API, without their input: everything that is known of an
        /// operation before its input is looked at. Every interface names its operations
        /// through this, and every property below is an exhaustive `match`, so a new operation
        /// is a compile error in each place that must say something about it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum OperationKind {
            $($(#[$doc])* $kind,)*
        }

        impl OperationKind {
            /// Every operation, in the order the tool interface lists them.
            pub const ALL: [Self; [$(stringify!($kind)),*].len()] = [$(Self::$kind),*];
        }
    };
}

operation_kinds! {
    /// `listPrivacyAuditLogs`.
    ListPrivacyAuditLogs,
    /// `getJob`.
    GetJob,
    /// `getOrganization`.
    GetOrganization,
    /// `recordPrivacyAccesses`.
    RecordPrivacyAccesses,
    /// `getUser`.
    GetUser,
    /// `updateUser`.
    UpdateUser,
    /// `getLatestPrivacyAuditLogCheckpoint`.
    GetLatestPrivacyAuditLogCheckpoint,
    /// `exportPrivacyAuditLogs`.
    ExportPrivacyAuditLogs,
}

/// What an operation does to stored data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Nothing (beyond recording the read).
    Read,
    /// Adds records; calling it again with the same idempotency key adds nothing more.
    Append,
    /// Changes what is stored.
    Change,
}

impl OperationKind {
    /// The OpenAPI `operationId`, as the audit ledgers record it.
    pub fn operation_id(self) -> &'static str {
        match self {
            Self::ListPrivacyAuditLogs => "listPrivacyAuditLogs",
            Self::GetJob => "getJob",
            Self::GetOrganization => "getOrganization",
            Self::RecordPrivacyAccesses => "recordPrivacyAccesses",
            Self::GetUser => "getUser",
            Self::UpdateUser => "updateUser",
            Self::GetLatestPrivacyAuditLogCheckpoint => "getLatestPrivacyAuditLogCheckpoint",
            Self::ExportPrivacyAuditLogs => "exportPrivacyAuditLogs",
        }
    }

    /// The name of the operation's tool in the tool interface, if it has one. An export has
    /// none: its answer is a stream of any size, which a tool's single result cannot carry,
    /// and an agent reads the ledger a page at a time.
    pub fn tool_name(self) -> Option<&'static str> {
        Some(match self {
            Self::ListPrivacyAuditLogs => "list_privacy_audit_logs",
            Self::GetJob => "get_job",
            Self::GetOrganization => "get_organization",
            Self::RecordPrivacyAccesses => "record_privacy_accesses",
            Self::GetUser => "get_user",
            Self::UpdateUser => "update_user",
            Self::GetLatestPrivacyAuditLogCheckpoint => "get_latest_privacy_audit_log_checkpoint",
            Self::ExportPrivacyAuditLogs => return None,
        })
    }

    /// The operations of the tool interface, in the order it lists them.
    pub fn tools() -> impl Iterator<Item = Self> {
        Self::ALL.into_iter().filter(|kind| kind.tool_name().is_some())
    }

    /// The operation whose tool is called `name`.
    pub fn from_tool_name(name: &str) -> Option<Self> {
        Self::tools().find(|kind| kind.tool_name() == Some(name))
    }

    /// The scope the token needs.
    pub fn scope(self) -> Scope {
        match self {
            Self::ListPrivacyAuditLogs
            | Self::GetLatestPrivacyAuditLogCheckpoint
            | Self::ExportPrivacyAuditLogs => Scope::AuditLogsRead,
            Self::GetJob => Scope::JobsRead,
            Self::GetOrganization => Scope::OrganizationRead,
            Self::RecordPrivacyAccesses => Scope::AuditLogsWrite,
            Self::GetUser => Scope::UsersRead,
            Self::UpdateUser => Scope::UsersWrite,
        }
    }

    /// The permission the acting user needs, and what a caller without it is told. Access to
    /// one object (a confidential job, another user's profile) is checked by the operation
    /// itself, once it has it.
    pub fn permission(self) -> Option<(Permission, &'static str)> {
        match self {
            Self::ListPrivacyAuditLogs
            | Self::GetLatestPrivacyAuditLogCheckpoint
            | Self::ExportPrivacyAuditLogs => Some((
                Permission::ReadAuditLogs,
                "Reading the privacy audit ledger needs the READ_AUDIT_LOGS permission, which \
                 only owners of the organization hold.",
            )),
            Self::RecordPrivacyAccesses => Some((
                Permission::RecordAccesses,
                "Recording accesses in the privacy audit ledger needs an owner or an admin: \
                 create the service's token for such a user.",
            )),
            Self::GetJob | Self::GetOrganization | Self::GetUser | Self::UpdateUser => None,
        }
    }

    /// The class whose rate limit the operation counts against.
    pub fn class(self) -> OperationClass {
        match self {
            Self::ListPrivacyAuditLogs
            | Self::GetLatestPrivacyAuditLogCheckpoint
            | Self::ExportPrivacyAuditLogs => OperationClass::LedgerRead,
            Self::GetJob | Self::GetOrganization | Self::GetUser => OperationClass::Read,
            Self::RecordPrivacyAccesses | Self::UpdateUser => OperationClass::Write,
        }
    }

    /// Whether a successful run is recorded in the audit ledgers (the API ledger, and the
    /// tool-interface ledger for tool calls), in the same transaction as what it does. (Reads
    /// and changes of profiles are recorded in the privacy ledger instead.)
    pub fn recorded(self) -> bool {
        match self {
            Self::ListPrivacyAuditLogs
            | Self::RecordPrivacyAccesses
            | Self::GetLatestPrivacyAuditLogCheckpoint
            | Self::ExportPrivacyAuditLogs => true,
            Self::GetJob | Self::GetOrganization | Self::GetUser | Self::UpdateUser => false,
        }
    }

    /// What it does to stored data: its tool is read-only only for [`Effect::Read`].
    pub fn effect(self) -> Effect {
        match self {
            Self::ListPrivacyAuditLogs
            | Self::GetJob
            | Self::GetOrganization
            | Self::GetUser
            | Self::GetLatestPrivacyAuditLogCheckpoint
            | Self::ExportPrivacyAuditLogs => Effect::Read,
            Self::RecordPrivacyAccesses => Effect::Append,
            Self::UpdateUser => Effect::Change,
        }
    }

    /// Whether its request body is a batch (up to 1 000 entries), taking the larger body
    /// limit.
    pub fn takes_batch(self) -> bool {
        match self {
            Self::RecordPrivacyAccesses => true,
            Self::ListPrivacyAuditLogs
            | Self::GetJob
            | Self::GetOrganization
            | Self::GetUser
            | Self::UpdateUser
            | Self::GetLatestPrivacyAuditLogCheckpoint
            | Self::ExportPrivacyAuditLogs => false,
        }
    }
}

/// What an operation returns; serialized, the body of its success.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// A page of the privacy audit ledger.
    PrivacyAuditLogs(Page<PrivacyAuditLog>),
    /// A job.
    Job(Job),
    /// The organization.
    Organization(Organization),
    /// A user's profile, as read or as changed.
    User(UserProfile),
    /// A signed checkpoint of a ledger's chain.
    Checkpoint(recruit_domain::chain::Checkpoint),
    /// Accesses recorded: the response of a write, as first sent (and as replayed for a
    /// request with the same idempotency key).
    #[serde(skip)]
    Recorded(Recorded),
    /// A download: a body streamed as it is read, which only the REST API serves.
    #[serde(skip)]
    Download(crate::export::Download),
}

/// The response of a write with an idempotency key, replayed byte for byte.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// The HTTP status (201).
    pub status: u16,
    /// The body, JSON, exactly as first sent.
    pub body: Vec<u8>,
    /// Whether this is a replay of an earlier request's response.
    pub replayed: bool,
}

impl Outcome {
    /// The outcome as JSON. A value that cannot be serialized is INTERNAL on every interface,
    /// never an empty success.
    pub fn to_json(&self) -> Result<serde_json::Value, ServiceError> {
        let json = match self {
            Self::Recorded(r) => serde_json::from_slice(&r.body),
            Self::Download(_) => return Err(no_json_form()),
            other => serde_json::to_value(other),
        };
        json.map_err(not_serialized)
    }

    /// The outcome as the bytes of its JSON, written straight from the outcome (no
    /// [`serde_json::Value`] in between, so members keep the order the models declare). Fails
    /// as [`Outcome::to_json`] does.
    pub fn to_json_bytes(&self) -> Result<Vec<u8>, ServiceError> {
        match self {
            Self::Recorded(r) => Ok(r.body.clone()),
            Self::Download(_) => Err(no_json_form()),
            other => serde_json::to_vec(other).map_err(not_serialized),
        }
    }
}

fn no_json_form() -> ServiceError {
    ServiceError { cause: Some("a download has no JSON form".into()), ..ServiceError::internal() }
}

fn not_serialized(e: serde_json::Error) -> ServiceError {
    ServiceError {
        cause: Some(format!("the response could not be serialized: {e}").into()),
        ..ServiceError::internal()
    }
}

/// Who runs an operation: a secret still to authenticate, or a caller a transport has
/// authenticated already (the tool interface over HTTP, before the protocol library runs).
#[derive(Clone)]
pub enum Credential {
    /// The secret the client presented, if any.
    Secret(Option<String>),
    /// An authenticated caller.
    Authenticated(Box<Caller>),
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Secret(s) => f.debug_tuple("Secret").field(&s.as_ref().map(|_| "…")).finish(),
            Self::Authenticated(c) => f.debug_tuple("Authenticated").field(c).finish(),
        }
    }
}

/// A completed operation.
#[derive(Debug)]
pub struct Done {
    /// What it returned.
    pub outcome: Outcome,
    /// Where the caller stands with the operation's rate limit, when one applies.
    pub rate_limit: Option<RateLimitStatus>,
    /// The caller's organization.
    pub organization: OrganizationId,
}
