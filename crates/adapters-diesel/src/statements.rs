//! The SQL text and table paths both stores use: which tables hold the chained ledgers, the
//! retention plan's query, and the macros that insert an import document's or a batch's rows
//! table by table (each adapter resolves the table paths and row types to its own schema).

use recruit_domain::chain::Ledger;

use crate::review::Dialect;
use recruit_ports::chain::Chained;
use recruit_ports::rows::{AuditRow, LedgerRow, ToolAuditRow};

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

/// Inserts `recruit_ports::rows::AccessRows`: `insert_access_rows!($insert!($args…), rows)` calls
/// `$insert!($args…, table, RowType, rows)` for the privacy ledger's rows and the audit
/// ledgers'.
#[macro_export]
macro_rules! insert_access_rows {
    ($insert:ident!($($args:tt)*), $rows:expr) => {{
        let rows: ::recruit_ports::rows::AccessRows = $rows;
        $insert!($($args)*, privacy_audit_logs::table, LedgerRow, rows.privacy_audit_logs);
        $insert!($($args)*, api_audit_log::table, AuditRow, [rows.api]);
        $insert!($($args)*, tool_audit_log::table, ToolAuditRow, rows.tool);
    }};
}

/// Calls the macro `$insert!($args…, table, RowType, rows)` for each table of a
/// `recruit_ports::rows::DocumentRows`, in the order of insertion (a row's references before it): `table` is the
/// table's diesel path (`organizations::table`) and `RowType` the adapter's row struct, both
/// resolved where the macro is called.
///
/// ```text
/// recruit_adapters_diesel::insert_document_rows!(insert_rows!(c), rows);
/// ```
#[macro_export]
macro_rules! insert_document_rows {
    ($insert:ident!($($args:tt)*), $rows:expr) => {{
        let rows: ::recruit_ports::rows::DocumentRows = $rows;
        $insert!($($args)*, organizations::table, OrganizationRow, rows.organizations);
        $insert!(
            $($args)*,
            organization_scheduling_defaults::table,
            SchedulingDefaultsRow,
            rows.scheduling_defaults
        );
        $insert!($($args)*, organization_work_hours::table, WorkHoursRow, rows.work_hours);
        $insert!($($args)*, users::table, UserRow, rows.users);
        $insert!($($args)*, task_queues::table, TaskQueueRow, rows.task_queues);
        $insert!($($args)*, candidates::table, CandidateRow, rows.candidates);
        $insert!($($args)*, jobs::table, JobRow, rows.jobs);
        $insert!($($args)*, job_settings::table, JobSettingsRow, rows.job_settings);
        $insert!($($args)*, job_hiring_team::table, HiringTeamRow, rows.hiring_team);
        $insert!($($args)*, job_stages::table, JobStageRow, rows.job_stages);
        $insert!($($args)*, privacy_audit_logs::table, LedgerRow, rows.privacy_audit_logs);
    }};
}
