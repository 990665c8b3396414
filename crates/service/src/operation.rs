//! The operation model: what a transport hands the service. An [`Operation`] is one variant
//! per operation of the API with its typed input ([`crate::input`]); its [`OperationKind`]
//! says everything known before the input is looked at, in one [`Spec`] per operation (its
//! names, method and path, parameters, body and its limit, the scope and permission it needs,
//! its rate-limit class, whether it is recorded); an [`Outcome`] is what it returns.
//!
//! To add an operation: its line in `operations!` (with its input struct and the service's
//! method that runs it), its [`Spec`] in [`OperationKind::spec`], and its path in
//! `docs/openapi.yaml`. The REST router, the tool list and the checks against the OpenAPI
//! document follow.

use std::net::IpAddr;
use std::sync::LazyLock;

use recruit_domain::model::UserProfile;
use recruit_domain::{
    Job, Me, Organization, OrganizationId, Page, Permission, PrivacyAuditLog, Scope, User,
};
use recruit_ports::ApiToken;

use crate::error::ServiceError;
use crate::input::{
    Arguments, BodyParams, DecideParams, ExplainParams, ExportParams, GetJobParams, GetUserParams,
    ListParams, LogStreamParams, NoParams, Param, Place, RecordParams, ReviewParams,
    RotateSecretParams, SignOffParams, UpdateLogStreamParams, UpdateUserParams,
};
use crate::limits::{OperationClass, RateLimitStatus};

mod specs;

/// An authenticated caller: the token and the user it acts as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The token the request came with.
    pub token: ApiToken,
    /// The user the token acts as, with their current role.
    pub user: User,
}

