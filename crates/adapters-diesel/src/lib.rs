//! What recruitd's two diesel storage adapters (`recruit-adapters-pg`,
//! `recruit-adapters-sqlite`) share, so that it is written once: the rules by which diesel's
//! errors become [`StoreError`]s whatever the backend ([`common_error`]), how a stored row
//! converts to and from its neutral form in `recruit_ports::rows` ([`Column`], [`Row`],
//! [`stored_row!`], [`stored_as_is!`]), the statement of a page of a chain ([`chain_page_sql`]), how many rows one
//! multi-row `INSERT` carries ([`rows_per_statement`]), the chained ledgers' tables
//! ([`LEDGER_TABLES`]), the statements both run, as SQL in a store's [`review::Dialect`] with
//! the values to bind ([`statement`], [`filter`], [`sessions`], [`retention_plan_sql`]), code
//! of several steps written once over a store's connection ([`db::Db`]: [`review`],
//! [`profile`], [`settings`]), the insert of an import document's rows table by table
//! ([`insert_document_rows`]), the pool's setup of a new
//! connection ([`session_setup`]), the pool's numbers ([`pool_status`]), how an export's
//! entries reach their reader ([`ChannelStream`]), and the group commit of the records of
//! ledger reads ([`Recorder`]).
//!
//! It depends on `recruit-domain`, `recruit-ports`, the backend-independent parts of diesel, diesel-async and
//! deadpool, and tokio's channels and task spawning only: never on a backend, a driver or an adapter, and never on the service or HTTP.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::pooled_connection::SetupCallback;
use diesel_async::{AsyncConnection, SimpleAsyncConnection};
pub use recruit_ports::StoreError;

pub mod db;
pub mod export;
pub mod filter;
pub mod native;
mod ports;
pub mod profile;
pub mod provisioning;
pub mod settings;

diesel::define_sql_function! {
    /// SQL's `lower`, as both stores have it: `ASCII` letters to lower case (PostgreSQL lowers
    /// others too).
    fn lower(text: diesel::sql_types::Text) -> diesel::sql_types::Text;
}
mod recorder;
pub mod review;
mod schema;
pub mod sessions;
pub mod statement;
mod statements;
pub mod store;
pub mod streams;
pub use recorder::{GroupWrite, Recorder};
pub use statements::{
    Insert, LEDGER_TABLES, Planned, insert_document_rows, planned_cuts, retention_plan_sql,
};
pub use store::{Backend, Diesel};

/// The translation of a diesel error every backend shares: no row is `NotFound`, a unique
/// violation `Conflict`, a foreign-key violation `NotFound` (a reference to nothing is "no
/// such thing", which is what callers act on). Any other error is handed back for the
/// backend's own rules (timeouts, lost connections, busy files).
pub fn common_error(e: DieselError) -> Result<StoreError, DieselError> {
    match e {
        DieselError::NotFound => Ok(StoreError::NotFound),
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            Ok(StoreError::Conflict(info.message().to_owned()))
        }
        DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _) => {
            Ok(StoreError::NotFound)
        }
        other => Err(other),
    }
}

/// A pool's setup of each new connection: open it, then run `setup` (the session's settings,
/// such as `SET statement_timeout …` or SQLite's pragmas) on it before it is used.
pub fn session_setup<C>(setup: std::sync::Arc<str>) -> SetupCallback<C>
where
    C: AsyncConnection + SimpleAsyncConnection + 'static,
{
    Box::new(move |url| {
        let (url, setup) = (url.to_owned(), std::sync::Arc::clone(&setup));
        Box::pin(async move {
            let mut conn = C::establish(&url).await?;
            conn.batch_execute(&setup)
                .await
                .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
            Ok(conn)
        })
    })
}

/// The numbers of a deadpool pool, as the ports report them.
pub fn pool_status(s: deadpool::Status) -> recruit_ports::PoolStatus {
    recruit_ports::PoolStatus {
        max_size: s.max_size,
        size: s.size,
        available: s.available,
        waiting: s.waiting,
    }
}

/// How many rows of `columns` columns one `INSERT` carries when a statement may bind at most
/// `max_values` values (at least one row).
pub fn rows_per_statement(max_values: usize, columns: usize) -> usize {
    (max_values / columns.max(1)).max(1)
}

/// How the backend `B` (a marker type of the adapter's) stores a neutral column type of
/// `recruit_ports::rows::column`: the Rust type diesel reads and writes, and the conversions.
/// Texts, booleans, integers and bytes are stored as they are on every backend; `Option` of
/// a column type is nullable.
pub trait Column<B>: Sized {
    /// The Rust type diesel reads and writes for the column.
    type Stored;
    /// The stored form.
    fn store(self) -> Self::Stored;
    /// The neutral form; fails when the stored value does not decode (a corrupt row).
    fn load(stored: Self::Stored) -> Result<Self, StoreError>;
}

