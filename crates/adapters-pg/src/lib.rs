//! The PostgreSQL storage adapter of recruitd: every port of `recruit-ports` on diesel-async,
//! pooled by deadpool, for server deployments.
//!
//! Every new connection gets the configured `statement_timeout`, twice that as its
//! `idle_in_transaction_session_timeout`, and an `application_name`; waiting for a connection is bounded by the pool's wait timeout. At the seam, pool waits and
//! connection failures become [`StoreError::Unavailable`], a statement timeout becomes
//! [`StoreError::Timeout`]. Migrations are embedded in the binary and applied by
//! [`PgBackend::migrate`].
//!
//! [`PgStore`] is `recruit_adapters_diesel::Diesel<PgBackend>`: the ports are written once in
//! `recruit-adapters-diesel`. This crate gives them PostgreSQL's connections ([`Backend`]) and
//! what PostgreSQL does its own way (`COPY`, prepared reads, partitions, the credential cache,
//! standbys). It must never depend on the service, on HTTP, or on the SQLite adapter. With the `testkit` feature, the `testkit` module starts
//! throwaway PostgreSQL clusters for tests.

mod insert;

mod chain;
mod copy;
mod credentials;
mod direct;
mod directory;
mod error;
mod group;
mod import;
mod ledgers;
mod maintenance;
mod partitions;
mod prepared;
mod replica;
mod rows;
mod schema;
mod stalls;
#[cfg(feature = "testkit")]
pub mod testkit;
mod tokens;

use std::sync::Arc;
use std::time::Duration;

use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::{AsyncMigrationHarness, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use recruit_adapters_diesel::store::Task;
use recruit_adapters_diesel::{Backend, Diesel};
use recruit_ports::{PoolStatus, StoreError};

pub use crate::replica::PgReplica;

use crate::chain::PgDb;
use crate::direct::DirectSettings;
use crate::error::{TxError, pool_error, store_error};

/// The key of the session-level advisory lock migrations hold, so that replicas starting
/// together migrate one after the other.
const MIGRATION_LOCK: i64 = 727_113_001;

/// The migrations of the PostgreSQL schema, embedded in the binary.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");

/// How to connect to PostgreSQL.
#[derive(Clone, Debug)]
pub struct PgConfig {
    /// A `postgres://` or `postgresql://` URL.
    pub url: String,
    /// The most connections open at once.
    pub pool_size: usize,
    /// How long a caller waits for a free connection before the store reports it unavailable.
    pub wait_timeout: Duration,
    /// How long opening a connection may take.
    pub connect_timeout: Duration,
    /// The longest a statement may run (`statement_timeout`, set on every new connection).
    /// Twice this is how long PostgreSQL keeps a transaction that waits for its client
    /// (`idle_in_transaction_session_timeout`): a server cut off from the database mid-write
    /// leaves its transaction open, holding the lock on its organization's chain that every
    /// other write of the organization waits for, until PostgreSQL ends it. None of this
    /// store's transactions waits on its client longer (the review's second connection reads
    /// from the first's snapshot within one statement; an export sets its own limit). A
    /// `COPY` that has read nothing from its client for as long is ended by
    /// [`Maintenance::end_stalled_writes`](recruit_ports::Maintenance::end_stalled_writes).
    pub statement_timeout: Duration,
    /// The longest an export's statements may run (None: no limit). Its count reads its whole
    /// window before the first entry is sent, seconds for tens of millions of entries: a
    /// server sets this to its request deadline, which bounds the wait for the first byte
    /// anyway, rather than to one statement's limit.
    pub export_statement_timeout: Option<Duration>,
    /// The `application_name` connections carry, as `pg_stat_activity` shows it.
    pub application_name: String,
    /// Keep verified credentials in memory for at most this long, so that authentication
    /// costs no round trip (`None`: look every one up). The store then holds one more
    /// connection, which listens for changes to tokens and users announced by the schema's
    /// triggers and empties the cache at each; while it is not listening, the cache is off.
    /// A revoked token is refused everywhere as soon as the notification arrives.
    pub credential_cache: Option<Duration>,
}

impl PgConfig {
    /// Defaults: 16 connections, 2 s to get one, 5 s to open one, statements up to 5 s, an
    /// export's up to 10 s.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            pool_size: 16,
            wait_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(5),
            export_statement_timeout: Some(Duration::from_secs(10)),
            application_name: "recruitd".into(),
            credential_cache: None,
        }
    }
}

/// The PostgreSQL store: every port, on [`PgBackend`]. Cheap to clone: clones share one pool.
pub type PgStore = Diesel<PgBackend>;

