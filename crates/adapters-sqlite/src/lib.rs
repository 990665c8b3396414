//! The embedded SQLite storage adapter of recruitd: every port of `recruit-ports` on a local
//! file, so that a fresh machine runs the server with no database server.
//!
//! SQLite is compiled in (bundled), in WAL mode with foreign keys on and a busy timeout.
//! Connections are pooled with deadpool; each operation runs as ordinary synchronous diesel on
//! a pooled connection inside `spawn_blocking`, so the async runtime is never blocked.
//! Migrations are embedded in the binary and applied by [`SqliteStore::migrate`].
//!
//! This crate implements the ports and nothing else: it must never depend on the service, on
//! HTTP, or on the PostgreSQL adapter. Driver errors are translated into
//! [`StoreError`] here and never cross the port.

mod rows;
mod schema;

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use deadpool::managed::{PoolError, TimeoutType};
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sqlite::SqliteConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use recruit_domain::{ApiTokenId, JobId, OrganizationId, Timestamp, User, UserId};
use recruit_ports::{
    AccessesWrite, ApiToken, AuditEntry, AuditListQuery, Claim, Credential, Directory, ExistingIds,
    Import, ImportDocument, ImportError, ImportSummary, JobRecord, KeyClaim, LedgerEntry,
    LedgerPage, Ledgers, Maintenance, NewApiToken, OrganizationRecord, PoolStatus, PrivacyLogQuery,
    ProfileUpdate, ReadRecord, ResumedBatch, SecretHash, StoreError, Tokens, ToolAuditEntry,
};

use recruit_ports::chain::{ChainedRows, Heads};
use recruit_ports::rows as neutral;

use recruit_adapters_diesel::rows_per_statement;

use crate::rows::*;
use crate::schema::*;

/// The migrations of the SQLite schema, embedded in the binary.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");

type Conn = SyncConnectionWrapper<SqliteConnection>;

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

/// The SQLite store. Cheap to clone: clones share one pool.
#[derive(Clone)]
pub struct SqliteStore {
    pool: Pool<Conn>,
    /// Commits the records of concurrent ledger reads together.
    recorder: std::sync::Arc<recruit_adapters_diesel::Recorder>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("pool", &self.pool_status()).finish()
    }
}

/// The smallest page cache a connection gets, whatever the configuration says.
const MIN_CACHE_KIB: u32 = 64;

impl SqliteStore {
    /// Opens (creating when missing) the database file. Does not migrate: call
    /// [`SqliteStore::migrate`].
    pub async fn open(config: &SqliteConfig) -> Result<Self, StoreError> {
        let pragmas = format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
             PRAGMA busy_timeout = {}; PRAGMA cache_size = -{}; PRAGMA mmap_size = {MMAP_BYTES}; \
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
        Ok(store)
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
    async fn run<T, F>(&self, task: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> QueryResult<T> + Send + 'static,
    {
        run(&self.pool, task).await
    }

    /// Runs `task` in one immediate transaction (the write lock taken up front, so a read
    /// followed by a write never fails half-way for a lock).
    async fn transaction<T, E, F>(&self, task: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + From<DieselError> + Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> Result<T, E> + Send + 'static,
    {
        run(&self.pool, move |c| Ok(c.immediate_transaction(task))).await?
    }

    /// Commits the audit rows of a read with those of the reads made meanwhile: see
    /// [`recruit_adapters_diesel::Recorder`].
    async fn record(
        &self,
        api: neutral::AuditRow,
        tool: Option<neutral::ToolAuditRow>,
    ) -> Result<(), StoreError> {
        self.recorder.record(|| group_writer(&self.pool), api, tool).await
    }
}

/// Runs synchronous diesel code on a connection of `pool`, off the async runtime.
async fn run<T, F>(pool: &Pool<Conn>, task: F) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce(&mut SqliteConnection) -> QueryResult<T> + Send + 'static,
{
    let mut conn = pool.get().await.map_err(pool_error)?;
    conn.spawn_blocking(task).await.map_err(store_error)
}

fn pool_error(e: PoolError<diesel_async::pooled_connection::PoolError>) -> StoreError {
    match e {
        PoolError::Timeout(TimeoutType::Wait) => {
            StoreError::Unavailable("no database connection was free in time".into())
        }
        PoolError::Timeout(_) => {
            StoreError::Unavailable("opening the database took too long".into())
        }
        other => StoreError::Unavailable(format!("cannot open the database: {other}")),
    }
}

/// Translates a diesel error at the seam.
fn store_error(e: DieselError) -> StoreError {
    match recruit_adapters_diesel::common_error(e) {
        Ok(translated) => translated,
        Err(DieselError::DatabaseError(_, info))
            if info.message().contains("database is locked") || info.message().contains("busy") =>
        {
            StoreError::Timeout
        }
        Err(other) => StoreError::Other(Box::new(other)),
    }
}

/// The error type of transactions: a store error, or a diesel error still to translate.
#[derive(Debug)]
enum TxError {
    Store(StoreError),
    Import(ImportError),
}

impl From<StoreError> for TxError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<DieselError> for TxError {
    fn from(e: DieselError) -> Self {
        Self::Store(store_error(e))
    }
}

impl From<TxError> for StoreError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Store(e) => e,
            TxError::Import(ImportError::Store(e)) => e,
            TxError::Import(ImportError::Invalid(p)) => StoreError::other(p.to_string()),
        }
    }
}

impl From<TxError> for ImportError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Store(e) => ImportError::Store(e),
            TxError::Import(e) => e,
        }
    }
}

/// The most values bound to one statement: SQLite takes at most 32 766.
const MAX_BOUND_VALUES: usize = 30_000;

/// Inserts neutral rows into `$table` as `$row`s, as many to a statement as SQLite takes.
macro_rules! insert_rows {
    ($c:expr, $table:expr, $row:ty, $rows:expr) => {{
        let rows: Vec<$row> = $rows.into_iter().map(<$row>::from).collect();
        for part in rows.chunks(rows_per_statement(MAX_BOUND_VALUES, <$row as Row>::WIDTH)) {
            diesel::insert_into($table).values(part).execute($c)?;
        }
    }};
}

/// What writes a group of read records on SQLite: the rows, linked into their chains, in one
/// immediate transaction.
fn group_writer(
    pool: &Pool<Conn>,
) -> impl Fn(neutral::ReadRecords) -> recruit_adapters_diesel::GroupWrite + Send + 'static {
    let pool = pool.clone();
    move |mut group| {
        let pool = pool.clone();
        Box::pin(async move {
            run(&pool, move |c| {
                Ok(c.immediate_transaction(|c| -> Result<(), TxError> {
                    chain(c, &mut group)?;
                    let neutral::ReadRecords { api, tool } = group;
                    insert_rows!(c, api_audit_log::table, AuditRow, api);
                    insert_rows!(c, tool_audit_log::table, ToolAuditRow, tool);
                    Ok(())
                }))
            })
            .await?
            .map_err(StoreError::from)
        })
    }
}

