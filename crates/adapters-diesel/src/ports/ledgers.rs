//! `Ledgers`: idempotency keys, the ledgers, their chains, checkpoints, retention and review.

use async_trait::async_trait;
use recruit_domain::chain::{Checkpoint, Ledger, RetentionCut};
use recruit_domain::{OrganizationId, Timestamp, Uuid};
use recruit_ports::chain::{
    ChainPage, CheckedEntry, Export, ExportQuery, ExportedEntry, PlannedCut,
};
use recruit_ports::rows::{self as neutral, LedgerHeadRow};
use recruit_ports::{
    AccessesWrite, AuditEntry, AuditListQuery, Claim, KeyClaim, LedgerPage, Ledgers,
    PrivacyLogQuery, ReadRecord, StoreError, ToolAuditEntry,
};

use super::{dialect, read};
use crate::Insert;
use crate::db::Db;
use crate::filter::Value;
use crate::native::*;
use crate::review::Dialect;
use crate::statement::Statement;
use crate::store::{Backend, Diesel, pending};
use crate::{export, review, statement, streams};

impl<B: Backend + NativeLedgers> Diesel<B> {
    /// Commits the audit rows of a read, with those of the reads made meanwhile, before it
    /// returns.
    async fn record(
        &self,
        api: neutral::AuditRow,
        tool: Option<neutral::ToolAuditRow>,
    ) -> Result<(), StoreError> {
        self.0.recorder().record(|| self.0.group_writer(), api, tool).await
    }
}

