//! The PostgreSQL storage adapter of recruitd: every port of `recruit-ports` on diesel-async,
//! pooled by deadpool, for server deployments.
//!
//! Every new connection gets the configured `statement_timeout` and an `application_name`;
//! waiting for a connection is bounded by the pool's wait timeout. At the seam, pool waits and
//! connection failures become [`StoreError::Unavailable`], a statement timeout becomes
//! [`StoreError::Timeout`]. Migrations are embedded in the binary and applied by
//! [`PgStore::migrate`].
//!
//! This crate implements the ports and nothing else: it must never depend on the service, on
//! HTTP, or on the SQLite adapter. With the `testkit` feature, the `testkit` module starts
//! throwaway PostgreSQL clusters for tests.

mod credentials;
mod rows;
mod schema;
#[cfg(feature = "testkit")]
pub mod testkit;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use deadpool::managed::{PoolError, TimeoutType};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::{
    AsyncConnection, AsyncMigrationHarness, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection,
};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use recruit_domain::{ApiTokenId, Id, JobId, OrganizationId, Timestamp, User, UserId};
use recruit_ports::{
    ApiToken, AuditEntry, AuditListQuery, Credential, Directory, ExistingIds, Import,
    ImportDocument, ImportError, ImportSummary, JobRecord, LedgerEntry, LedgerPage, Ledgers,
    Maintenance, NewApiToken, OrganizationRecord, PoolStatus, PrivacyLogQuery, ReadRecord,
    ResumedBatch, SecretHash, StoreError, Tokens, ToolAuditEntry,
};

use recruit_ports::rows as neutral;

use crate::rows::*;
use crate::schema::*;

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
    pub statement_timeout: Duration,
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
    /// Defaults: 16 connections, 2 s to get one, 5 s to open one, statements up to 5 s.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            pool_size: 16,
            wait_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(5),
            application_name: "recruitd".into(),
            credential_cache: None,
        }
    }
}

/// The PostgreSQL store. Cheap to clone: clones share one pool.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool<AsyncPgConnection>,
    copy: Arc<CopySettings>,
    credentials: Option<Arc<credentials::CredentialCache>>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PgStore")
            .field("size", &status.size)
            .field("max", &status.max_size)
            .finish()
    }
}

/// How connections for `COPY` are opened: as the pool's, with its session settings.
#[derive(Debug)]
struct CopySettings {
    config: tokio_postgres::Config,
    setup: Arc<str>,
}

type Conn = deadpool::managed::Object<AsyncDieselConnectionManager<AsyncPgConnection>>;

