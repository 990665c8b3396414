//! The SQL text and table paths both stores use: which tables hold the chained ledgers, the
//! retention plan's query, and the insert of an import document's rows table by table over an
//! adapter's [`Insert`].

use recruit_domain::chain::Ledger;

use crate::review::Dialect;
use recruit_ports::StoreError;
use recruit_ports::chain::Chained;
use recruit_ports::rows::{self, AuditRow, DocumentRows, LedgerRow, ToolAuditRow};

/// The three ledgers with chains, and their tables.
pub const LEDGER_TABLES: [(Ledger, &str); 3] = [
    (Ledger::Privacy, <LedgerRow as Chained>::TABLE),
    (Ledger::Api, <AuditRow as Chained>::TABLE),
    (Ledger::Tool, <ToolAuditRow as Chained>::TABLE),
];

/// The query of a retention plan of `table`, in `d`'s dialect, with the boundary its one
/// parameter: per organization, the last position recorded before it, how many entries, and
/// its hash ([`Planned`] rows). Positions grow with the time of recording, so the entries
/// counted are the chain's prefix up to that position.
pub fn retention_plan_sql(d: Dialect, table: &str) -> String {
    let (before, after) = d.id_bytes;
    format!(
        "SELECT {before}p.organization_id{after} AS organization_id, p.position, p.entries, t.hash \
         FROM (SELECT organization_id, max(position) AS position, count(*) AS entries \
               FROM {table} WHERE recorded_at < {boundary} GROUP BY organization_id) p \
         JOIN {table} t ON t.organization_id = p.organization_id AND t.position = p.position \
         ORDER BY p.organization_id",
        boundary = (d.param)(1),
    )
}

/// A row of a retention plan's query ([`retention_plan_sql`]).
#[derive(Debug, diesel::QueryableByName)]
pub struct Planned {
    /// The organization's id, as its 16 bytes.
    #[diesel(sql_type = diesel::sql_types::Binary)]
    organization_id: Vec<u8>,
    /// The last position recorded before the boundary.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    position: i64,
    /// The entries up to it.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    entries: i64,
    /// Its hash.
    #[diesel(sql_type = diesel::sql_types::Binary)]
    hash: Vec<u8>,
}

/// The cuts of a retention plan from its query's rows, per ledger.
pub fn planned_cuts(
    planned: Vec<(Ledger, Vec<Planned>)>,
) -> Result<Vec<recruit_ports::chain::PlannedCut>, recruit_ports::StoreError> {
    let mut plan = vec![];
    for (ledger, rows) in planned {
        for Planned { organization_id, position, entries, hash } in rows {
            let org = recruit_domain::Uuid::from_slice(&organization_id).map_err(|e| {
                recruit_ports::StoreError::other(format!("an organization's id: {e}"))
            })?;
            plan.push(recruit_ports::chain::PlannedCut::from_stored(
                ledger, org, position, entries, &hash,
            )?);
        }
    }
    Ok(plan)
}

/// An adapter's insert of neutral rows of kind `N` into their table, as its row struct: how
/// code written once ([`insert_document_rows`]) inserts rows on either store. A SQLite store's
/// future is ready when made (its statements are synchronous).
pub trait Insert<N> {
    /// Inserts `rows`, as many to a statement as the store takes.
    fn insert(&mut self, rows: Vec<N>) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Inserts those of `rows` whose key is not stored yet: saving what is saved is a no-op.
    fn insert_new(&mut self, rows: Vec<N>) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Inserts the rows of an import document table by table, in the order of insertion (a row's
/// references before it).
pub async fn insert_document_rows<S>(s: &mut S, rows: DocumentRows) -> Result<(), StoreError>
where
    S: Insert<rows::OrganizationRow>
        + Insert<rows::SchedulingDefaultsRow>
        + Insert<rows::WorkHoursRow>
        + Insert<rows::UserRow>
        + Insert<rows::TaskQueueRow>
        + Insert<rows::CandidateRow>
        + Insert<rows::JobRow>
        + Insert<rows::JobSettingsRow>
        + Insert<rows::HiringTeamRow>
        + Insert<rows::JobStageRow>
        + Insert<LedgerRow>,
{
    s.insert(rows.organizations).await?;
    s.insert(rows.scheduling_defaults).await?;
    s.insert(rows.work_hours).await?;
    s.insert(rows.users).await?;
    s.insert(rows.task_queues).await?;
    s.insert(rows.candidates).await?;
    s.insert(rows.jobs).await?;
    s.insert(rows.job_settings).await?;
    s.insert(rows.hiring_team).await?;
    s.insert(rows.job_stages).await?;
    s.insert(rows.privacy_audit_logs).await
}