/// Links the ledger rows of a write in the caller's transaction, which holds the database's
/// write lock (an immediate transaction) until it ends: reads the heads of their chains
/// (starting a missing one), links the rows, saves the heads.
fn chain(c: &mut SqliteConnection, rows: &mut impl ChainedRows) -> Result<(), TxError> {
    let keys = rows.chain_keys();
    if keys.is_empty() {
        return Ok(());
    }
    // Before the heads are locked: the lock is held for the hashing only.
    let contents = rows.contents()?;
    let start: Vec<LedgerHeadRow> = keys.genesis().into_iter().map(LedgerHeadRow::from).collect();
    diesel::insert_or_ignore_into(ledger_heads::table).values(&start).execute(c)?;
    let mut found = Vec::with_capacity(start.len());
    for head in &start {
        let row: LedgerHeadRow = ledger_heads::table
            .find((&head.organization_id, &head.ledger))
            .select(LedgerHeadRow::as_select())
            .first(c)?;
        found.push(row.into_neutral()?);
    }
    let mut heads = Heads::new(found)?;
    rows.link(&mut heads, contents)?;
    for head in heads.moved().into_iter().map(LedgerHeadRow::from) {
        diesel::update(ledger_heads::table.find((&head.organization_id, &head.ledger)))
            .set((ledger_heads::position.eq(head.position), ledger_heads::hash.eq(&head.hash)))
            .execute(c)?;
    }
    Ok(())
}

/// A ledger's row, for reading and linking its entries whatever the ledger (its table and
/// time column are its neutral row's, `Chained::TABLE` and `Chained::TIME`).
trait LedgerTable:
    diesel::QueryableByName<diesel::sqlite::Sqlite>
    + Row<Neutral: recruit_ports::chain::Chained + Send>
    + Send
    + 'static
{
}

impl<R> LedgerTable for R where
    R: diesel::QueryableByName<diesel::sqlite::Sqlite>
        + Row<Neutral: recruit_ports::chain::Chained + Send>
        + Send
        + 'static
{
}

/// Links, once, the entries stored before the ledgers were chained: in one transaction, while
/// the migration's `ledger_chain_backfill` row exists (and removes it). Each organization's
/// entries are linked in the order of their time, then id, after whatever its chain holds.
fn backfill(c: &mut SqliteConnection) -> Result<(), TxError> {
    c.immediate_transaction(|c| {
        let pending: i64 = ledger_chain_backfill::table.count().get_result(c)?;
        if pending == 0 {
            return Ok(());
        }
        backfill_ledger::<LedgerRow>(c)?;
        backfill_ledger::<AuditRow>(c)?;
        backfill_ledger::<ToolAuditRow>(c)?;
        diesel::delete(ledger_chain_backfill::table).execute(c)?;
        Ok(())
    })
}

fn backfill_ledger<R: LedgerTable>(c: &mut SqliteConnection) -> Result<(), TxError> {
    use diesel::sql_types::{BigInt, Binary, Nullable};
    use recruit_ports::chain::Chained;
    let mut rows: Vec<R::Neutral> = diesel::sql_query(format!(
        "SELECT * FROM {table} WHERE position IS NULL ORDER BY organization_id, {time}, id",
        table = <R::Neutral as recruit_ports::chain::Chained>::TABLE,
        time = <R::Neutral as recruit_ports::chain::Chained>::TIME,
    ))
    .load::<R>(c)?
    .into_iter()
    .map(Row::into_neutral)
    .collect::<Result<_, _>>()?;
    chain(c, &mut rows)?;
    let update = format!(
        "UPDATE {} SET position = ?, prev_hash = ?, hash = ? WHERE organization_id = ? AND id = ?",
        <R::Neutral as recruit_ports::chain::Chained>::TABLE
    );
    for row in &rows {
        let (position, prev, hash) = row.link();
        diesel::sql_query(&update)
            .bind::<Nullable<BigInt>, _>(position)
            .bind::<Nullable<Binary>, _>(prev)
            .bind::<Nullable<Binary>, _>(hash)
            .bind::<Binary, _>(blob(row.organization()))
            .bind::<Binary, _>(blob(row.time_and_id().1))
            .execute(c)?;
    }
    Ok(())
}

/// Entries of a ledger's chain: see `Ledgers::chain_entries`.
fn chain_entries<R: LedgerTable>(
    c: &mut SqliteConnection,
    organization: Vec<u8>,
    page: recruit_ports::chain::ChainPage,
    limit: u32,
) -> Result<Vec<recruit_ports::chain::ChainEntry>, TxError> {
    use diesel::sql_types::{BigInt, Binary};
    use recruit_ports::chain::ChainPage;
    let table = <R::Neutral as recruit_ports::chain::Chained>::TABLE;
    // SQLite's parameters are positional: the position is bound once for each use.
    let query =
        diesel::sql_query(recruit_adapters_diesel::chain_page_sql(table, page, |_| "?".to_owned()))
            .into_boxed()
            .bind::<Binary, _>(organization);
    let query = match page {
        ChainPage::Linked(Some((position, id))) => query
            .bind::<BigInt, _>(position)
            .bind::<BigInt, _>(position)
            .bind::<Binary, _>(blob(id)),
        ChainPage::Unlinked(Some(id)) => query.bind::<Binary, _>(blob(id)),
        _ => query,
    };
    let query = query.bind::<BigInt, _>(i64::from(limit));
    let rows: Vec<R> = query.load(c)?;
    Ok(rows
        .into_iter()
        .map(|r| recruit_ports::chain::ChainEntry::of(r.into_neutral()?))
        .collect::<Result<_, _>>()?)
}