impl PgStore {
    /// Builds the pool. Connections are opened when first needed, so a database that is down
    /// now does not stop the server from starting: requests get `Unavailable` until it is up.
    pub fn connect(config: &PgConfig) -> Result<Self, StoreError> {
        let setup: Arc<str> = format!(
            "SET statement_timeout = {}; SET application_name = '{}';",
            config.statement_timeout.as_millis(),
            config.application_name.replace('\'', "''")
        )
        .into();
        let mut manager = ManagerConfig::<AsyncPgConnection>::default();
        // No test query at every checkout (the default would add a round trip to each use of
        // the pool): a connection the server closed fails its next query, which the request
        // reports as UNAVAILABLE, and the pool discards it.
        manager.recycling_method = diesel_async::pooled_connection::RecyclingMethod::Fast;
        let pool_setup = Arc::clone(&setup);
        manager.custom_setup = Box::new(move |url| {
            let (url, setup) = (url.to_owned(), Arc::clone(&pool_setup));
            Box::pin(async move {
                let mut conn = AsyncPgConnection::establish(&url).await?;
                conn.batch_execute(&setup)
                    .await
                    .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
                Ok(conn)
            })
        });
        let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
            &config.url,
            manager,
        );
        let pool = Pool::builder(manager)
            .max_size(config.pool_size.max(1))
            .wait_timeout(Some(config.wait_timeout))
            .create_timeout(Some(config.connect_timeout))
            .recycle_timeout(Some(config.connect_timeout))
            .runtime(deadpool::Runtime::Tokio1)
            .build()
            .map_err(|e| StoreError::other(format!("cannot build the PostgreSQL pool: {e}")))?;
        // Connections outside the pool (COPY, listening for credential changes).
        let mut direct: tokio_postgres::Config = config
            .url
            .parse()
            .map_err(|e| StoreError::other(format!("the PostgreSQL URL is not valid: {e}")))?;
        direct.connect_timeout(config.connect_timeout).application_name(&config.application_name);
        let credentials = config
            .credential_cache
            .filter(|age| !age.is_zero())
            .map(|max_age| credentials::CredentialCache::start(direct.clone(), max_age));
        let copy = Arc::new(CopySettings { config: direct, setup: Arc::clone(&setup) });
        Ok(Self { pool, copy, credentials })
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
        // Closing the connection releases the lock and the session settings with it.
        let _ = conn.batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK});")).await;
        drop(deadpool::managed::Object::take(conn));
        applied
    }

    /// Writes a document of ledger entries only with one binary `COPY`, relying on the
    /// schema's constraints in place of [`ImportDocument::check`]: the primary key refuses an
    /// entry stored or repeated, the foreign key a missing organization. `None` when a
    /// constraint refused it (nothing is written then): the checked path finds and names the
    /// problem.
    ///
    /// `COPY` goes through a `tokio-postgres` connection of its own, opened for the call, as
    /// diesel-async does not offer it; it carries the pool's session settings.
    async fn copy_ledger(&self, doc: &ImportDocument) -> Result<Option<ImportSummary>, StoreError> {
        use tokio_postgres::binary_copy::BinaryCopyInWriter;
        use tokio_postgres::error::SqlState;
        let Ok(rows) = doc
            .privacy_audit_logs
            .iter()
            .map(|e| neutral::LedgerRow::new(e).map(LedgerRow::from))
            .collect::<Result<Vec<_>, _>>()
        else {
            return Ok(None);
        };
        let (client, connection) =
            self.copy.config.connect(tokio_postgres::NoTls).await.map_err(copy_error)?;
        let driver = tokio::spawn(connection);
        let copied = async {
            client.batch_execute(&self.copy.setup).await?;
            let sink = client
                .copy_in(&format!(
                    "COPY privacy_audit_logs ({}) FROM STDIN (FORMAT binary)",
                    LedgerRow::COLUMNS
                ))
                .await?;
            let writer = BinaryCopyInWriter::new(sink, LedgerRow::TYPES);
            let mut writer = std::pin::pin!(writer);
            for row in &rows {
                writer.as_mut().write(&row.copy_values()).await?;
            }
            writer.finish().await
        }
        .await;
        drop(client);
        let _ = driver.await;
        match copied {
            Ok(_) => Ok(Some(ImportSummary {
                privacy_audit_logs: rows.len(),
                ..ImportSummary::default()
            })),
            Err(e)
                if e.code() == Some(&SqlState::UNIQUE_VIOLATION)
                    || e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) =>
            {
                Ok(None)
            }
            Err(e) => Err(copy_error(e)),
        }
    }

    /// Numbers about the connection pool.
    pub fn pool_status(&self) -> PoolStatus {
        let s = self.pool.status();
        PoolStatus {
            max_size: s.max_size,
            size: s.size,
            available: s.available,
            waiting: s.waiting,
        }
    }

    async fn conn(&self) -> Result<Conn, StoreError> {
        self.pool.get().await.map_err(pool_error)
    }

    /// The plan PostgreSQL chooses for the page query of `query`: `EXPLAIN`, or with `analyze`
    /// `EXPLAIN (ANALYZE, BUFFERS)`, which runs it. For operators and benchmarks; it records
    /// nothing in the audit ledgers.
    pub async fn explain_privacy_page(
        &self,
        query: &PrivacyLogQuery,
        analyze: bool,
    ) -> Result<String, StoreError> {
        #[derive(QueryableByName)]
        struct Line {
            #[diesel(sql_type = sql_types::Text, column_name = "QUERY PLAN")]
            line: String,
        }
        let prefix = if analyze { "EXPLAIN (ANALYZE, BUFFERS) " } else { "EXPLAIN " };
        let mut conn = self.conn().await?;
        let lines: Vec<Line> =
            page_query(prefix, query).load(&mut conn).await.map_err(store_error)?;
        Ok(lines.into_iter().map(|l| l.line).collect::<Vec<_>>().join("\n"))
    }
}