/// PostgreSQL's connections and what this store does its own way: its pools, `COPY`, the
/// credential cache. Made by [`PgBackend::connect`], inside the [`PgStore`] that uses it.
#[derive(Clone)]
pub struct PgBackend {
    pool: deadpool::managed::Pool<Manager>,
    /// How direct connections are opened.
    copy: Arc<DirectSettings>,
    /// `tokio-postgres` connections beside the pool's: they write by `COPY` and answer the
    /// reads kept prepared ([`direct`]).
    direct: direct::DirectPool,
    credentials: Option<Arc<credentials::CredentialCache>>,
    /// Commits the records of concurrent ledger reads together.
    recorder: Arc<recruit_adapters_diesel::Recorder>,
    /// On standbys: what each connection must have replayed before it reads.
    floor: Option<replica::Floor>,
    /// The writes seen waiting for their client, ended when stalled too long.
    stalls: Arc<stalls::Stalls>,
    /// An export's `statement_timeout`, in milliseconds (0: none).
    export_timeout_ms: u128,
}

impl std::fmt::Debug for PgBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgBackend")
            .field("pool", &self.pool_status())
            .field("credential_cache", &self.credentials.is_some())
            .finish()
    }
}

/// A pool of `manager`'s connections with the configured size and timeouts.
fn build_pool<M: deadpool::managed::Manager>(
    manager: M,
    config: &PgConfig,
) -> Result<deadpool::managed::Pool<M>, StoreError> {
    deadpool::managed::Pool::builder(manager)
        .max_size(config.pool_size.max(1))
        .wait_timeout(Some(config.wait_timeout))
        .create_timeout(Some(config.connect_timeout))
        .recycle_timeout(Some(config.connect_timeout))
        .runtime(deadpool::Runtime::Tokio1)
        .build()
        .map_err(|e| StoreError::other(format!("cannot build the PostgreSQL pool: {e}")))
}

/// The pool's manager: diesel-async's, with each connection kept on the heap.
type Manager = Boxed<AsyncDieselConnectionManager<AsyncPgConnection>>;

type Conn = deadpool::managed::Object<Manager>;

/// `M`'s connections, each in a box of its own. deadpool moves a connection (464 bytes for
/// diesel-async's) about 25 times between the pool and a request, over a checkout and its
/// return; boxed, it moves a pointer (D59).
struct Boxed<M>(M);

impl<M: deadpool::managed::Manager> deadpool::managed::Manager for Boxed<M> {
    type Type = Box<M::Type>;
    type Error = M::Error;

    async fn create(&self) -> Result<Self::Type, Self::Error> {
        self.0.create().await.map(Box::new)
    }

    async fn recycle(
        &self,
        conn: &mut Self::Type,
        metrics: &deadpool::managed::Metrics,
    ) -> deadpool::managed::RecycleResult<Self::Error> {
        self.0.recycle(conn, metrics).await
    }

    fn detach(&self, conn: &mut Self::Type) {
        self.0.detach(conn);
    }
}

impl Backend for PgBackend {
    type Sql = diesel::pg::Pg;
    type Db<'c> = PgDb<'c>;

    async fn transaction<T: Send + 'static>(
        &self,
        task: impl Task<Self, T>,
    ) -> Result<T, StoreError> {
        let mut c = self.conn().await?;
        let run = diesel_async::AsyncConnection::transaction::<_, TxError, _>(&mut *c, async |c| {
            Ok(task(&mut PgDb(c)).await?)
        });
        run.await.map_err(StoreError::from)
    }

    async fn connection<T: Send + 'static>(
        &self,
        task: impl Task<Self, T>,
    ) -> Result<T, StoreError> {
        let mut c = self.conn().await?;
        task(&mut PgDb(&mut c)).await
    }
}