impl Caller {
    pub(crate) fn require(&self, scope: Option<Scope>) -> Result<(), ServiceError> {
        match scope {
            Some(scope) if !self.token.scopes.contains(&scope) => {
                Err(ServiceError::insufficient_scope(scope))
            }
            _ => Ok(()),
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

impl RequestContext {
    /// A request through the REST API (or the console, which speaks it).
    pub fn rest(request_id: impl Into<String>, client_ip: Option<IpAddr>) -> Self {
        Self { request_id: request_id.into(), client_ip, via: Via::Rest }
    }
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

impl Via {
    /// What this interface calls the parameter `name` of `kind` (`jobId` in a REST path,
    /// `job_id` among a tool's arguments), so that error details name what the client sent.
    pub fn name(&self, kind: OperationKind, name: &'static str) -> &'static str {
        match self {
            Self::Rest => kind.param(name).map_or(name, |p| p.rest),
            Self::Tool { .. } => name,
        }
    }
}

/// Declares [`OperationKind`] (with [`OperationKind::ALL`]), [`Operation`] and the service's
/// dispatch from one list of operations with their input structs and the service's method
/// that runs each (`async fn(&self, &Caller, &RequestContext, input) -> Result<T, _>`, with
/// `T` an [`Outcome`]'s), so that a new operation is one line here, one [`Spec`] in
/// [`OperationKind::spec`] and its method.
macro_rules! operations {
    ($($(#[$doc:meta])* $kind:ident($input:ty) => $method:ident,)*) => {
        /// The operations of the API, without their input: everything that is known of an
        /// operation before its input is looked at, in its [`Spec`]. Every interface names
        /// its operations through this.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum OperationKind {
            $($(#[$doc])* $kind,)*
        }

        impl OperationKind {
            /// Every operation, in the order the tool interface lists them.
            pub const ALL: [Self; [$(stringify!($kind)),*].len()] = [$(Self::$kind),*];
        }

        /// An operation of the API, with its typed input, as a transport received it.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum Operation {
            $($(#[$doc])* $kind($input),)*
        }

        impl Operation {
            /// The operation of `kind` with the input the transport collected, in its input
            /// struct. Fails only as INTERNAL, when an input struct does not fit its declared
            /// parameters.
            pub fn parse(kind: OperationKind, arguments: Arguments) -> Result<Self, ServiceError> {
                Ok(match kind {
                    $(OperationKind::$kind => Self::$kind(arguments.input()?),)*
                })
            }

            /// What kind of operation it is.
            pub fn kind(&self) -> OperationKind {
                match self {
                    $(Self::$kind(_) => OperationKind::$kind,)*
                }
            }

            /// The input's parameters as JSON, by their names (the transport's problems and
            /// the body left out): what the tests compare with the declared parameters.
            #[cfg(test)]
            pub(crate) fn parameters(&self) -> serde_json::Value {
                let value = match self {
                    $(Self::$kind(input) => serde_json::to_value(input),)*
                };
                value.expect("input structs hold strings and lists of them")
            }
        }

        impl crate::Service {
            /// Runs `operation` for `caller`, authorized already, by the method declared for
            /// it. Each operation's state is on the heap: inline, this future would be as large
            /// as the largest operation's (kilobytes), and every wrapper above moves it whole.
            pub(crate) async fn dispatch(
                &self,
                caller: &Caller,
                context: &RequestContext,
                operation: Operation,
            ) -> Result<Outcome, ServiceError> {
                match operation {
                    $(Operation::$kind(input) => {
                        Box::pin(self.$method(caller, context, input)).await.map(Outcome::from)
                    })*
                }
            }
        }
    };
}

operations! {
    /// `listPrivacyAuditLogs`: one page of the privacy audit ledger.
    ListPrivacyAuditLogs(ListParams) => list_privacy_audit_logs,
    /// `getJob`: one job.
    GetJob(GetJobParams) => get_job,
    /// `getOrganization`: the caller's organization.
    GetOrganization(NoParams) => get_organization,
    /// `recordPrivacyAccesses`: record accesses to personal data in the privacy ledger.
    RecordPrivacyAccesses(RecordParams) => record_privacy_accesses,
    /// `getUser`: a user's profile.
    GetUser(GetUserParams) => get_user,
    /// `updateUser`: change a user's profile.
    UpdateUser(UpdateUserParams) => update_user,
    /// `getLatestPrivacyAuditLogCheckpoint`: the latest signed checkpoint of the caller's
    /// organization's privacy ledger chain.
    GetLatestPrivacyAuditLogCheckpoint(NoParams) => latest_checkpoint,
    /// `exportPrivacyAuditLogs`: every entry of a window of the privacy audit ledger,
    /// streamed.
    ExportPrivacyAuditLogs(ExportParams) => export_privacy_audit_logs,
    /// `getMe`: the caller, the user the token acts as, the organization and the token.
    GetMe(NoParams) => get_me,
    /// `getPrivacyAccessReview`: a month's review of the privacy ledger.
    GetPrivacyAccessReview(ReviewParams) => privacy_access_review,
    /// `reviewPrivacyAccessDownload`: a reviewer's decision on a download of a month.
    ReviewPrivacyAccessDownload(DecideParams) => review_download,
    /// `signOffPrivacyAccessReview`: the sign-off of a month's review.
    SignOffPrivacyAccessReview(SignOffParams) => sign_off_review,
    /// `explainPrivacyAccessDownload`: the explanation of a download by the person who made
    /// it, asked for by a reviewer.
    ExplainPrivacyAccessDownload(ExplainParams) => explain_download,
    /// `getPrivacyReviewRules`: the rules the organization's monthly review flags by.
    GetPrivacyReviewRules(NoParams) => review_rules,
    /// `setPrivacyReviewRules`: those rules replaced.
    SetPrivacyReviewRules(BodyParams) => set_review_rules,
    /// `getSingleSignOn`: the organization's single sign-on to the console.
    GetSingleSignOn(NoParams) => single_sign_on,
    /// `setSingleSignOn`: the organization's single sign-on set, its provider discovered.
    SetSingleSignOn(BodyParams) => set_single_sign_on,
    /// `removeSingleSignOn`: the organization's single sign-on removed.
    RemoveSingleSignOn(NoParams) => remove_single_sign_on,
    /// `listLogStreams`: the organization's log streams.
    ListLogStreams(NoParams) => log_streams,
    /// `createLogStream`: a log stream made, its signing secret shown once.
    CreateLogStream(BodyParams) => create_log_stream,
    /// `getLogStream`: one log stream, with how its delivery goes.
    GetLogStream(LogStreamParams) => log_stream,
    /// `updateLogStream`: a log stream's name or destination changed.
    UpdateLogStream(UpdateLogStreamParams) => update_log_stream,
    /// `pauseLogStream`: a log stream paused, keeping its position.
    PauseLogStream(LogStreamParams) => pause_log_stream,
    /// `resumeLogStream`: a paused or suspended log stream resumed from its position.
    ResumeLogStream(LogStreamParams) => resume_log_stream,
    /// `deleteLogStream`: a log stream removed.
    DeleteLogStream(LogStreamParams) => delete_log_stream,
    /// `rotateLogStreamSecret`: a log stream's signing secret replaced, the previous one
    /// signing beside it for an overlap.
    RotateLogStreamSecret(RotateSecretParams) => rotate_log_stream_secret,
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

/// An HTTP method of the REST API, named without an HTTP stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `PATCH`.
    Patch,
    /// `DELETE`.
    Delete,
}

impl Method {
    /// Every method, in the order an `Allow` field lists them.
    pub const ALL: [Self; 5] = [Self::Get, Self::Post, Self::Put, Self::Patch, Self::Delete];

    /// The method's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }
}

/// What an operation takes as its request body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestBody {
    /// Nothing: a body sent anyway is read within the limit and ignored.
    None,
    /// A JSON document (`application/json` or a `+json` type) whose members are these tool
    /// arguments.
    Json(&'static [&'static str]),
    /// A JSON Merge Patch (`application/merge-patch+json` or `application/json`): every tool
    /// argument that is not a parameter is one of its members.
    MergePatch,
}

/// The largest request body (or a tool call's arguments) of an operation that takes no batch.
pub const BODY_LIMIT: usize = 64 * 1024;

/// The largest body of a batch: up to 1 000 recorded accesses.
pub const BATCH_BODY_LIMIT: usize = 2 * 1024 * 1024;

/// Everything known of an operation before its input is looked at: declared once, in
/// [`OperationKind::spec`], for every interface.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// The OpenAPI `operationId`, as the audit ledgers record it; the tool's name is its snake
    /// case.
    pub operation_id: &'static str,
    /// The REST method.
    pub method: Method,
    /// The REST path template, with `{name}` for a path parameter.
    pub path: &'static str,
    /// Its parameters, beside the body.
    pub params: &'static [Param],
    /// What its body is.
    pub body: RequestBody,
    /// The largest body, or tool arguments, it takes, in bytes; past it PAYLOAD_TOO_LARGE.
    pub body_limit: usize,
    /// The status of its success.
    pub success: u16,
    /// The statuses its OpenAPI document lists, the success among them.
    pub statuses: &'static [u16],
    /// The scope the token needs; `None`: any valid token may call it.
    pub scope: Option<Scope>,
    /// The permission the acting user needs, and what a caller without it is told. Access to
    /// one object (a confidential job, another user's profile) is checked by the operation
    /// itself, once it has it.
    pub permission: Option<(Permission, &'static str)>,
    /// The class whose rate limit the operation counts against.
    pub class: OperationClass,
    /// Whether a successful run is recorded in the audit ledgers (the API ledger, and the
    /// tool-interface ledger for tool calls), in the same transaction as what it does. (Reads
    /// and changes of profiles are recorded in the privacy ledger instead.)
    pub recorded: bool,
    /// What it does to stored data: its tool is read-only only for [`Effect::Read`].
    pub effect: Effect,
    /// Whether the tool interface has it. An export has no tool: its answer is a stream of any
    /// size, which a tool's single result cannot carry, and an agent reads the ledger a page
    /// at a time.
    pub tool: bool,
}

impl OperationKind {
    /// The OpenAPI `operationId`, as the audit ledgers record it.
    pub fn operation_id(self) -> &'static str {
        self.spec().operation_id
    }

    /// The name of the operation's tool in the tool interface, if it has one: its operation
    /// id in snake case.
    pub fn tool_name(self) -> Option<&'static str> {
        /// Every operation's snake-case name, in the order of [`OperationKind::ALL`].
        static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
            OperationKind::ALL
                .iter()
                .map(|k| heck::ToSnakeCase::to_snake_case(k.operation_id()))
                .collect()
        });
        let index = Self::ALL.iter().position(|k| *k == self)?;
        self.spec().tool.then(|| NAMES[index].as_str())
    }

    /// The operations of the tool interface, in the order it lists them.
    pub fn tools() -> impl Iterator<Item = Self> {
        Self::ALL.into_iter().filter(|kind| kind.spec().tool)
    }

    /// The operation whose tool is called `name`.
    pub fn from_tool_name(name: &str) -> Option<Self> {
        Self::tools().find(|kind| kind.tool_name() == Some(name))
    }

    /// The parameter called `name` (its snake-case name), if the operation has one.
    pub fn param(self, name: &str) -> Option<&'static Param> {
        self.spec().params.iter().find(|p| p.name == name)
    }

    /// The parameters of the operation that a REST request carries at `place`.
    pub fn params_in(self, place: Place) -> impl Iterator<Item = &'static Param> {
        self.spec().params.iter().filter(move |p| p.place == place)
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
    /// The caller.
    Me(Me),
    /// A month's review of the privacy ledger.
    Review(Box<crate::review::Review>),
    /// A decision on a download of a month's review.
    DownloadReview(crate::sign_off::DownloadReview),
    /// An organization's review rules.
    ReviewRules(recruit_domain::model::ReviewRules),
    /// An organization's single sign-on.
    SingleSignOn(recruit_domain::model::SingleSignOn),
    /// An organization's log stream.
    LogStream(Box<recruit_domain::model::LogStream>),
    /// An organization's log streams.
    LogStreams(Page<recruit_domain::model::LogStream>),
    /// Something removed: nothing to show (`204 No Content`).
    #[serde(skip)]
    Removed,
    /// Accesses recorded: the response of a write, as first sent (and as replayed for a
    /// request with the same idempotency key).
    #[serde(skip)]
    Recorded(Recorded),
    /// A download: a body streamed as it is read, which only the REST API serves.
    #[serde(skip)]
    Download(crate::export::Download),
}

/// Declares each result type's [`Outcome`]: `From<T>` for the variant that carries it.
macro_rules! outcomes {
    ($($ty:ty => $variant:ident $(($wrap:path))?,)*) => {$(
        impl From<$ty> for Outcome {
            fn from(value: $ty) -> Self {
                Self::$variant($($wrap)?(value))
            }
        }
    )*};
}

outcomes! {
    Page<PrivacyAuditLog> => PrivacyAuditLogs,
    Job => Job,
    Organization => Organization,
    UserProfile => User,
    recruit_domain::chain::Checkpoint => Checkpoint,
    Me => Me,
    crate::review::Review => Review(Box::new),
    crate::sign_off::DownloadReview => DownloadReview,
    recruit_domain::model::ReviewRules => ReviewRules,
    recruit_domain::model::SingleSignOn => SingleSignOn,
    recruit_domain::model::LogStream => LogStream(Box::new),
    Page<recruit_domain::model::LogStream> => LogStreams,
    Recorded => Recorded,
    crate::export::Download => Download,
}

impl From<()> for Outcome {
    fn from((): ()) -> Self {
        Self::Removed
    }
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
            Self::Removed => return Ok(serde_json::Value::Null),
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
            Self::Removed => Ok(Vec::new()),
            other => {
                // Most answers fit: no copies of the text as it grows.
                let mut json = Vec::with_capacity(4096);
                serde_json::to_writer(&mut json, other).map_err(not_serialized)?;
                Ok(json)
            }
        }
    }
}

fn no_json_form() -> ServiceError {
    ServiceError::internal_because("a download has no JSON form")
}

/// A response that could not be serialized: a fault of the server's.
pub(crate) fn not_serialized(e: serde_json::Error) -> ServiceError {
    ServiceError::internal_because(format!("the response could not be serialized: {e}"))
}

/// Who runs an operation: a secret still to authenticate, or a caller a transport has
/// authenticated already (the tool interface over HTTP, before the protocol library runs).
#[derive(Clone)]
pub enum Identity {
    /// The secret the client presented, if any.
    Secret(Option<String>),
    /// An authenticated caller.
    Authenticated(Box<Caller>),
}

impl std::fmt::Debug for Identity {
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
