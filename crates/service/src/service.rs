//! The service: [`Service::run`] and [`Service::execute`] take an [`Operation`] through the
//! order of checks of design.md §3 (credential, rate limit, scope, the acting user's
//! permission, input validation, existence, access to the object), then the operation itself.
//!
//! Operations take their input raw, as a transport received it, and validate it themselves at
//! the right step, so that no transport can report a validation error before an authorization
//! error, and REST and the tool interface report the same problems in the same words.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use recruit_domain::model::{
    AccessData, ActivityCategory, DataSubject, Me, MeToken, MeUser, UserProfile,
};
use recruit_domain::resource::PrivacyAuditLog as PrivacyAuditLogResource;
use recruit_domain::{
    AccountId, ApiTokenId, ErrorCode, ErrorDetail, IdFilter, Job, JobId, Organization, Page,
    PageLimit, Pagination, Permission, PrivacyAuditLog, PrivacyAuditLogId, Scope, TimeWindow,
    Timestamp, User, UserId, Uuid,
};
use recruit_ports::{
    AccessesWrite, ApiToken, AuditEntry, Claim, Interface, KeyClaim, LedgerEntry, PrivacyLogQuery,
    ProfileUpdate, ReadRecord, Store, StoreError, StoredResponse, ToolAuditEntry,
};
use subtle::ConstantTimeEq;

use crate::auth::{hash_secret, looks_like_secret};
use crate::checkpoint::CheckpointKey;
use crate::cursor::{self, CursorKey, Filters};
use crate::error::{ServiceError, guarded};
use crate::input::{GetJobParams, GetUserParams, ListParams, RecordParams, UpdateUserParams};
use crate::limits::{RateLimitConfig, RateLimits};
use crate::operation::{
    Caller, Credential, Done, Effect, Operation, OperationKind, Outcome, Recorded, RequestContext,
    Via,
};
use crate::{accesses, profiles};

/// The status of a write that created what it was asked to.
const CREATED: u16 = 201;

/// How the service is set up.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// The web app's base URL; `app_url`s are built from it.
    pub app_base_url: String,
    /// The key cursors are signed with.
    pub cursor_key: CursorKey,
    /// The rate limits.
    pub rate_limits: RateLimitConfig,
    /// How idempotency keys are kept.
    pub idempotency: IdempotencyConfig,
    /// The key checkpoints of the ledgers' chains are signed with; without one, the latest
    /// checkpoint is NOT_IMPLEMENTED.
    pub checkpoint_key: Option<CheckpointKey>,
    /// How long the ledgers keep their entries; an export's window may be as long.
    pub ledger_retention: recruit_domain::Retention,
    /// The most exports streaming at once; each holds a connection of the store while it
    /// streams. More are refused with RATE_LIMITED until one ends.
    pub max_exports: usize,
    /// How many batches of accesses are written at once, and how long a batch waits for its
    /// turn.
    pub batch_writes: BatchWrites,
}

/// How many batches of recorded accesses are read and written at once. Each holds its entries
/// in memory (a few MB for 1 000) and a connection while it writes, and the batches of one
/// organization take turns at the head of its ledger's chain anyway: more at once buys
/// memory and lock waits, not throughput.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchWrites {
    /// The most batches read and written at once.
    pub at_once: usize,
    /// How long a batch waits for its turn before it is refused with UNAVAILABLE, nothing
    /// written.
    pub wait: Duration,
}

impl BatchWrites {
    /// The defaults: 2 at once, each waiting at most 5 seconds for its turn.
    pub const DEFAULT: Self = Self { at_once: 2, wait: Duration::from_secs(5) };
}

/// How idempotency keys of writes are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdempotencyConfig {
    /// How long a key is held while its request runs: longer than any request may take, so
    /// that a second request with the key meanwhile is told to wait. A key whose process died
    /// is free again after it.
    pub lease: Duration,
    /// How long a key is kept after its first use: a request with it within this time gets
    /// the first response, or IDEMPOTENCY_KEY_REUSED for another request. Then it is purged.
    pub retention: Duration,
}

impl IdempotencyConfig {
    /// The defaults: a 60-second lease, keys kept 24 hours.
    pub const DEFAULT: Self =
        Self { lease: Duration::from_secs(60), retention: Duration::from_secs(24 * 3600) };
}

impl ServiceConfig {
    /// A configuration with `app_base_url`, `cursor_key` and the default rate limits.
    pub fn new(app_base_url: impl Into<String>, cursor_key: CursorKey) -> Self {
        Self {
            app_base_url: app_base_url.into(),
            cursor_key,
            rate_limits: RateLimitConfig::DEFAULT,
            idempotency: IdempotencyConfig::DEFAULT,
            checkpoint_key: None,
            ledger_retention: recruit_domain::Retention::DEFAULT,
            max_exports: 2,
            batch_writes: BatchWrites::DEFAULT,
        }
    }
}

