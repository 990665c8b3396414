//! The ledgers port: the privacy ledger's page query (and its plan), recording each read in
//! the same transaction, appending entries, and listing the audit ledgers.

use diesel::prelude::*;
use diesel::sql_types;
use diesel_async::{AsyncConnection, RunQueryDsl};
use recruit_adapters_diesel::EXPORT_CHUNK;
use recruit_adapters_diesel::native::NativeLedgers;
use recruit_adapters_diesel::review::Dialect;
use recruit_adapters_diesel::{GroupWrite, Recorder};
use recruit_domain::Id;
use recruit_domain::Timestamp;
use recruit_ports::chain::{Export, ExportQuery};
use recruit_ports::review::{ReviewFacts, ReviewQuery};
use recruit_ports::rows as neutral;
use recruit_ports::rows::ReadRecords;
use recruit_ports::{AccessesWrite, AccessesWritten, Claim, PrivacyLogQuery, StoreError};

use crate::PgBackend;
use crate::chain::PgDb;
use crate::error::*;
use crate::rows::*;

/// The page query of the privacy ledger, returning `ST` ([`crate::prepared::RowType`] of
/// [`LedgerRow`] for the page, `Untyped` after a prefix such as `EXPLAIN `). One
/// index range scan on `privacy_audit_logs_page`: the organization, the window, and a row
/// comparison that continues after a position, newest first.
pub(crate) fn page_query<ST>(
    prefix: &str,
    q: &PrivacyLogQuery,
) -> crate::prepared::PreparedSql<ST> {
    // Every entry is recorded no earlier than FUTURE_TOLERANCE before its access, by the
    // server's clock; a day more leaves room for the database's clock to differ. The bound
    // leaves out the monthly partitions recorded before the window can begin.
    let margin = recruit_domain::PrivacyAuditLog::FUTURE_TOLERANCE.as_secs() + 24 * 3600;
    let (gte, lt) = (q.window.gte().as_datetime(), q.window.lt().as_datetime());
    let mut query = crate::prepared::PreparedSql::default()
        .sql(format!(
            "{prefix}SELECT {} FROM privacy_audit_logs WHERE organization_id = ",
            <LedgerRow as Copied>::COLUMNS
        ))
        .bind::<sql_types::Uuid, _>(q.organization_id.uuid())
        .sql(" AND access_time >= ")
        .bind::<sql_types::Timestamptz, _>(gte)
        .sql(" AND access_time < ")
        .bind::<sql_types::Timestamptz, _>(lt)
        .sql(" AND recorded_at >= ")
        .bind::<sql_types::Timestamptz, _>(gte)
        .sql(format!(" - make_interval(secs => {margin})"));
    if let Some(ids) = &q.ids {
        let ids: Vec<recruit_domain::Uuid> = ids.iter().map(Id::uuid).collect();
        query =
            query.sql(" AND id = ANY(").bind::<sql_types::Array<sql_types::Uuid>, _>(ids).sql(")");
    }
    for piece in recruit_adapters_diesel::filter::entry_conditions(
        recruit_adapters_diesel::review::Dialect::POSTGRES,
        &q.filter,
    ) {
        query = filter_piece(query, piece);
    }
    // An account's, a person's or an address's entries may be a handful or a third of the
    // window: a generic plan, which guesses a handful, reads every one of them and sorts them
    // for each page; one planned for a common address reads the whole window for a rare one.
    if q.filter.account.is_some() || q.filter.subject.is_some() || q.filter.ip_address.is_some() {
        query = query.planned_each_run();
    }
    if let Some(after) = q.after {
        query = query
            .sql(" AND (access_time, id) < (")
            .bind::<sql_types::Timestamptz, _>(after.access_time.as_datetime())
            .sql(", ")
            .bind::<sql_types::Uuid, _>(after.id.uuid())
            .sql(")");
    }
    // One more than the page tells whether another page follows.
    query
        .sql(" ORDER BY access_time DESC, id DESC LIMIT ")
        .bind::<sql_types::BigInt, _>(i64::from(q.limit) + 1)
}

