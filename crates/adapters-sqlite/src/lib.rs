//! The embedded SQLite storage adapter of recruitd: every port of `recruit-ports` on a local
//! file, so that a fresh machine runs the server with no database server.
//!
//! SQLite is compiled in (bundled), in WAL mode with foreign keys on and a busy timeout.
//! Connections are pooled with deadpool; each operation runs as ordinary synchronous diesel on
//! a pooled connection inside `spawn_blocking`, so the async runtime is never blocked.
//! Migrations are embedded in the binary and applied by [`SqliteBackend::migrate`].
//!
//! [`SqliteStore`] is `recruit_adapters_diesel::Diesel<SqliteBackend>`: the ports are written
//! once in `recruit-adapters-diesel`. This crate gives them SQLite's connections ([`Backend`],
//! the `Db` of `db`) and what SQLite does its own way, one module per port: `directory`,
//! `tokens`, `ledgers`, `import` and `maintenance`, beside the ledgers' chains (`chain`), the
//! errors at the seam (`error`), multi-row inserts (`insert`), the rows and the schema; and
//! copies of the database taken while it runs and put back while nothing uses it ([`backup`]).
//!
//! It must never depend on the service, on HTTP, or on the PostgreSQL adapter. Driver errors
//! are translated into [`StoreError`] here and never cross the port.

pub mod backup;
mod insert;
#[cfg(feature = "testkit")]
pub mod testkit;

mod chain;
mod db;
mod directory;
mod error;
mod import;
mod ledgers;
mod maintenance;
mod rows;
mod schema;
mod tokens;

use std::path::PathBuf;
use std::time::Duration;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sqlite::SqliteConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use recruit_adapters_diesel::store::Task;
use recruit_adapters_diesel::{Backend, Diesel};
use recruit_ports::{PoolStatus, StoreError};

use crate::chain::backfill;
use crate::db::{SqliteDb, at_once};
use crate::error::{TxError, pool_error, store_error};
use crate::import::keep_resolved_settings;

/// The migrations of the SQLite schema, embedded in the binary.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");

pub(crate) type Conn = SyncConnectionWrapper<SqliteConnection>;

/// How to open an SQLite store.
#[derive(Clone, Debug)]
pub struct SqliteConfig {
    /// The database file; created when missing.
    pub path: PathBuf,
    /// The most connections open at once, 1 to [`SqliteConfig::MAX_POOL_SIZE`].
    pub pool_size: usize,
    /// How long a caller waits for a free connection before the store reports it unavailable.
    pub wait_timeout: Duration,
    /// How long a statement waits for a lock held by another connection (`busy_timeout`).
    pub busy_timeout: Duration,
    /// The page cache of each connection, in KiB (`cache_size`). Pages written (audit records
    /// above all) stay in it until it is full, so the process's memory grows by up to this
    /// much per connection before it levels off. Reads mostly go through the memory map
    /// ([`MMAP_BYTES`]), which the kernel can reclaim.
    pub cache_kib: u32,
}

/// How much of the database file is memory-mapped for reads (`mmap_size`): file-backed pages
/// the kernel reclaims under pressure, not memory of the process's own.
pub const MMAP_BYTES: u64 = 256 * 1024 * 1024;

impl SqliteConfig {
    /// The largest pool worth having: SQLite writes one transaction at a time, and more
    /// readers than this only wait on the same file and cores.
    pub const MAX_POOL_SIZE: usize = 8;

    /// Defaults for a file: 4 connections, 5 s to get one, 5 s for a lock, 4 MiB of page cache
    /// per connection.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            pool_size: 4,
            wait_timeout: Duration::from_secs(5),
            busy_timeout: Duration::from_secs(5),
            cache_kib: 4096,
        }
    }
}

/// The SQLite store: every port, on [`SqliteBackend`]. Cheap to clone: clones share one pool.
pub type SqliteStore = Diesel<SqliteBackend>;

/// SQLite's connections and what this store does its own way. Made by
/// [`SqliteBackend::open`], inside the [`SqliteStore`] that uses it.
#[derive(Clone)]
pub struct SqliteBackend {
    pool: Pool<Conn>,
    /// Commits the records of concurrent ledger reads together.
    recorder: std::sync::Arc<recruit_adapters_diesel::Recorder>,
}

impl std::fmt::Debug for SqliteBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteBackend").field("pool", &self.pool_status()).finish()
    }
}

/// The smallest page cache a connection gets, whatever the configuration says.
const MIN_CACHE_KIB: u32 = 64;