/// The operations of recruitd over a store.
pub struct Service {
    store: Arc<dyn Store>,
    config: ServiceConfig,
    limits: RateLimits,
    /// When each token's use was last written, so that it is written at most once a minute.
    touched: Mutex<HashMap<ApiTokenId, Instant>>,
    /// Audit ledger entries written so far: the API ledger's, and the tool-interface ledger's.
    recorded: [AtomicU64; 2],
    /// A slot for each export that may stream at once.
    exports: Arc<tokio::sync::Semaphore>,
    /// A turn for each batch of accesses that may be read and written at once.
    batch_turns: tokio::sync::Semaphore,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").field("config", &self.config).finish_non_exhaustive()
    }
}

/// How often a token's last use is written.
const TOUCH_INTERVAL: Duration = Duration::from_secs(60);

/// How many tokens' last writes are remembered before those older than [`TOUCH_INTERVAL`] are
/// forgotten.
const TOUCHED_CAPACITY: usize = 4096;

impl Service {
    /// A service over `store`.
    pub fn new(store: Arc<dyn Store>, config: ServiceConfig) -> Self {
        let limits = RateLimits::new(config.rate_limits);
        Self {
            store,
            limits,
            touched: Mutex::new(HashMap::new()),
            recorded: Default::default(),
            exports: Arc::new(tokio::sync::Semaphore::new(config.max_exports.max(1))),
            batch_turns: tokio::sync::Semaphore::new(config.batch_writes.at_once.max(1)),
            config,
        }
    }

    /// Runs `operation` as [`Service::execute`] does, as a task of its own under `deadline`
    /// (a panic becomes INTERNAL, the deadline passing UPSTREAM_TIMEOUT) and in a span with
    /// the request id. A failure on the server's side is logged here, once, at error level,
    /// whichever interface the request came through. Interfaces run operations through this.
    pub async fn run(
        self: &Arc<Self>,
        deadline: Duration,
        credential: Credential,
        context: RequestContext,
        operation: Operation,
    ) -> Result<Done, ServiceError> {
        let service = Arc::clone(self);
        let request_id = context.request_id.clone();
        let span = tracing::info_span!(
            "operation",
            request.id = %request_id,
            operation = operation.kind().operation_id()
        );
        let operation = tracing::Instrument::instrument(
            async move { service.execute(credential, &context, operation).await },
            span,
        );
        let result = guarded(deadline, operation).await;
        if let Err(e) = &result {
            crate::error::log_failure(&request_id, e);
        }
        result
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
        let kind = operation.kind();
        let rate_limit = self.limits.admit(caller.token.id, kind.spec().class)?;
        let outcome = match self.authorize(&caller, kind) {
            Err(e) => Err(e),
            Ok(()) => match operation {
                Operation::ListPrivacyAuditLogs(params) => self
                    .list_privacy_audit_logs(&caller, context, params)
                    .await
                    .map(Outcome::PrivacyAuditLogs),
                Operation::ExportPrivacyAuditLogs(params) => self
                    .export_privacy_audit_logs(&caller, context, params)
                    .await
                    .map(Outcome::Download),
                Operation::GetJob(params) => {
                    self.get_job(&caller, context, params).await.map(Outcome::Job)
                }
                Operation::RecordPrivacyAccesses(params) => self
                    .record_privacy_accesses(&caller, context, params)
                    .await
                    .map(Outcome::Recorded),
                Operation::GetOrganization(params) => {
                    self.get_organization(&caller, params.problems).await.map(Outcome::Organization)
                }
                Operation::GetUser(params) => {
                    self.get_user(&caller, context, params).await.map(Outcome::User)
                }
                Operation::UpdateUser(params) => {
                    self.update_user(&caller, context, params).await.map(Outcome::User)
                }
                Operation::GetLatestPrivacyAuditLogCheckpoint(params) => self
                    .latest_checkpoint(&caller, context, params.problems)
                    .await
                    .map(Outcome::Checkpoint),
                Operation::GetMe(params) => get_me(&caller, params.problems).map(Outcome::Me),
            },
        };
        match outcome {
            Ok(outcome) => {
                if kind.spec().recorded {
                    self.recorded[0].fetch_add(1, Ordering::Relaxed);
                    if matches!(context.via, Via::Tool { .. }) {
                        self.recorded[1].fetch_add(1, Ordering::Relaxed);
                    }
                }
                Ok(Done { outcome, rate_limit, organization: caller.token.organization_id })
            }
            Err(e) => {
                Err(ServiceError { rate_limit: e.rate_limit.or(rate_limit.map(Box::new)), ..e })
            }
        }
    }