#[async_trait]
impl<B: Backend + NativeLedgers> Ledgers for Diesel<B>
where
    streams::Probe: diesel::QueryableByName<B::Sql>,
    review::DownloadRow: diesel::QueryableByName<B::Sql>,
    Volume: diesel::QueryableByName<B::Sql>,
    crate::CountRow: diesel::QueryableByName<B::Sql>,
{
    async fn read_privacy_audit_logs(
        &self,
        query: &PrivacyLogQuery,
        record: &ReadRecord,
    ) -> Result<LedgerPage, StoreError> {
        let limit = usize::try_from(query.limit).unwrap_or(usize::MAX);
        let page = record.page(self.0.privacy_page(query).await?, limit);
        // Committed, with the records of the reads made meanwhile, before the page returns.
        self.record(page.api, page.tool).await?;
        let entries = page.rows.into_iter().map(neutral::LedgerRow::into_entry);
        Ok(LedgerPage { entries: entries.collect::<Result<_, _>>()?, more: page.more })
    }

    async fn record_read(&self, record: &ReadRecord, entries: usize) -> Result<(), StoreError> {
        let page = record.page(vec![(); entries], entries);
        self.record(page.api, page.tool).await
    }

    async fn idempotency_key(&self, claim: &KeyClaim) -> Result<Claim, StoreError> {
        let p = dialect::<B>().param;
        let sql = format!(
            "SELECT * FROM idempotency_keys WHERE organization_id = {} AND key = {}",
            p(1),
            p(2)
        );
        let (org, key) = (claim.organization_id.uuid(), claim.key.clone());
        let stored = self.0.connection(move |db| {
            pending(async move {
                let values = vec![Value::Uuid(org), Value::Text(&key)];
                let keys =
                    read(db, Statement { sql, values }, neutral::IdempotencyRow::into_stored);
                Ok(keys.await?.into_iter().next().flatten())
            })
        });
        Ok(claim.decide(stored.await?.as_ref()))
    }

    async fn record_privacy_accesses(
        &self,
        write: &AccessesWrite,
    ) -> Result<recruit_ports::AccessesWritten, StoreError> {
        self.0.record_privacy_accesses(write).await
    }

    async fn purge_idempotency_keys(&self, now: Timestamp) -> Result<usize, StoreError> {
        let p = dialect::<B>().param;
        let sql = format!("DELETE FROM idempotency_keys WHERE expires_at <= {}", p(1));
        let values = vec![Value::Time(now)];
        self.0.connection(move |db| pending(db.execute(Statement { sql, values }))).await
    }

    async fn api_audit_entries(
        &self,
        query: &AuditListQuery,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let statement = audit_list("api_audit_log", dialect::<B>(), query);
        self.0
            .connection(move |db| pending(read(db, statement, neutral::AuditRow::into_entry)))
            .await
    }

    async fn tool_audit_entries(
        &self,
        query: &AuditListQuery,
    ) -> Result<Vec<ToolAuditEntry>, StoreError> {
        let statement = audit_list("tool_audit_log", dialect::<B>(), query);
        self.0
            .connection(move |db| pending(read(db, statement, neutral::ToolAuditRow::into_entry)))
            .await
    }

    async fn chain_heads(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<LedgerHeadRow>, StoreError> {
        let p = dialect::<B>().param;
        let (condition, values) = match organization {
            Some(org) => {
                (format!(" WHERE organization_id = {}", p(1)), vec![Value::Uuid(org.uuid())])
            }
            None => (String::new(), vec![]),
        };
        let sql = format!("SELECT * FROM ledger_heads{condition} ORDER BY organization_id, ledger");
        self.0
            .connection(move |db| pending(db.neutral::<LedgerHeadRow>(Statement { sql, values })))
            .await
    }

    async fn export(&self, query: &ExportQuery) -> Result<Export, StoreError> {
        self.0.export(query).await
    }

    async fn chain_after(
        &self,
        ledger: Ledger,
        organization: OrganizationId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<ExportedEntry>, StoreError> {
        let q = crate::chain_after_query(ledger, organization, after);
        self.0
            .connection(move |db| pending(async move { export::chunk(db, &q, None, limit).await }))
            .await
    }

    async fn chain_start_at(
        &self,
        ledger: Ledger,
        organization: OrganizationId,
        at: Timestamp,
    ) -> Result<Option<(u64, Vec<u8>)>, StoreError> {
        self.0
            .connection(move |db| {
                pending(async move { streams::start_at(db, ledger, organization, at).await })
            })
            .await
    }

    async fn count_entries(&self, query: &ExportQuery, at_most: u64) -> Result<u64, StoreError> {
        let q = query.clone();
        self.0
            .connection(move |db| {
                pending(async move { export::count(db, &q, Some(at_most)).await })
            })
            .await
    }

    async fn save_checkpoints(&self, checkpoints: &[Checkpoint]) -> Result<(), StoreError> {
        let rows = checkpoints.iter().map(neutral::CheckpointRow::new);
        let rows = rows.collect::<Result<Vec<_>, _>>()?;
        self.0.connection(move |db| pending(db.insert_new(rows))).await
    }

    async fn checkpoints(
        &self,
        organization: Option<OrganizationId>,
        ledger: Option<Ledger>,
    ) -> Result<Vec<Checkpoint>, StoreError> {
        let statement =
            statement::checkpoints(dialect::<B>(), organization.map(|o| o.uuid()), ledger);
        self.0
            .connection(move |db| {
                pending(read(db, statement, neutral::CheckpointRow::into_checkpoint))
            })
            .await
    }

    async fn retention_plan(&self, before: Timestamp) -> Result<Vec<PlannedCut>, StoreError> {
        self.0.retention_plan(before).await
    }

    async fn save_retention_cuts(&self, cuts: &[RetentionCut]) -> Result<(), StoreError> {
        let rows = cuts.iter().map(neutral::RetentionCutRow::new);
        let rows = rows.collect::<Result<Vec<_>, _>>()?;
        self.0.connection(move |db| pending(db.insert_new(rows))).await
    }

    async fn retention_cuts(
        &self,
        organization: Option<OrganizationId>,
        ledger: Option<Ledger>,
    ) -> Result<Vec<RetentionCut>, StoreError> {
        let statement =
            statement::retention_cuts(dialect::<B>(), organization.map(|o| o.uuid()), ledger);
        self.0
            .connection(move |db| pending(read(db, statement, neutral::RetentionCutRow::into_cut)))
            .await
    }

    async fn remove_retained(&self, before: Timestamp) -> Result<u64, StoreError> {
        self.0.remove_retained(before).await
    }

    async fn latest_checkpoint(
        &self,
        organization: OrganizationId,
        ledger: Ledger,
    ) -> Result<Option<Checkpoint>, StoreError> {
        let statement = statement::latest_checkpoint(dialect::<B>(), organization.uuid(), ledger);
        let found = self.0.connection(move |db| {
            pending(read(db, statement, neutral::CheckpointRow::into_checkpoint))
        });
        Ok(found.await?.into_iter().next())
    }

    async fn review_facts(
        &self,
        query: &recruit_ports::review::ReviewQuery,
    ) -> Result<recruit_ports::review::ReviewFacts, StoreError> {
        self.0.review_facts(query).await
    }

    async fn set_review_rules(
        &self,
        write: &recruit_ports::review::RulesWrite,
    ) -> Result<(), StoreError> {
        let write = write.clone();
        self.0
            .transaction(move |db| pending(async move { review::set_rules(db, &write).await }))
            .await
    }

    async fn account_volumes(
        &self,
        organization: OrganizationId,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Vec<(Uuid, u64)>, StoreError> {
        let statement = volumes(dialect::<B>(), organization, from, to);
        let rows = self.0.connection(move |db| pending(db.load::<Volume>(statement)));
        rows.await?
            .into_iter()
            .map(|v| {
                let account = Uuid::from_slice(&v.account_id)
                    .map_err(|_| neutral::corrupt("an account id is not 16 bytes"))?;
                Ok((account, u64::try_from(v.entries).unwrap_or(0)))
            })
            .collect()
    }

    async fn decide_download(
        &self,
        write: &recruit_ports::review::DecisionWrite,
    ) -> Result<recruit_ports::review::Decided, StoreError> {
        let write = write.clone();
        self.0.transaction(move |db| pending(async move { review::decide(db, &write).await })).await
    }

    async fn sign_off(
        &self,
        write: &recruit_ports::review::SignOffWrite,
    ) -> Result<recruit_ports::review::SignedOff, StoreError> {
        let write = write.clone();
        self.0
            .transaction(move |db| pending(async move { review::sign_off(db, &write).await }))
            .await
    }

    async fn chain_entries(&self, page: ChainPage) -> Result<Vec<CheckedEntry>, StoreError> {
        let statement = chain_page(dialect::<B>(), &page);
        let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
        let rows =
            self.0.connection(move |db| pending(chained_rows(db, page.ledger, statement, limit)));
        let rows = rows.await?;
        // Off the runtime's threads: the canonical JSON of a page and its hashes are most of a
        // verification's work, and the pages of chains verified side by side are checked in
        // parallel.
        tokio::task::spawn_blocking(move || rows.into_entries())
            .await
            .map_err(|e| StoreError::other(format!("a chain's page was not read: {e}")))?
    }
}

/// The statement of `Ledgers::api_audit_entries` and `tool_audit_entries` on `table`: the
/// newest entries first, of one organization or of all.
fn audit_list(table: &str, d: Dialect, query: &AuditListQuery) -> Statement<'static> {
    let p = d.param;
    let mut values = vec![];
    let mut sql = format!("SELECT * FROM {table}");
    if let Some(org) = query.organization_id {
        values.push(Value::Uuid(org.uuid()));
        sql += &format!(" WHERE organization_id = {}", p(values.len()));
    }
    values.push(Value::Int(i64::from(query.limit)));
    sql += &format!(" ORDER BY at DESC, id DESC LIMIT {}", p(values.len()));
    Statement { sql, values }
}

/// The statement of a page of a chain (`Ledgers::chain_entries`).
fn chain_page(d: Dialect, page: &ChainPage) -> Statement<'static> {
    use recruit_ports::chain::{ChainFrom, Chained};
    let table = match page.ledger {
        Ledger::Privacy => neutral::LedgerRow::TABLE,
        Ledger::Api => neutral::AuditRow::TABLE,
        Ledger::Tool => neutral::ToolAuditRow::TABLE,
    };
    let sql = crate::chain_page_sql(table, page.from, d.param);
    let mut values = vec![Value::Uuid(page.organization.uuid())];
    match page.from {
        ChainFrom::Linked(Some((position, id))) => {
            values.extend([Value::Int(position), Value::Uuid(id)]);
        }
        ChainFrom::Unlinked(Some(id)) => values.push(Value::Uuid(id)),
        _ => {}
    }
    values.push(Value::Int(i64::from(page.limit)));
    Statement { sql, values }
}

/// A page of a chain's rows, neutral.
enum ChainedRows {
    Privacy(Vec<neutral::LedgerRow>),
    Api(Vec<neutral::AuditRow>),
    Tool(Vec<neutral::ToolAuditRow>),
}

impl ChainedRows {
    /// The page's entries as a chain reads them.
    fn into_entries(self) -> Result<Vec<CheckedEntry>, StoreError> {
        match self {
            Self::Privacy(rows) => rows.into_iter().map(CheckedEntry::of).collect(),
            Self::Api(rows) => rows.into_iter().map(CheckedEntry::of).collect(),
            Self::Tool(rows) => rows.into_iter().map(CheckedEntry::of).collect(),
        }
    }
}

/// The rows of `ledger`'s chain `statement` selects.
async fn chained_rows<D: Db>(
    c: &mut D,
    ledger: Ledger,
    statement: Statement<'_>,
    limit: usize,
) -> Result<ChainedRows, StoreError> {
    Ok(match ledger {
        Ledger::Privacy => ChainedRows::Privacy(c.neutral_page(statement, limit).await?),
        Ledger::Api => ChainedRows::Api(c.neutral_page(statement, limit).await?),
        Ledger::Tool => ChainedRows::Tool(c.neutral_page(statement, limit).await?),
    })
}

/// How many entries an account recorded (`Ledgers::account_volumes`), its id as 16 bytes.
#[derive(Debug, diesel::QueryableByName)]
pub struct Volume {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    account_id: Vec<u8>,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    entries: i64,
}

/// The statement of `Ledgers::account_volumes`: from the review's kept counts (a row per
/// account and quarter hour) where the store keeps them, else from the entries.
fn volumes(d: Dialect, org: OrganizationId, from: Timestamp, to: Timestamp) -> Statement<'static> {
    let (p, (before, after)) = (d.param, d.id_bytes);
    let account = format!("{before}account_id{after} AS account_id");
    let range = |column: &str| {
        format!("WHERE organization_id = {} AND {column} >= {} AND {column} < {}", p(1), p(2), p(3))
    };
    let org = Value::Uuid(org.uuid());
    if d.kept {
        let slot = |t: Timestamp| Value::Int(t.unix_micros().div_euclid(review::KEPT_SLOT_MICROS));
        Statement {
            sql: format!(
                "SELECT {account}, CAST(sum(entries) AS BIGINT) AS entries \
                 FROM privacy_review_slots {} GROUP BY account_id",
                range("slot")
            ),
            values: vec![org, slot(from), slot(to)],
        }
    } else {
        Statement {
            sql: format!(
                "SELECT {account}, count(*) AS entries FROM privacy_audit_logs {} \
                 GROUP BY account_id",
                range("access_time")
            ),
            values: vec![org, Value::Time(from), Value::Time(to)],
        }
    }
}