fn pool_error(e: PoolError<diesel_async::pooled_connection::PoolError>) -> StoreError {
    match e {
        PoolError::Timeout(TimeoutType::Wait) => {
            StoreError::Unavailable("no database connection was free in time".into())
        }
        PoolError::Timeout(_) => {
            StoreError::Unavailable("connecting to the database took too long".into())
        }
        PoolError::Backend(e) => {
            StoreError::Unavailable(format!("cannot connect to the database: {e}"))
        }
        other => StoreError::Unavailable(other.to_string()),
    }
}

/// Translates an error of a `tokio-postgres` connection at the seam.
fn copy_error(e: tokio_postgres::Error) -> StoreError {
    use tokio_postgres::error::SqlState;
    match e.code() {
        Some(c) if *c == SqlState::QUERY_CANCELED => StoreError::Timeout,
        Some(c) if *c == SqlState::ADMIN_SHUTDOWN || *c == SqlState::CANNOT_CONNECT_NOW => {
            StoreError::Unavailable(e.to_string())
        }
        Some(_) => StoreError::Other(Box::new(e)),
        // Not the database's answer: the connection could not be made or broke.
        None => StoreError::Unavailable(format!("the database cannot be reached: {e}")),
    }
}

/// Translates a diesel error at the seam.
fn store_error(e: DieselError) -> StoreError {
    match e {
        DieselError::NotFound => StoreError::NotFound,
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            StoreError::Conflict(info.message().to_owned())
        }
        DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _) => {
            StoreError::NotFound
        }
        DieselError::DatabaseError(
            DatabaseErrorKind::UnableToSendCommand | DatabaseErrorKind::ClosedConnection,
            info,
        ) => StoreError::Unavailable(info.message().to_owned()),
        DieselError::DatabaseError(_, info)
            if info.message().starts_with("canceling statement due to statement timeout") =>
        {
            StoreError::Timeout
        }
        DieselError::DatabaseError(_, info)
            if info.message().starts_with("terminating connection")
                || info.message().contains("the database system is") =>
        {
            StoreError::Unavailable(info.message().to_owned())
        }
        DieselError::BrokenTransactionManager => {
            StoreError::Unavailable("the database connection broke".into())
        }
        other => StoreError::Other(Box::new(other)),
    }
}

/// The error type of transactions: a store error, an invalid import, or a diesel error
/// translated on the way in.
#[derive(Debug)]
enum TxError {
    Store(StoreError),
    Invalid(recruit_ports::ImportProblem),
}

impl From<DieselError> for TxError {
    fn from(e: DieselError) -> Self {
        Self::Store(store_error(e))
    }
}

impl From<StoreError> for TxError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<TxError> for StoreError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Store(e) => e,
            TxError::Invalid(p) => StoreError::other(p.to_string()),
        }
    }
}

impl From<TxError> for ImportError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Store(e) => ImportError::Store(e),
            TxError::Invalid(p) => ImportError::Invalid(p),
        }
    }
}

/// The most values bound to one statement: PostgreSQL takes at most 65 535.
const MAX_BOUND_VALUES: usize = 60_000;

/// The most rows of `columns` columns one INSERT carries.
fn chunk_for(columns: usize) -> usize {
    (MAX_BOUND_VALUES / columns).max(1)
}

/// Inserts neutral rows into `$table` as `$row`s, as many to a statement as PostgreSQL takes.
macro_rules! insert_rows {
    ($c:expr, $table:expr, $row:ty, $rows:expr) => {{
        let rows: Vec<$row> = $rows.into_iter().map(<$row>::from).collect();
        for part in rows.chunks(chunk_for(<$row as Row>::TYPES.len())) {
            diesel::insert_into($table).values(part).execute($c).await?;
        }
    }};
}

