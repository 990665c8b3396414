//! `Import` and `Maintenance`, each its store's own.

use async_trait::async_trait;
use recruit_ports::{
    Import, ImportDocument, ImportError, ImportSummary, Maintenance, ResumedBatch, StoreError,
};

use crate::native::*;
use crate::store::{Backend, Diesel};

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
