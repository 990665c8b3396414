//! Reading a ledger's entries for an export (`Ledgers::export`, `count_entries`,
//! `chain_after`), written once over a store's [`Db`]: the count, a chunk, and a whole export
//! sent to its reader a chunk at a time, in the caller's snapshot.

use diesel::QueryableByName;
use recruit_domain::chain::Ledger;
use recruit_domain::{OrganizationId, Timestamp, Uuid};
use recruit_ports::StoreError;
use recruit_ports::chain::{Chained, ExportQuery, ExportedEntry};
use recruit_ports::rows as neutral;
use tokio::sync::{mpsc, oneshot};

use crate::db::Db;
use crate::statement::{ExportRead, Statement, export};
use crate::{CountRow, EXPORT_CHUNK};

/// The table and time column of `ledger`.
fn table(ledger: Ledger) -> (&'static str, &'static str) {
    match ledger {
        Ledger::Privacy => (neutral::LedgerRow::TABLE, neutral::LedgerRow::TIME),
        Ledger::Api => (neutral::AuditRow::TABLE, neutral::AuditRow::TIME),
        Ledger::Tool => (neutral::ToolAuditRow::TABLE, neutral::ToolAuditRow::TIME),
    }
}

/// How many entries an export of `q` holds, counted up to `at_most` when given.
pub async fn count<D: Db>(
    c: &mut D,
    q: &ExportQuery,
    at_most: Option<u64>,
) -> Result<u64, StoreError>
where
    CountRow: QueryableByName<D::Backend>,
{
    let statement = export(D::DIALECT, table(q.ledger), q, ExportRead::Count { at_most });
    let counted: Vec<CountRow> = c.load(statement).await?;
    Ok(counted.first().map_or(0, |row| u64::try_from(row.count).unwrap_or_default()))
}

/// The next chunk of an export of `q`, which names one organization: up to `limit`
/// ([`EXPORT_CHUNK`] for an export) entries after `after` (time, id), in that order; or, when
/// `q` is after a position, the entries after it in the chain's order.
pub async fn chunk<D: Db>(
    c: &mut D,
    q: &ExportQuery,
    after: Option<(Timestamp, Uuid)>,
    limit: usize,
) -> Result<Vec<ExportedEntry>, StoreError> {
    fn entries<N: Chained>(rows: Vec<N>) -> Result<Vec<ExportedEntry>, StoreError> {
        rows.into_iter().map(ExportedEntry::of).collect()
    }
    let statement = || export(D::DIALECT, table(q.ledger), q, ExportRead::Chunk { after, limit });
    match q.ledger {
        Ledger::Privacy => entries(c.neutral::<neutral::LedgerRow>(statement()).await?),
        Ledger::Api => entries(c.neutral::<neutral::AuditRow>(statement()).await?),
        Ledger::Tool => entries(c.neutral::<neutral::ToolAuditRow>(statement()).await?),
    }
}

/// An organization's id, as its 16 bytes.
#[derive(Debug, QueryableByName)]
pub struct OrganizationRow {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    id: Vec<u8>,
}

/// Reads an export of `q` on `c`, in the caller's transaction (one snapshot): sends its count
/// through `counted`, then its entries through `sender`, one organization at a time and a chunk
/// at a time, until the reader stops taking them.
pub async fn read<D: Db>(
    c: &mut D,
    q: &ExportQuery,
    counted: &mut Option<oneshot::Sender<Result<u64, StoreError>>>,
    sender: &mpsc::Sender<Result<ExportedEntry, StoreError>>,
) -> Result<(), StoreError>
where
    CountRow: QueryableByName<D::Backend>,
    OrganizationRow: QueryableByName<D::Backend>,
{
    let total = count(c, q, None).await?;
    if counted.take().is_none_or(|t| t.send(Ok(total)).is_err()) {
        return Ok(());
    }
    // One organization at a time, each a range of the ledger's index.
    let orgs = match q.organization {
        Some(org) => vec![org],
        None => {
            let (before, after) = D::DIALECT.id_bytes;
            let sql = format!(
                "SELECT {before}id{after} AS id FROM organizations ORDER BY organizations.id"
            );
            let rows: Vec<OrganizationRow> = c.load(Statement { sql, values: vec![] }).await?;
            rows.iter()
                .map(|row| {
                    Uuid::from_slice(&row.id)
                        .map(OrganizationId::from_uuid)
                        .map_err(|_| neutral::corrupt("an organization's id is not 16 bytes"))
                })
                .collect::<Result<_, _>>()?
        }
    };
    match q.ledger {
        Ledger::Privacy => read_rows::<D, neutral::LedgerRow>(c, q, orgs, sender).await,
        Ledger::Api => read_rows::<D, neutral::AuditRow>(c, q, orgs, sender).await,
        Ledger::Tool => read_rows::<D, neutral::ToolAuditRow>(c, q, orgs, sender).await,
    }
}

/// Sends the entries of `q` of each of `orgs`, rows of `N`, a chunk at a time. Each chunk's
/// entries are made and handed over while the database finds the next one: the two take
/// about as long (an export of ten million entries waited on each in turn, and took 1.7×
/// the time of either).
async fn read_rows<D: Db, N: crate::db::StoredIn<D> + Chained + Send + 'static>(
    c: &mut D,
    q: &ExportQuery,
    orgs: Vec<OrganizationId>,
    sender: &mpsc::Sender<Result<ExportedEntry, StoreError>>,
) -> Result<(), StoreError> {
    let mut read: Vec<N> = vec![];
    for org in orgs {
        let mut q = ExportQuery { organization: Some(org), ..q.clone() };
        let mut after = None;
        loop {
            let next = export(
                D::DIALECT,
                table(q.ledger),
                &q,
                ExportRead::Chunk { after: after.take(), limit: EXPORT_CHUNK },
            );
            let (rows, taken) = tokio::join!(
                c.neutral_page::<N>(next, EXPORT_CHUNK),
                hand_over(std::mem::take(&mut read), sender)
            );
            if !taken? {
                return Ok(());
            }
            let rows = rows?;
            let full = rows.len() == EXPORT_CHUNK;
            // In the chain's order the next chunk begins after the last position read.
            match (&mut q.after_position, rows.last()) {
                (Some(position), Some(last)) => *position = last.link().0.unwrap_or(i64::MAX),
                _ => after = rows.last().map(Chained::time_and_id),
            }
            read = rows;
            if !full {
                break;
            }
        }
    }
    hand_over(read, sender).await.map(drop)
}

/// Makes the entries of `rows` and sends them in order; false when the reader has gone.
async fn hand_over<N: Chained>(
    rows: Vec<N>,
    sender: &mpsc::Sender<Result<ExportedEntry, StoreError>>,
) -> Result<bool, StoreError> {
    for row in rows {
        if sender.send(Ok(ExportedEntry::of(row)?)).await.is_err() {
            return Ok(false);
        }
    }
    Ok(true)
}
