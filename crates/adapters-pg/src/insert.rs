//! Multi-row inserts, as many rows to a statement as PostgreSQL takes.

use diesel_async::AsyncPgConnection;
use recruit_adapters_diesel::{Insert, StoreError};

/// From how many rows an insert goes as one JSON record set rather than bound values: one
/// short statement and one parameter, which PostgreSQL parses far faster than thousands of
/// bound values.
pub(crate) const RECORDSET_FROM: usize = 64;

/// Inserts `rows` with one statement whatever their number: `INSERT … SELECT … FROM
/// jsonb_to_recordset($1)`.
pub(crate) async fn insert_recordset<R: crate::rows::Copied>(
    c: &mut AsyncPgConnection,
    rows: &[R],
) -> diesel::QueryResult<usize> {
    insert_json(c, rows, "").await
}

/// Inserts those of `rows` whose key is not stored yet, with one statement: saving what is
/// saved is a no-op.
pub(crate) async fn insert_new<R: crate::rows::Copied>(
    c: &mut AsyncPgConnection,
    rows: &[R],
) -> diesel::QueryResult<usize> {
    insert_json(c, rows, " ON CONFLICT DO NOTHING").await
}

async fn insert_json<R: crate::rows::Copied>(
    c: &mut AsyncPgConnection,
    rows: &[R],
    conflict: &str,
) -> diesel::QueryResult<usize> {
    use diesel_async::RunQueryDsl;
    if rows.is_empty() {
        return Ok(0);
    }
    let json = serde_json::Value::Array(rows.iter().map(R::json_object).collect());
    let sql = format!(
        "INSERT INTO {table} ({columns}) SELECT {columns} FROM jsonb_to_recordset($1) AS x({set}){conflict}",
        table = R::TABLE,
        columns = R::COLUMNS,
        set = R::recordset(),
    );
    diesel::sql_query(sql).bind::<diesel::sql_types::Jsonb, _>(json).execute(c).await
}

/// A neutral row this store keeps as its row struct [`Stored::Row`] (declared with the row, in
/// `rows.rs`).
pub(crate) trait Stored: Sized + Send {
    /// The adapter's row.
    type Row: crate::rows::Copied + From<Self> + Send + Sync;
    /// Inserts `rows` with bound values, one statement.
    fn insert_values<'a>(
        c: &'a mut AsyncPgConnection,
        rows: &'a [Self::Row],
    ) -> impl Future<Output = diesel::QueryResult<usize>> + Send + 'a;
}

/// Inserts neutral rows: many at once as a JSON record set, a few as bound values.
pub(crate) async fn insert_rows<N: Stored>(
    c: &mut AsyncPgConnection,
    rows: impl IntoIterator<Item = N>,
) -> diesel::QueryResult<()> {
    let rows: Vec<N::Row> = rows.into_iter().map(N::Row::from).collect();
    if rows.len() >= RECORDSET_FROM {
        for part in rows.chunks(RECORDSET_ROWS) {
            insert_recordset(c, part).await?;
        }
    } else if !rows.is_empty() {
        N::insert_values(c, &rows).await?;
    }
    Ok(())
}

/// A connection in a transaction as the [`Insert`] of every stored row, for code written once
/// for both stores.
impl<N: Stored> Insert<N> for crate::chain::PgDb<'_> {
    fn insert(&mut self, rows: Vec<N>) -> impl Future<Output = Result<(), StoreError>> + Send {
        let inserted = insert_rows(self.0, rows);
        async { inserted.await.map_err(crate::error::store_error) }
    }

    fn insert_new(&mut self, rows: Vec<N>) -> impl Future<Output = Result<(), StoreError>> + Send {
        let rows: Vec<N::Row> = rows.into_iter().map(N::Row::from).collect();
        let c = &mut *self.0;
        async move { insert_new(c, &rows).await.map(drop).map_err(crate::error::store_error) }
    }
}

/// The most rows of one JSON record set: a statement's parameter stays a few megabytes.
pub(crate) const RECORDSET_ROWS: usize = 10_000;
