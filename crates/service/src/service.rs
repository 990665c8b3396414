//! The operations: authentication, then `list_privacy_audit_logs`, `get_job` and
//! `get_organization`, each checking in the order of design.md §3: credential, scope, the acting
//! user's permission, input validation, existence, access to the object.
//!
//! Operations take their input raw, as a transport received it, and validate it themselves at
//! the right step, so that no transport can report a validation error before an authorization
//! error, and REST and the tool interface report the same problems in the same words.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use recruit_domain::{
    ApiTokenId, ErrorCode, ErrorDetail, IdFilter, Job, JobId, Organization, OrganizationId, Page,
    PageLimit, Pagination, Permission, PrivacyAuditLog, PrivacyAuditLogId, Scope, TimeWindow,
    TimeWindowError, Timestamp, User, UserId, Uuid,
};
use recruit_ports::{
    ApiToken, AuditEntry, Interface, NewApiToken, PrivacyLogQuery, ReadRecord, Store, StoreError,
    ToolAuditEntry,
};
use subtle::ConstantTimeEq;

use crate::auth::{generate_secret, hash_secret, looks_like_secret};
use crate::cursor::{self, CursorKey, Filters};
use crate::error::ServiceError;
use crate::limits::{OperationClass, RateLimitConfig, RateLimitStatus, RateLimits};

/// How the service is set up.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// The web app's base URL; `app_url`s are built from it.
    pub app_base_url: String,
    /// The key cursors are signed with.
    pub cursor_key: CursorKey,
    /// The rate limits.
    pub rate_limits: RateLimitConfig,
}

impl ServiceConfig {
    /// A configuration with `app_base_url`, `cursor_key` and the default rate limits.
    pub fn new(app_base_url: impl Into<String>, cursor_key: CursorKey) -> Self {
        Self {
            app_base_url: app_base_url.into(),
            cursor_key,
            rate_limits: RateLimitConfig::DEFAULT,
        }
    }
}

/// An authenticated caller: the token and the user it acts as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The token the request came with.
    pub token: ApiToken,
    /// The user the token acts as, with their current role.
    pub user: User,
}

impl Caller {
    fn require(&self, scope: Scope) -> Result<(), ServiceError> {
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

/// An operation of the API, with its input raw, as a transport received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// One page of the privacy audit ledger.
    ListPrivacyAuditLogs(ListParams),
    /// One job.
    GetJob(GetJobParams),
    /// The caller's organization; it takes no input, so only the transport's problems (such
    /// as a parameter it does not have).
    GetOrganization {
        /// Problems the transport found.
        problems: Vec<ErrorDetail>,
    },
}

impl Operation {
    /// The operation's name: its OpenAPI `operationId`, as the audit ledgers record it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::ListPrivacyAuditLogs(_) => LIST_PRIVACY_AUDIT_LOGS,
            Self::GetJob(_) => "getJob",
            Self::GetOrganization { .. } => "getOrganization",
        }
    }

    /// The class whose rate limit the operation counts against.
    pub fn class(&self) -> OperationClass {
        match self {
            Self::ListPrivacyAuditLogs(_) => OperationClass::LedgerRead,
            Self::GetJob(_) | Self::GetOrganization { .. } => OperationClass::Read,
        }
    }
}

/// What an operation returns; serialized, the body of its success.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// A page of the privacy audit ledger.
    PrivacyAuditLogs(Page<PrivacyAuditLog>),
    /// A job.
    Job(Job),
    /// The organization.
    Organization(Organization),
}

impl Outcome {
    /// The outcome as JSON. A value that cannot be serialized is INTERNAL on every interface,
    /// never an empty success.
    pub fn to_json(&self) -> Result<serde_json::Value, ServiceError> {
        serde_json::to_value(self).map_err(|e| ServiceError {
            cause: Some(format!("the response could not be serialized: {e}").into()),
            ..ServiceError::internal()
        })
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
#[derive(Clone, Debug, PartialEq)]
pub struct Done {
    /// What it returned.
    pub outcome: Outcome,
    /// Where the caller stands with the operation's rate limit, when one applies.
    pub rate_limit: Option<RateLimitStatus>,
    /// The caller's organization.
    pub organization: OrganizationId,
}

/// The operations of recruitd over a store.
pub struct Service {
    store: Arc<dyn Store>,
    config: ServiceConfig,
    limits: RateLimits,
    /// When each token's use was last written, so that it is written at most once a minute.
    touched: Mutex<HashMap<ApiTokenId, Instant>>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").field("config", &self.config).finish_non_exhaustive()
    }
}

/// How often a token's last use is written.
const TOUCH_INTERVAL: Duration = Duration::from_secs(60);

/// The name of the privacy ledger list in the audit ledgers.
pub const LIST_PRIVACY_AUDIT_LOGS: &str = "listPrivacyAuditLogs";

impl Service {
    /// A service over `store`.
    pub fn new(store: Arc<dyn Store>, config: ServiceConfig) -> Self {
        let limits = RateLimits::new(config.rate_limits);
        Self { store, config, limits, touched: Mutex::new(HashMap::new()) }
    }