impl PgBackend {
    /// Builds the pool. Connections are opened when first needed, so a database that is down
    /// now does not stop the server from starting: requests get `Unavailable` until it is up.
    pub fn connect(config: &PgConfig) -> Result<PgStore, StoreError> {
        let setup: Arc<str> = format!(
            "SET statement_timeout = {}; SET idle_in_transaction_session_timeout = {}; \
             SET application_name = '{}';",
            config.statement_timeout.as_millis(),
            config.statement_timeout.as_millis() * 2,
            config.application_name.replace('\'', "''")
        )
        .into();
        let mut manager = ManagerConfig::<AsyncPgConnection>::default();
        // No test query at every checkout (the default would add a round trip to each use of
        // the pool): a connection the server closed fails its next query, which the request
        // reports as UNAVAILABLE, and the pool discards it.
        manager.recycling_method = diesel_async::pooled_connection::RecyclingMethod::Fast;
        manager.custom_setup = recruit_adapters_diesel::session_setup(Arc::clone(&setup));
        let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
            &config.url,
            manager,
        );
        let pool = build_pool(Boxed(manager), config)?;
        // Connections outside diesel's pool (direct ones, and one listening for credential changes).
        let mut direct_config: tokio_postgres::Config = config
            .url
            .parse()
            .map_err(|e| StoreError::other(format!("the PostgreSQL URL is not valid: {e}")))?;
        direct_config
            .connect_timeout(config.connect_timeout)
            .application_name(&config.application_name);
        let credentials = config
            .credential_cache
            .filter(|age| !age.is_zero())
            .map(|max_age| credentials::CredentialCache::start(direct_config.clone(), max_age));
        let copy = Arc::new(DirectSettings { config: direct_config, setup: Arc::clone(&setup) });
        let direct = build_pool(direct::DirectManager(Arc::clone(&copy)), config)?;
        let stalls = Arc::new(stalls::Stalls::new(config.statement_timeout * 2));
        let recorder = Arc::default();
        let export_timeout_ms = config.export_statement_timeout.map_or(0, |t| t.as_millis().max(1));
        let backend = Self {
            pool,
            copy,
            direct,
            credentials,
            recorder,
            floor: None,
            stalls,
            export_timeout_ms,
        };
        Ok(Diesel::new(backend))
    }

    /// Applies the migrations not applied yet; returns how many ran. Idempotent, and safe to
    /// run from several replicas at once (the first takes a lock, the others wait for it).
    pub async fn migrate(&self) -> Result<usize, StoreError> {
        let mut conn = self.conn().await?;
        // Migrations may take longer than a request's statement.
        conn.batch_execute(&format!(
            "SET statement_timeout = 0; SELECT pg_advisory_lock({MIGRATION_LOCK});"
        ))
        .await
        .map_err(store_error)?;
        let mut harness = AsyncMigrationHarness::new(conn);
        let applied = harness
            .run_pending_migrations(MIGRATIONS)
            .map(|v| v.len())
            .map_err(|e| StoreError::other(format!("migration failed: {e}")));
        let mut conn = harness.into_inner();
        // Entries stored before the ledgers were chained are linked once, under the same lock.
        // So are the settings of jobs stored before they were kept resolved.
        let linked = match applied {
            Ok(_) => match chain::backfill(&mut conn).await {
                Ok(()) => match import::keep_resolved_settings(&mut conn, None).await {
                    Ok(()) => {
                        // The months to come get their partitions; a month not created now
                        // (its lock not granted in time) is no reason not to start: writes go
                        // to the default partition, and the daily run tries again.
                        if let Err(e) = partitions::prepare(&mut conn).await {
                            tracing::warn!(
                                error = %StoreError::from(e),
                                "the ledgers' months to come are not prepared; retried daily"
                            );
                        }
                        Ok(())
                    }
                    Err(e) => Err(StoreError::from(e)),
                },
                Err(e) => Err(e),
            },
            Err(_) => Ok(()),
        };
        // Closing the connection releases the lock and the session settings with it.
        let _ = conn.batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK});")).await;
        drop(deadpool::managed::Object::take(conn));
        linked?;
        applied
    }

    /// Numbers about the connection pool.
    pub fn pool_status(&self) -> PoolStatus {
        recruit_adapters_diesel::pool_status(self.pool.status())
    }

    pub(crate) async fn conn(&self) -> Result<Conn, StoreError> {
        // The pool's future is boxed: it holds a connection's opening (kilobytes), which
        // inline would be moved with every read's state.
        let mut conn = Box::pin(self.pool.get()).await.map_err(pool_error)?;
        self.reach_floor(&mut conn).await?;
        Ok(conn)
    }

    /// A second connection for a request that already holds one, if the pool has one to
    /// spare at once: `None` rather than waiting, so that requests holding a connection each
    /// never wait on each other for a second.
    pub(crate) async fn spare_conn(&self) -> Option<Conn> {
        let now = deadpool::managed::Timeouts {
            wait: Some(std::time::Duration::ZERO),
            ..self.pool.timeouts()
        };
        let mut conn = Box::pin(self.pool.timeout_get(&now)).await.ok()?;
        self.reach_floor(&mut conn).await.ok()?;
        Some(conn)
    }

    /// Waits until `conn` has reached the store's floor, if it reads a replica. By reference:
    /// a connection is hundreds of bytes, moved at every hand-over.
    async fn reach_floor(&self, conn: &mut Conn) -> Result<(), StoreError> {
        match &self.floor {
            // Boxed: only a replica waits, and its query's state is large.
            Some(floor) => Box::pin(replica::reach(conn, floor)).await,
            None => Ok(()),
        }
    }
}
