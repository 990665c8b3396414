//! Multi-row inserts, as many rows to a statement as PostgreSQL takes.

/// From how many rows an insert goes as one JSON record set rather than bound values: one
/// short statement and one parameter, which PostgreSQL parses far faster than thousands of
/// bound values.
pub(crate) const RECORDSET_FROM: usize = 64;

/// Inserts `rows` with one statement whatever their number: `INSERT … SELECT … FROM
/// jsonb_to_recordset($1)`.
pub(crate) async fn insert_recordset<R: crate::rows::Copied>(
    c: &mut diesel_async::AsyncPgConnection,
    rows: &[R],
) -> diesel::QueryResult<usize> {
    insert_json(c, rows, "").await
}

/// Inserts those of `rows` whose key is not stored yet, with one statement: saving what is
/// saved is a no-op.
pub(crate) async fn insert_new<R: crate::rows::Copied>(
    c: &mut diesel_async::AsyncPgConnection,
    rows: &[R],
) -> diesel::QueryResult<usize> {
    insert_json(c, rows, " ON CONFLICT DO NOTHING").await
}

async fn insert_json<R: crate::rows::Copied>(
    c: &mut diesel_async::AsyncPgConnection,
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

/// Inserts neutral rows into `$table` as `$row`s: many at once as a JSON record set, a few
/// as bound values.
macro_rules! insert_rows {
    ($c:expr, $table:expr, $row:ty, $rows:expr) => {{
        let rows: Vec<$row> = $rows.into_iter().map(<$row>::from).collect();
        if rows.len() >= $crate::insert::RECORDSET_FROM {
            for part in rows.chunks($crate::insert::RECORDSET_ROWS) {
                $crate::insert::insert_recordset($c, part).await?;
            }
        } else if !rows.is_empty() {
            diesel::insert_into($table).values(&rows[..]).execute($c).await?;
        }
    }};
}

/// The most rows of one JSON record set: a statement's parameter stays a few megabytes.
pub(crate) const RECORDSET_ROWS: usize = 10_000;