/// Implements [`Column`] for types a backend stores as they are: `stored_as_is!(Backend;
/// Type, …)` for one backend, `stored_as_is!(@every B; Type, …)` for every backend.
#[macro_export]
macro_rules! stored_as_is {
    (@impl [$($generic:tt)*] $backend:ty;) => {};
    (@impl [$($generic:tt)*] $backend:ty; $ty:ty $(, $rest:ty)*) => {
        impl<$($generic)*> $crate::Column<$backend> for $ty {
            type Stored = Self;
            fn store(self) -> Self {
                self
            }
            fn load(stored: Self) -> Result<Self, $crate::StoreError> {
                Ok(stored)
            }
        }
        $crate::stored_as_is!(@impl [$($generic)*] $backend; $($rest),*);
    };
    (@every $b:ident; $($ty:ty),*) => {
        $crate::stored_as_is!(@impl [$b] $b; $($ty),*);
    };
    ($backend:ty; $($ty:ty),*) => {
        $crate::stored_as_is!(@impl [] $backend; $($ty),*);
    };
}

stored_as_is!(@every B; String, bool, i32, i64, Vec<u8>);

impl<B, T: Column<B>> Column<B> for Option<T> {
    type Stored = Option<T::Stored>;
    fn store(self) -> Self::Stored {
        self.map(T::store)
    }
    fn load(stored: Self::Stored) -> Result<Self, StoreError> {
        stored.map(T::load).transpose()
    }
}

/// The statement of a page of a chain's entries in `table` (`Ledgers::chain_entries`), the
/// backend spelling its `n`th parameter `param(n)`. The parameters: the organization; for a
/// page after a linked entry, its position then its id; for one after an unlinked entry, its
/// id; then the limit.
pub fn chain_page_sql(
    table: &str,
    from: recruit_ports::chain::ChainFrom,
    param: impl Fn(usize) -> String,
) -> String {
    use recruit_ports::chain::ChainFrom as ChainPage;
    let (condition, order, limit) = match from {
        ChainPage::Linked(None) => ("position IS NOT NULL".to_owned(), "position, id", 2),
        ChainPage::Linked(Some(_)) => {
            let (p, id) = (param(2), param(3));
            (format!("position >= {p} AND (position > {p} OR id > {id})"), "position, id", 4)
        }
        ChainPage::Unlinked(None) => ("position IS NULL".to_owned(), "id", 2),
        ChainPage::Unlinked(Some(_)) => {
            (format!("position IS NULL AND id > {}", param(2)), "id", 3)
        }
    };
    format!(
        "SELECT * FROM {table} WHERE organization_id = {} AND {condition} ORDER BY {order} \
         LIMIT {}",
        param(1),
        param(limit)
    )
}

/// A stored row of an adapter, made `From` its neutral form.
pub trait Row: Sized {
    /// The neutral row.
    type Neutral;
    /// The number of columns.
    const WIDTH: usize;
    /// The neutral row; fails when a column does not decode (a corrupt row).
    fn into_neutral(self) -> Result<Self::Neutral, StoreError>;
}

/// The value of the column `name` of `row`, looked for first at `*next`, where the column
/// after the last one read is, and then by name; `*next` moves past the column read.
///
/// Rows are read by name (a statement may list its columns in any order), but statements list
/// them in the row's order almost always: one comparison of names finds each column then,
/// where a search by name compares it with every column before it. On a ledger entry's 22
/// columns that search was 5 % of a verification's main thread.
pub fn placed<'a, DB, ST, T>(
    row: &impl diesel::row::NamedRow<'a, DB>,
    next: &mut usize,
    name: &str,
) -> diesel::deserialize::Result<T>
where
    DB: diesel::backend::Backend,
    T: diesel::deserialize::FromSql<ST, DB>,
{
    use diesel::row::{Field as _, Row, RowIndex};
    if let Some(field) = Row::get(row, *next)
        && field.field_name() == Some(name)
    {
        *next += 1;
        return T::from_nullable_sql(field.value());
    }
    let at = RowIndex::<&str>::idx(row, name)
        .ok_or_else(|| format!("Column `{name}` was not present in query"))?;
    *next = at + 1;
    let field = Row::get(row, at).ok_or(diesel::result::UnexpectedEndOfRow)?;
    T::from_nullable_sql(field.value())
}

