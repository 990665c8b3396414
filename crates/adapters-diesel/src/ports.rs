//! The ports on [`Diesel`]: each method written once over the backend's connection, or handed
//! to the backend's own (`crate::native`).

use async_trait::async_trait;
use recruit_domain::chain::{Checkpoint, Ledger, RetentionCut};
use recruit_domain::{ApiTokenId, JobId, OrganizationId, Timestamp, User, UserId, Uuid};
use recruit_ports::chain::{ChainEntry, ChainPage, Export, ExportQuery, PlannedCut};
use recruit_ports::rows::{self as neutral, LedgerHeadRow};
use recruit_ports::streams::{Failure, Lease, LogStreams, StreamRecord};
use recruit_ports::{
    AccessesWrite, ApiToken, AuditEntry, AuditListQuery, Claim, ConsoleSession, Directory, Import,
    ImportDocument, ImportError, ImportSummary, JobRecord, KeyClaim, LedgerEntry, LedgerPage,
    Ledgers, Maintenance, NewApiToken, OrganizationRecord, PrivacyLogQuery, ProfileUpdate,
    Provisioning, ReadRecord, ResumedBatch, SecretHash, SessionHolder, StoreError, TokenHolder,
    Tokens, ToolAuditEntry, UserLookup,
};

use crate::Row;
use crate::db::Db;
use crate::native::*;
use crate::review::Dialect;
use crate::sessions::{SessionChange, session_statement};
use crate::statement::Statement;
use crate::store::{Backend, Diesel, pending};
use crate::{profile, provisioning, review, sessions, statement, streams};

/// How `B` spells what each store spells its own way.
fn dialect<B: Backend>() -> Dialect {
    <B::Db<'static> as Db>::DIALECT
}

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
impl<B: Backend + NativeDirectory> Directory for Diesel<B>
where
    provisioning::Count: diesel::QueryableByName<B::Sql>,
{
    async fn organization(&self, id: OrganizationId) -> Result<OrganizationRecord, StoreError> {
        self.0.organization(id).await
    }

    async fn organizations(&self) -> Result<Vec<(OrganizationId, String)>, StoreError> {
        self.0.organizations().await
    }

    async fn user(&self, organization: OrganizationId, id: UserId) -> Result<User, StoreError> {
        self.0.user(organization, id).await
    }

    async fn users(
        &self,
        organization: OrganizationId,
        ids: &[UserId],
    ) -> Result<Vec<User>, StoreError> {
        self.0.users(organization, ids).await
    }

    async fn users_by_email(&self, email: &str) -> Result<Vec<User>, StoreError> {
        self.0.users_by_email(email).await
    }

    async fn read_user(&self, id: UserId, entry: &LedgerEntry) -> Result<User, StoreError> {
        let key = (entry.organization_id.uuid(), id.uuid());
        let logged = vec![neutral::LedgerRow::new(entry)?];
        self.0
            .transaction(move |db| {
                pending(async move {
                    profile::read(db, key, logged).await?.into_neutral()?.into_user()
                })
            })
            .await
    }

    async fn update_user(&self, update: &ProfileUpdate) -> Result<User, StoreError> {
        self.0.update_user(update).await
    }

    async fn find_user(&self, id: UserId) -> Result<User, StoreError> {
        self.0.find_user(id).await
    }

    async fn set_sso(
        &self,
        organization: OrganizationId,
        sso: Option<&recruit_ports::SsoSettings>,
        record: Option<&recruit_ports::ReadRecord>,
    ) -> Result<(), StoreError> {
        let (org, sso, record) = (organization.uuid(), sso.cloned(), record.cloned());
        self.0
            .transaction(move |db| {
                pending(async move {
                    provisioning::set_sso(db, org, sso.as_ref(), record.as_ref()).await
                })
            })
            .await
    }

    async fn provisioned_users(
        &self,
        organization: OrganizationId,
        lookup: &UserLookup,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<User>, u64), StoreError> {
        let (org, lookup) = (organization.uuid(), lookup.clone());
        self.0
            .transaction(move |db| {
                pending(async move {
                    let (rows, total) =
                        provisioning::users(db, org, &lookup, offset, limit).await?;
                    Ok((provisioning::into_users(rows)?, total))
                })
            })
            .await
    }

    async fn provision_user(&self, provisioning: &Provisioning) -> Result<User, StoreError> {
        let p = provisioning.clone();
        self.0
            .transaction(move |db| pending(async move { provisioning::provision(db, &p).await }))
            .await?;
        Ok(provisioning.user.clone())
    }

    async fn job(&self, organization: OrganizationId, id: JobId) -> Result<JobRecord, StoreError> {
        self.0.job(organization, id).await
    }
}

#[async_trait]
impl<B: Backend + NativeTokens> Tokens for Diesel<B> {
    async fn credential(&self, secret_hash: &SecretHash) -> Result<TokenHolder, StoreError> {
        self.0.credential(secret_hash).await
    }

    async fn create_token(&self, token: &NewApiToken) -> Result<ApiToken, StoreError> {
        self.0.create_token(token).await
    }

    async fn revoke_token(&self, id: ApiTokenId, at: Timestamp) -> Result<ApiToken, StoreError> {
        self.0.revoke_token(id, at).await
    }

    async fn touch_token(&self, id: ApiTokenId, at: Timestamp) -> Result<(), StoreError> {
        self.0.touch_token(id, at).await
    }

    async fn open_session(
        &self,
        session: &ConsoleSession,
        record: &recruit_ports::ReadRecord,
    ) -> Result<(), StoreError> {
        let (session, record) = (session.clone(), record.clone());
        self.0
            .transaction(move |db| {
                pending(async move { sessions::open_session(db, &session, &record).await })
            })
            .await
    }

