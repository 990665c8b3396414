//! The ledgers port: idempotency keys, recording privacy accesses, the chains' heads,
//! checkpoints and retention, the audit ledgers, the privacy ledger's pages (each read
//! recorded before it returns), and exports.

use diesel::prelude::*;
use recruit_adapters_diesel::native::NativeLedgers;
use recruit_adapters_diesel::review::Dialect;
use recruit_adapters_diesel::{GroupWrite, Recorder};
use recruit_domain::Timestamp;
use recruit_domain::chain::Ledger;
use recruit_ports::review::{ReviewFacts, ReviewQuery};
use recruit_ports::rows as neutral;
use recruit_ports::rows::ReadRecords;
use recruit_ports::{AccessesWrite, AccessesWritten, Claim, KeyClaim, PrivacyLogQuery, StoreError};

use crate::SqliteBackend;
use crate::chain::chain;
use crate::db::{SqliteDb, at_once};
use crate::error::TxError;
use crate::insert::insert_rows;
use crate::rows::*;

impl NativeLedgers for SqliteBackend {
    async fn record_privacy_accesses(
        &self,
        write: &AccessesWrite,
    ) -> Result<AccessesWritten, StoreError> {
        use crate::schema::idempotency_keys as keys;
        let mut rows = neutral::AccessRows::new(write)?;
        let done =
            IdempotencyRow::from(neutral::IdempotencyRow::completed(&write.claim, &write.response));
        let claim = write.claim.clone();
        // SQLite writes one transaction at a time: the key is decided on what is committed.
        self.transaction(move |c| -> Result<AccessesWritten, TxError> {
            let row = stored_key(c, &claim)?;
            let stored = row.map(|r| r.into_neutral()?.into_stored()).transpose()?.flatten();
            let found = claim.decide(stored.as_ref());
            if found != Claim::Granted {
                return Ok(AccessesWritten::refused(found));
            }
            diesel::replace_into(keys::table).values(&done).execute(c)?;
            let contents = chain(c, &mut rows)?;
            let chained = recruit_ports::chain::linked_entries(&rows.privacy_audit_logs, contents);
            insert_rows(c, rows.privacy_audit_logs)?;
            insert_rows(c, [rows.api])?;
            insert_rows(c, rows.tool)?;
            Ok(AccessesWritten { claim: Claim::Granted, chained })
        })
        .await
        .map_err(StoreError::from)
    }

    async fn retention_plan(
        &self,
        before: Timestamp,
    ) -> Result<Vec<recruit_ports::chain::PlannedCut>, StoreError> {
        use diesel::sql_types::BigInt;
        use recruit_adapters_diesel::{LEDGER_TABLES, Planned, retention_plan_sql};
        let planned: Vec<(Ledger, Vec<Planned>)> = self
            .run(move |c| {
                LEDGER_TABLES
                    .into_iter()
                    .map(|(ledger, table)| {
                        diesel::sql_query(retention_plan_sql(Dialect::SQLITE, table))
                            .bind::<BigInt, _>(before.unix_micros())
                            .load(c)
                            .map(|rows| (ledger, rows))
                    })
                    .collect()
            })
            .await?;
        recruit_adapters_diesel::planned_cuts(planned)
    }

    async fn remove_retained(&self, before: Timestamp) -> Result<u64, StoreError> {
        use diesel::sql_types::BigInt;
        let removed = self
            .transaction(move |c| -> Result<usize, TxError> {
                let mut removed = 0;
                for (_, table) in recruit_adapters_diesel::LEDGER_TABLES {
                    removed +=
                        diesel::sql_query(format!("DELETE FROM {table} WHERE recorded_at < ?"))
                            .bind::<BigInt, _>(before.unix_micros())
                            .execute(c)?;
                }
                Ok(removed)
            })
            .await
            .map_err(StoreError::from)?;
        Ok(u64::try_from(removed).unwrap_or(u64::MAX))
    }

    async fn review_facts(&self, query: &ReviewQuery) -> Result<ReviewFacts, StoreError> {
        let query = query.clone();
        self.run(move |c| {
            Ok(at_once(recruit_adapters_diesel::review::facts(&mut SqliteDb(c), &query)))
        })
        .await?
    }

