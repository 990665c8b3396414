//! Exports of a ledger (`Ledgers::export`): the statements of an export's count and chunks,
//! and the reading of a whole export in one read transaction, a chunk at a time.

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use recruit_domain::OrganizationId;
use recruit_ports::StoreError;

use diesel::sqlite::Sqlite;
use recruit_adapters_diesel::LedgerTable;
use recruit_adapters_diesel::review::Dialect;
use recruit_adapters_diesel::statement::ExportRead;
use recruit_domain::{Timestamp, Uuid};

use crate::error::TxError;
use crate::rows::*;
use crate::schema::*;

/// The statement of an export of `q` from `R`'s ledger that reads `read`, bound.
fn export_query<'a, R: LedgerTable<Sqlite>>(
    q: &'a recruit_ports::chain::ExportQuery,
    read: ExportRead,
) -> diesel::query_builder::BoxedSqlQuery<'a, Sqlite, diesel::query_builder::SqlQuery> {
    use recruit_ports::chain::Chained;
    let table = (<R::Neutral as Chained>::TABLE, <R::Neutral as Chained>::TIME);
    bound(recruit_adapters_diesel::statement::export(Dialect::SQLITE, table, q, read))
}

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
        };
    }
    query
}

/// How many entries of `R`'s ledger an export of `q` holds.
pub(crate) fn export_count<R: LedgerTable<Sqlite>>(
    c: &mut SqliteConnection,
    q: &recruit_ports::chain::ExportQuery,
    at_most: Option<u64>,
) -> Result<u64, TxError> {
    let recruit_adapters_diesel::CountRow { count } =
        export_query::<R>(q, ExportRead::Count { at_most }).get_result(c)?;
    Ok(u64::try_from(count).unwrap_or_default())
}

/// The next chunk of an export of `q`, which names one organization: up to `limit`
/// (`EXPORT_CHUNK` for an export) entries after `after` (time, id), in that order; or, when
/// `q` is after a position, the entries after it in the chain's order.
pub(crate) fn export_chunk<R: LedgerTable<Sqlite>>(
    c: &mut SqliteConnection,
    q: &recruit_ports::chain::ExportQuery,
    after: Option<(Timestamp, Uuid)>,
    limit: usize,
) -> Result<Vec<recruit_ports::chain::ExportedEntry>, TxError> {
    use recruit_ports::chain::ExportedEntry;
    let read = ExportRead::Chunk { after, limit };
    let rows: Vec<R> = export_query::<R>(q, read).load(c)?;
    Ok(rows
        .into_iter()
        .map(|r| ExportedEntry::of(r.into_neutral()?))
        .collect::<Result<_, StoreError>>()?)
}

/// Reads an export of `q` in the caller's transaction: sends its count through `counted`,
/// then its entries through `sender`, a chunk at a time, until the reader stops taking them.
pub(crate) fn export_ledger(
    c: &mut SqliteConnection,
    q: &recruit_ports::chain::ExportQuery,
    counted: &mut Option<tokio::sync::oneshot::Sender<Result<u64, StoreError>>>,
    sender: &tokio::sync::mpsc::Sender<Result<recruit_ports::chain::ExportedEntry, StoreError>>,
) -> Result<(), TxError> {
    use recruit_adapters_diesel::EXPORT_CHUNK;
    use recruit_domain::chain::Ledger;
    let count = match q.ledger {
        Ledger::Privacy => export_count::<LedgerRow>(c, q, None)?,
        Ledger::Api => export_count::<AuditRow>(c, q, None)?,
        Ledger::Tool => export_count::<ToolAuditRow>(c, q, None)?,
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
        let mut q = recruit_ports::chain::ExportQuery { organization: Some(org), ..q.clone() };
        let mut after = None;
        loop {
            let chunk = match q.ledger {
                Ledger::Privacy => export_chunk::<LedgerRow>(
                    c,
                    &q,
                    after.take(),
                    recruit_adapters_diesel::EXPORT_CHUNK,
                )?,
                Ledger::Api => export_chunk::<AuditRow>(
                    c,
                    &q,
                    after.take(),
                    recruit_adapters_diesel::EXPORT_CHUNK,
                )?,
                Ledger::Tool => export_chunk::<ToolAuditRow>(
                    c,
                    &q,
                    after.take(),
                    recruit_adapters_diesel::EXPORT_CHUNK,
                )?,
            };
            let full = chunk.len() == EXPORT_CHUNK;
            // In the chain's order the next chunk begins after the last position read.
            match (&mut q.after_position, chunk.last()) {
                (Some(position), Some(last)) => *position = last.entry.position.unwrap_or(i64::MAX),
                _ => after = chunk.last().map(|e| (e.time, e.entry.id)),
            }
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