    /// The scope and the acting user's permission an operation of `kind` needs.
    fn authorize(&self, caller: &Caller, kind: OperationKind) -> Result<(), ServiceError> {
        caller.require(kind.spec().scope)?;
        match kind.spec().permission {
            Some((permission, why)) if !caller.user.role.holds(permission) => {
                Err(ServiceError::permission_denied(why))
            }
            _ => Ok(()),
        }
    }

    /// Audit ledger entries written so far, per ledger (`api`, `tool`), for metrics.
    pub fn ledger_records(&self) -> [(&'static str, u64); 2] {
        let count = |i: usize| self.recorded[i].load(Ordering::Relaxed);
        [("api", count(0)), ("tool", count(1))]
    }

    /// Operations refused by a rate limit so far, per policy (`reads`, `ledger_reads`,
    /// `auth_failures`), for metrics.
    pub fn rate_limit_refusals(&self) -> [(&'static str, u64); crate::limits::POLICIES.len()] {
        self.limits.refusals()
    }

    /// Removes the idempotency keys past their retention; returns how many. The server runs
    /// it periodically.
    pub async fn purge_expired_keys(&self) -> Result<usize, ServiceError> {
        Ok(self.store.purge_idempotency_keys(Timestamp::now()).await?)
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
        let Some(secret) = secret else {
            return Err(ServiceError { no_credential: true, ..ServiceError::unauthenticated() });
        };
        if !looks_like_secret(secret) {
            return Err(ServiceError::unauthenticated());
        }
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
                // Tokens not seen for a minute are forgotten now and then: the map holds the
                // tokens in use, not every token ever used.
                if touched.len() >= TOUCHED_CAPACITY {
                    touched.retain(|_, at| at.elapsed() < TOUCH_INTERVAL);
                }
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

    /// Every entry of a window of the caller's organization's privacy audit ledger, as NDJSON
    /// lines with their chain fields ([`crate::export::line`]), in the order of time and id.
    /// Needs what listing needs; the window may span the ledgers' whole retention period. The
    /// export is recorded in the API audit ledger (operation `exportPrivacyAuditLogs`, a
    /// download, with its filters and count), committed before the first line is handed over;
    /// it reads one snapshot, so exactly that count follows. At most
    /// [`ServiceConfig::max_exports`] stream at once: past that, RATE_LIMITED.
    async fn export_privacy_audit_logs(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: crate::ExportParams,
    ) -> Result<crate::export::Download, ServiceError> {
        let mut problems = params.problems;
        let window = window(&mut problems, params.timestamp_gte, params.timestamp_lt, |gte, lt| {
            TimeWindow::within(gte, lt, self.config.ledger_retention)
        });
        let ids = ids(&mut problems, params.ids);
        let window = match window {
            Some(window) if problems.is_empty() => window,
            _ => return Err(ServiceError::validation(problems)),
        };
        let slot = Arc::clone(&self.exports).try_acquire_owned().map_err(|_| ServiceError {
            retry_after: Some(Duration::from_secs(5)),
            ..ServiceError::new(
                ErrorCode::RateLimited,
                format!(
                    "The server streams at most {} exports at once; retry when one has ended.",
                    self.config.max_exports.max(1)
                ),
            )
        })?;
        let organization = caller.token.organization_id;
        let ledger = recruit_domain::chain::Ledger::Privacy;
        let query = recruit_ports::chain::ExportQuery {
            ledger,
            organization: Some(organization),
            from: Some(window.gte()),
            to: Some(window.lt()),
            ids: ids.as_ref().map(|ids| ids.iter().map(|id| id.uuid()).collect()),
            recorded_before: None,
        };
        let filters = serde_json::json!({
            "activity_category": ActivityCategory::Download.as_str(),
            "timestamp_gte": window.gte(),
            "timestamp_lt": window.lt(),
            "ids": ids.as_ref().map(|ids| ids.iter().collect::<Vec<_>>()),
        });
        let kind = OperationKind::ExportPrivacyAuditLogs;
        let record = audit_record(caller, context, kind, filters, None);
        let export = self.store.export(&query, Some(&record)).await?;
        Ok(crate::export::Download {
            count: export.count,
            file_name: format!("privacy-audit-logs-{organization}.ndjson"),
            chunks: crate::export::Chunks::new(ledger, export, Box::new(slot)),
        })
    }

    /// What the audit ledgers record of a read.
    fn record(&self, caller: &Caller, context: &RequestContext, input: &ListInput) -> ReadRecord {
        let filters = serde_json::json!({
            "timestamp_gte": input.window.gte(),
            "timestamp_lt": input.window.lt(),
            "ids": input.ids.as_ref().map(|ids| ids.iter().collect::<Vec<_>>()),
            "limit": input.limit.get(),
            "cursor": input.cursor.is_some(),
        });
        audit_record(caller, context, OperationKind::ListPrivacyAuditLogs, filters, None)
    }

    /// Records accesses in the caller's organization's privacy ledger. Needs `audit_logs:write`
    /// and an owner or admin; an idempotency key; a body of 1 to 1 000 valid entries (every
    /// problem reported at once). The key decides first: a request it completed before is
    /// replayed, one running is CONFLICT, another request's key is IDEMPOTENCY_KEY_REUSED.
    /// The entries, the audit record and the response are written together; a request that
    /// fails releases its key.
    async fn record_privacy_accesses(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: RecordParams,
    ) -> Result<Recorded, ServiceError> {
        let mut problems = params.problems;
        let key_name = context.via.name(OperationKind::RecordPrivacyAccesses, "idempotency_key");
        let key = match params.idempotency_key {
            Some(key) => {
                if let Err(problem) = accesses::check_key(&key, key_name) {
                    problems.push(problem);
                }
                Some(key)
            }
            // The transport found the key unusable and said so: one problem among the others.
            None if crate::problems::reported(&problems, key_name) => None,
            None => {
                return Err(ServiceError::new(
                    ErrorCode::IdempotencyKeyRequired,
                    format!(
                        "Recording accesses needs an idempotency key ({}): generate a fresh one \
                         for this batch and send the same one when retrying it.",
                        key_name
                    ),
                ));
            }
        };
        let Some(body) = params.body else {
            return Err(ServiceError::validation(problems));
        };
        // The body is read in the batch's turn, so that only so many are in memory at once.
        let _turn = self.batch_turn().await?;
        let kind = OperationKind::RecordPrivacyAccesses;
        let now = Timestamp::now();
        let batch = accesses::read(kind.operation_id(), &body, now, &mut problems);
        drop(body);
        let (Some(key), Some(batch), true) = (key, batch, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        let organization = caller.token.organization_id;
        let add = |d: Duration| now.checked_add_duration(d).unwrap_or(Timestamp::MAX);
        let claim = KeyClaim {
            organization_id: organization,
            key: key.clone(),
            fingerprint: batch.fingerprint,
            now,
            lease_until: add(self.config.idempotency.lease),
            expires_at: add(self.config.idempotency.retention),
        };
        match self.store.claim_idempotency_key(&claim).await? {
            Claim::Granted => {}
            Claim::Completed(response) => {
                return Ok(Recorded {
                    status: response.status,
                    body: response.body,
                    replayed: true,
                });
            }
            Claim::InFlight { until } => {
                let wait = until.unix_micros().saturating_sub(now.unix_micros());
                return Err(ServiceError {
                    retry_after: Some(Duration::from_micros(u64::try_from(wait).unwrap_or(0))),
                    ..ServiceError::new(
                        ErrorCode::Conflict,
                        "A request with this idempotency key is still running. Wait as long as \
                         `Retry-After` says, then send it again to get its response.",
                    )
                });
            }
            Claim::OtherRequest => {
                return Err(ServiceError::new(
                    ErrorCode::IdempotencyKeyReused,
                    "This idempotency key was used for a different request (other entries). Use \
                     a fresh key for a changed request.",
                ));
            }
        }
        let entries: Vec<LedgerEntry> = batch
            .entries
            .into_iter()
            .map(|new| {
                let id = new.id.unwrap_or_else(PrivacyAuditLogId::new_v7);
                LedgerEntry {
                    organization_id: organization,
                    entry: PrivacyAuditLog { id, ..new.entry },
                }
            })
            .collect();
        /// The response's shape, serialized as it is.
        #[derive(serde::Serialize)]
        struct Shown<'a> {
            entries: Vec<&'a PrivacyAuditLog>,
        }
        let shown = Shown { entries: entries.iter().map(|e| &e.entry).collect() };
        let response = serde_json::to_vec(&shown).map_err(|e| ServiceError {
            cause: Some(format!("the response could not be serialized: {e}").into()),
            ..ServiceError::internal()
        });
        let response = match response {
            Ok(body) => StoredResponse { status: CREATED, body },
            Err(e) => {
                self.release(&claim).await;
                return Err(e);
            }
        };
        let summary = serde_json::json!({ "idempotency_key": key, "entries": entries.len() });
        let write = AccessesWrite {
            record: audit_record(caller, context, kind, summary.clone(), Some(summary)),
            entries,
            claim,
            response,
        };
        match self.store.record_privacy_accesses(&write).await {
            Ok(()) => Ok(Recorded { status: CREATED, body: write.response.body, replayed: false }),
            Err(e) => {
                self.release(&write.claim).await;
                Err(match e {
                    StoreError::Conflict(_) => ServiceError::new(
                        ErrorCode::Conflict,
                        "The batch conflicts with the ledger: an entry with one of its ids is \
                         already recorded. Nothing was written; leave ids out to have the server \
                         assign them, or read the ledger first.",
                    ),
                    other => other.into(),
                })
            }
        }
    }

    /// A turn to read and write a batch of accesses, waited for at most
    /// [`BatchWrites::wait`]; then UNAVAILABLE, before anything is claimed or written.
    async fn batch_turn(&self) -> Result<tokio::sync::SemaphorePermit<'_>, ServiceError> {
        let BatchWrites { at_once, wait } = self.config.batch_writes;
        match tokio::time::timeout(wait, self.batch_turns.acquire()).await {
            Ok(Ok(turn)) => Ok(turn),
            // Waited too long, or (never) closed.
            _ => Err(ServiceError {
                retry_after: Some(Duration::from_secs(1)),
                ..ServiceError::new(
                    ErrorCode::Unavailable,
                    format!(
                        "The server writes at most {} batches at once, and this one waited {} \
                         ms for its turn. Nothing was written: send it again, with the same \
                         idempotency key.",
                        at_once.max(1),
                        wait.as_millis()
                    ),
                )
            }),
        }
    }

    /// Gives a key up after its request failed; best effort: a key not released stays leased
    /// until its lease ends.
    async fn release(&self, claim: &KeyClaim) {
        if let Err(e) = self.store.release_idempotency_key(claim).await {
            tracing::warn!(error = %e, "an idempotency key could not be released");
        }
    }

    /// A job of the caller's organization. Needs `jobs:read`; a confidential job is readable
    /// only by owners, admins and members of its hiring team. A job of another organization is
    /// not found, exactly like a missing one.
    async fn get_job(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: GetJobParams,
    ) -> Result<Job, ServiceError> {
        let mut problems = params.problems;
        let name = context.via.name(OperationKind::GetJob, "job_id");
        let id = match parse_id::<JobId>(&params.job_id, name, &mut problems) {
            Some(id) if problems.is_empty() => id,
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

    /// A user of the caller's organization. Needs `users:read`. The read is recorded in the
    /// privacy ledger (READ of an employee's name and email address) in the same transaction;
    /// if it cannot be, nothing is returned. A user of another organization is not found,
    /// exactly like a missing one.
    async fn get_user(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: GetUserParams,
    ) -> Result<UserProfile, ServiceError> {
        let mut problems = params.problems;
        let name = context.via.name(OperationKind::GetUser, "user_id");
        let id = parse_id::<UserId>(&params.user_id, name, &mut problems);
        let id = match id {
            Some(id) if problems.is_empty() => id,
            _ => return Err(ServiceError::validation(problems)),
        };
        let organization = caller.token.organization_id;
        let entry = profile_entry(caller, context, OperationKind::GetUser, id);
        match self.store.read_user(organization, id, &entry).await {
            Ok(user) => Ok(self.profile(user)),
            Err(StoreError::NotFound) => Err(ServiceError::not_found("user")),
            Err(e) => Err(e.into()),
        }
    }

    /// Changes a user's profile with a JSON Merge Patch. Needs `users:write`; an owner or admin
    /// changes anyone of the organization, anyone else only themselves. In order: the input
    /// (every problem at once), the user, the caller's access, fields kept by a sync
    /// (CANNOT_UPDATE_SYNC_MANAGED_FIELDS, every one listed), `If-Match` (CONFLICT when stale),
    /// the new manager (of the organization, VALIDATION_FAILED; not the user nor below them,
    /// CONFLICT). The change and its privacy ledger entry (UPDATE) are written together, and
    /// only while everything the decision read is unchanged; a change that meets a concurrent
    /// one is decided again on what is stored then.
    async fn update_user(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: UpdateUserParams,
    ) -> Result<UserProfile, ServiceError> {
        let mut problems = params.problems;
        let kind = OperationKind::UpdateUser;
        let if_match_name = context.via.name(kind, "if_match");
        let id =
            parse_id::<UserId>(&params.user_id, context.via.name(kind, "user_id"), &mut problems);
        let if_match = match &params.if_match {
            Some(value) => {
                profiles::IfMatch::parse(value, if_match_name).map_err(|p| problems.push(p)).ok()
            }
            None => None,
        };
        let patch = params
            .body
            .and_then(|body| {
                serde_json::from_slice(&body)
                    .map_err(|e| problems.push(crate::problems::not_json(&e)))
                    .ok()
            })
            .and_then(|body: serde_json::Value| profiles::patch(&body, &mut problems));
        let (Some(id), Some(patch)) = (id, patch) else {
            return Err(ServiceError::validation(problems));
        };
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        let organization = caller.token.organization_id;
        for attempt in 1..=PROFILE_ATTEMPTS {
            let user = match self.store.user(organization, id).await {
                Ok(user) => user,
                Err(StoreError::NotFound) => return Err(ServiceError::not_found("user")),
                Err(e) => return Err(e.into()),
            };
            if user.id != caller.user.id && !caller.user.role.holds(Permission::UpdateAnyProfile) {
                return Err(ServiceError::permission_denied(
                    "Members may change their own profile only; changing another user's needs an \
                     owner or an admin.",
                ));
            }
            let sources = match self.store.organization(organization).await {
                Ok(record) => record.profile_field_sources,
                Err(StoreError::NotFound) => return Err(ServiceError::unauthenticated()),
                Err(e) => return Err(e.into()),
            };
            let managed = patch.sync_managed(&sources);
            if !managed.is_empty() {
                let names: Vec<&str> = managed.iter().map(|(f, _)| f.as_str()).collect();
                return Err(ServiceError {
                    details: managed
                        .iter()
                        .map(|(field, source)| {
                            ErrorDetail::default()
                                .with("field", field.as_str())
                                .with("source", source.as_str())
                        })
                        .collect(),
                    ..ServiceError::new(
                        ErrorCode::CannotUpdateSyncManagedFields,
                        format!(
                            "The organization keeps {} in a directory or SCIM sync: drop the \
                             fields listed in `details` (even unchanged ones), or change them in \
                             the source system. Nothing was written.",
                            names.join(", ")
                        ),
                    )
                });
            }
            let current = profiles::etag(&user);
            if if_match.as_ref().is_some_and(|m| !m.matches(&current)) {
                return Err(ServiceError::new(
                    ErrorCode::Conflict,
                    format!(
                        "The profile changed since it was read ({} does not match its current \
                         entity tag {current}). Read it again, reapply the change, and send it \
                         with the new tag. Nothing was written.",
                        if_match_name
                    ),
                ));
            }
            let mut read = vec![(user.id, user.updated_at)];
            if let Some(Some(manager)) = patch.manager {
                match self.managers_above(&user, manager).await? {
                    Chain::Managers(chain) => read.extend(chain),
                    Chain::Changed => continue,
                }
            }
            let changed = patch.apply(&user, Timestamp::now());
            let update = ProfileUpdate {
                entry: profile_entry(caller, context, OperationKind::UpdateUser, id),
                user: changed,
                read,
            };
            match self.store.update_user(&update).await {
                Ok(user) => return Ok(self.profile(user)),
                Err(StoreError::Conflict(_)) if attempt < PROFILE_ATTEMPTS => {}
                Err(StoreError::Conflict(_)) => break,
                Err(e) => return Err(e.into()),
            }
        }
        Err(ServiceError::new(
            ErrorCode::Conflict,
            "The profile kept changing while this change was being made. Read it again and retry. \
             Nothing was written.",
        ))
    }

    /// The users from `manager` up its chain of managers, each with its `updated_at`, when
    /// making `manager` the manager of `user` is allowed: VALIDATION_FAILED for a manager that
    /// is no user of the organization, CONFLICT for the user or someone below them.
    async fn managers_above(&self, user: &User, manager: UserId) -> Result<Chain, ServiceError> {
        if manager == user.id {
            return Err(ServiceError::new(
                ErrorCode::Conflict,
                "A user cannot be their own manager. Nothing was written.",
            ));
        }
        let mut chain = vec![];
        let mut next = Some(manager);
        while let Some(id) = next {
            if id == user.id {
                return Err(ServiceError::new(
                    ErrorCode::Conflict,
                    format!(
                        "{manager} reports to {} (directly or through others), so making them the \
                         manager would form a cycle. Nothing was written.",
                        user.id
                    ),
                ));
            }
            if chain.len() >= MAX_CHAIN {
                // The stored chain is acyclic by construction; one this long is not a chain.
                return Err(ServiceError::new(
                    ErrorCode::Conflict,
                    "The chain of managers above the new manager is too long to check.",
                ));
            }
            match self.store.user(user.organization_id, id).await {
                Ok(above) => {
                    chain.push((above.id, above.updated_at));
                    next = above.manager;
                }
                Err(StoreError::NotFound) if id == manager => {
                    return Err(ServiceError::validation(vec![ErrorDetail::field(
                        "manager",
                        "is not a user of this organization",
                    )]));
                }
                // Someone of the chain went away while it was read: decide again.
                Err(StoreError::NotFound) => return Ok(Chain::Changed),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Chain::Managers(chain))
    }

    /// The API's profile of a stored user, with its link and entity tag.
    fn profile(&self, user: User) -> UserProfile {
        let app_url =
            format!("{}/users/{}", self.config.app_base_url.trim_end_matches('/'), user.id);
        let etag = profiles::etag(&user);
        user.into_profile(app_url, etag)
    }

    /// The caller's organization. Needs `organization:read`. `problems` are those the
    /// transport found (such as a query parameter this operation does not take).
    async fn get_organization(
        &self,
        caller: &Caller,
        problems: Vec<ErrorDetail>,
    ) -> Result<Organization, ServiceError> {
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

    /// The latest signed checkpoint of the caller's organization's privacy ledger chain, signed
    /// now if the chain moved since the last one ([`crate::checkpoint::latest`]). Needs what
    /// reading the ledger needs; recorded in the audit ledgers like a read of the ledger,
    /// committed before it returns. NOT_IMPLEMENTED without a signing key, NOT_FOUND while the
    /// ledger holds nothing.
    async fn latest_checkpoint(
        &self,
        caller: &Caller,
        context: &RequestContext,
        problems: Vec<ErrorDetail>,
    ) -> Result<recruit_domain::chain::Checkpoint, ServiceError> {
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        let key = self.config.checkpoint_key.as_ref().ok_or_else(|| {
            ServiceError::new(
                ErrorCode::NotImplemented,
                "This server signs no checkpoints: it runs without a checkpoint key \
                 (--checkpoint-key).",
            )
        })?;
        let organization = caller.token.organization_id;
        let ledger = recruit_domain::chain::Ledger::Privacy;
        let checkpoint = crate::checkpoint::latest(self.store.as_ref(), key, organization, ledger)
            .await?
            .ok_or_else(|| {
                ServiceError::new(
                    ErrorCode::NotFound,
                    "The organization's privacy audit ledger holds no entry yet, so its chain \
                     has no checkpoint.",
                )
            })?;
        let kind = OperationKind::GetLatestPrivacyAuditLogCheckpoint;
        let record = audit_record(caller, context, kind, serde_json::json!({}), None);
        self.store.record_read(&record).await?;
        Ok(checkpoint)
    }

    /// The public key checkpoints are signed with, as a JSON Web Key Set (RFC 7517, one
    /// Ed25519 key, RFC 8037), if the service has one.
    pub fn checkpoint_keys(&self) -> Option<serde_json::Value> {
        let key = self.config.checkpoint_key.as_ref()?;
        Some(serde_json::json!({ "keys": [recruit_domain::chain::jwk(&key.public())] }))
    }

    /// Creates a token acting as `user` of `organization` (operators' tooling, not the API):
    /// [`crate::auth::create_token`] on this service's store.
    pub async fn create_token(
        &self,
        organization: recruit_domain::OrganizationId,
        user: UserId,
        name: String,
        scopes: Vec<Scope>,
        expires_at: Option<Timestamp>,
    ) -> Result<(ApiToken, String), StoreError> {
        let store: &dyn recruit_ports::Tokens = &*self.store;
        crate::auth::create_token(store, organization, user, name, scopes, expires_at).await
    }
}

/// The caller: the user the token acts as, their organization, and the token. Any valid
/// token may ask; it needs no scope, reads nothing more than authentication did, and is not
/// recorded (it shows callers only what they presented and who they are).
fn get_me(caller: &Caller, problems: Vec<ErrorDetail>) -> Result<Me, ServiceError> {
    if !problems.is_empty() {
        return Err(ServiceError::validation(problems));
    }
    let (user, token) = (&caller.user, &caller.token);
    Ok(Me {
        user: MeUser {
            id: user.id,
            name: user.name.clone(),
            email: user.email.clone(),
            role: user.role,
        },
        organization_id: token.organization_id,
        token: MeToken { id: token.id, scopes: token.scopes.clone(), expires_at: token.expires_at },
    })
}

/// How many times a change of a profile is decided again after meeting a concurrent one.
const PROFILE_ATTEMPTS: usize = 3;

/// The longest chain of managers checked for a cycle.
const MAX_CHAIN: usize = 10_000;

/// The chain of managers above a new manager, as read.
enum Chain {
    /// Each with the `updated_at` read.
    Managers(Vec<(UserId, Timestamp)>),
    /// It changed while it was read.
    Changed,
}

/// An identifier of kind `R` as received; its problem, named `name`, is pushed to `problems`
/// unless the transport reported one about it already.
fn parse_id<I: std::str::FromStr<Err = recruit_domain::ParseIdError>>(
    raw: &str,
    name: &str,
    problems: &mut Vec<ErrorDetail>,
) -> Option<I> {
    if crate::problems::reported(problems, name) {
        return None;
    }
    raw.parse().map_err(|e| problems.push(ErrorDetail::field(name, e))).ok()
}

/// The privacy ledger entry that records `caller` reading or changing the profile of
/// `subject` through the operation `kind`: an employee's name and email address (every
/// profile shown holds both), at the caller's account (their user id) and address, in the
/// product area `API` at the operation's name in the interface used.
fn profile_entry(
    caller: &Caller,
    context: &RequestContext,
    kind: OperationKind,
    subject: UserId,
) -> LedgerEntry {
    let path = match &context.via {
        Via::Rest => kind.operation_id(),
        Via::Tool { name, .. } => kind.tool_name().unwrap_or(name),
    };
    LedgerEntry {
        organization_id: caller.token.organization_id,
        entry: PrivacyAuditLog {
            id: PrivacyAuditLogId::new_v7(),
            access_time: Timestamp::now(),
            account_id: AccountId::from_uuid(caller.user.id.uuid()),
            ip_addresses: context.client_ip.map(|ip| vec![ip.to_string()]).unwrap_or_default(),
            data_subject: DataSubject::Employee { user: subject },
            access_data: vec![AccessData::Name, AccessData::EmailAddress],
            access_menu: "API".into(),
            access_menu_path: path.into(),
            activity_category: match kind.spec().effect {
                Effect::Read => ActivityCategory::Read,
                Effect::Append => ActivityCategory::Create,
                Effect::Change => ActivityCategory::Update,
            },
        },
    }
}

/// What the audit ledgers record of an operation of `kind` by `caller`: `filters` say what it
/// asked; a tool call's arguments are recorded as given, or as `arguments` when the operation
/// gives a summary of them (a write's entries are in the privacy ledger already).
fn audit_record(
    caller: &Caller,
    context: &RequestContext,
    kind: OperationKind,
    filters: serde_json::Value,
    arguments: Option<serde_json::Value>,
) -> ReadRecord {
    let at = Timestamp::now();
    let (interface, tool) = match &context.via {
        Via::Rest => (Interface::Rest, None),
        Via::Tool { name, arguments: given } => (
            Interface::Tool,
            Some(ToolAuditEntry {
                id: Uuid::now_v7(),
                at,
                organization_id: caller.token.organization_id,
                token_id: caller.token.id,
                user_id: caller.user.id,
                tool_name: name.clone(),
                arguments: arguments.unwrap_or_else(|| given.clone()),
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
            operation: kind.operation_id().into(),
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

/// The list's input, valid.
struct ListInput {
    window: TimeWindow,
    ids: Option<IdFilter<PrivacyAuditLogResource>>,
    limit: PageLimit,
    cursor: Option<String>,
}

/// The window of `timestamp_gte` and `timestamp_lt` by `rule`, or `None` with the problems
/// noted: each missing or malformed value, then the rule's refusal.
fn window(
    problems: &mut Vec<ErrorDetail>,
    gte: Option<String>,
    lt: Option<String>,
    rule: impl FnOnce(Timestamp, Timestamp) -> Result<TimeWindow, recruit_domain::TimeWindowError>,
) -> Option<TimeWindow> {
    let mut timestamp = |name: &str, value: Option<String>| match value {
        None if crate::problems::reported(problems, name) => None,
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
    let gte = timestamp("timestamp_gte", gte);
    let lt = timestamp("timestamp_lt", lt);
    match rule(gte?, lt?) {
        Ok(w) => Some(w),
        // Every refusal of the domain's rule, this version's and any later one's.
        Err(e) => {
            problems.push(ErrorDetail::field("timestamp_lt", e));
            None
        }
    }
}

/// The filter of `ids`, or `None`, with the problems of its values noted.
fn ids(
    problems: &mut Vec<ErrorDetail>,
    values: Option<Vec<String>>,
) -> Option<IdFilter<PrivacyAuditLogResource>> {
    let values = values?;
    // How many values a filter takes is the domain's rule, and so is its wording; it is
    // checked first, so that a list far too long is one problem, not one per value.
    if let Err(e) = IdFilter::<PrivacyAuditLogResource>::check_len(values.len()) {
        problems.push(ErrorDetail::field("ids", e));
        return None;
    }
    let mut parsed = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        match PrivacyAuditLogId::parse(v) {
            Ok(id) => parsed.push(id),
            Err(e) => problems.push(ErrorDetail::field("ids", format!("value {} {e}", i + 1))),
        }
    }
    if parsed.len() < values.len() {
        return None;
    }
    match IdFilter::new(parsed) {
        Ok(filter) => Some(filter),
        Err(e) => {
            problems.push(ErrorDetail::field("ids", e));
            None
        }
    }
}

/// Validates the list's parameters, reporting every problem at once.
fn validate_list(params: ListParams) -> Result<ListInput, ServiceError> {
    let mut problems = params.problems;
    let window = window(&mut problems, params.timestamp_gte, params.timestamp_lt, TimeWindow::new);
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
    let ids = ids(&mut problems, params.ids);
    match (window, limit) {
        (Some(window), Some(limit)) if problems.is_empty() => {
            Ok(ListInput { window, ids, limit, cursor: params.cursor })
        }
        _ => Err(ServiceError::validation(problems)),
    }
}
