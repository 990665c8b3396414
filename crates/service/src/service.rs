//! The service: [`Service::run`] and [`Service::execute`] take an [`Operation`] through the
//! order of checks of design.md §3 (credential, rate limit, scope, the acting user's
//! permission, input validation, existence, access to the object), then the operation itself.
//!
//! Operations take their input raw, as a transport received it, and validate it themselves at
//! the right step, so that no transport can report a validation error before an authorization
//! error, and REST and the tool interface report the same problems in the same words.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use recruit_domain::{ApiTokenId, ErrorDetail, Scope, Timestamp, UserId};
use recruit_ports::{ApiToken, Store, StoreError};

use crate::checkpoint::CheckpointKey;
use crate::cursor::CursorKey;
use crate::error::{ServiceError, guarded};
use crate::limits::{RateLimitConfig, RateLimits};
use crate::operation::{Caller, Done, Identity, Operation, OperationKind, RequestContext, Via};

mod authentication;
mod console;
mod explanation;
mod ledger;
pub(crate) use ledger::record_of;
mod log_streams;
mod people;
mod review;
mod rules;
mod scim;
mod sso;
pub use ledger::{COUNTED_AT_MOST, Matching};
pub use scim::{ScimRequest, ScimResponse};
pub use sso::{SsoCallback, SsoFailure, SsoRefusal, SsoStart};

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
    /// The most heavy reads at once, exports streaming and monthly reviews running; each
    /// holds a connection of the store. More are refused with RATE_LIMITED until one ends.
    pub max_exports: usize,
    /// How many batches of accesses are written at once, and how long a batch waits for its
    /// turn.
    pub batch_writes: BatchWrites,
    /// How long the review console's sessions last.
    pub console_sessions: crate::console::SessionLimits,
    /// How the server sends e-mail; without it, requests for explanations are recorded but
    /// reach no one, and no sign-in link is e-mailed.
    pub mail: Option<crate::mail::MailConfig>,
    /// How the server sends its own requests (to identity providers, to log destinations);
    /// without it, neither single sign-on nor log streams can be configured or used.
    pub outbound: Option<crate::outbound::Fetcher>,
    /// How far this replica's clock may be off the database's before it refuses requests
    /// ([`crate::clock`]).
    pub max_clock_skew: Duration,
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
    /// How long a key is kept after its first use: a request with it within this time gets
    /// the first response, or IDEMPOTENCY_KEY_REUSED for another request. Then it is purged.
    pub retention: Duration,
}

impl IdempotencyConfig {
    /// The default: keys kept 24 hours.
    pub const DEFAULT: Self = Self { retention: Duration::from_secs(24 * 3600) };
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
            console_sessions: crate::console::SessionLimits::DEFAULT,
            mail: None,
            outbound: None,
            max_clock_skew: crate::clock::DEFAULT_MAX_SKEW,
        }
    }
}

/// How many entries each audit ledger has been written so far, for metrics.
#[derive(Debug, Default)]
struct LedgerCounts {
    /// The API ledger: every recorded operation, whichever interface.
    api: AtomicU64,
    /// The tool-interface ledger: recorded operations called as tools.
    tool: AtomicU64,
}