/// Appends a piece of a filter's conditions, binding its value as PostgreSQL's type.
fn filter_piece<ST>(
    query: crate::prepared::PreparedSql<ST>,
    piece: recruit_adapters_diesel::filter::Piece<'_>,
) -> crate::prepared::PreparedSql<ST> {
    use recruit_adapters_diesel::filter::{Piece, Value};
    match piece {
        Piece::Sql(text) => query.sql(text),
        Piece::Value(Value::Uuid(id)) => query.bind::<sql_types::Uuid, _>(id),
        Piece::Value(Value::Text(text)) => query.bind::<sql_types::Text, _>(text.to_owned()),
        Piece::Value(Value::Time(t)) => query.bind::<sql_types::Timestamptz, _>(t.as_datetime()),
        Piece::Value(Value::Int(n)) => query.bind::<sql_types::BigInt, _>(n),
        Piece::Value(Value::Uuids(ids)) => query.bind::<sql_types::Array<sql_types::Uuid>, _>(ids),
        Piece::Value(Value::OptText(text)) => {
            query.bind::<sql_types::Nullable<sql_types::Text>, _>(text.map(str::to_owned))
        }
        Piece::Value(Value::OptUuid(id)) => {
            query.bind::<sql_types::Nullable<sql_types::Uuid>, _>(id)
        }
        Piece::Value(Value::Bool(b)) => query.bind::<sql_types::Bool, _>(b),
        Piece::Value(Value::Bytes(bytes)) => query.bind::<sql_types::Binary, _>(bytes.to_vec()),
        Piece::Value(Value::Gaps(spans)) => {
            query.bind::<sql_types::Text, _>(crate::chain::gaps(spans))
        }
    }
}

impl PgBackend {
    /// The plan PostgreSQL chooses for the page query of `query`: `EXPLAIN`, or with `analyze`
    /// `EXPLAIN (ANALYZE, BUFFERS)`, which runs it. For operators and benchmarks; it records
    /// nothing in the audit ledgers.
    pub async fn explain_privacy_page(
        &self,
        query: &PrivacyLogQuery,
        analyze: bool,
    ) -> Result<String, StoreError> {
        #[derive(QueryableByName)]
        struct Line {
            #[diesel(sql_type = sql_types::Text, column_name = "QUERY PLAN")]
            line: String,
        }
        let prefix = if analyze { "EXPLAIN (ANALYZE, BUFFERS) " } else { "EXPLAIN " };
        let mut conn = self.conn().await?;
        let lines: Vec<Line> = page_query::<sql_types::Untyped>(prefix, query)
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(lines.into_iter().map(|l| l.line).collect::<Vec<_>>().join("\n"))
    }
}

impl NativeLedgers for PgBackend {
    async fn privacy_page(
        &self,
        query: &PrivacyLogQuery,
    ) -> Result<Vec<neutral::LedgerRow>, StoreError> {
        let mut c = self.conn().await?;
        // Typed, so that rows are decoded column by position, not looked up by name.
        let rows: Vec<LedgerRow> = page_query::<crate::prepared::RowType<LedgerRow>>("", query)
            .load(&mut c)
            .await
            .map_err(store_error)?;
        rows.into_iter().map(Row::into_neutral).collect()
    }

    async fn export(&self, query: &ExportQuery) -> Result<Export, StoreError> {
        use recruit_adapters_diesel::ChannelStream;
        let mut conn = self.conn().await?;
        let (counted, count) = tokio::sync::oneshot::channel();
        let (sender, entries) = tokio::sync::mpsc::channel(EXPORT_CHUNK);
        let q = query.clone();
        // Retention's export of everything older than a boundary is a job, not a request.
        let limit = if q.recorded_before.is_some() { 0 } else { self.export_timeout_ms };
        // A task of its own reads the export from one snapshot, a chunk at a time, as fast as
        // the reader takes it; the reader dropping the stream ends the task and the
        // transaction, and gives the connection back.
        tokio::spawn(async move {
            let mut counted = Some(counted);
            let read = conn
                .build_transaction()
                .repeatable_read()
                .read_only()
                .run::<_, TxError, _>(async |c| {
                    // A reader that stops reading holds the snapshot no longer than this.
                    diesel::sql_query("SET LOCAL idle_in_transaction_session_timeout = '5min'")
                        .execute(c)
                        .await?;
                    // The count reads the whole window: bounded by the export's own limit
                    // (the request deadline), not by a request's statement.
                    diesel::sql_query(format!("SET LOCAL statement_timeout = {limit}"))
                        .execute(c)
                        .await?;
                    let db = &mut PgDb(c);
                    Ok(recruit_adapters_diesel::export::read(db, &q, &mut counted, &sender).await?)
                })
                .await;
            if let Err(e) = read
                && let Some(e) = recruit_adapters_diesel::export_failed(&mut counted, e.into())
            {
                let _ = sender.send(Err(e)).await;
            }
        });
        let gone = || StoreError::Unavailable("the export stopped before it began".into());
        let count = count.await.map_err(|_| gone())??;
        Ok(Export { count, entries: Box::pin(ChannelStream(entries)) })
    }

    fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    fn group_writer(&self) -> impl Fn(ReadRecords) -> GroupWrite + Send + 'static {
        crate::group::group_writer(&self.copy)
    }

    /// On a connection of the `COPY` pool, in one transaction: the key taken (a
    /// transaction-scoped advisory lock: another transaction writing it is in flight, and the
    /// lock goes with the transaction or its connection) and decided on what is committed,
    /// then written with the response, then the entries and the audit rows by binary `COPY`.
    async fn record_privacy_accesses(
        &self,
        write: &AccessesWrite,
    ) -> Result<AccessesWritten, StoreError> {
        let mut client = self.direct.get().await.map_err(writer_pool_error)?;
        let written = write_accesses(&mut client, write).await;
        if matches!(written, Err(StoreError::Unavailable(_))) {
            // A connection that broke, or that reaches a demoted primary, is not reused: the
            // pool would only notice a closed one after its connection task has.
            drop(deadpool::managed::Object::take(client));
        }
        written
    }

    async fn retention_plan(
        &self,
        before: Timestamp,
    ) -> Result<Vec<recruit_ports::chain::PlannedCut>, StoreError> {
        use recruit_adapters_diesel::{LEDGER_TABLES, Planned, retention_plan_sql};
        let mut c = self.conn().await?;
        let planned = c
            .transaction::<_, TxError, _>(async |c| {
                // Planning reads every entry older than the boundary: a job, not a request.
                diesel::sql_query("SET LOCAL statement_timeout = 0").execute(c).await?;
                let mut planned = vec![];
                for (ledger, table) in LEDGER_TABLES {
                    let rows: Vec<Planned> =
                        diesel::sql_query(retention_plan_sql(Dialect::POSTGRES, table))
                            .bind::<sql_types::Timestamptz, _>(before.as_datetime())
                            .load(c)
                            .await?;
                    planned.push((ledger, rows));
                }
                Ok(planned)
            })
            .await
            .map_err(StoreError::from)?;
        recruit_adapters_diesel::planned_cuts(planned)
    }

    async fn remove_retained(&self, before: Timestamp) -> Result<u64, StoreError> {
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| crate::partitions::remove_before(c, before).await)
            .await
            .map_err(StoreError::from)
    }

    async fn review_facts(&self, query: &ReviewQuery) -> Result<ReviewFacts, StoreError> {
        // The month's groups are held in memory rather than spilled to disk, by one process:
        // parallel workers made the groupings slower. No nested loop: the new addresses are an
        // anti-join of a month's pairs, which a nested loop planned on a table not yet
        // analysed (the counts an import just wrote) runs in quadratic time. Each statement
        // keeps the connection's statement timeout: a review cannot hold the database longer
        // than any other request.
        const SETTINGS: &str = "SET LOCAL work_mem = '64MB'; \
            SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL enable_nestloop = off";
        let mut c = self.conn().await?;
        // The counted half and the listed half are read at once, on two connections sharing
        // one snapshot, when the pool has a connection to spare; else one after the other.
        let spare = self.spare_conn().await;
        use recruit_adapters_diesel::review;
        c.build_transaction()
            .repeatable_read()
            .read_only()
            .run::<_, TxError, _>(async |c| {
                diesel_async::SimpleAsyncConnection::batch_execute(c, SETTINGS).await?;
                let snapshot = match spare {
                    Some(spare) => {
                        let id = diesel::select(diesel::dsl::sql::<sql_types::Text>(
                            "pg_export_snapshot()",
                        ))
                        .get_result::<String>(c);
                        Some((spare, id.await?))
                    }
                    None => None,
                };
                let lists = async move {
                    let Some((mut spare, id)) = snapshot else { return Ok(None) };
                    // An identifier PostgreSQL gave (hexadecimal digits and dashes), checked
                    // all the same before it is written into a statement.
                    if !id.chars().all(|ch| ch.is_ascii_hexdigit() || ch == '-') {
                        return Ok(None);
                    }
                    spare
                        .build_transaction()
                        .repeatable_read()
                        .read_only()
                        .run::<_, TxError, _>(async |s| {
                            let import = format!("SET TRANSACTION SNAPSHOT '{id}'; {SETTINGS}");
                            // Not the same server (a proxy may send each connection to
                            // another replica): the listed half is read on `c` instead.
                            if diesel_async::SimpleAsyncConnection::batch_execute(s, &import)
                                .await
                                .is_err()
                            {
                                return Ok(None);
                            }
                            Ok(Some(review::lists(&mut PgDb(s), query).await))
                        })
                        .await
                };
                let counts = async { Ok::<_, TxError>(review::counts(&mut PgDb(c), query).await) };
                let (counts, lists) = tokio::try_join!(counts, lists)?;
                let lists = match lists {
                    Some(lists) => lists,
                    None => review::lists(&mut PgDb(c), query).await,
                };
                Ok(counts.and_then(|counts| lists.map(|lists| review::merge(counts, lists))))
            })
            .await
            .map_err(StoreError::from)?
    }
}