    async fn privacy_page(
        &self,
        query: &PrivacyLogQuery,
    ) -> Result<Vec<neutral::LedgerRow>, StoreError> {
        let limit = usize::try_from(query.limit).unwrap_or(usize::MAX);
        let q = query.clone();
        let rows = self.run(move |c| page_query(&q, limit).load::<LedgerRow>(c)).await?;
        rows.into_iter().map(Row::into_neutral).collect()
    }

    async fn export(
        &self,
        query: &recruit_ports::chain::ExportQuery,
    ) -> Result<recruit_ports::chain::Export, StoreError> {
        let (counted, count) = tokio::sync::oneshot::channel();
        let (sender, entries) = tokio::sync::mpsc::channel(recruit_adapters_diesel::EXPORT_CHUNK);
        let (q, store) = (query.clone(), self.clone());
        // A task of its own reads the export from one snapshot (a read transaction), a chunk
        // at a time, as fast as the reader takes it; the reader dropping the stream ends it.
        tokio::spawn(async move {
            let _ = store
                .run(move |c| {
                    let mut counted = Some(counted);
                    let read = c.transaction(|c| -> Result<(), TxError> {
                        let db = &mut SqliteDb(c);
                        Ok(at_once(recruit_adapters_diesel::export::read(
                            db,
                            &q,
                            &mut counted,
                            &sender,
                        ))?)
                    });
                    if let Err(e) = read
                        && let Some(e) =
                            recruit_adapters_diesel::export_failed(&mut counted, e.into())
                    {
                        let _ = sender.blocking_send(Err(e));
                    }
                    Ok(())
                })
                .await;
        });
        let gone = || StoreError::Unavailable("the export stopped before it began".into());
        let count = count.await.map_err(|_| gone())??;
        Ok(recruit_ports::chain::Export {
            count,
            entries: Box::pin(recruit_adapters_diesel::ChannelStream(entries)),
        })
    }

    fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    fn group_writer(&self) -> impl Fn(ReadRecords) -> GroupWrite + Send + 'static {
        crate::chain::group_writer(&self.pool)
    }
}

/// The statement of a page of the privacy ledger: up to `limit` entries of `q` and one more,
/// which tells whether another page follows, newest first.
fn page_query(
    q: &PrivacyLogQuery,
    limit: usize,
) -> diesel::query_builder::BoxedSqlQuery<'_, diesel::sqlite::Sqlite, diesel::query_builder::SqlQuery>
{
    use recruit_adapters_diesel::filter::Value;
    use recruit_adapters_diesel::review::Dialect;
    let mut sql = String::from(
        "SELECT * FROM privacy_audit_logs WHERE organization_id = ? AND access_time >= ? \
         AND access_time < ?",
    );
    let mut values = vec![
        Value::Uuid(q.organization_id.uuid()),
        Value::Time(q.window.gte()),
        Value::Time(q.window.lt()),
    ];
    if let Some(ids) = &q.ids {
        sql += &format!(" AND id IN ({})", vec!["?"; ids.len()].join(", "));
        values.extend(ids.iter().map(|id| Value::Uuid(id.uuid())));
    }
    if let Some(after) = q.after {
        // `access_time <= t` bounds the index range; the rest breaks the tie.
        sql += " AND access_time <= ? AND (access_time < ? OR id < ?)";
        let time = Value::Time(after.access_time);
        values.extend([time.clone(), time, Value::Uuid(after.id.uuid())]);
    }
    let pieces = recruit_adapters_diesel::filter::entry_conditions(Dialect::SQLITE, &q.filter);
    let (conditions, filtered) = recruit_adapters_diesel::filter::render(&pieces, |_| "?".into());
    sql += &conditions;
    values.extend(filtered);
    sql += " ORDER BY access_time DESC, id DESC LIMIT ?";
    values.push(Value::Int(i64::try_from(limit).unwrap_or(i64::MAX - 1) + 1));
    crate::db::bound(recruit_adapters_diesel::statement::Statement { sql, values })
}

/// The stored row of `claim`'s key.
fn stored_key(
    c: &mut diesel::sqlite::SqliteConnection,
    claim: &KeyClaim,
) -> QueryResult<Option<IdempotencyRow>> {
    use crate::schema::idempotency_keys as keys;
    let held = keys::table.find((blob(claim.organization_id.uuid()), claim.key.as_str()));
    held.select(IdempotencyRow::as_select()).first(c).optional()
}
