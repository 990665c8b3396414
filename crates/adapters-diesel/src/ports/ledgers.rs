//! `Ledgers`: idempotency keys, the ledgers, their chains, checkpoints, retention and review.

use async_trait::async_trait;
use recruit_domain::chain::{Checkpoint, Ledger, RetentionCut};
use recruit_domain::{OrganizationId, Timestamp, Uuid};
use recruit_ports::chain::{ChainEntry, ChainPage, Export, ExportQuery, PlannedCut};
use recruit_ports::rows::LedgerHeadRow;
use recruit_ports::{
    AccessesWrite, AuditEntry, AuditListQuery, Claim, KeyClaim, LedgerPage, Ledgers,
    PrivacyLogQuery, ReadRecord, StoreError, ToolAuditEntry,
};

use super::dialect;
use crate::Row;
use crate::db::Db;
use crate::native::*;
use crate::statement::Statement;
use crate::store::{Backend, Diesel, pending};
use crate::{review, statement, streams};

/// The checkpoints `statement` selects.
async fn checkpoints<D: Db>(
    c: &mut D,
    statement: Statement<'_>,
) -> Result<Vec<Checkpoint>, StoreError> {
    let rows: Vec<D::Checkpoint> = c.load(statement).await?;
    rows.into_iter().map(|r| r.into_neutral()?.into_checkpoint()).collect()
}

/// The retention cuts `statement` selects.
async fn retention_cuts<D: Db>(
    c: &mut D,
    statement: Statement<'_>,
) -> Result<Vec<RetentionCut>, StoreError> {
    let rows: Vec<D::RetentionCut> = c.load(statement).await?;
    rows.into_iter().map(|r| r.into_neutral()?.into_cut()).collect()
}

#[async_trait]
impl<B: Backend + NativeLedgers> Ledgers for Diesel<B>
where
    streams::Probe: diesel::QueryableByName<B::Sql>,
    review::DownloadRow: diesel::QueryableByName<B::Sql>,
{
    async fn read_privacy_audit_logs(
        &self,
        query: &PrivacyLogQuery,
        record: &ReadRecord,
    ) -> Result<LedgerPage, StoreError> {
        self.0.read_privacy_audit_logs(query, record).await
    }

    async fn record_read(&self, record: &ReadRecord, entries: usize) -> Result<(), StoreError> {
        self.0.record_read(record, entries).await
    }

    async fn idempotency_key(&self, claim: &KeyClaim) -> Result<Claim, StoreError> {
        self.0.idempotency_key(claim).await
    }

    async fn record_privacy_accesses(&self, write: &AccessesWrite) -> Result<Claim, StoreError> {
        self.0.record_privacy_accesses(write).await
    }

    async fn purge_idempotency_keys(&self, now: Timestamp) -> Result<usize, StoreError> {
        self.0.purge_idempotency_keys(now).await
    }

    async fn api_audit_entries(
        &self,
        query: &AuditListQuery,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        self.0.api_audit_entries(query).await
    }

    async fn tool_audit_entries(
        &self,
        query: &AuditListQuery,
    ) -> Result<Vec<ToolAuditEntry>, StoreError> {
        self.0.tool_audit_entries(query).await
    }

    async fn chain_heads(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<LedgerHeadRow>, StoreError> {
        self.0.chain_heads(organization).await
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
    ) -> Result<Vec<recruit_ports::chain::ExportedEntry>, StoreError> {
        self.0.chain_after(ledger, organization, after, limit).await
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
        self.0.count_entries(query, at_most).await
    }

    async fn save_checkpoints(&self, checkpoints: &[Checkpoint]) -> Result<(), StoreError> {
        self.0.save_checkpoints(checkpoints).await
    }

    async fn checkpoints(
        &self,
        organization: Option<OrganizationId>,
        ledger: Option<Ledger>,
    ) -> Result<Vec<Checkpoint>, StoreError> {
        let statement =
            statement::checkpoints(dialect::<B>(), organization.map(|o| o.uuid()), ledger);
        self.0.connection(move |db| pending(async move { checkpoints(db, statement).await })).await
    }

    async fn retention_plan(&self, before: Timestamp) -> Result<Vec<PlannedCut>, StoreError> {
        self.0.retention_plan(before).await
    }

    async fn save_retention_cuts(&self, cuts: &[RetentionCut]) -> Result<(), StoreError> {
        self.0.save_retention_cuts(cuts).await
    }

    async fn retention_cuts(
        &self,
        organization: Option<OrganizationId>,
        ledger: Option<Ledger>,
    ) -> Result<Vec<RetentionCut>, StoreError> {
        let statement =
            statement::retention_cuts(dialect::<B>(), organization.map(|o| o.uuid()), ledger);
        self.0
            .connection(move |db| pending(async move { retention_cuts(db, statement).await }))
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
        let found =
            self.0.connection(move |db| pending(async move { checkpoints(db, statement).await }));
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
        self.0.account_volumes(organization, from, to).await
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

    async fn chain_entries(&self, page: ChainPage) -> Result<Vec<ChainEntry>, StoreError> {
        self.0.chain_entries(page).await
    }
}
