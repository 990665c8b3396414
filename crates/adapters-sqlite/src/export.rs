//! Exports of a ledger (`Ledgers::export`): the statements of an export's count and chunks,
//! and the reading of a whole export in one read transaction, a chunk at a time.

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use recruit_domain::OrganizationId;
use recruit_ports::StoreError;

use crate::chain::LedgerTable;
use crate::error::TxError;
use crate::rows::*;
use crate::schema::*;

/// The statement of an export of `q` from `R`'s ledger: its count, or its next chunk (of the
/// one organization `q` names, after (time, id) when `after`, bounding a backward scan of the
/// ledger's (organization, time DESC, id DESC) index), with its parameters bound in order.
fn export_query<'a, R: LedgerTable>(
    q: &'a recruit_ports::chain::ExportQuery,
    select: &str,
    after: Option<(i64, Vec<u8>)>,
    at_most: Option<u64>,
) -> diesel::query_builder::BoxedSqlQuery<'a, diesel::sqlite::Sqlite, diesel::query_builder::SqlQuery>
{
    use diesel::sql_types::{BigInt, Binary};
    use recruit_ports::chain::Chained;
    let table = <R::Neutral as Chained>::TABLE;
    let time = <R::Neutral as Chained>::TIME;
    let mut conditions = String::from("1");
    if q.organization.is_some() {
        conditions += " AND organization_id = ?";
    }
    if q.from.is_some() {
        conditions += &format!(" AND {time} >= ?");
    }
    if q.to.is_some() {
        conditions += &format!(" AND {time} < ?");
    }
    if let Some(ids) = &q.ids {
        let marks = vec!["?"; ids.len()].join(", ");
        conditions += &format!(" AND id IN ({marks})");
    }
    if q.recorded_before.is_some() {
        conditions += " AND recorded_at < ?";
    }
    if q.after_position.is_some() {
        conditions += " AND position > ?";
    }
    let pieces = filter_pieces(&q.filter);
    let (filter, values) = recruit_adapters_diesel::filter::render(&pieces, |_| "?".into());
    conditions += &filter;
    let chunk = select == "*";
    if chunk && after.is_some() {
        conditions += &format!(" AND {time} >= ? AND ({time} > ? OR id > ?)");
    }
    let tail = match (chunk, q.after_position) {
        (false, _) => String::new(),
        (true, None) => format!(" ORDER BY {time}, id LIMIT ?"),
        (true, Some(_)) => " ORDER BY position LIMIT ?".to_owned(),
    };
    let mut sql = format!("SELECT {select} FROM {table} WHERE {conditions}{tail}");
    if at_most.is_some() {
        sql = format!("SELECT count(*) AS count FROM ({sql} LIMIT ?) AS matched");
    }
    let mut query = diesel::sql_query(sql).into_boxed();
    if let Some(org) = q.organization {
        query = query.bind::<Binary, _>(blob(org.uuid()));
    }
    if let Some(from) = q.from {
        query = query.bind::<BigInt, _>(from.unix_micros());
    }
    if let Some(to) = q.to {
        query = query.bind::<BigInt, _>(to.unix_micros());
    }
    for id in q.ids.iter().flatten() {
        query = query.bind::<Binary, _>(blob(*id));
    }
    if let Some(before) = q.recorded_before {
        query = query.bind::<BigInt, _>(before.unix_micros());
    }
    if let Some(position) = q.after_position {
        query = query.bind::<BigInt, _>(position);
    }
    query = bind_values(query, values);
    if chunk {
        if let Some((at, id)) = after {
            query = query.bind::<BigInt, _>(at).bind::<BigInt, _>(at).bind::<Binary, _>(id);
        }
        let limit = i64::try_from(recruit_adapters_diesel::EXPORT_CHUNK).unwrap_or(i64::MAX);
        query = query.bind::<BigInt, _>(limit);
    }
    if let Some(at_most) = at_most {
        query = query.bind::<BigInt, _>(i64::try_from(at_most).unwrap_or(i64::MAX));
    }
    query
}

/// The conditions of a filter of the privacy ledger, as SQLite spells them.
pub(crate) fn filter_pieces(
    filter: &recruit_ports::EntryFilter,
) -> Vec<recruit_adapters_diesel::filter::Piece<'_>> {
    use recruit_adapters_diesel::{filter, review::Dialect};
    filter::entry_conditions(Dialect::SQLITE, filter)
}

/// Binds the values of a filter's conditions, in order, as SQLite stores them.
pub(crate) fn bind_values<'a>(
    mut query: diesel::query_builder::BoxedSqlQuery<
        'a,
        diesel::sqlite::Sqlite,
        diesel::query_builder::SqlQuery,
    >,
    values: Vec<recruit_adapters_diesel::filter::Value<'a>>,
) -> diesel::query_builder::BoxedSqlQuery<'a, diesel::sqlite::Sqlite, diesel::query_builder::SqlQuery>
{
    use diesel::sql_types::{BigInt, Binary, Text};
    use recruit_adapters_diesel::filter::Value;
    for value in values {
        query = match value {
            Value::Uuid(id) => query.bind::<Binary, _>(blob(id)),
            Value::Text(text) => query.bind::<Text, _>(text),
            Value::Time(t) => query.bind::<BigInt, _>(t.unix_micros()),
        };
    }
    query
}

/// How many entries of `R`'s ledger an export of `q` holds.
pub(crate) fn export_count<R: LedgerTable>(
    c: &mut SqliteConnection,
    q: &recruit_ports::chain::ExportQuery,
    at_most: Option<u64>,
) -> Result<u64, TxError> {
    let select = if at_most.is_some() { "1" } else { "count(*) AS count" };
    let recruit_adapters_diesel::CountRow { count } =
        export_query::<R>(q, select, None, at_most).get_result(c)?;
    Ok(u64::try_from(count).unwrap_or_default())
}

/// The next chunk of an export of `q`, which names one organization: up to `EXPORT_CHUNK`
/// entries after `after` (time, id), in that order.
fn export_chunk<R: LedgerTable>(
    c: &mut SqliteConnection,
    q: &recruit_ports::chain::ExportQuery,
    after: Option<(i64, Vec<u8>)>,
) -> Result<Vec<recruit_ports::chain::ExportedEntry>, TxError> {
    use recruit_ports::chain::ExportedEntry;
    let rows: Vec<R> = export_query::<R>(q, "*", after, None).load(c)?;
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
                Ledger::Privacy => export_chunk::<LedgerRow>(c, &q, after.take())?,
                Ledger::Api => export_chunk::<AuditRow>(c, &q, after.take())?,
                Ledger::Tool => export_chunk::<ToolAuditRow>(c, &q, after.take())?,
            };
            let full = chunk.len() == EXPORT_CHUNK;
            // In the chain's order the next chunk begins after the last position read.
            match (&mut q.after_position, chunk.last()) {
                (Some(position), Some(last)) => *position = last.entry.position.unwrap_or(i64::MAX),
                _ => after = chunk.last().map(|e| (e.time.unix_micros(), blob(e.entry.id))),
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
