//! A store that fails on demand, for testing what callers do when storage fails: it delegates
//! every call to a real store unless a [`Fault`] is set.

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use recruit_domain::{ApiTokenId, JobId, OrganizationId, Timestamp, User, UserId, Uuid};

use crate::{
    AccessesWrite, ApiToken, AuditEntry, AuditListQuery, Claim, Directory, Import, ImportDocument,
    ImportError, ImportSummary, JobRecord, KeyClaim, LedgerEntry, LedgerPage, Ledgers, Maintenance,
    NewApiToken, OrganizationRecord, PrivacyLogQuery, ProfileUpdate, ReadRecord, ResumedBatch,
    SecretHash, StoreError, TokenHolder, Tokens, ToolAuditEntry,
};

/// What every call does while set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Delegate: the store works.
    None,
    /// Fail with `StoreError::Unavailable`, as with the database down.
    Unavailable,
    /// Fail with `StoreError::Timeout`, as with a statement past its deadline.
    Timeout,
    /// Wait this long, then delegate: a slow database.
    Slow(Duration),
    /// Panic, as a bug would.
    Panic,
}

/// A store wrapping `S` that fails while a fault is set.
#[derive(Debug)]
pub struct Faulty<S> {
    inner: S,
    fault: Mutex<Fault>,
    /// Whether `Tokens` calls are spared the fault.
    spare_tokens: std::sync::atomic::AtomicBool,
    /// Whether the next write of accesses fails, the store going down with it.
    die_on_record: std::sync::atomic::AtomicBool,
    /// How many entries `chain_after` has returned.
    read_after: std::sync::atomic::AtomicU64,
}