/// The statement of an export of `q` from `R`'s ledger: its count, or its next chunk (of the
/// one organization `q` names, after (time, id) when `after`, bounding a backward scan of the
/// ledger's (organization, time DESC, id DESC) index), with its parameters bound in order.
fn export_query<'a, R: LedgerTable>(
    q: &'a recruit_ports::chain::ExportQuery,
    select: &str,
    after: Option<(i64, Vec<u8>)>,
) -> diesel::query_builder::BoxedSqlQuery<'a, diesel::sqlite::Sqlite, diesel::query_builder::SqlQuery>
{
    use diesel::sql_types::{BigInt, Binary};
    use recruit_ports::chain::Chained;
    let table = <R::Neutral as Chained>::TABLE;
    let time = <R::Neutral as Chained>::TIME;
    let mut conditions = String::from("1");
    if q.organization.is_some() {
        conditions += " AND organization_id = ?";
    }
    if q.from.is_some() {
        conditions += &format!(" AND {time} >= ?");
    }
    if q.to.is_some() {
        conditions += &format!(" AND {time} < ?");
    }
    if let Some(ids) = &q.ids {
        let marks = vec!["?"; ids.len()].join(", ");
        conditions += &format!(" AND id IN ({marks})");
    }
    if q.recorded_before.is_some() {
        conditions += " AND recorded_at < ?";
    }
    let chunk = select == "*";
    if chunk && after.is_some() {
        conditions += &format!(" AND {time} >= ? AND ({time} > ? OR id > ?)");
    }
    let tail = if chunk { format!(" ORDER BY {time}, id LIMIT ?") } else { String::new() };
    let mut query =
        diesel::sql_query(format!("SELECT {select} FROM {table} WHERE {conditions}{tail}"))
            .into_boxed();
    if let Some(org) = q.organization {
        query = query.bind::<Binary, _>(blob(org.uuid()));
    }
    if let Some(from) = q.from {
        query = query.bind::<BigInt, _>(from.unix_micros());
    }
    if let Some(to) = q.to {
        query = query.bind::<BigInt, _>(to.unix_micros());
    }
    for id in q.ids.iter().flatten() {
        query = query.bind::<Binary, _>(blob(*id));
    }
    if let Some(before) = q.recorded_before {
        query = query.bind::<BigInt, _>(before.unix_micros());
    }
    if chunk {
        if let Some((at, id)) = after {
            query = query.bind::<BigInt, _>(at).bind::<BigInt, _>(at).bind::<Binary, _>(id);
        }
        let limit = i64::try_from(recruit_adapters_diesel::EXPORT_CHUNK).unwrap_or(i64::MAX);
        query = query.bind::<BigInt, _>(limit);
    }
    query
}

/// How many entries of `R`'s ledger an export of `q` holds.
fn export_count<R: LedgerTable>(
    c: &mut SqliteConnection,
    q: &recruit_ports::chain::ExportQuery,
) -> Result<u64, TxError> {
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        count: i64,
    }
    let Count { count } = export_query::<R>(q, "count(*) AS count", None).get_result(c)?;
    Ok(u64::try_from(count).unwrap_or_default())
}

/// The next chunk of an export of `q`, which names one organization: up to `EXPORT_CHUNK`
/// entries after `after` (time, id), in that order.
fn export_chunk<R: LedgerTable>(
    c: &mut SqliteConnection,
    q: &recruit_ports::chain::ExportQuery,
    after: Option<(i64, Vec<u8>)>,
) -> Result<Vec<recruit_ports::chain::ExportedEntry>, TxError> {
    use recruit_ports::chain::ExportedEntry;
    let rows: Vec<R> = export_query::<R>(q, "*", after).load(c)?;
    Ok(rows
        .into_iter()
        .map(|r| ExportedEntry::of(r.into_neutral()?))
        .collect::<Result<_, StoreError>>()?)
}

/// Reads an export of `q` in the caller's transaction: sends its count through `counted`,
/// then its entries through `sender`, a chunk at a time, until the reader stops taking them.
fn export_ledger(
    c: &mut SqliteConnection,
    q: &recruit_ports::chain::ExportQuery,
    counted: &mut Option<tokio::sync::oneshot::Sender<Result<u64, StoreError>>>,
    sender: &tokio::sync::mpsc::Sender<Result<recruit_ports::chain::ExportedEntry, StoreError>>,
) -> Result<(), TxError> {
    use recruit_adapters_diesel::EXPORT_CHUNK;
    use recruit_domain::chain::Ledger;
    let count = match q.ledger {
        Ledger::Privacy => export_count::<LedgerRow>(c, q)?,
        Ledger::Api => export_count::<AuditRow>(c, q)?,
        Ledger::Tool => export_count::<ToolAuditRow>(c, q)?,
    };
    if counted.take().is_none_or(|t| t.send(Ok(count)).is_err()) {
        return Ok(());
    }
    // One organization at a time, each a range of the ledger's index.
    let orgs = match q.organization {
        Some(org) => vec![org],
        None => organizations::table
            .select(organizations::id)
            .order(organizations::id)
            .load::<Vec<u8>>(c)?
            .iter()
            .map(|id| Ok(OrganizationId::from_uuid(uuid(id)?)))
            .collect::<Result<_, StoreError>>()?,
    };
    for org in orgs {
        let q = recruit_ports::chain::ExportQuery { organization: Some(org), ..q.clone() };
        let mut after = None;
        loop {
            let chunk = match q.ledger {
                Ledger::Privacy => export_chunk::<LedgerRow>(c, &q, after)?,
                Ledger::Api => export_chunk::<AuditRow>(c, &q, after)?,
                Ledger::Tool => export_chunk::<ToolAuditRow>(c, &q, after)?,
            };
            let full = chunk.len() == EXPORT_CHUNK;
            after = chunk.last().map(|e| (e.time.unix_micros(), blob(e.entry.id)));
            for entry in chunk {
                if sender.blocking_send(Ok(entry)).is_err() {
                    return Ok(());
                }
            }
            if !full {
                break;
            }
        }
    }
    Ok(())
}

fn load_organization(c: &mut SqliteConnection, org: &[u8]) -> Result<OrganizationRecord, TxError> {
    let (row, defaults) = organizations::table
        .inner_join(
            organization_scheduling_defaults::table
                .on(organization_scheduling_defaults::organization_id.eq(organizations::id)),
        )
        .filter(organizations::id.eq(org))
        .select((OrganizationRow::as_select(), SchedulingDefaultsRow::as_select()))
        .first(c)?;
    let hours = organization_work_hours::table
        .filter(organization_work_hours::organization_id.eq(org))
        .order(organization_work_hours::position)
        .select(WorkHoursRow::as_select())
        .load(c)?;
    let hours = hours.into_iter().map(Row::into_neutral).collect::<Result<_, _>>()?;
    Ok(row.into_neutral()?.into_record(hours, defaults.into_neutral()?)?)
}

fn load_token(c: &mut SqliteConnection, token: &[u8]) -> Result<ApiToken, TxError> {
    let row = api_tokens::table
        .filter(api_tokens::id.eq(token))
        .select(TokenRow::as_select())
        .first(c)?;
    Ok(row.into_neutral()?.into_token()?)
}