/// The page query of the privacy ledger, with an optional prefix such as `EXPLAIN `. One
/// index range scan on `privacy_audit_logs_page`: the organization, the window, and a row
/// comparison that continues after a position, newest first.
fn page_query(
    prefix: &str,
    q: &PrivacyLogQuery,
) -> diesel::query_builder::BoxedSqlQuery<'static, diesel::pg::Pg, diesel::query_builder::SqlQuery>
{
    let mut sql = format!(
        "{prefix}SELECT organization_id, id, access_time, account_id, ip_addresses, subject_type, \
         subject_user_id, subject_candidate_id, bulk_count, query_type, query_ids, query_values, \
         query_scope, access_data, access_menu, access_menu_path, activity_category \
         FROM privacy_audit_logs \
         WHERE organization_id = $1 AND access_time >= $2 AND access_time < $3"
    );
    let mut n = 3;
    if q.ids.is_some() {
        n += 1;
        sql.push_str(&format!(" AND id = ANY(${n})"));
    }
    if q.after.is_some() {
        sql.push_str(&format!(" AND (access_time, id) < (${}, ${})", n + 1, n + 2));
        n += 2;
    }
    sql.push_str(&format!(" ORDER BY access_time DESC, id DESC LIMIT ${}", n + 1));
    let mut query = diesel::sql_query(sql)
        .into_boxed()
        .bind::<sql_types::Uuid, _>(q.organization_id.uuid())
        .bind::<sql_types::Timestamptz, _>(q.window.gte().as_datetime())
        .bind::<sql_types::Timestamptz, _>(q.window.lt().as_datetime());
    if let Some(ids) = &q.ids {
        let ids: Vec<recruit_domain::Uuid> = ids.iter().map(Id::uuid).collect();
        query = query.bind::<sql_types::Array<sql_types::Uuid>, _>(ids);
    }
    if let Some(after) = q.after {
        query = query
            .bind::<sql_types::Timestamptz, _>(after.access_time.as_datetime())
            .bind::<sql_types::Uuid, _>(after.id.uuid());
    }
    // One more than the page tells whether another page follows.
    query.bind::<sql_types::BigInt, _>(i64::from(q.limit) + 1)
}

#[async_trait]
impl Directory for PgStore {
    async fn organization(&self, id: OrganizationId) -> Result<OrganizationRecord, StoreError> {
        let c = self.conn().await?;
        // Both queries go out together, pipelined on the connection: one round trip.
        let (mut first, mut second) = (&*c, &*c);
        let row = organizations::table
            .find(id.uuid())
            .select(OrganizationRow::as_select())
            .first(&mut first);
        let hours = organization_work_hours::table
            .filter(organization_work_hours::organization_id.eq(id.uuid()))
            .order(organization_work_hours::position)
            .select(WorkHoursRow::as_select())
            .load(&mut second);
        let (row, hours) = tokio::join!(row, hours);
        let hours = hours.map_err(store_error)?.into_iter().map(Row::into_neutral);
        row.map_err(store_error)?.into_neutral()?.into_record(hours.collect::<Result<_, _>>()?)
    }

    async fn user(&self, organization: OrganizationId, id: UserId) -> Result<User, StoreError> {
        let mut c = self.conn().await?;
        users::table
            .find((organization.uuid(), id.uuid()))
            .select(UserRow::as_select())
            .first(&mut c)
            .await
            .map_err(store_error)?
            .into_neutral()?
            .into_user()
    }

    async fn find_user(&self, id: UserId) -> Result<User, StoreError> {
        let mut c = self.conn().await?;
        users::table
            .filter(users::id.eq(id.uuid()))
            .select(UserRow::as_select())
            .first(&mut c)
            .await
            .map_err(store_error)?
            .into_neutral()?
            .into_user()
    }

