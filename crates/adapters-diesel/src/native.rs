//! What each store does its own way, one trait per port: the methods of the port that are not
//! written once in [`crate::store`], each as the port documents it. [`crate::store::Diesel`]
//! hands them to its backend.

use std::future::Future;

use recruit_domain::{ApiTokenId, JobId, OrganizationId, Timestamp};
use recruit_ports::chain::{Export, ExportQuery, PlannedCut};
use recruit_ports::rows as neutral;
use recruit_ports::{
    AccessesWrite, ApiToken, ImportDocument, ImportError, ImportSummary, JobRecord,
    OrganizationRecord, PrivacyLogQuery, ResumedBatch, SecretHash, SessionHolder, StoreError,
    TokenHolder,
};

/// What each store does its own way of [`recruit_ports::Directory`]: each method as the port
/// documents it.
pub trait NativeDirectory: Send + Sync + 'static {
    /// [`recruit_ports::Directory::organization`].
    fn organization(
        &self,
        id: OrganizationId,
    ) -> impl Future<Output = Result<OrganizationRecord, StoreError>> + Send;

    /// [`recruit_ports::Directory::job`].
    fn job(
        &self,
        organization: OrganizationId,
        id: JobId,
    ) -> impl Future<Output = Result<JobRecord, StoreError>> + Send;
}

/// What each store does its own way of [`recruit_ports::Tokens`]: each method as the port
/// documents it.
pub trait NativeTokens: Send + Sync + 'static {
    /// [`recruit_ports::Tokens::credential`].
    fn credential(
        &self,
        secret_hash: &SecretHash,
    ) -> impl Future<Output = Result<TokenHolder, StoreError>> + Send;

    /// [`recruit_ports::Tokens::revoke_token`].
    fn revoke_token(
        &self,
        id: ApiTokenId,
        at: Timestamp,
    ) -> impl Future<Output = Result<ApiToken, StoreError>> + Send;

    /// [`recruit_ports::Tokens::console_session`].
    fn console_session(
        &self,
        secret_hash: &SecretHash,
    ) -> impl Future<Output = Result<SessionHolder, StoreError>> + Send;
}

/// What each store does its own way of [`recruit_ports::Ledgers`]: each method as the port
/// documents it.
pub trait NativeLedgers: Send + Sync + 'static {
    /// The privacy ledger's page `query` asks for, newest first: up to its `limit` entries
    /// and one more, which tells whether another page follows. Nothing recorded.
    fn privacy_page(
        &self,
        query: &PrivacyLogQuery,
    ) -> impl Future<Output = Result<Vec<neutral::LedgerRow>, StoreError>> + Send;

    /// The group commit of reads' records ([`crate::Recorder`]).
    fn recorder(&self) -> &crate::Recorder;

    /// How this store writes a group of reads' records: what the recorder's task runs.
    fn group_writer(&self) -> impl Fn(neutral::ReadRecords) -> crate::GroupWrite + Send + 'static;

    /// [`recruit_ports::Ledgers::record_privacy_accesses`].
    fn record_privacy_accesses(
        &self,
        write: &AccessesWrite,
    ) -> impl Future<Output = Result<recruit_ports::AccessesWritten, StoreError>> + Send;

    /// [`recruit_ports::Ledgers::export`].
    fn export(
        &self,
        query: &ExportQuery,
    ) -> impl Future<Output = Result<Export, StoreError>> + Send;

    /// [`recruit_ports::Ledgers::retention_plan`].
    fn retention_plan(
        &self,
        before: Timestamp,
    ) -> impl Future<Output = Result<Vec<PlannedCut>, StoreError>> + Send;

    /// [`recruit_ports::Ledgers::remove_retained`].
    fn remove_retained(
        &self,
        before: Timestamp,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// [`recruit_ports::Ledgers::review_facts`].
    fn review_facts(
        &self,
        query: &recruit_ports::review::ReviewQuery,
    ) -> impl Future<Output = Result<recruit_ports::review::ReviewFacts, StoreError>> + Send;
}

/// What each store does its own way of [`recruit_ports::Import`]: each method as the port
/// documents it.
pub trait NativeImport: Send + Sync + 'static {
    /// [`recruit_ports::Import::import`].
    fn import(
        &self,
        document: &ImportDocument,
    ) -> impl Future<Output = Result<ImportSummary, ImportError>> + Send;

    /// [`recruit_ports::Import::resume_ledger`].
    fn resume_ledger(
        &self,
        batch: &ImportDocument,
    ) -> impl Future<Output = Result<ResumedBatch, ImportError>> + Send;
}

/// What each store does its own way of [`recruit_ports::Maintenance`]: each method as the port
/// documents it.
pub trait NativeMaintenance: Send + Sync + 'static {
    /// [`recruit_ports::Maintenance::ping`].
    fn ping(&self) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// [`recruit_ports::Maintenance::prepare`].
    fn prepare(&self) -> impl Future<Output = Result<(), StoreError>> + Send {
        async { Ok(()) }
    }

    /// [`recruit_ports::Maintenance::end_stalled_writes`].
    fn end_stalled_writes(&self) -> impl Future<Output = Result<usize, StoreError>> + Send {
        async { Ok(0) }
    }
}
