//! A connection of this store as the code written once for both stores sees it ([`SqliteDb`]),
//! the shared statements bound as SQLite stores their values ([`bound`]), and [`at_once`].

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use recruit_ports::StoreError;

use diesel::sqlite::Sqlite;
use recruit_adapters_diesel::review::Dialect;

use crate::error::TxError;
use crate::rows::*;
use crate::schema::*;

/// `statement` with its values bound as SQLite stores them.
pub(crate) fn bound(
    statement: recruit_adapters_diesel::statement::Statement<'_>,
) -> diesel::query_builder::BoxedSqlQuery<'_, Sqlite, diesel::query_builder::SqlQuery> {
    use diesel::sql_types::{BigInt, Binary, Nullable, Text};
    use recruit_adapters_diesel::filter::Value;
    let mut query = diesel::sql_query(statement.sql).into_boxed();
    for value in statement.values {
        query = match value {
            Value::Uuid(id) => query.bind::<Binary, _>(blob(id)),
            Value::Text(text) => query.bind::<Text, _>(text),
            Value::Time(t) => query.bind::<BigInt, _>(t.unix_micros()),
            Value::Int(n) => query.bind::<BigInt, _>(n),
            // A JSON array of the ids' hex digits: see `Dialect::in_ids`.
            Value::Uuids(ids) => {
                let hex: Vec<String> = ids.iter().map(|id| id.simple().to_string()).collect();
                query.bind::<Text, _>(serde_json::to_string(&hex).unwrap_or_default())
            }
            Value::OptText(text) => query.bind::<Nullable<Text>, _>(text),
            Value::OptUuid(id) => query.bind::<Nullable<Binary>, _>(id.map(blob)),
            Value::Bool(b) => query.bind::<diesel::sql_types::Bool, _>(b),
            Value::Bytes(bytes) => query.bind::<Binary, _>(bytes),
            // SQLite's dialect writes spans as `OR`ed ranges; as one value, a JSON array of
            // the spans, `[from, to]` in microseconds.
            Value::Gaps(spans) => {
                let micros: Vec<_> =
                    spans.iter().map(|(a, b)| [a.unix_micros(), b.unix_micros()]).collect();
                query.bind::<Text, _>(serde_json::to_string(&micros).unwrap_or_default())
            }
        };
    }
    query
}

/// A connection of this store, to the statements both stores share.
pub struct SqliteDb<'c>(pub(crate) &'c mut SqliteConnection);

impl std::fmt::Debug for SqliteDb<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteDb")
    }
}

impl recruit_adapters_diesel::db::Db for SqliteDb<'_> {
    const DIALECT: Dialect = Dialect::SQLITE;

    fn load<R: diesel::QueryableByName<Sqlite> + Send + 'static>(
        &mut self,
        statement: recruit_adapters_diesel::statement::Statement<'_>,
    ) -> impl Future<Output = Result<Vec<R>, StoreError>> + Send {
        // Synchronous: the future is ready when made.
        std::future::ready(bound(statement).load(self.0).map_err(crate::error::store_error))
    }

    fn execute(
        &mut self,
        statement: recruit_adapters_diesel::statement::Statement<'_>,
    ) -> impl Future<Output = Result<usize, StoreError>> + Send {
        std::future::ready(bound(statement).execute(self.0).map_err(crate::error::store_error))
    }

    fn append_record(
        &mut self,
        mut page: recruit_ports::rows::RecordedPage<()>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        let c = &mut *self.0;
        let appended = (|| -> Result<(), TxError> {
            crate::chain::chain(c, &mut page)?;
            crate::insert::insert_rows(c, [page.api])?;
            crate::insert::insert_rows(c, page.tool)?;
            Ok(())
        })();
        std::future::ready(appended.map_err(StoreError::from))
    }

    fn append_entries(
        &mut self,
        mut rows: Vec<recruit_ports::rows::LedgerRow>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        let c = &mut *self.0;
        let appended = (|| -> Result<(), TxError> {
            crate::chain::chain(c, &mut rows)?;
            crate::insert::insert_rows(c, rows)?;
            Ok(())
        })();
        std::future::ready(appended.map_err(StoreError::from))
    }

    fn insert_resolved(
        &mut self,
        rows: Vec<recruit_ports::rows::ResolvedSettingsRow>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        let c = &mut *self.0;
        let inserted = (|| -> Result<(), diesel::result::Error> {
            crate::insert::insert_rows(c, rows)?;
            Ok(())
        })();
        std::future::ready(inserted.map_err(crate::error::store_error))
    }

    fn insert_decision(
        &mut self,
        row: recruit_ports::rows::DownloadDecisionRow,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        let row = DownloadDecisionRow::from(row);
        let inserted =
            diesel::insert_into(privacy_download_decisions::table).values(&row).execute(self.0);
        std::future::ready(inserted.map(drop).map_err(crate::error::store_error))
    }

    fn insert_sign_off(
        &mut self,
        row: recruit_ports::rows::SignOffRow,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        let row = SignOffRow::from(row);
        let inserted = diesel::insert_into(privacy_review_sign_offs::table)
            .values(&row)
            .on_conflict_do_nothing()
            .execute(self.0);
        std::future::ready(inserted.map(|n| n > 0).map_err(crate::error::store_error))
    }
}

/// The output of `future`, which the shared code's futures over [`SqliteDb`] are at once: run
/// on the connection's blocking thread, inside the runtime.
pub(crate) fn at_once<F: Future>(future: F) -> F::Output {
    tokio::runtime::Handle::current().block_on(future)
}