    async fn job(&self, organization: OrganizationId, id: JobId) -> Result<JobRecord, StoreError> {
        let (org, job) = (organization.uuid(), id.uuid());
        let c = self.conn().await?;
        // Both queries go out together, pipelined on the connection: one round trip.
        let (mut one, mut two) = (&*c, &*c);
        let first = jobs::table
            .inner_join(
                job_settings::table.on(job_settings::organization_id
                    .eq(jobs::organization_id)
                    .and(job_settings::job_id.eq(jobs::id))),
            )
            .filter(jobs::organization_id.eq(org).and(jobs::id.eq(job)))
            .select((JobRow::as_select(), JobSettingsRow::as_select()))
            .first(&mut one);
        let team = job_hiring_team::table
            .inner_join(
                users::table.on(users::organization_id
                    .eq(job_hiring_team::organization_id)
                    .and(users::id.eq(job_hiring_team::user_id))),
            )
            .filter(job_hiring_team::organization_id.eq(org).and(job_hiring_team::job_id.eq(job)))
            .order(job_hiring_team::position)
            .select((job_hiring_team::role, job_hiring_team::user_id, users::name))
            .load::<(String, recruit_domain::Uuid, String)>(&mut two);
        let (first, team) = tokio::join!(first, team);
        let (row, settings) = first.map_err(store_error)?;
        neutral::job_record(
            row.into_neutral()?,
            settings.into_neutral()?,
            team.map_err(store_error)?,
        )
    }
}

async fn load_token(
    c: &mut AsyncPgConnection,
    id: recruit_domain::Uuid,
) -> Result<ApiToken, TxError> {
    let row = api_tokens::table
        .filter(api_tokens::id.eq(id))
        .select(TokenRow::as_select())
        .first(c)
        .await?;
    Ok(row.into_neutral()?.into_token()?)
}

#[async_trait]
impl Tokens for PgStore {
    async fn credential(&self, secret_hash: &SecretHash) -> Result<Credential, StoreError> {
        use credentials::Lookup;
        let lookup = self.credentials.as_ref().map_or(Lookup::Off, |cache| cache.get(secret_hash));
        let epoch = match lookup {
            Lookup::Hit(credential) => return Ok(*credential),
            Lookup::Miss(epoch) => Some(epoch),
            Lookup::Off => None,
        };
        let mut c = self.conn().await?;
        let (token, user) = api_tokens::table
            .inner_join(
                users::table.on(users::organization_id
                    .eq(api_tokens::organization_id)
                    .and(users::id.eq(api_tokens::user_id))),
            )
            .filter(api_tokens::secret_hash.eq(secret_hash.0.as_slice()))
            .select((TokenRow::as_select(), UserRow::as_select()))
            .first(&mut c)
            .await
            .map_err(store_error)?;
        let credential = Credential {
            token: token.into_neutral()?.into_token()?,
            user: user.into_neutral()?.into_user()?,
        };
        if let (Some(cache), Some(epoch)) = (&self.credentials, epoch) {
            cache.put(*secret_hash, &credential, epoch);
        }
        Ok(credential)
    }