impl SqliteBackend {
    /// Opens (creating when missing) the database file. Does not migrate: call
    /// [`SqliteBackend::migrate`].
    pub async fn open(config: &SqliteConfig) -> Result<SqliteStore, StoreError> {
        // `busy_timeout` first: the pragmas after it touch the file, and must wait for a lock
        // another process holds (a closing connection's checkpoint, a WAL recovery, a CLI
        // command) instead of failing the open.
        let pragmas = format!(
            "PRAGMA busy_timeout = {}; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
             PRAGMA foreign_keys = ON; PRAGMA cache_size = -{}; PRAGMA mmap_size = {MMAP_BYTES}; \
             PRAGMA temp_store = MEMORY;",
            config.busy_timeout.as_millis(),
            config.cache_kib.max(MIN_CACHE_KIB),
        );
        let mut manager = ManagerConfig::<Conn>::default();
        manager.custom_setup = recruit_adapters_diesel::session_setup(pragmas.into());
        let url = config.path.to_string_lossy().into_owned();
        let manager = AsyncDieselConnectionManager::<Conn>::new_with_config(url, manager);
        let pool = Pool::builder(manager)
            .max_size(config.pool_size.clamp(1, SqliteConfig::MAX_POOL_SIZE))
            .wait_timeout(Some(config.wait_timeout))
            .create_timeout(Some(config.wait_timeout))
            .runtime(deadpool::Runtime::Tokio1)
            .build()
            .map_err(|e| StoreError::other(format!("cannot build the SQLite pool: {e}")))?;
        let store = Self { pool, recorder: Default::default() };
        // Open one connection now, so that an unusable path fails here and not later.
        store.run(|_| Ok(())).await?;
        Ok(Diesel::new(store))
    }

    /// Applies the migrations not applied yet; returns how many ran. Idempotent.
    pub async fn migrate(&self) -> Result<usize, StoreError> {
        let applied = self
            .run(|c| {
                Ok(c.run_pending_migrations(MIGRATIONS)
                    .map(|applied| applied.len())
                    .map_err(|e| e.to_string()))
            })
            .await?;
        let applied = applied.map_err(|e| StoreError::other(format!("migration failed: {e}")))?;
        // Entries stored before the ledgers were chained are linked once.
        self.run(|c| Ok(backfill(c))).await?.map_err(StoreError::from)?;
        // So are the settings of jobs stored before they were kept resolved.
        self.run(|c| Ok(c.immediate_transaction(|c| keep_resolved_settings(c, None))))
            .await?
            .map_err(StoreError::from)?;
        Ok(applied)
    }

    /// Numbers about the connection pool.
    pub fn pool_status(&self) -> PoolStatus {
        recruit_adapters_diesel::pool_status(self.pool.status())
    }

    /// Runs synchronous diesel code on a pooled connection, off the async runtime.
    pub(crate) async fn run<T, F>(&self, task: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> QueryResult<T> + Send + 'static,
    {
        run(&self.pool, task).await
    }

    /// Runs `task` in one immediate transaction (the write lock taken up front, so a read
    /// followed by a write never fails half-way for a lock).
    pub(crate) async fn transaction<T, E, F>(&self, task: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + From<DieselError> + Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> Result<T, E> + Send + 'static,
    {
        run(&self.pool, move |c| Ok(c.immediate_transaction(task))).await?
    }
}

impl Backend for SqliteBackend {
    type Sql = diesel::sqlite::Sqlite;
    type Db<'c> = SqliteDb<'c>;

    async fn transaction<T: Send + 'static>(
        &self,
        task: impl Task<Self, T>,
    ) -> Result<T, StoreError> {
        let run = move |c: &mut SqliteConnection| -> Result<T, TxError> {
            Ok(at_once(task(&mut SqliteDb(c)))?)
        };
        SqliteBackend::transaction(self, run).await.map_err(StoreError::from)
    }

    async fn connection<T: Send + 'static>(
        &self,
        task: impl Task<Self, T>,
    ) -> Result<T, StoreError> {
        self.run(move |c| Ok(at_once(task(&mut SqliteDb(c))))).await?
    }
}

/// Runs synchronous diesel code on a connection of `pool`, off the async runtime.
pub(crate) async fn run<T, F>(pool: &Pool<Conn>, task: F) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce(&mut SqliteConnection) -> QueryResult<T> + Send + 'static,
{
    let mut conn = pool.get().await.map_err(pool_error)?;
    conn.spawn_blocking(task).await.map_err(store_error)
}
