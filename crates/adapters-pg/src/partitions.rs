//! The ledgers' monthly partitions (migration 000011): created a month ahead, at every
//! migration and by [`Maintenance::prepare`](recruit_ports::Maintenance::prepare), and
//! dropped whole by retention.
//!
//! Creating or dropping a partition locks the ledger's table. Both give up after a short
//! `lock_timeout` rather than wait behind a long reader (an export holds its snapshot while
//! its client reads) with every request queued behind them: a month not created now is
//! created at the next daily try, weeks ahead of need, and retention runs again the next day.

use diesel::QueryableByName;
use diesel::sql_types;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use recruit_adapters_diesel::LEDGER_TABLES;
use recruit_domain::Timestamp;
use recruit_ports::StoreError;

use crate::error::TxError;

/// How far ahead monthly partitions exist.
const AHEAD: &str = "1 month";

/// Creates the monthly partitions of every ledger from this month through [`AHEAD`] that do
/// not exist yet; returns how many.
pub(crate) async fn prepare(c: &mut AsyncPgConnection) -> Result<i64, TxError> {
    #[derive(QueryableByName)]
    struct Created {
        #[diesel(sql_type = sql_types::Integer)]
        created: i32,
    }
    use diesel_async::AsyncConnection;
    c.transaction::<_, TxError, _>(async |c| {
        diesel::sql_query("SET LOCAL lock_timeout = '2s'").execute(c).await?;
        let mut created = 0;
        for (_, table) in LEDGER_TABLES {
            let sql = format!(
                "SELECT recruitd_ledger_partitions('{table}', now(), now() + interval '{AHEAD}') \
                 AS created"
            );
            let result: Created = diesel::sql_query(sql).get_result(c).await?;
            created += i64::from(result.created);
        }
        Ok(created)
    })
    .await
}

/// In the retention transaction: removes every entry of the ledgers recorded before `before`
/// (the first instant of a month), deleting what the default partition holds of it, then
/// dropping each monthly partition wholly before it; returns how many. Refused, with nothing
/// removed, if any such entry is covered by no stored retention cut: a dropped partition
/// fires no row trigger, so the rule the trigger keeps for deletions is checked first.
pub(crate) async fn remove_before(
    c: &mut AsyncPgConnection,
    before: Timestamp,
) -> Result<u64, TxError> {
    #[derive(QueryableByName)]
    struct Partition {
        #[diesel(sql_type = sql_types::Text)]
        name: String,
    }
    // Removing months of entries is a job of its own, not a request; a lock it cannot get
    // soon is tried again at the next run.
    diesel::sql_query("SET LOCAL statement_timeout = 0").execute(c).await?;
    diesel::sql_query("SET LOCAL lock_timeout = '10s'").execute(c).await?;
    let at = before.as_datetime();
    let mut removed = 0;
    // Every check and count first, before any partition is locked for dropping: a dropped
    // partition holds its ledger's lock until commit, and nothing slow may run meanwhile.
    for (ledger, table) in LEDGER_TABLES {
        let uncovered: recruit_adapters_diesel::CountRow = diesel::sql_query(format!(
            "SELECT count(*) AS count FROM {table} t WHERE recorded_at < $1 AND NOT EXISTS (\
             SELECT 1 FROM ledger_retention_cuts c WHERE c.organization_id = t.organization_id \
             AND c.ledger = '{ledger}' AND c.position >= t.position \
             AND c.recorded_before > t.recorded_at)"
        ))
        .bind::<sql_types::Timestamptz, _>(at)
        .get_result(c)
        .await?;
        if uncovered.count > 0 {
            return Err(TxError::from(StoreError::Conflict(format!(
                "{} entries of the {ledger} ledger recorded before {before} are covered by no \
                 retention cut; nothing was removed",
                uncovered.count
            ))));
        }
        let gone: recruit_adapters_diesel::CountRow = diesel::sql_query(format!(
            "SELECT count(*) AS count FROM {table} WHERE recorded_at < $1"
        ))
        .bind::<sql_types::Timestamptz, _>(at)
        .get_result(c)
        .await?;
        removed += u64::try_from(gone.count).unwrap_or_default();
        // What the default partition holds of those months, row by row (its trigger checks).
        diesel::sql_query(format!("DELETE FROM {table}_default WHERE recorded_at < $1"))
            .bind::<sql_types::Timestamptz, _>(at)
            .execute(c)
            .await?;
    }
    // The review's kept counts of the months whose entries go, counted again from the
    // entries that stay, in this transaction: they change together.
    diesel::sql_query("SELECT recruitd_recount_review($1)")
        .bind::<sql_types::Timestamptz, _>(at)
        .execute(c)
        .await?;
    diesel::sql_query("DELETE FROM privacy_audit_log_ids WHERE recorded_at < $1")
        .bind::<sql_types::Timestamptz, _>(at)
        .execute(c)
        .await?;
    for (_, table) in LEDGER_TABLES {
        let partitions: Vec<Partition> = diesel::sql_query(
            "SELECT c.relname::text AS name FROM pg_inherits i \
             JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent \
             WHERE p.relname = $1",
        )
        .bind::<sql_types::Text, _>(table)
        .load(c)
        .await?;
        for p in partitions {
            if month_end(table, &p.name).is_some_and(|end| end <= at) {
                diesel::sql_query(format!("DROP TABLE {}", p.name)).execute(c).await?;
            }
        }
        // A boundary inside a month (retention's are not): that month's part, row by row.
        diesel::sql_query(format!("DELETE FROM {table} WHERE recorded_at < $1"))
            .bind::<sql_types::Timestamptz, _>(at)
            .execute(c)
            .await?;
    }
    Ok(removed)
}

/// The end of the month a partition of `table` named `{table}_YYYY_MM` holds.
fn month_end(table: &str, name: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let rest = name.strip_prefix(table)?.strip_prefix('_')?;
    let (year, month) = rest.split_once('_')?;
    let first = chrono::NaiveDate::from_ymd_opt(year.parse().ok()?, month.parse().ok()?, 1)?;
    Some(first.checked_add_months(chrono::Months::new(1))?.and_hms_opt(0, 0, 0)?.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_name_says_its_month() {
        let end = month_end("api_audit_log", "api_audit_log_2026_12").unwrap();
        assert_eq!(end.to_rfc3339(), "2027-01-01T00:00:00+00:00");
        assert_eq!(month_end("api_audit_log", "api_audit_log_default"), None);
        assert_eq!(month_end("api_audit_log", "tool_audit_log_2026_12"), None);
        assert_eq!(month_end("api_audit_log", "api_audit_log_2026_13"), None);
    }
}