    async fn create_token(&self, token: &NewApiToken) -> Result<ApiToken, StoreError> {
        let row = TokenRow::from(neutral::TokenRow::new(token));
        let id = token.id.uuid();
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| {
            diesel::insert_into(api_tokens::table).values(&row).execute(c).await?;
            load_token(c, id).await
        })
        .await
        .map_err(StoreError::from)
    }

    async fn revoke_token(&self, id: ApiTokenId, at: Timestamp) -> Result<ApiToken, StoreError> {
        let id = id.uuid();
        let mut c = self.conn().await?;
        let revoked = c
            .transaction::<_, TxError, _>(async |c| {
                diesel::update(api_tokens::table.filter(api_tokens::id.eq(id)))
                    .set(
                        api_tokens::revoked_at.eq(diesel::dsl::sql::<
                            sql_types::Nullable<sql_types::Timestamptz>,
                        >(
                            "COALESCE(revoked_at, "
                        )
                        .bind::<sql_types::Timestamptz, _>(at.as_datetime())
                        .sql(")")),
                    )
                    .execute(c)
                    .await?;
                load_token(c, id).await
            })
            .await
            .map_err(StoreError::from);
        // This store forgets at once; other stores, when the trigger's notification arrives.
        if let Some(cache) = &self.credentials {
            cache.clear();
        }
        revoked
    }

    async fn touch_token(&self, id: ApiTokenId, at: Timestamp) -> Result<(), StoreError> {
        let stale = at.as_datetime() - chrono::TimeDelta::seconds(60);
        let mut c = self.conn().await?;
        diesel::update(
            api_tokens::table
                .filter(api_tokens::id.eq(id.uuid()))
                .filter(api_tokens::last_used_at.is_null().or(api_tokens::last_used_at.lt(stale))),
        )
        .set(api_tokens::last_used_at.eq(at.as_datetime()))
        .execute(&mut c)
        .await
        .map(drop)
        .map_err(store_error)
    }

    async fn tokens(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<ApiToken>, StoreError> {
        let mut c = self.conn().await?;
        let mut q = api_tokens::table.select(TokenRow::as_select()).into_boxed();
        if let Some(org) = organization {
            q = q.filter(api_tokens::organization_id.eq(org.uuid()));
        }
        let rows = q
            .order((api_tokens::created_at.desc(), api_tokens::id.desc()))
            .load(&mut c)
            .await
            .map_err(store_error)?;
        rows.into_iter().map(|r| r.into_neutral()?.into_token()).collect()
    }
}

#[async_trait]
impl Ledgers for PgStore {
    async fn append_privacy_audit_logs(&self, entries: &[LedgerEntry]) -> Result<(), StoreError> {
        let rows = entries.iter().map(neutral::LedgerRow::new).collect::<Result<Vec<_>, _>>()?;
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| {
            insert_rows!(c, privacy_audit_logs::table, LedgerRow, rows);
            Ok(())
        })
        .await
        .map_err(StoreError::from)
    }

    async fn read_privacy_audit_logs(
        &self,
        query: &PrivacyLogQuery,
        record: &ReadRecord,
    ) -> Result<LedgerPage, StoreError> {
        let mut c = self.conn().await?;
        let limit = usize::try_from(query.limit).unwrap_or(usize::MAX);
        let (rows, more) = c
            .transaction::<_, TxError, _>(async |c| {
                let mut rows: Vec<LedgerRow> = page_query("", query).load(c).await?;
                let more = rows.len() > limit;
                rows.truncate(limit);
                let n = rows.len();
                diesel::insert_into(api_audit_log::table)
                    .values(AuditRow::from(neutral::AuditRow::new(&record.api, n)))
                    .execute(c)
                    .await?;
                if let Some(tool) = &record.tool {
                    diesel::insert_into(tool_audit_log::table)
                        .values(ToolAuditRow::from(neutral::ToolAuditRow::new(tool, n)))
                        .execute(c)
                        .await?;
                }
                Ok((rows, more))
            })
            .await
            .map_err(StoreError::from)?;
        let entries =
            rows.into_iter().map(|r| r.into_neutral()?.into_entry()).collect::<Result<_, _>>()?;
        Ok(LedgerPage { entries, more })
    }

    async fn api_audit_entries(
        &self,
        query: &AuditListQuery,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let mut c = self.conn().await?;
        let mut q = api_audit_log::table.select(AuditRow::as_select()).into_boxed();
        if let Some(org) = query.organization_id {
            q = q.filter(api_audit_log::organization_id.eq(org.uuid()));
        }
        let rows = q
            .order((api_audit_log::at.desc(), api_audit_log::id.desc()))
            .limit(i64::from(query.limit))
            .load(&mut c)
            .await
            .map_err(store_error)?;
        rows.into_iter().map(|r| r.into_neutral()?.into_entry()).collect()
    }

    async fn tool_audit_entries(
        &self,
        query: &AuditListQuery,
    ) -> Result<Vec<ToolAuditEntry>, StoreError> {
        let mut c = self.conn().await?;
        let mut q = tool_audit_log::table.select(ToolAuditRow::as_select()).into_boxed();
        if let Some(org) = query.organization_id {
            q = q.filter(tool_audit_log::organization_id.eq(org.uuid()));
        }
        let rows = q
            .order((tool_audit_log::at.desc(), tool_audit_log::id.desc()))
            .limit(i64::from(query.limit))
            .load(&mut c)
            .await
            .map_err(store_error)?;
        rows.into_iter().map(|r| r.into_neutral()?.into_entry()).collect()
    }
}

