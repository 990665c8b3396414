//! Multi-row inserts, as many rows to a statement as SQLite takes. The macro names its helpers
//! by full path; the caller needs diesel's `RunQueryDsl` (the prelude) in scope.

/// The most values bound to one statement: SQLite takes at most 32 766.
pub(crate) const MAX_BOUND_VALUES: usize = 30_000;

/// Inserts neutral rows into `$table` as `$row`s, as many to a statement as SQLite takes.
macro_rules! insert_rows {
    ($c:expr, $table:expr, $row:ty, $rows:expr) => {{
        let rows: Vec<$row> = $rows.into_iter().map(<$row>::from).collect();
        for part in rows.chunks(recruit_adapters_diesel::rows_per_statement(
            $crate::insert::MAX_BOUND_VALUES,
            <$row as $crate::rows::Row>::WIDTH,
        )) {
            diesel::insert_into($table).values(part).execute($c)?;
        }
    }};
}
