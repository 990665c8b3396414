//! Multi-row inserts, as many rows to a statement as SQLite takes.

use diesel::SqliteConnection;
use recruit_adapters_diesel::{Insert, Row, StoreError};

/// The most values bound to one statement: SQLite takes at most 32 766.
pub(crate) const MAX_BOUND_VALUES: usize = 30_000;

/// A neutral row this store keeps as its row struct [`Stored::Row`] (declared with the row, in
/// `rows.rs`).
pub(crate) trait Stored: Sized {
    /// The adapter's row.
    type Row: Row + From<Self>;
    /// Inserts `rows` with bound values, one statement.
    fn insert_values(c: &mut SqliteConnection, rows: &[Self::Row]) -> diesel::QueryResult<usize>;
    /// Inserts those of `rows` whose key is not stored yet, one statement.
    fn insert_new_values(
        c: &mut SqliteConnection,
        rows: &[Self::Row],
    ) -> diesel::QueryResult<usize>;
}

/// Inserts neutral rows, as many to a statement as SQLite takes.
pub(crate) fn insert_rows<N: Stored>(
    c: &mut SqliteConnection,
    rows: impl IntoIterator<Item = N>,
) -> diesel::QueryResult<()> {
    in_statements(c, rows, N::insert_values)
}

/// Inserts `rows` by `insert`, as many to a statement as SQLite takes.
fn in_statements<N: Stored>(
    c: &mut SqliteConnection,
    rows: impl IntoIterator<Item = N>,
    insert: fn(&mut SqliteConnection, &[N::Row]) -> diesel::QueryResult<usize>,
) -> diesel::QueryResult<()> {
    let rows: Vec<N::Row> = rows.into_iter().map(N::Row::from).collect();
    let per_statement =
        recruit_adapters_diesel::rows_per_statement(MAX_BOUND_VALUES, <N::Row as Row>::WIDTH);
    for part in rows.chunks(per_statement) {
        insert(c, part)?;
    }
    Ok(())
}

/// A connection in a transaction as the [`Insert`] of every stored row, for code written once
/// for both stores: each insert runs when asked, and its future is ready.
impl<N: Stored + Send> Insert<N> for crate::db::SqliteDb<'_> {
    fn insert(&mut self, rows: Vec<N>) -> impl Future<Output = Result<(), StoreError>> + Send {
        std::future::ready(insert_rows(self.0, rows).map_err(crate::error::store_error))
    }

    fn insert_new(&mut self, rows: Vec<N>) -> impl Future<Output = Result<(), StoreError>> + Send {
        let inserted = in_statements(self.0, rows, N::insert_new_values);
        std::future::ready(inserted.map_err(crate::error::store_error))
    }
}