/// How many identifiers one look-up of stored ledger entries names at most.
const LOOKUP_CHUNK: usize = 50_000;

async fn look_up(c: &mut AsyncPgConnection, doc: &ImportDocument) -> Result<ExistingIds, TxError> {
    let l = doc.lookups();
    let mut existing = ExistingIds::default();
    let uuids = |ids: &mut dyn Iterator<Item = recruit_domain::Uuid>| ids.collect::<Vec<_>>();
    let orgs = uuids(&mut l.organizations.iter().map(|o| o.uuid()));
    for id in organizations::table
        .filter(organizations::id.eq_any(&orgs))
        .select(organizations::id)
        .load::<recruit_domain::Uuid>(c)
        .await?
    {
        existing.organizations.insert(id.into());
    }
    let users = uuids(&mut l.users.iter().map(|u| u.uuid()));
    for (id, org) in users::table
        .filter(users::id.eq_any(&users))
        .select((users::id, users::organization_id))
        .load::<(recruit_domain::Uuid, recruit_domain::Uuid)>(c)
        .await?
    {
        existing.users.insert(id.into(), org.into());
    }
    let queues = uuids(&mut l.task_queues.iter().map(|q| q.uuid()));
    for (id, org) in task_queues::table
        .filter(task_queues::id.eq_any(&queues))
        .select((task_queues::id, task_queues::organization_id))
        .load::<(recruit_domain::Uuid, recruit_domain::Uuid)>(c)
        .await?
    {
        existing.task_queues.insert(id.into(), org.into());
    }
    let cands = uuids(&mut l.candidates.iter().map(|x| x.uuid()));
    for id in candidates::table
        .filter(candidates::id.eq_any(&cands))
        .select(candidates::id)
        .load::<recruit_domain::Uuid>(c)
        .await?
    {
        existing.candidates.insert(id.into());
    }
    let jobs_wanted = uuids(&mut l.jobs.iter().map(|x| x.uuid()));
    for id in jobs::table
        .filter(jobs::id.eq_any(&jobs_wanted))
        .select(jobs::id)
        .load::<recruit_domain::Uuid>(c)
        .await?
    {
        existing.jobs.insert(id.into());
    }
    let wanted: HashSet<_> = l.privacy_audit_logs.iter().copied().collect();
    let entry_ids = uuids(&mut l.privacy_audit_logs.iter().map(|(_, id)| id.uuid()));
    for part in entry_ids.chunks(LOOKUP_CHUNK) {
        // Filtering by organization too lets the primary key (organization_id, id) serve it.
        for (id, org) in privacy_audit_logs::table
            .filter(privacy_audit_logs::organization_id.eq_any(&orgs))
            .filter(privacy_audit_logs::id.eq_any(part))
            .select((privacy_audit_logs::id, privacy_audit_logs::organization_id))
            .load::<(recruit_domain::Uuid, recruit_domain::Uuid)>(c)
            .await?
        {
            let key = (org.into(), id.into());
            if wanted.contains(&key) {
                existing.privacy_audit_logs.insert(key);
            }
        }
    }
    Ok(existing)
}

