//! `LogStreams`: every method written once.

use async_trait::async_trait;
use recruit_domain::{OrganizationId, Timestamp, Uuid};
use recruit_ports::streams::{Failure, Lease, LogStreams, StreamRecord};
use recruit_ports::{ReadRecord, StoreError};

use crate::store::{Backend, Diesel, pending};
use crate::streams;

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
    ) -> Result<Option<StreamRecord>, StoreError> {
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