    /// Runs `operation` for the holder of `credential`, in the order of checks of design.md
    /// §3: the credential (and the client address's quota of failed authentications), the
    /// token's rate limit for the operation's class, then the operation's own checks (scope,
    /// permission, input, existence, access). Every interface runs operations through here.
    /// A failure charged to a rate limit carries where the caller stands with it.
    pub async fn execute(
        &self,
        credential: Credential,
        context: &RequestContext,
        operation: Operation,
    ) -> Result<Done, ServiceError> {
        let caller = match credential {
            Credential::Secret(secret) => {
                self.authenticate(secret.as_deref(), context.client_ip).await?
            }
            Credential::Authenticated(caller) => *caller,
        };
        let rate_limit = self.limits.admit(caller.token.id, operation.class())?;
        let outcome = match operation {
            Operation::ListPrivacyAuditLogs(params) => self
                .list_privacy_audit_logs(&caller, context, params)
                .await
                .map(Outcome::PrivacyAuditLogs),
            Operation::GetJob(params) => self.get_job(&caller, params).await.map(Outcome::Job),
            Operation::GetOrganization { problems } => {
                self.get_organization(&caller, problems).await.map(Outcome::Organization)
            }
        };
        match outcome {
            Ok(outcome) => {
                Ok(Done { outcome, rate_limit, organization: caller.token.organization_id })
            }
            Err(e) => {
                Err(ServiceError { rate_limit: e.rate_limit.or(rate_limit.map(Box::new)), ..e })
            }
        }
    }