#[async_trait]
impl Import for PgStore {
    async fn import(&self, document: &ImportDocument) -> Result<ImportSummary, ImportError> {
        // Ledger batches (the NDJSON import) go in by COPY and skip the look-up of what is
        // stored, which cost as much as the insert: almost every batch is valid, and the few
        // that are not are tried again through the checked path, which says where the problem
        // is.
        let ledger_only = document.len() == document.privacy_audit_logs.len();
        if ledger_only && let Some(summary) = self.copy_ledger(document).await? {
            return Ok(summary);
        }
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| insert_document(c, document).await)
            .await
            .map_err(ImportError::from)
    }

    async fn resume_ledger(&self, batch: &ImportDocument) -> Result<ResumedBatch, ImportError> {
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| {
            let stored = stored_ledger_entries(c, batch).await?;
            let (rest, already_stored) = batch.without_stored(&stored).map_err(TxError::Invalid)?;
            let written = insert_document(c, &rest).await?.privacy_audit_logs;
            Ok(ResumedBatch { written, already_stored })
        })
        .await
        .map_err(ImportError::from)
    }
}

/// Checks `doc` against what is stored and inserts it whole (in the caller's transaction).
async fn insert_document(
    c: &mut AsyncPgConnection,
    doc: &ImportDocument,
) -> Result<ImportSummary, TxError> {
    let existing = look_up(c, doc).await?;
    doc.check(&existing).map_err(TxError::Invalid)?;
    let rows = neutral::DocumentRows::new(doc)?;
    let summary = rows.summary();
    insert_rows!(c, organizations::table, OrganizationRow, rows.organizations);
    insert_rows!(c, organization_work_hours::table, WorkHoursRow, rows.work_hours);
    insert_rows!(c, users::table, UserRow, rows.users);
    insert_rows!(c, task_queues::table, TaskQueueRow, rows.task_queues);
    insert_rows!(c, candidates::table, CandidateRow, rows.candidates);
    insert_rows!(c, jobs::table, JobRow, rows.jobs);
    insert_rows!(c, job_settings::table, JobSettingsRow, rows.job_settings);
    insert_rows!(c, job_hiring_team::table, HiringTeamRow, rows.hiring_team);
    insert_rows!(c, privacy_audit_logs::table, LedgerRow, rows.privacy_audit_logs);
    Ok(summary)
}

/// The stored privacy ledger entries among the batch's (organization, id) pairs.
async fn stored_ledger_entries(
    c: &mut AsyncPgConnection,
    batch: &ImportDocument,
) -> Result<Vec<LedgerEntry>, TxError> {
    let keys = neutral::LedgerKeys::new(batch);
    let mut found = vec![];
    for part in keys.ids.chunks(LOOKUP_CHUNK) {
        let rows: Vec<LedgerRow> = privacy_audit_logs::table
            .filter(privacy_audit_logs::organization_id.eq_any(&keys.organizations))
            .filter(privacy_audit_logs::id.eq_any(part))
            .select(LedgerRow::as_select())
            .load(c)
            .await?;
        keys.keep(
            rows.into_iter().map(Row::into_neutral).collect::<Result<Vec<_>, _>>()?,
            &mut found,
        )?;
    }
    Ok(found)
}

#[async_trait]
impl Maintenance for PgStore {
    async fn ping(&self) -> Result<(), StoreError> {
        let conn = self.conn().await?;
        let mut harness = AsyncMigrationHarness::new(conn);
        let pending = harness
            .has_pending_migration(MIGRATIONS)
            .map_err(|e| StoreError::Unavailable(format!("cannot read the schema version: {e}")))?;
        if pending {
            return Err(StoreError::Unavailable("the database schema is not up to date".into()));
        }
        Ok(())
    }

    async fn server_secret(&self, name: &str, proposed: &[u8]) -> Result<Vec<u8>, StoreError> {
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| {
            diesel::insert_into(server_secrets::table)
                .values((server_secrets::name.eq(name), server_secrets::value.eq(proposed)))
                .on_conflict_do_nothing()
                .execute(c)
                .await?;
            Ok(server_secrets::table.find(name).select(server_secrets::value).first(c).await?)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn is_empty(&self) -> Result<bool, StoreError> {
        let mut c = self.conn().await?;
        diesel::select(diesel::dsl::not(diesel::dsl::exists(
            organizations::table.select(organizations::id),
        )))
        .get_result(&mut c)
        .await
        .map_err(store_error)
    }
}