/// Declares an adapter's row struct `$row` for diesel table `$table`, checked against the
/// diesel backend `$db`: its fields are the neutral row's, with the types
/// `<$ty as Column<$backend>>::Stored`. Implements `From<neutral row>` and [`Row`] for it. Meant
/// to be called from the adapter's expansion of `recruit_ports::stored_rows!`, so a stored field
/// is declared once for both stores.
#[macro_export]
macro_rules! stored_row {
    ($db:ident, $backend:ty; $(#[$doc:meta])* $row:ident in $table:ident { $($field:ident: $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(::diesel::Queryable, ::diesel::Selectable, ::diesel::Insertable)]
        #[diesel(table_name = $table, check_for_backend($db))]
        #[diesel(treat_none_as_default_value = false)]
        pub struct $row {
            $(pub(crate) $field: <$ty as $crate::Column<$backend>>::Stored,)*
        }

        impl ::diesel::deserialize::QueryableByName<$db> for $row {
            fn build<'__a>(
                row: &impl ::diesel::row::NamedRow<'__a, $db>,
            ) -> ::diesel::deserialize::Result<Self> {
                let mut next = 0;
                Ok(Self {
                    $($field: $crate::placed::<
                        $db,
                        ::diesel::dsl::SqlTypeOf<$table::$field>,
                        _,
                    >(row, &mut next, stringify!($field))?,)*
                })
            }
        }

        impl From<::recruit_ports::rows::$row> for $row {
            fn from(row: ::recruit_ports::rows::$row) -> Self {
                Self { $($field: <$ty as $crate::Column<$backend>>::store(row.$field),)* }
            }
        }

        impl $crate::Row for $row {
            type Neutral = ::recruit_ports::rows::$row;
            const WIDTH: usize = [$(stringify!($field)),*].len();
            fn into_neutral(self) -> Result<Self::Neutral, ::recruit_ports::StoreError> {
                Ok(::recruit_ports::rows::$row {
                    $($field: <$ty as $crate::Column<$backend>>::load(self.$field)?,)*
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_carries_as_many_rows_as_its_values_allow_and_at_least_one() {
        assert_eq!(rows_per_statement(60_000, 17), 3529);
        assert_eq!(rows_per_statement(10, 17), 1);
        assert_eq!(rows_per_statement(10, 0), 10);
    }

    #[test]
    fn the_shared_rules_translate_and_the_rest_is_handed_back() {
        assert!(matches!(common_error(DieselError::NotFound), Ok(StoreError::NotFound)));
        assert!(common_error(DieselError::RollbackTransaction).is_err());
    }
}

/// The receiving end of a bounded channel as a stream: how a store hands over what a task
/// of its own reads (an export), one chunk ahead of the reader at most.
#[derive(Debug)]
pub struct ChannelStream<T>(pub tokio::sync::mpsc::Receiver<T>);

impl<T> futures_core::Stream for ChannelStream<T> {
    type Item = T;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<T>> {
        self.0.poll_recv(cx)
    }
}

/// The query of the entries of `organization`'s chain in `ledger` after position `after`, in
/// the chain's order: what `Ledgers::chain_after` reads a chunk of.
pub fn chain_after_query(
    ledger: recruit_domain::chain::Ledger,
    organization: recruit_domain::OrganizationId,
    after: u64,
) -> recruit_ports::chain::ExportQuery {
    recruit_ports::chain::ExportQuery {
        ledger,
        organization: Some(organization),
        from: None,
        to: None,
        ids: None,
        recorded_before: None,
        after_position: Some(i64::try_from(after).unwrap_or(i64::MAX)),
        filter: recruit_ports::EntryFilter::default(),
    }
}

/// How many entries an export reads in one statement, and how many it holds ready for its
/// reader at most.
pub const EXPORT_CHUNK: usize = 1_000;

/// A stored ledger row, for reading and linking its entries whatever the ledger (its table and
/// time column are its neutral row's, `Chained::TABLE` and `Chained::TIME`), on backend `B`.
pub trait LedgerTable<B: diesel::backend::Backend>:
    diesel::QueryableByName<B> + Row<Neutral: recruit_ports::chain::Chained + Send> + Send + 'static
{
}

impl<B, R> LedgerTable<B> for R
where
    B: diesel::backend::Backend,
    R: diesel::QueryableByName<B>
        + Row<Neutral: recruit_ports::chain::Chained + Send>
        + Send
        + 'static,
{
}

/// The one column of a `SELECT count(*) AS count …`.
#[derive(Debug, diesel::QueryableByName)]
pub struct CountRow {
    /// The count.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub count: i64,
}

/// A pool's timeouts as UNAVAILABLE: no connection free in time, or a new one `opening` (the
/// backend's words for it) too slowly. Any other failure is handed back for the backend to
/// word.
pub fn pool_timeout<E>(
    e: deadpool::managed::PoolError<E>,
    opening: &str,
) -> Result<StoreError, deadpool::managed::PoolError<E>> {
    use deadpool::managed::{PoolError, TimeoutType};
    match e {
        PoolError::Timeout(TimeoutType::Wait) => {
            Ok(StoreError::Unavailable("no database connection was free in time".into()))
        }
        PoolError::Timeout(_) => Ok(StoreError::Unavailable(format!("{opening} took too long"))),
        other => Err(other),
    }
}

/// An export's failure, told where its reader waits: with the count, while that is not sent
/// yet (`None` comes back), or else handed back to be sent as the stream's last item.
pub fn export_failed(
    counted: &mut Option<tokio::sync::oneshot::Sender<Result<u64, StoreError>>>,
    e: StoreError,
) -> Option<StoreError> {
    match counted.take() {
        Some(counted) => {
            let _ = counted.send(Err(e));
            None
        }
        None => Some(e),
    }
}