#[async_trait]
impl Directory for SqliteStore {
    async fn organization(&self, id: OrganizationId) -> Result<OrganizationRecord, StoreError> {
        let org = blob(id.uuid());
        self.run(move |c| Ok(load_organization(c, &org))).await?.map_err(Into::into)
    }

    async fn user(&self, organization: OrganizationId, id: UserId) -> Result<User, StoreError> {
        let (org, id) = (blob(organization.uuid()), blob(id.uuid()));
        let row = self
            .run(move |c| users::table.find((org, id)).select(UserRow::as_select()).first(c))
            .await?;
        row.into_neutral()?.into_user()
    }

    async fn read_user(
        &self,
        organization: OrganizationId,
        id: UserId,
        entry: &LedgerEntry,
    ) -> Result<User, StoreError> {
        let (org, id) = (blob(organization.uuid()), blob(id.uuid()));
        let mut logged = vec![neutral::LedgerRow::new(entry)?];
        let row = self
            .transaction(move |c| -> Result<UserRow, TxError> {
                let row = users::table.find((org, id)).select(UserRow::as_select()).first(c)?;
                chain(c, &mut logged)?;
                insert_rows!(c, privacy_audit_logs::table, LedgerRow, logged);
                Ok(row)
            })
            .await
            .map_err(StoreError::from)?;
        row.into_neutral()?.into_user()
    }

    async fn update_user(&self, update: &ProfileUpdate) -> Result<User, StoreError> {
        let user = UserRow::from(neutral::UserRow::new(&update.user));
        let mut logged = vec![neutral::LedgerRow::new(&update.entry)?];
        let ids: Vec<Vec<u8>> = update.read_ids().into_iter().map(blob).collect();
        let decision = update.clone();
        self.transaction(move |c| -> Result<(), TxError> {
            // The transaction holds the write lock: what is read here stays so until it ends.
            let stored: Vec<(Vec<u8>, i64)> = users::table
                .filter(users::organization_id.eq(&user.organization_id))
                .filter(users::id.eq_any(&ids))
                .select((users::id, users::updated_at))
                .load(c)?;
            let stored = stored
                .into_iter()
                .map(|(id, at)| {
                    Ok((
                        uuid(&id)?,
                        <Timestamp as recruit_adapters_diesel::Column<Sqlite3>>::load(at)?,
                    ))
                })
                .collect::<Result<_, StoreError>>()?;
            decision.check_read(stored)?;
            let changed = diesel::update(users::table.find((&user.organization_id, &user.id)))
                .set((
                    users::name.eq(&user.name),
                    users::title.eq(&user.title),
                    users::manager_id.eq(&user.manager_id),
                    users::linkedin_url.eq(&user.linkedin_url),
                    users::updated_at.eq(user.updated_at),
                ))
                .execute(c)?;
            if changed != 1 {
                return Err(StoreError::Conflict("the user is gone".into()).into());
            }
            chain(c, &mut logged)?;
            insert_rows!(c, privacy_audit_logs::table, LedgerRow, logged);
            Ok(())
        })
        .await
        .map_err(StoreError::from)?;
        Ok(update.user.clone())
    }

    async fn find_user(&self, id: UserId) -> Result<User, StoreError> {
        let id = blob(id.uuid());
        let row = self
            .run(move |c| {
                users::table.filter(users::id.eq(id)).select(UserRow::as_select()).first(c)
            })
            .await?;
        row.into_neutral()?.into_user()
    }

    async fn job(&self, organization: OrganizationId, id: JobId) -> Result<JobRecord, StoreError> {
        let (org, job) = (blob(organization.uuid()), blob(id.uuid()));
        let (row, settings, team, stages) = self
            .run(move |c| {
                let (row, settings) = jobs::table
                    .inner_join(
                        job_resolved_settings::table.on(job_resolved_settings::organization_id
                            .eq(jobs::organization_id)
                            .and(job_resolved_settings::job_id.eq(jobs::id))),
                    )
                    .filter(jobs::organization_id.eq(&org).and(jobs::id.eq(&job)))
                    .select((JobRow::as_select(), ResolvedSettingsRow::as_select()))
                    .first(c)?;
                let team = job_hiring_team::table
                    .inner_join(
                        users::table.on(users::organization_id
                            .eq(job_hiring_team::organization_id)
                            .and(users::id.eq(job_hiring_team::user_id))),
                    )
                    .filter(
                        job_hiring_team::organization_id
                            .eq(&org)
                            .and(job_hiring_team::job_id.eq(&job)),
                    )
                    .order(job_hiring_team::position)
                    .select((job_hiring_team::role, job_hiring_team::user_id, users::name))
                    .load::<(String, Vec<u8>, String)>(c)?;
                let stages = job_stages::table
                    .filter(job_stages::organization_id.eq(&org).and(job_stages::job_id.eq(&job)))
                    .order(job_stages::position)
                    .select(JobStageRow::as_select())
                    .load(c)?;
                Ok((row, settings, team, stages))
            })
            .await?;
        let team = team
            .into_iter()
            .map(|(role, user, name)| Ok((role, uuid(&user)?, name)))
            .collect::<Result<_, StoreError>>()?;
        let stages = stages.into_iter().map(Row::into_neutral).collect::<Result<_, _>>()?;
        neutral::job_record(row.into_neutral()?, settings.into_neutral()?, team, stages)
    }
}

#[async_trait]
impl Tokens for SqliteStore {
    async fn credential(&self, secret_hash: &SecretHash) -> Result<Credential, StoreError> {
        let hash = secret_hash.0.to_vec();
        let (token, user) = self
            .run(move |c| {
                api_tokens::table
                    .inner_join(
                        users::table.on(users::organization_id
                            .eq(api_tokens::organization_id)
                            .and(users::id.eq(api_tokens::user_id))),
                    )
                    .filter(api_tokens::secret_hash.eq(hash))
                    .select((TokenRow::as_select(), UserRow::as_select()))
                    .first(c)
            })
            .await?;
        Ok(Credential {
            token: token.into_neutral()?.into_token()?,
            user: user.into_neutral()?.into_user()?,
        })
    }