impl<S> Faulty<S> {
    /// Wraps a store, working.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            fault: Mutex::new(Fault::None),
            spare_tokens: std::sync::atomic::AtomicBool::new(false),
            die_on_record: std::sync::atomic::AtomicBool::new(false),
            read_after: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// How many entries [`Ledgers::chain_after`] has returned so far: what readers of the chain
    /// read back from the store.
    pub fn entries_read_after(&self) -> u64 {
        self.read_after.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Makes the next write of accesses fail as if the database died in its middle: the write
    /// fails, and so does every call after it, until the test sets another fault.
    pub fn die_on_record(&self) {
        self.die_on_record.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Sets what every following call does.
    pub fn set(&self, fault: Fault) {
        self.spare_tokens.store(false, std::sync::atomic::Ordering::SeqCst);
        *self.fault.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = fault;
    }

    /// Sets what every following call does, except those of [`Tokens`]: authentication works,
    /// and what the authenticated request does next meets the fault.
    pub fn set_after_authentication(&self, fault: Fault) {
        self.set(fault);
        self.spare_tokens.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    async fn check_tokens(&self) -> Result<(), StoreError> {
        if self.spare_tokens.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(());
        }
        self.check().await
    }

    async fn check(&self) -> Result<(), StoreError> {
        let fault = *self.fault.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match fault {
            Fault::None => Ok(()),
            Fault::Unavailable => {
                Err(StoreError::Unavailable("the test set the store unavailable".into()))
            }
            Fault::Timeout => Err(StoreError::Timeout),
            Fault::Slow(d) => {
                tokio::time::sleep(d).await;
                Ok(())
            }
            Fault::Panic => panic!("the test set the store to panic"),
        }
    }
}

#[async_trait]
impl<S: Directory> Directory for Faulty<S> {
    async fn organization(&self, id: OrganizationId) -> Result<OrganizationRecord, StoreError> {
        self.check().await?;
        self.inner.organization(id).await
    }
    async fn organizations(&self) -> Result<Vec<(OrganizationId, String)>, StoreError> {
        self.check().await?;
        self.inner.organizations().await
    }
    async fn user(&self, o: OrganizationId, id: UserId) -> Result<User, StoreError> {
        self.check().await?;
        self.inner.user(o, id).await
    }
    async fn users(&self, o: OrganizationId, ids: &[UserId]) -> Result<Vec<User>, StoreError> {
        self.check().await?;
        self.inner.users(o, ids).await
    }
    async fn users_by_email(&self, email: &str) -> Result<Vec<User>, StoreError> {
        self.check().await?;
        self.inner.users_by_email(email).await
    }
    async fn read_user(&self, id: UserId, entry: &LedgerEntry) -> Result<User, StoreError> {
        self.check().await?;
        self.inner.read_user(id, entry).await
    }
    async fn update_user(&self, update: &ProfileUpdate) -> Result<User, StoreError> {
        self.check().await?;
        self.inner.update_user(update).await
    }
    async fn find_user(&self, id: UserId) -> Result<User, StoreError> {
        self.check().await?;
        self.inner.find_user(id).await
    }
    async fn set_sso(
        &self,
        o: OrganizationId,
        sso: Option<&crate::SsoSettings>,
        record: Option<&crate::ReadRecord>,
    ) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.set_sso(o, sso, record).await
    }
    async fn provisioned_users(
        &self,
        o: OrganizationId,
        lookup: &crate::UserLookup,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<User>, u64), StoreError> {
        self.check().await?;
        self.inner.provisioned_users(o, lookup, offset, limit).await
    }
    async fn provision_user(&self, p: &crate::Provisioning) -> Result<User, StoreError> {
        self.check().await?;
        self.inner.provision_user(p).await
    }
    async fn job(&self, o: OrganizationId, id: JobId) -> Result<JobRecord, StoreError> {
        self.check().await?;
        self.inner.job(o, id).await
    }
}

#[async_trait]
impl<S: Tokens> Tokens for Faulty<S> {
    async fn credential(&self, hash: &SecretHash) -> Result<TokenHolder, StoreError> {
        self.check_tokens().await?;
        self.inner.credential(hash).await
    }
    async fn create_token(&self, token: &NewApiToken) -> Result<ApiToken, StoreError> {
        self.check_tokens().await?;
        self.inner.create_token(token).await
    }
    async fn revoke_token(&self, id: ApiTokenId, at: Timestamp) -> Result<ApiToken, StoreError> {
        self.check_tokens().await?;
        self.inner.revoke_token(id, at).await
    }
    async fn touch_token(&self, id: ApiTokenId, at: Timestamp) -> Result<(), StoreError> {
        self.check_tokens().await?;
        self.inner.touch_token(id, at).await
    }
    async fn tokens(&self, o: Option<OrganizationId>) -> Result<Vec<ApiToken>, StoreError> {
        self.check_tokens().await?;
        self.inner.tokens(o).await
    }
    async fn open_session(
        &self,
        session: &crate::ConsoleSession,
        record: &crate::ReadRecord,
    ) -> Result<(), StoreError> {
        self.check_tokens().await?;
        self.inner.open_session(session, record).await
    }
    async fn console_session(&self, hash: &SecretHash) -> Result<crate::SessionHolder, StoreError> {
        self.check_tokens().await?;
        self.inner.console_session(hash).await
    }
    async fn touch_session(
        &self,
        id: recruit_domain::Uuid,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        self.check_tokens().await?;
        self.inner.touch_session(id, at).await
    }
    async fn end_session(
        &self,
        id: recruit_domain::Uuid,
        at: Timestamp,
        record: Option<&crate::ReadRecord>,
    ) -> Result<(), StoreError> {
        self.check_tokens().await?;
        self.inner.end_session(id, at, record).await
    }
}

#[async_trait]
impl<S: Ledgers> Ledgers for Faulty<S> {
    async fn read_privacy_audit_logs(
        &self,
        q: &PrivacyLogQuery,
        r: &ReadRecord,
    ) -> Result<LedgerPage, StoreError> {
        self.check().await?;
        self.inner.read_privacy_audit_logs(q, r).await
    }
    async fn api_audit_entries(&self, q: &AuditListQuery) -> Result<Vec<AuditEntry>, StoreError> {
        self.check().await?;
        self.inner.api_audit_entries(q).await
    }
    async fn tool_audit_entries(
        &self,
        q: &AuditListQuery,
    ) -> Result<Vec<ToolAuditEntry>, StoreError> {
        self.check().await?;
        self.inner.tool_audit_entries(q).await
    }
    async fn idempotency_key(&self, claim: &KeyClaim) -> Result<Claim, StoreError> {
        self.check().await?;
        self.inner.idempotency_key(claim).await
    }
    async fn record_privacy_accesses(
        &self,
        write: &AccessesWrite,
    ) -> Result<crate::AccessesWritten, StoreError> {
        if self.die_on_record.swap(false, std::sync::atomic::Ordering::SeqCst) {
            self.set(Fault::Unavailable);
        }
        self.check().await?;
        self.inner.record_privacy_accesses(write).await
    }
    async fn export(
        &self,
        query: &crate::chain::ExportQuery,
    ) -> Result<crate::chain::Export, StoreError> {
        self.check().await?;
        self.inner.export(query).await
    }
    async fn chain_after(
        &self,
        ledger: recruit_domain::chain::Ledger,
        organization: OrganizationId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<crate::chain::ExportedEntry>, StoreError> {
        self.check().await?;
        let read = self.inner.chain_after(ledger, organization, after, limit).await?;
        let n = read.len() as u64;
        self.read_after.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
        Ok(read)
    }
    async fn chain_start_at(
        &self,
        ledger: recruit_domain::chain::Ledger,
        organization: OrganizationId,
        at: Timestamp,
    ) -> Result<Option<(u64, Vec<u8>)>, StoreError> {
        self.check().await?;
        self.inner.chain_start_at(ledger, organization, at).await
    }
    async fn count_entries(
        &self,
        query: &crate::chain::ExportQuery,
        at_most: u64,
    ) -> Result<u64, StoreError> {
        self.check().await?;
        self.inner.count_entries(query, at_most).await
    }
    async fn retention_plan(
        &self,
        before: Timestamp,
    ) -> Result<Vec<crate::chain::PlannedCut>, StoreError> {
        self.check().await?;
        self.inner.retention_plan(before).await
    }
    async fn save_retention_cuts(
        &self,
        cuts: &[recruit_domain::chain::RetentionCut],
    ) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.save_retention_cuts(cuts).await
    }
    async fn retention_cuts(
        &self,
        organization: Option<OrganizationId>,
        ledger: Option<recruit_domain::chain::Ledger>,
    ) -> Result<Vec<recruit_domain::chain::RetentionCut>, StoreError> {
        self.check().await?;
        self.inner.retention_cuts(organization, ledger).await
    }
    async fn remove_retained(&self, before: Timestamp) -> Result<u64, StoreError> {
        self.check().await?;
        self.inner.remove_retained(before).await
    }
    async fn record_read(&self, record: &ReadRecord, entries: usize) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.record_read(record, entries).await
    }
    async fn purge_idempotency_keys(&self, now: Timestamp) -> Result<usize, StoreError> {
        self.check().await?;
        self.inner.purge_idempotency_keys(now).await
    }
    async fn chain_heads(
        &self,
        organization: Option<OrganizationId>,
    ) -> Result<Vec<crate::rows::LedgerHeadRow>, StoreError> {
        self.check().await?;
        self.inner.chain_heads(organization).await
    }
    async fn save_checkpoints(
        &self,
        checkpoints: &[recruit_domain::chain::Checkpoint],
    ) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.save_checkpoints(checkpoints).await
    }
    async fn checkpoints(
        &self,
        organization: Option<OrganizationId>,
        ledger: Option<recruit_domain::chain::Ledger>,
    ) -> Result<Vec<recruit_domain::chain::Checkpoint>, StoreError> {
        self.check().await?;
        self.inner.checkpoints(organization, ledger).await
    }
    async fn latest_checkpoint(
        &self,
        organization: OrganizationId,
        ledger: recruit_domain::chain::Ledger,
    ) -> Result<Option<recruit_domain::chain::Checkpoint>, StoreError> {
        self.check().await?;
        self.inner.latest_checkpoint(organization, ledger).await
    }
    async fn review_facts(
        &self,
        query: &crate::review::ReviewQuery,
    ) -> Result<crate::review::ReviewFacts, StoreError> {
        self.check().await?;
        self.inner.review_facts(query).await
    }
    async fn set_review_rules(&self, write: &crate::review::RulesWrite) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.set_review_rules(write).await
    }
    async fn account_volumes(
        &self,
        o: OrganizationId,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Vec<(Uuid, u64)>, StoreError> {
        self.check().await?;
        self.inner.account_volumes(o, from, to).await
    }
    async fn decide_download(
        &self,
        write: &crate::review::DecisionWrite,
    ) -> Result<crate::review::Decided, StoreError> {
        self.check().await?;
        self.inner.decide_download(write).await
    }
    async fn sign_off(
        &self,
        write: &crate::review::SignOffWrite,
    ) -> Result<crate::review::SignedOff, StoreError> {
        self.check().await?;
        self.inner.sign_off(write).await
    }
    async fn chain_entries(
        &self,
        page: crate::chain::ChainPage,
    ) -> Result<Vec<crate::chain::CheckedEntry>, StoreError> {
        self.check().await?;
        self.inner.chain_entries(page).await
    }
}

