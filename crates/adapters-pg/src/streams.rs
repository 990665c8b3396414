//! `LogStreams` on PostgreSQL: each method the shared statements
//! (`recruit_adapters_diesel::streams`) in one transaction.

use async_trait::async_trait;
use diesel_async::AsyncConnection;
use recruit_adapters_diesel::streams;
use recruit_domain::{OrganizationId, Timestamp, Uuid};
use recruit_ports::streams::{Failure, Lease, LogStreams, StreamRecord};
use recruit_ports::{ReadRecord, StoreError};

use crate::PgStore;
use crate::chain::PgDb;
use crate::error::TxError;

#[async_trait]
impl LogStreams for PgStore {
    async fn create_stream(
        &self,
        stream: &StreamRecord,
        record: &ReadRecord,
    ) -> Result<(), StoreError> {
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| {
            Ok(streams::create(&mut PgDb(c), stream, record).await?)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn streams(&self, organization: OrganizationId) -> Result<Vec<StreamRecord>, StoreError> {
        let mut c = self.conn().await?;
        streams::load(&mut PgDb(&mut c), organization, None).await
    }

    async fn stream(
        &self,
        organization: OrganizationId,
        id: Uuid,
    ) -> Result<StreamRecord, StoreError> {
        let mut c = self.conn().await?;
        let found = streams::load(&mut PgDb(&mut c), organization, Some(id)).await?;
        found.into_iter().next().ok_or(StoreError::NotFound)
    }

    async fn update_stream(
        &self,
        stream: &StreamRecord,
        resume: bool,
        record: &ReadRecord,
    ) -> Result<(), StoreError> {
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| {
            Ok(streams::update(&mut PgDb(c), stream, resume, record).await?)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn delete_stream(
        &self,
        organization: OrganizationId,
        id: Uuid,
        record: &ReadRecord,
    ) -> Result<(), StoreError> {
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| {
            Ok(streams::delete(&mut PgDb(c), organization, id, record).await?)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn claim_streams(
        &self,
        holder: Uuid,
        now: Timestamp,
        until: Timestamp,
        limit: u32,
    ) -> Result<Vec<Lease>, StoreError> {
        let mut c = self.conn().await?;
        streams::claim(&mut PgDb(&mut c), holder, now, until, limit).await
    }

    async fn renew_lease(&self, lease: &Lease, until: Timestamp) -> Result<bool, StoreError> {
        let mut c = self.conn().await?;
        streams::renew(&mut PgDb(&mut c), lease, until).await
    }

    async fn advance_stream(
        &self,
        lease: &Lease,
        from: u64,
        to: u64,
        hash: [u8; 32],
        at: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut c = self.conn().await?;
        streams::advance(&mut PgDb(&mut c), lease, (from, to), &hash, at).await
    }

    async fn stream_failed(&self, lease: &Lease, failure: &Failure) -> Result<bool, StoreError> {
        let mut c = self.conn().await?;
        streams::failed(&mut PgDb(&mut c), lease, failure).await
    }

    async fn set_pending(
        &self,
        lease: &Lease,
        pending: Option<&serde_json::Value>,
    ) -> Result<bool, StoreError> {
        let mut c = self.conn().await?;
        streams::pending(&mut PgDb(&mut c), lease, pending).await
    }

    async fn release_lease(&self, lease: &Lease, now: Timestamp) -> Result<(), StoreError> {
        let mut c = self.conn().await?;
        streams::release(&mut PgDb(&mut c), lease, now).await
    }
}