/// The operations of recruitd over a store.
pub struct Service {
    store: Arc<dyn Store>,
    /// Where exports, verifications and reviews read.
    heavy: crate::replica::HeavyReads,
    config: ServiceConfig,
    limits: RateLimits,
    /// When each token's use was last written, so that it is written at most once a minute.
    touched: Mutex<HashMap<ApiTokenId, Instant>>,
    /// Audit ledger entries written so far, per ledger.
    recorded: LedgerCounts,
    /// A slot for each export that may stream at once.
    exports: Arc<tokio::sync::Semaphore>,
    /// A turn for each batch of accesses that may be read and written at once.
    batch_turns: tokio::sync::Semaphore,
    /// Identity providers' discovery documents and keys, by issuer.
    sso_discovered: sso::Discovered,
    /// The key that seals single sign-ins in flight, once read from the store.
    sso_seal_key: tokio::sync::OnceCell<Vec<u8>>,
    /// How this process's deliveries of log streams go.
    deliveries: Arc<crate::log_stream::deliver::Deliveries>,
    /// This replica's clock against the database's.
    clock: Arc<crate::clock::Clock>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Service {
    /// A service over `store`.
    pub fn new(store: Arc<dyn Store>, config: ServiceConfig) -> Self {
        let limits = RateLimits::new(config.rate_limits);
        Self {
            heavy: crate::replica::HeavyReads::new(Arc::clone(&store), None),
            store,
            limits,
            touched: Mutex::new(HashMap::new()),
            recorded: Default::default(),
            exports: Arc::new(tokio::sync::Semaphore::new(config.max_exports.max(1))),
            batch_turns: tokio::sync::Semaphore::new(config.batch_writes.at_once.max(1)),
            sso_discovered: Default::default(),
            deliveries: Default::default(),
            clock: Arc::new(crate::clock::Clock::new(config.max_clock_skew)),
            sso_seal_key: tokio::sync::OnceCell::new(),
            config,
        }
    }

    /// The same service, its heavy reads (exports, the chains' verification, the monthly
    /// review and the console's figures) on `replica`'s standbys, each waiting at most `wait`
    /// for its standby to replay what the primary had committed when it began
    /// ([`crate::replica`]).
    pub fn with_replica(self, replica: Arc<dyn recruit_ports::Replica>, wait: Duration) -> Self {
        let heavy = crate::replica::HeavyReads::new(Arc::clone(&self.store), Some((replica, wait)));
        Self { heavy, ..self }
    }

    /// Runs `operation` as [`Service::execute`] does, as a task of its own under `deadline`
    /// (a panic becomes INTERNAL, the deadline passing UPSTREAM_TIMEOUT) and in a debug-level
    /// span with the request id. A failure on the server's side is logged here, once, at error
    /// level, whichever interface the request came through. Interfaces run operations through
    /// this.
    pub async fn run(
        self: &Arc<Self>,
        deadline: Duration,
        credential: Identity,
        context: RequestContext,
        operation: Operation,
    ) -> Result<Done, ServiceError> {
        let service = Arc::clone(self);
        let request_id = context.request_id.clone();
        let reads = operation.kind().spec().effect == crate::operation::Effect::Read;
        // At debug level: at `info`, making, entering and closing a span for every request
        // cost more server CPU than the request's access line (D10). Failures carry the
        // request id in their own line.
        let span = tracing::debug_span!(
            "operation",
            request.id = %request_id,
            operation = operation.kind().operation_id()
        );
        // On the heap once: the wrappers below then move a pointer, not the operation's
        // kilobytes of state.
        let operation = Box::pin(tracing::Instrument::instrument(
            async move { service.execute(credential, &context, operation).await },
            span,
        ));
        // What writes runs to its end even when its caller goes away; a read need not.
        let result = if reads {
            guarded(deadline, operation).await
        } else {
            crate::error::detached(deadline, operation).await
        };
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
        credential: Identity,
        context: &RequestContext,
        operation: Operation,
    ) -> Result<Done, ServiceError> {
        let caller = match credential {
            // Boxed: the tool interface's path, kept out of the size of every operation.
            Identity::Secret(secret) => {
                Box::pin(self.authenticate(secret.as_deref(), context.client_ip)).await?
            }
            Identity::Authenticated(caller) => {
                self.clock.admit()?;
                *caller
            }
        };
        let kind = operation.kind();
        let rate_limit = self.limits.admit(caller.token.id, kind.spec().class)?;
        let outcome = match self.authorize(&caller, kind) {
            Err(e) => Err(e),
            Ok(()) => self.dispatch(&caller, context, operation).await,
        };
        match outcome {
            Ok(outcome) => {
                if kind.spec().recorded {
                    self.recorded.api.fetch_add(1, Ordering::Relaxed);
                    if matches!(context.via, Via::Tool { .. }) {
                        self.recorded.tool.fetch_add(1, Ordering::Relaxed);
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
        let LedgerCounts { api, tool } = &self.recorded;
        [("api", api.load(Ordering::Relaxed)), ("tool", tool.load(Ordering::Relaxed))]
    }

    /// Heavy reads so far on a standby and fallen back to the primary, for metrics.
    pub fn heavy_reads(&self) -> [(&'static str, u64); 2] {
        self.heavy.counts()
    }

    /// Operations refused by a rate limit so far, per policy (`reads`, `ledger_reads`,
    /// `auth_failures`), for metrics.
    pub fn rate_limit_refusals(&self) -> [(&'static str, u64); crate::limits::POLICIES.len()] {
        self.limits.refusals()
    }

    /// Removes the idempotency keys past their retention; returns how many. The server runs
    /// it periodically.
    pub async fn purge_expired_keys(&self) -> Result<usize, ServiceError> {
        // A clock ahead of the others would remove keys still within their window.
        if !self.clock.trusted() {
            return Ok(0);
        }
        Ok(self.store.purge_idempotency_keys(Timestamp::now()).await?)
    }

    /// Checks this replica's clock against the database's ([`crate::clock`]); the server runs
    /// it at start and periodically.
    pub async fn check_clock(&self) -> Result<(), ServiceError> {
        Ok(self.clock.check(self.store.as_ref()).await?)
    }

    /// This replica's clock, as last checked against the database's.
    pub fn clock(&self) -> Arc<crate::clock::Clock> {
        Arc::clone(&self.clock)
    }

    /// Whether the service can serve: its clock agrees with the database's, the database
    /// answers and its schema is up to date.
    pub async fn ready(&self) -> Result<(), ServiceError> {
        self.clock.admit()?;
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

    /// How this process's deliveries of log streams go: what they update and the metrics read.
    pub fn deliveries(&self) -> Arc<crate::log_stream::deliver::Deliveries> {
        Arc::clone(&self.deliveries)
    }

    /// What sends the server's own requests, when it sends any: what delivers log streams.
    pub fn outbound(&self) -> Option<Arc<dyn crate::outbound::Fetch>> {
        self.config.outbound.as_ref().map(|f| Arc::clone(&f.0))
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