    async fn create_token(&self, token: &NewApiToken) -> Result<ApiToken, StoreError> {
        let row = TokenRow::from(neutral::TokenRow::new(token));
        let id = blob(token.id.uuid());
        self.transaction(move |c| {
            diesel::insert_into(api_tokens::table).values(&row).execute(c)?;
            load_token(c, &id)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn revoke_token(&self, id: ApiTokenId, at: Timestamp) -> Result<ApiToken, StoreError> {
        let id = blob(id.uuid());
        self.transaction(move |c| {
            let current = api_tokens::table.filter(api_tokens::id.eq(&id));
            diesel::update(current)
                .set(api_tokens::revoked_at.eq(diesel::dsl::sql::<
                    diesel::sql_types::Nullable<diesel::sql_types::BigInt>,
                >(&format!(
                    "COALESCE(revoked_at, {})",
                    at.unix_micros()
                ))))
                .execute(c)?;
            load_token(c, &id)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn touch_token(&self, id: ApiTokenId, at: Timestamp) -> Result<(), StoreError> {
        let id = blob(id.uuid());
        let (now, stale) = (at.unix_micros(), at.unix_micros() - 60_000_000);
        self.run(move |c| {
            diesel::update(
                api_tokens::table.filter(api_tokens::id.eq(id)).filter(
                    api_tokens::last_used_at.is_null().or(api_tokens::last_used_at.lt(stale)),
                ),
            )
            .set(api_tokens::last_used_at.eq(now))
            .execute(c)
            .map(drop)
        })
        .await
    }

    async fn tokens(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<ApiToken>, StoreError> {
        let org = organization.map(|o| blob(o.uuid()));
        let rows = self
            .run(move |c| {
                let mut q = api_tokens::table.select(TokenRow::as_select()).into_boxed();
                if let Some(org) = org {
                    q = q.filter(api_tokens::organization_id.eq(org));
                }
                q.order((api_tokens::created_at.desc(), api_tokens::id.desc())).load(c)
            })
            .await?;
        rows.into_iter().map(|r| r.into_neutral()?.into_token()).collect()
    }
}

#[async_trait]
impl Ledgers for SqliteStore {
    async fn claim_idempotency_key(&self, claim: &KeyClaim) -> Result<Claim, StoreError> {
        use crate::schema::idempotency_keys as keys;
        let row = IdempotencyRow::from(neutral::IdempotencyRow::claimed(claim));
        let claim = claim.clone();
        self.transaction(move |c| -> Result<Claim, TxError> {
            let held = keys::table.find((row.organization_id.clone(), row.key.clone()));
            let stored = held.select(IdempotencyRow::as_select()).first(c).optional()?;
            let stored = stored.map(|r| r.into_neutral()?.into_stored()).transpose()?;
            let (found, write) = claim.decide(stored.as_ref());
            if write {
                diesel::replace_into(keys::table).values(&row).execute(c)?;
            }
            Ok(found)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn release_idempotency_key(&self, claim: &KeyClaim) -> Result<(), StoreError> {
        use crate::schema::idempotency_keys as keys;
        let (org, key) = (blob(claim.organization_id.uuid()), claim.key.clone());
        let fingerprint = claim.fingerprint.to_vec();
        self.run(move |c| {
            diesel::delete(keys::table.find((org, key)))
                .filter(keys::fingerprint.eq(fingerprint))
                .filter(keys::response.is_null())
                .execute(c)
                .map(drop)
        })
        .await
    }

    async fn purge_idempotency_keys(&self, now: Timestamp) -> Result<usize, StoreError> {
        use crate::schema::idempotency_keys as keys;
        let now = now.unix_micros();
        self.run(move |c| diesel::delete(keys::table.filter(keys::expires_at.le(now))).execute(c))
            .await
    }

    async fn record_privacy_accesses(&self, write: &AccessesWrite) -> Result<(), StoreError> {
        use crate::schema::idempotency_keys as keys;
        let mut rows = neutral::AccessRows::new(write)?;
        let done =
            IdempotencyRow::from(neutral::IdempotencyRow::completed(&write.claim, &write.response));
        let claim = write.claim.clone();
        self.transaction(move |c| -> Result<(), TxError> {
            let completed = diesel::update(keys::table.find((&done.organization_id, &done.key)))
                .filter(keys::fingerprint.eq(&done.fingerprint))
                .filter(keys::response.is_null())
                .set((
                    keys::locked_until.eq(done.locked_until),
                    keys::status.eq(done.status),
                    keys::response.eq(&done.response),
                ))
                .execute(c)?;
            claim.completed(completed)?;
            chain(c, &mut rows)?;
            recruit_ports::insert_access_rows!(insert_rows!(c), rows);
            Ok(())
        })
        .await
        .map_err(StoreError::from)
    }

    async fn chain_heads(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<neutral::LedgerHeadRow>, StoreError> {
        let org = organization.map(|o| blob(o.uuid()));
        let rows: Vec<LedgerHeadRow> = self
            .run(move |c| {
                let mut heads = ledger_heads::table
                    .order((ledger_heads::organization_id, ledger_heads::ledger))
                    .select(LedgerHeadRow::as_select())
                    .into_boxed();
                if let Some(org) = org {
                    heads = heads.filter(ledger_heads::organization_id.eq(org));
                }
                heads.load(c)
            })
            .await?;
        rows.into_iter().map(Row::into_neutral).collect()
    }

    async fn save_checkpoints(
        &self,
        checkpoints: &[recruit_domain::chain::Checkpoint],
    ) -> Result<(), StoreError> {
        let rows = checkpoints
            .iter()
            .map(|c| neutral::CheckpointRow::new(c).map(CheckpointRow::from))
            .collect::<Result<Vec<_>, _>>()?;
        self.run(move |c| {
            diesel::insert_or_ignore_into(ledger_checkpoints::table).values(&rows).execute(c)
        })
        .await?;
        Ok(())
    }

    async fn checkpoints(
        &self,
        organization: Option<OrganizationId>,
        ledger: Option<recruit_domain::chain::Ledger>,
    ) -> Result<Vec<recruit_domain::chain::Checkpoint>, StoreError> {
        let org = organization.map(|o| blob(o.uuid()));
        let rows: Vec<CheckpointRow> = self
            .run(move |c| {
                let mut query = ledger_checkpoints::table
                    .order((
                        ledger_checkpoints::organization_id,
                        ledger_checkpoints::ledger,
                        ledger_checkpoints::position,
                        ledger_checkpoints::signed_at,
                    ))
                    .select(CheckpointRow::as_select())
                    .into_boxed();
                if let Some(org) = org {
                    query = query.filter(ledger_checkpoints::organization_id.eq(org));
                }
                if let Some(ledger) = ledger {
                    query = query.filter(ledger_checkpoints::ledger.eq(ledger.as_str()));
                }
                query.load(c)
            })
            .await?;
        rows.into_iter().map(|r| r.into_neutral()?.into_checkpoint()).collect()
    }

    async fn retention_plan(
        &self,
        before: Timestamp,
    ) -> Result<Vec<recruit_ports::chain::PlannedCut>, StoreError> {
        use diesel::sql_types::{BigInt, Binary};
        use recruit_ports::chain::{LEDGER_TABLES, PlannedCut, retention_plan_sql};
        #[derive(QueryableByName)]
        struct Planned {
            #[diesel(sql_type = Binary)]
            organization_id: Vec<u8>,
            #[diesel(sql_type = BigInt)]
            position: i64,
            #[diesel(sql_type = BigInt)]
            entries: i64,
            #[diesel(sql_type = Binary)]
            hash: Vec<u8>,
        }
        let planned: Vec<(recruit_domain::chain::Ledger, Vec<Planned>)> = self
            .run(move |c| {
                LEDGER_TABLES
                    .into_iter()
                    .map(|(ledger, table)| {
                        diesel::sql_query(retention_plan_sql(table, "?"))
                            .bind::<BigInt, _>(before.unix_micros())
                            .load(c)
                            .map(|rows| (ledger, rows))
                    })
                    .collect()
            })
            .await?;
        let mut plan = vec![];
        for (ledger, rows) in planned {
            for p in rows {
                let org = crate::rows::uuid(&p.organization_id)?;
                plan.push(PlannedCut::from_stored(ledger, org, p.position, p.entries, &p.hash)?);
            }
        }
        Ok(plan)
    }

    async fn save_retention_cuts(
        &self,
        cuts: &[recruit_domain::chain::RetentionCut],
    ) -> Result<(), StoreError> {
        let rows = cuts
            .iter()
            .map(|c| neutral::RetentionCutRow::new(c).map(RetentionCutRow::from))
            .collect::<Result<Vec<_>, _>>()?;
        self.run(move |c| {
            diesel::insert_or_ignore_into(ledger_retention_cuts::table).values(&rows).execute(c)
        })
        .await?;
        Ok(())
    }

    async fn retention_cuts(
        &self,
        organization: Option<OrganizationId>,
        ledger: Option<recruit_domain::chain::Ledger>,
    ) -> Result<Vec<recruit_domain::chain::RetentionCut>, StoreError> {
        let org = organization.map(|o| blob(o.uuid()));
        let rows: Vec<RetentionCutRow> = self
            .run(move |c| {
                let mut query = ledger_retention_cuts::table
                    .order((
                        ledger_retention_cuts::organization_id,
                        ledger_retention_cuts::ledger,
                        ledger_retention_cuts::position,
                    ))
                    .select(RetentionCutRow::as_select())
                    .into_boxed();
                if let Some(org) = org {
                    query = query.filter(ledger_retention_cuts::organization_id.eq(org));
                }
                if let Some(ledger) = ledger {
                    query = query.filter(ledger_retention_cuts::ledger.eq(ledger.as_str()));
                }
                query.load(c)
            })
            .await?;
        rows.into_iter().map(|r| r.into_neutral()?.into_cut()).collect()
    }

    async fn remove_retained(&self, before: Timestamp) -> Result<u64, StoreError> {
        use diesel::sql_types::BigInt;
        let removed = self
            .transaction(move |c| -> Result<usize, TxError> {
                let mut removed = 0;
                for (_, table) in recruit_ports::chain::LEDGER_TABLES {
                    removed +=
                        diesel::sql_query(format!("DELETE FROM {table} WHERE recorded_at < ?"))
                            .bind::<BigInt, _>(before.unix_micros())
                            .execute(c)?;
                }
                Ok(removed)
            })
            .await
            .map_err(StoreError::from)?;
        Ok(u64::try_from(removed).unwrap_or(u64::MAX))
    }

    async fn latest_checkpoint(
        &self,
        organization: OrganizationId,
        ledger: recruit_domain::chain::Ledger,
    ) -> Result<Option<recruit_domain::chain::Checkpoint>, StoreError> {
        let org = blob(organization.uuid());
        let row: Option<CheckpointRow> = self
            .run(move |c| {
                ledger_checkpoints::table
                    .filter(ledger_checkpoints::organization_id.eq(org))
                    .filter(ledger_checkpoints::ledger.eq(ledger.as_str()))
                    .order((
                        ledger_checkpoints::position.desc(),
                        ledger_checkpoints::signed_at.desc(),
                    ))
                    .select(CheckpointRow::as_select())
                    .first(c)
                    .optional()
            })
            .await?;
        row.map(|r| r.into_neutral()?.into_checkpoint()).transpose()
    }

    async fn chain_entries(
        &self,
        ledger: recruit_domain::chain::Ledger,
        organization: OrganizationId,
        page: recruit_ports::chain::ChainPage,
        limit: u32,
    ) -> Result<Vec<recruit_ports::chain::ChainEntry>, StoreError> {
        use recruit_domain::chain::Ledger;
        let org = blob(organization.uuid());
        self.run(move |c| {
            Ok(match ledger {
                Ledger::Privacy => chain_entries::<LedgerRow>(c, org, page, limit),
                Ledger::Api => chain_entries::<AuditRow>(c, org, page, limit),
                Ledger::Tool => chain_entries::<ToolAuditRow>(c, org, page, limit),
            })
        })
        .await?
        .map_err(StoreError::from)
    }

    async fn api_audit_entries(
        &self,
        query: &AuditListQuery,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let org = query.organization_id.map(|o| blob(o.uuid()));
        let limit = i64::from(query.limit);
        let rows = self
            .run(move |c| {
                let mut q = api_audit_log::table.select(AuditRow::as_select()).into_boxed();
                if let Some(org) = org {
                    q = q.filter(api_audit_log::organization_id.eq(org));
                }
                q.order((api_audit_log::at.desc(), api_audit_log::id.desc())).limit(limit).load(c)
            })
            .await?;
        rows.into_iter().map(|r| r.into_neutral()?.into_entry()).collect()
    }

    async fn tool_audit_entries(
        &self,
        query: &AuditListQuery,
    ) -> Result<Vec<ToolAuditEntry>, StoreError> {
        let org = query.organization_id.map(|o| blob(o.uuid()));
        let limit = i64::from(query.limit);
        let rows = self
            .run(move |c| {
                let mut q = tool_audit_log::table.select(ToolAuditRow::as_select()).into_boxed();
                if let Some(org) = org {
                    q = q.filter(tool_audit_log::organization_id.eq(org));
                }
                q.order((tool_audit_log::at.desc(), tool_audit_log::id.desc())).limit(limit).load(c)
            })
            .await?;
        rows.into_iter().map(|r| r.into_neutral()?.into_entry()).collect()
    }

    async fn read_privacy_audit_logs(
        &self,
        query: &PrivacyLogQuery,
        record: &ReadRecord,
    ) -> Result<LedgerPage, StoreError> {
        use crate::schema::privacy_audit_logs as pal;
        let org = blob(query.organization_id.uuid());
        let (gte, lt) = (query.window.gte().unix_micros(), query.window.lt().unix_micros());
        let ids: Option<Vec<Vec<u8>>> =
            query.ids.as_ref().map(|f| f.iter().map(|i| blob(i.uuid())).collect());
        let after = query.after.map(|p| (p.access_time.unix_micros(), blob(p.id.uuid())));
        let limit = usize::try_from(query.limit).unwrap_or(usize::MAX);
        let rows = self
            .run(move |c| {
                let mut q = pal::table
                    .filter(pal::organization_id.eq(org))
                    .filter(pal::access_time.ge(gte))
                    .filter(pal::access_time.lt(lt))
                    .select(LedgerRow::as_select())
                    .into_boxed();
                if let Some(ids) = ids {
                    q = q.filter(pal::id.eq_any(ids));
                }
                if let Some((time, id)) = after {
                    // `access_time <= t` bounds the index range; the rest breaks the tie.
                    q = q
                        .filter(pal::access_time.le(time))
                        .filter(pal::access_time.lt(time).or(pal::id.lt(id)));
                }
                // One more than the page tells whether another page follows.
                q.order((pal::access_time.desc(), pal::id.desc()))
                    .limit(i64::try_from(limit).unwrap_or(i64::MAX - 1) + 1)
                    .load::<LedgerRow>(c)
            })
            .await?;
        let page = record.page(rows, limit);
        // Committed, with the records of the reads made meanwhile, before the page returns.
        self.record(page.api, page.tool).await?;
        recruit_adapters_diesel::ledger_page(page.rows, page.more)
    }

    async fn export(
        &self,
        query: &recruit_ports::chain::ExportQuery,
        record: Option<&ReadRecord>,
    ) -> Result<recruit_ports::chain::Export, StoreError> {
        let (counted, count) = tokio::sync::oneshot::channel();
        let (sender, entries) = tokio::sync::mpsc::channel(recruit_adapters_diesel::EXPORT_CHUNK);
        let (q, store) = (query.clone(), self.clone());
        // A task of its own reads the export from one snapshot (a read transaction), a chunk
        // at a time, as fast as the reader takes it; the reader dropping the stream ends it.
        tokio::spawn(async move {
            let _ = store
                .run(move |c| {
                    let mut counted = Some(counted);
                    let read = c.transaction(|c| export_ledger(c, &q, &mut counted, &sender));
                    if let Err(e) = read {
                        let e = StoreError::from(e);
                        match counted.take() {
                            Some(counted) => {
                                let _ = counted.send(Err(e));
                            }
                            None => {
                                let _ = sender.blocking_send(Err(e));
                            }
                        }
                    }
                    Ok(())
                })
                .await;
        });
        let gone = || StoreError::Unavailable("the export stopped before it began".into());
        let count = count.await.map_err(|_| gone())??;
        if let Some(record) = record {
            // Committed before the export is handed over: no entry leaves unrecorded.
            self.record_reads(record, usize::try_from(count).unwrap_or(usize::MAX)).await?;
        }
        Ok(recruit_ports::chain::Export {
            count,
            entries: Box::pin(recruit_adapters_diesel::ChannelStream(entries)),
        })
    }

    async fn record_read(&self, record: &ReadRecord) -> Result<(), StoreError> {
        self.record_reads(record, 0).await
    }
}

impl SqliteStore {
    /// Appends the record of a read that returned `n` entries.
    async fn record_reads(&self, record: &ReadRecord, n: usize) -> Result<(), StoreError> {
        let page = record.page(vec![(); n], n);
        self.record(page.api, page.tool).await
    }
}

/// Which of `ids` exist in `table`, with their organization: `(id, organization_id)` pairs.
/// How many identifiers one look-up names at most (SQLite binds each as a parameter).
const LOOKUP_CHUNK: usize = 10_000;

fn existing_pairs(
    c: &mut SqliteConnection,
    ids: Vec<Vec<u8>>,
    load: impl Fn(&mut SqliteConnection, &[Vec<u8>]) -> QueryResult<Vec<(Vec<u8>, Vec<u8>)>>,
    mut add: impl FnMut(Vec<u8>, Vec<u8>) -> Result<(), StoreError>,
) -> Result<(), TxError> {
    for part in ids.chunks(LOOKUP_CHUNK) {
        for (id, org) in load(c, part)? {
            add(id, org)?;
        }
    }
    Ok(())
}

fn look_up(c: &mut SqliteConnection, doc: &ImportDocument) -> Result<ExistingIds, TxError> {
    let lookups = doc.lookups();
    let mut existing = ExistingIds::default();
    let blobs = |ids: Vec<recruit_domain::Uuid>| ids.into_iter().map(blob).collect::<Vec<_>>();

    let orgs = blobs(lookups.organizations.iter().map(|o| o.uuid()).collect());
    for part in orgs.chunks(LOOKUP_CHUNK) {
        for id in organizations::table
            .filter(organizations::id.eq_any(part))
            .select(organizations::id)
            .load::<Vec<u8>>(c)?
        {
            existing.organizations.insert(rows::id(&id)?);
        }
    }
    existing_pairs(
        c,
        blobs(lookups.users.iter().map(|u| u.uuid()).collect()),
        |c, part| {
            users::table
                .filter(users::id.eq_any(part))
                .select((users::id, users::organization_id))
                .load(c)
        },
        |id, org| {
            existing.users.insert(rows::id(&id)?, rows::id(&org)?);
            Ok(())
        },
    )?;
    existing_pairs(
        c,
        blobs(lookups.task_queues.iter().map(|q| q.uuid()).collect()),
        |c, part| {
            task_queues::table
                .filter(task_queues::id.eq_any(part))
                .select((task_queues::id, task_queues::organization_id))
                .load(c)
        },
        |id, org| {
            existing.task_queues.insert(rows::id(&id)?, rows::id(&org)?);
            Ok(())
        },
    )?;
    existing_pairs(
        c,
        blobs(lookups.candidates.iter().map(|x| x.uuid()).collect()),
        |c, part| {
            candidates::table
                .filter(candidates::id.eq_any(part))
                .select((candidates::id, candidates::organization_id))
                .load(c)
        },
        |id, _| {
            existing.candidates.insert(rows::id(&id)?);
            Ok(())
        },
    )?;
    existing_pairs(
        c,
        blobs(lookups.jobs.iter().map(|x| x.uuid()).collect()),
        |c, part| {
            jobs::table
                .filter(jobs::id.eq_any(part))
                .select((jobs::id, jobs::organization_id))
                .load(c)
        },
        |id, _| {
            existing.jobs.insert(rows::id(&id)?);
            Ok(())
        },
    )?;
    existing_pairs(
        c,
        blobs(lookups.job_stages.iter().map(|x| x.uuid()).collect()),
        |c, part| {
            job_stages::table
                .filter(job_stages::id.eq_any(part))
                .select((job_stages::id, job_stages::organization_id))
                .load(c)
        },
        |id, _| {
            existing.job_stages.insert(rows::id(&id)?);
            Ok(())
        },
    )?;
    let wanted: HashSet<_> = lookups.privacy_audit_logs.iter().copied().collect();
    // Filtering by organization too lets the primary key (organization_id, id) serve it.
    existing_pairs(
        c,
        blobs(lookups.privacy_audit_logs.iter().map(|(_, id)| id.uuid()).collect()),
        |c, part| {
            privacy_audit_logs::table
                .filter(privacy_audit_logs::organization_id.eq_any(&orgs))
                .filter(privacy_audit_logs::id.eq_any(part))
                .select((privacy_audit_logs::id, privacy_audit_logs::organization_id))
                .load(c)
        },
        |id, org| {
            let key = (rows::id(&org)?, rows::id(&id)?);
            if wanted.contains(&key) {
                existing.privacy_audit_logs.insert(key);
            }
            Ok(())
        },
    )?;
    Ok(existing)
}

#[async_trait]
impl Import for SqliteStore {
    async fn import(&self, document: &ImportDocument) -> Result<ImportSummary, ImportError> {
        let doc = document.clone();
        self.transaction(move |c| insert_document(c, &doc)).await.map_err(ImportError::from)
    }

    async fn resume_ledger(&self, batch: &ImportDocument) -> Result<ResumedBatch, ImportError> {
        let batch = batch.clone();
        self.transaction(move |c| -> Result<ResumedBatch, TxError> {
            let stored = stored_ledger_entries(c, &batch)?;
            let (rest, already_stored) = batch
                .without_stored(&stored)
                .map_err(|p| TxError::Import(ImportError::Invalid(p)))?;
            let written = insert_document(c, &rest)?.privacy_audit_logs;
            Ok(ResumedBatch { written, already_stored })
        })
        .await
        .map_err(ImportError::from)
    }
}

/// Checks `doc` against what is stored and inserts it whole (in the caller's transaction).
fn insert_document(
    c: &mut SqliteConnection,
    doc: &ImportDocument,
) -> Result<ImportSummary, TxError> {
    let existing = look_up(c, doc)?;
    doc.check(&existing).map_err(|p| TxError::Import(ImportError::Invalid(p)))?;
    let mut rows = neutral::DocumentRows::new(doc)?;
    chain(c, &mut rows)?;
    let summary = rows.summary();
    recruit_ports::insert_document_rows!(insert_rows!(c), rows);
    if !doc.jobs.is_empty() {
        let jobs: Vec<_> = doc.jobs.iter().map(|j| blob(j.id.uuid())).collect();
        keep_resolved_settings(c, Some(&jobs))?;
    }
    Ok(summary)
}

/// Resolves and keeps the scheduling settings of the jobs that have none kept: those of `jobs`
/// (just written, in the caller's transaction), or every one when `jobs` is `None` (once, when
/// the store migrates). The rule is the domain's (`ResolvedSettingsRow::new`).
fn keep_resolved_settings(
    c: &mut SqliteConnection,
    jobs: Option<&[Vec<u8>]>,
) -> Result<(), TxError> {
    let mut unresolved = job_settings::table
        .inner_join(organization_scheduling_defaults::table.on(
            organization_scheduling_defaults::organization_id.eq(job_settings::organization_id),
        ))
        .left_join(
            job_resolved_settings::table.on(job_resolved_settings::organization_id
                .eq(job_settings::organization_id)
                .and(job_resolved_settings::job_id.eq(job_settings::job_id))),
        )
        .filter(job_resolved_settings::job_id.nullable().is_null())
        .select((JobSettingsRow::as_select(), SchedulingDefaultsRow::as_select()))
        .into_boxed();
    if let Some(jobs) = jobs {
        unresolved = unresolved.filter(job_settings::job_id.eq_any(jobs));
    }
    let pairs: Vec<(JobSettingsRow, SchedulingDefaultsRow)> = unresolved.load(c)?;
    let resolved = pairs
        .into_iter()
        .map(|(settings, defaults)| {
            Ok(neutral::ResolvedSettingsRow::new(
                &settings.into_neutral()?,
                defaults.into_neutral()?,
            ))
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    insert_rows!(c, job_resolved_settings::table, ResolvedSettingsRow, resolved);
    Ok(())
}

/// The stored privacy ledger entries among the batch's (organization, id) pairs.
fn stored_ledger_entries(
    c: &mut SqliteConnection,
    batch: &ImportDocument,
) -> Result<Vec<LedgerEntry>, TxError> {
    let keys = neutral::LedgerKeys::new(batch);
    let orgs: Vec<_> = keys.organizations.iter().copied().map(blob).collect();
    let mut found = vec![];
    for part in keys.ids.chunks(LOOKUP_CHUNK) {
        let part: Vec<_> = part.iter().copied().map(blob).collect();
        let rows: Vec<LedgerRow> = privacy_audit_logs::table
            .filter(privacy_audit_logs::organization_id.eq_any(&orgs))
            .filter(privacy_audit_logs::id.eq_any(&part))
            .select(LedgerRow::as_select())
            .load(c)?;
        keys.keep(
            rows.into_iter().map(Row::into_neutral).collect::<Result<Vec<_>, _>>()?,
            &mut found,
        )?;
    }
    Ok(found)
}

#[async_trait]
impl Maintenance for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        let pending = self
            .run(|c| c.has_pending_migration(MIGRATIONS).map_err(DieselError::QueryBuilderError))
            .await?;
        if pending {
            return Err(StoreError::Unavailable("the database schema is not up to date".into()));
        }
        Ok(())
    }

    async fn server_secret(&self, name: &str, proposed: &[u8]) -> Result<Vec<u8>, StoreError> {
        let (name, value) = (name.to_owned(), proposed.to_vec());
        let now = Timestamp::now().unix_micros();
        self.transaction(move |c| -> Result<Vec<u8>, TxError> {
            diesel::insert_into(server_secrets::table)
                .values((
                    server_secrets::name.eq(&name),
                    server_secrets::value.eq(&value),
                    server_secrets::created_at.eq(now),
                ))
                .on_conflict_do_nothing()
                .execute(c)?;
            Ok(server_secrets::table.find(&name).select(server_secrets::value).first(c)?)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn is_empty(&self) -> Result<bool, StoreError> {
        self.run(|c| {
            diesel::select(diesel::dsl::not(diesel::dsl::exists(
                organizations::table.select(organizations::id),
            )))
            .get_result(c)
        })
        .await
    }
}
