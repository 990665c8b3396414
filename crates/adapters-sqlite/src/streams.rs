//! `LogStreams` on SQLite: each method the shared statements
//! (`recruit_adapters_diesel::streams`) in one immediate transaction on the blocking thread.

use async_trait::async_trait;
use recruit_adapters_diesel::streams;
use recruit_domain::{OrganizationId, Timestamp, Uuid};
use recruit_ports::streams::{Failure, Lease, LogStreams, StreamRecord};
use recruit_ports::{ReadRecord, StoreError};

use crate::SqliteStore;
use crate::error::TxError;
use crate::export::{SqliteDb, at_once};

impl SqliteStore {
    /// `task` over this store's connection, in one immediate transaction.
    async fn with_db<T: Send + 'static>(
        &self,
        task: impl FnOnce(&mut SqliteDb<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.transaction(move |c| -> Result<T, TxError> { Ok(task(&mut SqliteDb(c))?) })
            .await
            .map_err(StoreError::from)
    }
}

#[async_trait]
impl LogStreams for SqliteStore {
    async fn create_stream(
        &self,
        stream: &StreamRecord,
        record: &ReadRecord,
    ) -> Result<(), StoreError> {
        let (stream, record) = (stream.clone(), record.clone());
        self.with_db(move |db| at_once(streams::create(db, &stream, &record))).await
    }

    async fn streams(&self, organization: OrganizationId) -> Result<Vec<StreamRecord>, StoreError> {
        self.with_db(move |db| at_once(streams::load(db, organization, None))).await
    }

    async fn stream(
        &self,
        organization: OrganizationId,
        id: Uuid,
    ) -> Result<StreamRecord, StoreError> {
        let found = self.with_db(move |db| at_once(streams::load(db, organization, Some(id))));
        found.await?.into_iter().next().ok_or(StoreError::NotFound)
    }

    async fn update_stream(
        &self,
        stream: &StreamRecord,
        resume: bool,
        record: &ReadRecord,
    ) -> Result<(), StoreError> {
        let (stream, record) = (stream.clone(), record.clone());
        self.with_db(move |db| at_once(streams::update(db, &stream, resume, &record))).await
    }

    async fn delete_stream(
        &self,
        organization: OrganizationId,
        id: Uuid,
        record: &ReadRecord,
    ) -> Result<(), StoreError> {
        let record = record.clone();
        self.with_db(move |db| at_once(streams::delete(db, organization, id, &record))).await
    }

    async fn claim_streams(
        &self,
        holder: Uuid,
        now: Timestamp,
        until: Timestamp,
        limit: u32,
    ) -> Result<Vec<Lease>, StoreError> {
        self.with_db(move |db| at_once(streams::claim(db, holder, now, until, limit))).await
    }

    async fn renew_lease(&self, lease: &Lease, until: Timestamp) -> Result<bool, StoreError> {
        let lease = *lease;
        self.with_db(move |db| at_once(streams::renew(db, &lease, until))).await
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
        self.with_db(move |db| at_once(streams::advance(db, &lease, (from, to), &hash, at))).await
    }

    async fn stream_failed(&self, lease: &Lease, failure: &Failure) -> Result<bool, StoreError> {
        let (lease, failure) = (*lease, failure.clone());
        self.with_db(move |db| at_once(streams::failed(db, &lease, &failure))).await
    }

    async fn set_pending(
        &self,
        lease: &Lease,
        pending: Option<&serde_json::Value>,
    ) -> Result<bool, StoreError> {
        let (lease, pending) = (*lease, pending.cloned());
        self.with_db(move |db| at_once(streams::pending(db, &lease, pending.as_ref()))).await
    }

    async fn release_lease(&self, lease: &Lease, now: Timestamp) -> Result<(), StoreError> {
        let lease = *lease;
        self.with_db(move |db| at_once(streams::release(db, &lease, now))).await
    }
}
