//! A connection of either store as the shared code sees it ([`Db`]): its dialect, its row
//! types, and a way to load a [`Statement`]'s rows. Code written once against it (the month's
//! review, [`crate::review::facts`]) runs on PostgreSQL's async connections and, driven to
//! completion at once, on SQLite's synchronous ones.

use std::future::Future;

use diesel::QueryableByName;
use recruit_ports::StoreError;
use recruit_ports::rows as neutral;

use crate::Row;
use crate::review::Dialect;
use crate::statement::Statement;

/// A stored row of backend `B` whose neutral form is `N`, as a statement's rows load it.
pub trait Stored<B: diesel::backend::Backend, N>:
    QueryableByName<B> + Row<Neutral = N> + Send + 'static
{
}

impl<B: diesel::backend::Backend, N, R> Stored<B, N> for R where
    R: QueryableByName<B> + Row<Neutral = N> + Send + 'static
{
}

macro_rules! row_types {
    ($($(#[$doc:meta])* $row:ident in $table:ident { $($field:ident: $ty:ty),* $(,)? })*) => {
        /// A store's row type for each neutral row of `recruit_ports::rows`, under the same
        /// name: declared with the rows (`stored_rows!`), and implemented by each store's
        /// expansion of it, so that a new table needs no line here.
        pub trait Rows {
            /// The diesel backend.
            type Backend: diesel::backend::Backend;
            $(
                #[doc = concat!("The store's `", stringify!($row), "`.")]
                type $row: Stored<Self::Backend, neutral::$row>;
            )*
        }

        $(
            impl<D: Rows + ?Sized> StoredIn<D> for neutral::$row {
                type Row = D::$row;
            }
        )*
    };
}

/// A neutral row as the store `D` keeps it: what [`Db::neutral`] loads, named by the neutral
/// row alone.
pub trait StoredIn<D: Rows + ?Sized>: Sized {
    /// The store's row.
    type Row: Stored<D::Backend, Self>;
}

recruit_ports::stored_rows!(row_types);

/// A connection of a store, to the shared statements: its rows ([`Rows`]), its dialect, and a
/// way to run a [`Statement`].
pub trait Db: Rows + Send {
    /// How the store spells what it spells its own way.
    const DIALECT: Dialect;

    /// The rows of `statement`.
    fn load<R: QueryableByName<Self::Backend> + Send + 'static>(
        &mut self,
        statement: Statement<'_>,
    ) -> impl Future<Output = Result<Vec<R>, StoreError>> + Send;

    /// The rows of `statement`, each as its neutral row `N`.
    fn neutral<N: StoredIn<Self> + Send + 'static>(
        &mut self,
        statement: Statement<'_>,
    ) -> impl Future<Output = Result<Vec<N>, StoreError>> + Send
    where
        Self: Sized,
    {
        async move {
            let rows: Vec<N::Row> = self.load(statement).await?;
            rows.into_iter().map(Row::into_neutral).collect()
        }
    }

    /// [`Db::neutral`] of a page: at most `limit` rows, read into room made for that many at
    /// once rather than grown to it (a page of ten thousand ledger rows is megabytes, copied
    /// at every growth).
    fn neutral_page<N: StoredIn<Self> + Send + 'static>(
        &mut self,
        statement: Statement<'_>,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<N>, StoreError>> + Send
    where
        Self: Sized,
    {
        let _ = limit;
        self.neutral(statement)
    }

    /// Runs `statement`; how many rows it changed.
    fn execute(
        &mut self,
        statement: Statement<'_>,
    ) -> impl Future<Output = Result<usize, StoreError>> + Send;

    /// Links the audit rows of `page` (the record of a write) into their chains and appends
    /// them, in the caller's transaction.
    fn append_record(
        &mut self,
        page: neutral::RecordedPage<()>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Links privacy ledger rows into their chains and appends them, in the caller's
    /// transaction.
    fn append_entries(
        &mut self,
        rows: Vec<neutral::LedgerRow>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Inserts jobs' resolved scheduling settings.
    fn insert_resolved(
        &mut self,
        rows: Vec<neutral::ResolvedSettingsRow>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Appends a decision on a download.
    fn insert_decision(
        &mut self,
        row: neutral::DownloadDecisionRow,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Inserts a month's sign-off unless one is stored for the month: whether it did.
    fn insert_sign_off(
        &mut self,
        row: neutral::SignOffRow,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