    async fn console_session(&self, secret_hash: &SecretHash) -> Result<SessionHolder, StoreError> {
        self.0.console_session(secret_hash).await
    }

    async fn touch_session(&self, id: Uuid, at: Timestamp) -> Result<(), StoreError> {
        let statement = session_statement(dialect::<B>(), SessionChange::Touch, id, at);
        self.0
            .connection(move |db| pending(async move { db.execute(statement).await.map(drop) }))
            .await
    }

    async fn end_session(
        &self,
        id: Uuid,
        at: Timestamp,
        record: Option<&recruit_ports::ReadRecord>,
    ) -> Result<(), StoreError> {
        let record = record.cloned();
        self.0
            .transaction(move |db| {
                pending(async move { sessions::end_session(db, id, at, record.as_ref()).await })
            })
            .await
    }

    async fn tokens(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<ApiToken>, StoreError> {
        self.0.tokens(organization).await
    }
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

#[async_trait]
impl<B: Backend + NativeImport> Import for Diesel<B> {
    async fn import(&self, document: &ImportDocument) -> Result<ImportSummary, ImportError> {
        self.0.import(document).await
    }

    async fn resume_ledger(&self, batch: &ImportDocument) -> Result<ResumedBatch, ImportError> {
        self.0.resume_ledger(batch).await
    }
}

#[async_trait]
impl<B: Backend + NativeMaintenance> Maintenance for Diesel<B> {
    async fn ping(&self) -> Result<(), StoreError> {
        self.0.ping().await
    }

    async fn server_secret(&self, name: &str, proposed: &[u8]) -> Result<Vec<u8>, StoreError> {
        self.0.server_secret(name, proposed).await
    }

    async fn is_empty(&self) -> Result<bool, StoreError> {
        self.0.is_empty().await
    }

    async fn prepare(&self) -> Result<(), StoreError> {
        self.0.prepare().await
    }
}

#[async_trait]
impl<B: Backend> LogStreams for Diesel<B>
where
    streams::Claimable: diesel::QueryableByName<B::Sql>,
{
    async fn create_stream(
        &self,
        stream: &StreamRecord,
        record: &ReadRecord,
    ) -> Result<(), StoreError> {
        let (stream, record) = (stream.clone(), record.clone());
        self.0
            .transaction(move |db| {
                pending(async move { streams::create(db, &stream, &record).await })
            })
            .await
    }

    async fn streams(&self, organization: OrganizationId) -> Result<Vec<StreamRecord>, StoreError> {
        self.0
            .connection(move |db| {
                pending(async move { streams::load(db, organization, None).await })
            })
            .await
    }

    async fn stream(
        &self,
        organization: OrganizationId,
        id: Uuid,
    ) -> Result<StreamRecord, StoreError> {
        let found = self.0.connection(move |db| {
            pending(async move { streams::load(db, organization, Some(id)).await })
        });
        found.await?.into_iter().next().ok_or(StoreError::NotFound)
    }

    async fn update_stream(
        &self,
        stream: &StreamRecord,
        resume: bool,
        record: &ReadRecord,
    ) -> Result<(), StoreError> {
        let (stream, record) = (stream.clone(), record.clone());
        self.0
            .transaction(move |db| {
                pending(async move { streams::update(db, &stream, resume, &record).await })
            })
            .await
    }

    async fn delete_stream(
        &self,
        organization: OrganizationId,
        id: Uuid,
        record: &ReadRecord,
    ) -> Result<(), StoreError> {
        let record = record.clone();
        self.0
            .transaction(move |db| {
                pending(async move { streams::delete(db, organization, id, &record).await })
            })
            .await
    }

    async fn claim_streams(
        &self,
        holder: Uuid,
        now: Timestamp,
        until: Timestamp,
        limit: u32,
    ) -> Result<Vec<Lease>, StoreError> {
        self.0
            .connection(move |db| {
                pending(async move { streams::claim(db, holder, now, until, limit).await })
            })
            .await
    }

    async fn renew_lease(&self, lease: &Lease, until: Timestamp) -> Result<bool, StoreError> {
        let lease = *lease;
        self.0
            .connection(move |db| pending(async move { streams::renew(db, &lease, until).await }))
            .await
    }

    async fn advance_stream(
        &self,
        lease: &Lease,
        from: u64,
        to: u64,
        hash: [u8; 32],
        at: Timestamp,
    ) -> Result<bool, StoreError> {
        let lease = *lease;
        self.0
            .connection(move |db| {
                pending(async move { streams::advance(db, &lease, (from, to), &hash, at).await })
            })
            .await
    }

    async fn stream_failed(&self, lease: &Lease, failure: &Failure) -> Result<bool, StoreError> {
        let (lease, failure) = (*lease, failure.clone());
        self.0
            .connection(move |db| {
                pending(async move { streams::failed(db, &lease, &failure).await })
            })
            .await
    }

    async fn set_pending(
        &self,
        lease: &Lease,
        pending_batch: Option<&serde_json::Value>,
    ) -> Result<bool, StoreError> {
        let (lease, batch) = (*lease, pending_batch.cloned());
        self.0
            .connection(move |db| {
                pending(async move { streams::pending(db, &lease, batch.as_ref()).await })
            })
            .await
    }

    async fn release_lease(&self, lease: &Lease, now: Timestamp) -> Result<(), StoreError> {
        let lease = *lease;
        self.0
            .connection(move |db| pending(async move { streams::release(db, &lease, now).await }))
            .await
    }
}
