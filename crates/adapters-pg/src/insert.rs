//! Multi-row inserts, as many rows to a statement as PostgreSQL takes.

/// The most values bound to one statement: PostgreSQL takes at most 65 535.
pub(crate) const MAX_BOUND_VALUES: usize = 60_000;

/// The most rows of `columns` columns one INSERT carries.
pub(crate) fn chunk_for(columns: usize) -> usize {
    recruit_adapters_diesel::rows_per_statement(MAX_BOUND_VALUES, columns)
}

/// Inserts neutral rows into `$table` as `$row`s, as many to a statement as PostgreSQL takes.
macro_rules! insert_rows {
    ($c:expr, $table:expr, $row:ty, $rows:expr) => {{
        let rows: Vec<$row> = $rows.into_iter().map(<$row>::from).collect();
        for part in rows.chunks(chunk_for(<$row as Row>::WIDTH)) {
            diesel::insert_into($table).values(part).execute($c).await?;
        }
    }};
}