#[async_trait]
impl<S: Import> Import for Faulty<S> {
    async fn import(&self, document: &ImportDocument) -> Result<ImportSummary, ImportError> {
        self.check().await?;
        self.inner.import(document).await
    }

    async fn resume_ledger(&self, batch: &ImportDocument) -> Result<ResumedBatch, ImportError> {
        self.check().await?;
        self.inner.resume_ledger(batch).await
    }
}

#[async_trait]
impl<S: Maintenance> Maintenance for Faulty<S> {
    async fn ping(&self) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.ping().await
    }
    async fn database_clock(&self) -> Result<Option<Timestamp>, StoreError> {
        self.check().await?;
        self.inner.database_clock().await
    }
    async fn server_secret(&self, name: &str, proposed: &[u8]) -> Result<Vec<u8>, StoreError> {
        self.check().await?;
        self.inner.server_secret(name, proposed).await
    }
    async fn is_empty(&self) -> Result<bool, StoreError> {
        self.check().await?;
        self.inner.is_empty().await
    }
    async fn prepare(&self) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.prepare().await
    }
    async fn end_stalled_writes(&self) -> Result<usize, StoreError> {
        self.check().await?;
        self.inner.end_stalled_writes().await
    }
}

#[async_trait]
impl<S: crate::streams::LogStreams> crate::streams::LogStreams for Faulty<S> {
    async fn create_stream(
        &self,
        stream: &crate::streams::StreamRecord,
        record: &crate::ReadRecord,
    ) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.create_stream(stream, record).await
    }
    async fn streams(
        &self,
        organization: OrganizationId,
    ) -> Result<Vec<crate::streams::StreamRecord>, StoreError> {
        self.check().await?;
        self.inner.streams(organization).await
    }
    async fn stream(
        &self,
        organization: OrganizationId,
        id: recruit_domain::Uuid,
    ) -> Result<crate::streams::StreamRecord, StoreError> {
        self.check().await?;
        self.inner.stream(organization, id).await
    }
    async fn update_stream(
        &self,
        stream: &crate::streams::StreamRecord,
        resume: bool,
        record: &crate::ReadRecord,
    ) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.update_stream(stream, resume, record).await
    }
    async fn delete_stream(
        &self,
        organization: OrganizationId,
        id: recruit_domain::Uuid,
        record: &crate::ReadRecord,
    ) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.delete_stream(organization, id, record).await
    }
    async fn claim_streams(
        &self,
        holder: recruit_domain::Uuid,
        now: Timestamp,
        until: Timestamp,
        limit: u32,
    ) -> Result<Vec<crate::streams::Lease>, StoreError> {
        self.check().await?;
        self.inner.claim_streams(holder, now, until, limit).await
    }
    async fn renew_lease(
        &self,
        lease: &crate::streams::Lease,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        self.check().await?;
        self.inner.renew_lease(lease, until).await
    }
    async fn advance_stream(
        &self,
        lease: &crate::streams::Lease,
        from: u64,
        to: u64,
        hash: [u8; 32],
        at: Timestamp,
    ) -> Result<Option<crate::streams::StreamRecord>, StoreError> {
        self.check().await?;
        self.inner.advance_stream(lease, from, to, hash, at).await
    }
    async fn stream_failed(
        &self,
        lease: &crate::streams::Lease,
        failure: &crate::streams::Failure,
    ) -> Result<bool, StoreError> {
        self.check().await?;
        self.inner.stream_failed(lease, failure).await
    }
    async fn set_pending(
        &self,
        lease: &crate::streams::Lease,
        pending: Option<&serde_json::Value>,
    ) -> Result<bool, StoreError> {
        self.check().await?;
        self.inner.set_pending(lease, pending).await
    }
    async fn release_lease(
        &self,
        lease: &crate::streams::Lease,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        self.check().await?;
        self.inner.release_lease(lease, now).await
    }
}