    /// Operations refused by a rate limit so far, per policy (`reads`, `ledger_reads`,
    /// `auth_failures`), for metrics.
    pub fn rate_limit_refusals(&self) -> [(&'static str, u64); 3] {
        self.limits.refusals()
    }

    /// Whether the service can serve: its database answers and its schema is up to date.
    pub async fn ready(&self) -> Result<(), ServiceError> {
        self.store.ping().await.map_err(|e| match e {
            StoreError::Unavailable(_) | StoreError::Timeout => {
                ServiceError::from(StoreError::Unavailable(e.to_string()))
            }
            other => other.into(),
        })
    }

    /// The store, for operations outside the API (import, token administration).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Authenticates a secret presented from `client_ip`. Missing, malformed, unknown, expired
    /// and revoked credentials are all `UNAUTHENTICATED`, alike, and each is charged to the
    /// client's address; an address over its quota of failures is refused with RATE_LIMITED
    /// before its credential is looked at.
    pub async fn authenticate(
        &self,
        secret: Option<&str>,
        client_ip: Option<IpAddr>,
    ) -> Result<Caller, ServiceError> {
        self.limits.before_authentication(client_ip)?;
        match self.verify(secret).await {
            Err(e) if e.code == ErrorCode::Unauthenticated => {
                let rate_limit = self.limits.failed_authentication(client_ip)?;
                Err(ServiceError { rate_limit: rate_limit.map(Box::new), ..e })
            }
            verified => verified,
        }
    }

    /// The caller a secret belongs to, if it is live.
    async fn verify(&self, secret: Option<&str>) -> Result<Caller, ServiceError> {
        let Some(secret) = secret.filter(|s| looks_like_secret(s)) else {
            return Err(ServiceError::unauthenticated());
        };
        let hash = hash_secret(secret);
        let credential = match self.store.credential(&hash).await {
            Ok(c) => c,
            Err(StoreError::NotFound) => return Err(ServiceError::unauthenticated()),
            Err(e) => return Err(e.into()),
        };
        // The lookup was by hash; compare again in constant time before trusting the row.
        let same: bool = credential.token.secret_hash.0.ct_eq(&hash.0).into();
        let now = Timestamp::now();
        let expired = credential.token.expires_at.is_some_and(|at| at <= now);
        if !same || expired || credential.token.revoked_at.is_some() {
            return Err(ServiceError::unauthenticated());
        }
        self.touch(credential.token.id, now).await;
        Ok(Caller { token: credential.token, user: credential.user })
    }

    /// Records a token's use, at most once a minute per token and never failing the request.
    async fn touch(&self, id: ApiTokenId, now: Timestamp) {
        let due = {
            let mut touched =
                self.touched.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let due = touched.get(&id).is_none_or(|at| at.elapsed() >= TOUCH_INTERVAL);
            if due {
                touched.insert(id, Instant::now());
            }
            due
        };
        if due {
            // Best effort: a failed write of the last use must not fail the request.
            let _ = self.store.touch_token(id, now).await;
        }
    }

    /// One page of the caller's organization's privacy audit ledger, newest first. Needs the
    /// `audit_logs:read` scope and an acting user holding READ_AUDIT_LOGS (owners). The read is
    /// recorded in the API audit ledger (and the tool-interface ledger for tool calls) in the
    /// same transaction; if it cannot be recorded, no entry is returned.
    async fn list_privacy_audit_logs(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: ListParams,
    ) -> Result<Page<PrivacyAuditLog>, ServiceError> {
        caller.require(Scope::AuditLogsRead)?;
        if !caller.user.role.holds(Permission::ReadAuditLogs) {
            return Err(ServiceError::permission_denied(
                "Reading the privacy audit ledger needs the READ_AUDIT_LOGS permission, which only \
                 owners of the organization hold.",
            ));
        }
        let input = validate_list(params)?;
        let organization = caller.token.organization_id;
        let filters = Filters { window: input.window, ids: input.ids.as_ref() };
        let after = match &input.cursor {
            None => None,
            Some(c) => Some(cursor::decode(&self.config.cursor_key, c, organization, &filters).map_err(|_| {
                ServiceError::new(
                    ErrorCode::InvalidCursor,
                    "The cursor does not belong to this query: reuse a cursor only with the same \
                     filters it was issued for, or restart without one.",
                )
            })?),
        };
        let query = PrivacyLogQuery {
            organization_id: organization,
            window: input.window,
            ids: input.ids.clone(),
            after,
            limit: u32::from(input.limit.get()),
        };
        let record = self.record(caller, context, &input);
        let page = self.store.read_privacy_audit_logs(&query, &record).await?;
        let next_cursor = match page.entries.last() {
            Some(last) if page.more => Some(cursor::encode(
                &self.config.cursor_key,
                organization,
                &filters,
                recruit_ports::LedgerPosition::of(last),
            )),
            _ => None,
        };
        Ok(Page { data: page.entries, pagination: Pagination { next_cursor } })
    }

    /// What the audit ledgers record of a read.
    fn record(&self, caller: &Caller, context: &RequestContext, input: &ListInput) -> ReadRecord {
        let at = Timestamp::now();
        let filters = serde_json::json!({
            "timestamp_gte": input.window.gte(),
            "timestamp_lt": input.window.lt(),
            "ids": input.ids.as_ref().map(|ids| ids.iter().collect::<Vec<_>>()),
            "limit": input.limit.get(),
            "cursor": input.cursor.is_some(),
        });
        let (interface, tool) = match &context.via {
            Via::Rest => (Interface::Rest, None),
            Via::Tool { name, arguments } => (
                Interface::Tool,
                Some(ToolAuditEntry {
                    id: Uuid::now_v7(),
                    at,
                    organization_id: caller.token.organization_id,
                    token_id: caller.token.id,
                    user_id: caller.user.id,
                    tool_name: name.clone(),
                    arguments: arguments.clone(),
                    entries_returned: 0,
                    request_id: context.request_id.clone(),
                }),
            ),
        };
        ReadRecord {
            api: AuditEntry {
                id: Uuid::now_v7(),
                at,
                organization_id: caller.token.organization_id,
                token_id: caller.token.id,
                user_id: caller.user.id,
                operation: LIST_PRIVACY_AUDIT_LOGS.into(),
                request_id: context.request_id.clone(),
                client_ip: context.client_ip.map(|ip| ip.to_string()),
                filters,
                entries_returned: 0,
                interface,
                tool_name: tool.as_ref().map(|t| t.tool_name.clone()),
            },
            tool,
        }
    }

    /// A job of the caller's organization. Needs `jobs:read`; a confidential job is readable
    /// only by owners, admins and members of its hiring team. A job of another organization is
    /// not found, exactly like a missing one.
    async fn get_job(&self, caller: &Caller, params: GetJobParams) -> Result<Job, ServiceError> {
        caller.require(Scope::JobsRead)?;
        let mut problems = params.problems;
        let id = if crate::problems::reported(&problems, params.name) {
            Err(())
        } else {
            JobId::parse(&params.job_id)
                .map_err(|e| problems.push(ErrorDetail::field(params.name, e)))
        };
        let id = match id {
            Ok(id) if problems.is_empty() => id,
            _ => return Err(ServiceError::validation(problems)),
        };
        let job = match self.store.job(caller.token.organization_id, id).await {
            Ok(job) => job,
            Err(StoreError::NotFound) => return Err(ServiceError::not_found("job")),
            Err(e) => return Err(e.into()),
        };
        let on_team = job.hiring_team.iter().any(|m| m.user.id == caller.user.id);
        if job.confidential && !on_team && !caller.user.role.holds(Permission::ReadConfidentialJobs)
        {
            return Err(ServiceError::permission_denied(
                "This job is confidential: only owners, admins and its hiring team may read it.",
            ));
        }
        let app_url = format!("{}/jobs/{}", self.config.app_base_url.trim_end_matches('/'), job.id);
        Ok(job.into_job(app_url))
    }

    /// The caller's organization. Needs `organization:read`. `problems` are those the
    /// transport found (such as a query parameter this operation does not take).
    async fn get_organization(
        &self,
        caller: &Caller,
        problems: Vec<ErrorDetail>,
    ) -> Result<Organization, ServiceError> {
        caller.require(Scope::OrganizationRead)?;
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        let record = match self.store.organization(caller.token.organization_id).await {
            Ok(record) => record,
            // The token's organization is gone: the token no longer names anything.
            Err(StoreError::NotFound) => return Err(ServiceError::unauthenticated()),
            Err(e) => return Err(e.into()),
        };
        let app_url = format!("{}/organization", self.config.app_base_url.trim_end_matches('/'));
        Ok(record.into_organization(app_url))
    }

    /// Creates a token acting as `user` of `organization` (operators' tooling, not the API).
    /// Returns the stored token and its secret, which is shown once and never stored.
    pub async fn create_token(
        &self,
        organization: recruit_domain::OrganizationId,
        user: UserId,
        name: String,
        scopes: Vec<Scope>,
        expires_at: Option<Timestamp>,
    ) -> Result<(ApiToken, String), StoreError> {
        let (secret, secret_hash) = generate_secret();
        let token = NewApiToken {
            id: ApiTokenId::new_v7(),
            organization_id: organization,
            user_id: user,
            name,
            scopes,
            secret_hash,
            created_at: Timestamp::now(),
            expires_at,
        };
        let stored = self.store.create_token(&token).await?;
        Ok((stored, secret))
    }
}

/// The list's input, valid.
struct ListInput {
    window: TimeWindow,
    ids: Option<IdFilter<recruit_domain::resource::PrivacyAuditLog>>,
    limit: PageLimit,
    cursor: Option<String>,
}

/// Validates the list's parameters, reporting every problem at once.
fn validate_list(params: ListParams) -> Result<ListInput, ServiceError> {
    let mut problems = params.problems;
    let mut timestamp = |name: &str, value: Option<String>| match value {
        None if crate::problems::reported(&problems, name) => None,
        None => {
            problems.push(crate::problems::missing(name));
            None
        }
        Some(v) => match Timestamp::parse(&v) {
            Ok(t) => Some(t),
            Err(e) => {
                problems.push(ErrorDetail::field(name, e));
                None
            }
        },
    };
    let gte = timestamp("timestamp_gte", params.timestamp_gte);
    let lt = timestamp("timestamp_lt", params.timestamp_lt);
    let window = match (gte, lt) {
        (Some(gte), Some(lt)) => match TimeWindow::new(gte, lt) {
            Ok(w) => Some(w),
            Err(TimeWindowError::TooLong) => {
                problems.push(ErrorDetail::field(
                    "timestamp_lt",
                    "must be at most 366 days after timestamp_gte",
                ));
                None
            }
            Err(e) => {
                problems.push(ErrorDetail::field("timestamp_lt", e));
                None
            }
        },
        _ => None,
    };
    let limit = match params.limit {
        None => Some(PageLimit::DEFAULT),
        Some(v) => match v.parse::<PageLimit>() {
            Ok(l) => Some(l),
            Err(e) => {
                problems.push(ErrorDetail::field("limit", e));
                None
            }
        },
    };
    let ids = params.ids.and_then(|values| {
        let count = values.len();
        let most = IdFilter::<recruit_domain::resource::PrivacyAuditLog>::MAX_LEN;
        if count == 0 || count > most {
            let reason = if count == 0 {
                "must hold at least one ID".to_owned()
            } else {
                format!("must hold at most {most} IDs; {count} were given")
            };
            problems.push(ErrorDetail::field("ids", reason));
            return None;
        }
        let mut parsed = Vec::with_capacity(count);
        for (i, v) in values.iter().enumerate() {
            match PrivacyAuditLogId::parse(v) {
                Ok(id) => parsed.push(id),
                Err(e) => problems.push(ErrorDetail::field("ids", format!("value {} {e}", i + 1))),
            }
        }
        if parsed.len() == count { IdFilter::new(parsed).ok() } else { None }
    });
    match (window, limit) {
        (Some(window), Some(limit)) if problems.is_empty() => {
            Ok(ListInput { window, ids, limit, cursor: params.cursor })
        }
        _ => Err(ServiceError::validation(problems)),
    }
}