/// The body of `Ledgers::record_privacy_accesses` on the `COPY` connection `client`.
async fn write_accesses(
    client: &mut tokio_postgres::Client,
    write: &AccessesWrite,
) -> Result<AccessesWritten, StoreError> {
    let mut rows = neutral::AccessRows::new(write)?;
    let done =
        IdempotencyRow::from(neutral::IdempotencyRow::completed(&write.claim, &write.response));
    let tx = client.transaction().await.map_err(write_error)?;
    let locked: bool = tx
        .query_one(
            "SELECT pg_try_advisory_xact_lock(hashtextextended($1::uuid::text || '/' || $2::text, 0))",
            &[&done.organization_id, &done.key],
        )
        .await
        .map_err(write_error)?
        .get(0);
    if !locked {
        return Ok(AccessesWritten::refused(write.claim.in_flight()));
    }
    let stored = tx
        .query_opt(
            "SELECT fingerprint, expires_at, status, response, created_at \
             FROM idempotency_keys WHERE organization_id = $1 AND key = $2",
            &[&done.organization_id, &done.key],
        )
        .await
        .map_err(write_error)?;
    let stored = match stored {
        None => None,
        Some(row) => IdempotencyRow {
            organization_id: done.organization_id,
            key: done.key.clone(),
            fingerprint: row.try_get(0).map_err(write_error)?,
            expires_at: row.try_get(1).map_err(write_error)?,
            status: row.try_get(2).map_err(write_error)?,
            response: row.try_get(3).map_err(write_error)?,
            created_at: row.try_get(4).map_err(write_error)?,
        }
        .into_neutral()?
        .into_stored()?,
    };
    let found = write.claim.decide(stored.as_ref());
    if found != Claim::Granted {
        return Ok(AccessesWritten::refused(found));
    }
    tokio_postgres::Transaction::execute(
        &tx,
        "INSERT INTO idempotency_keys \
         (organization_id, key, fingerprint, expires_at, status, response, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (organization_id, key) DO UPDATE \
         SET fingerprint = EXCLUDED.fingerprint, expires_at = EXCLUDED.expires_at, \
         status = EXCLUDED.status, response = EXCLUDED.response, \
         created_at = EXCLUDED.created_at",
        &[
            &done.organization_id,
            &done.key,
            &done.fingerprint,
            &done.expires_at,
            &done.status,
            &done.response,
            &done.created_at,
        ],
    )
    .await
    .map_err(write_error)?;
    let contents = crate::chain::chain_copy(&tx, &mut rows).await?;
    let chained = recruit_ports::chain::linked_entries(&rows.privacy_audit_logs, contents);
    let entries: Vec<LedgerRow> =
        rows.privacy_audit_logs.into_iter().map(LedgerRow::from).collect();
    let audit = [AuditRow::from(rows.api)];
    let tool: Vec<ToolAuditRow> = rows.tool.into_iter().map(ToolAuditRow::from).collect();
    crate::copy::copy_rows(&tx, &entries).await.map_err(write_error)?;
    crate::copy::copy_rows(&tx, &audit).await.map_err(write_error)?;
    crate::copy::copy_rows(&tx, &tool).await.map_err(write_error)?;
    tx.commit().await.map_err(write_error)?;
    Ok(AccessesWritten { claim: Claim::Granted, chained })
}

#[cfg(test)]
mod tests {
    use diesel::pg::Pg;
    use diesel::query_builder::QueryFragment;
    use recruit_domain::{OrganizationId, TimeWindow, Timestamp, Uuid};
    use recruit_ports::{EntryFilter, PrivacyLogQuery, SubjectFilter};

    fn kept(filter: EntryFilter) -> bool {
        let t = |s: i64| Timestamp::from_unix_micros(s * 1_000_000).unwrap();
        let query = PrivacyLogQuery {
            organization_id: OrganizationId::from_uuid(Uuid::from_u128(1)),
            window: TimeWindow::new(t(0), t(86_400)).unwrap(),
            ids: None,
            after: None,
            filter,
            limit: 100,
        };
        super::page_query::<diesel::sql_types::Untyped>("", &query)
            .is_safe_to_cache_prepared(&Pg)
            .unwrap()
    }

    /// The pages by account, data subject and address are planned for their value; the
    /// others are kept prepared, their generic plan the same whatever the values.
    #[test]
    fn pages_by_account_subject_or_address_are_planned_for_their_value() {
        let id = Uuid::from_u128(7);
        assert!(kept(EntryFilter::default()));
        assert!(kept(EntryFilter { category: Some("READ".into()), ..EntryFilter::default() }));
        assert!(!kept(EntryFilter { account: Some(id), ..EntryFilter::default() }));
        let subject = SubjectFilter { id, user: true, candidate: true };
        assert!(!kept(EntryFilter { subject: Some(subject), ..EntryFilter::default() }));
        assert!(!kept(EntryFilter {
            ip_address: Some("10.0.0.1".into()),
            ..EntryFilter::default()
        }));
    }
}
