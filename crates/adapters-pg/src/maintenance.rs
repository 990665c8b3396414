//! The maintenance port: readiness, server secrets, and whether the store holds anything.

use diesel_async::AsyncMigrationHarness;
use diesel_migrations::MigrationHarness;
use recruit_adapters_diesel::native::NativeMaintenance;
use recruit_ports::StoreError;

use crate::{MIGRATIONS, PgBackend};

impl NativeMaintenance for PgBackend {
    async fn ping(&self) -> Result<(), StoreError> {
        let conn = self.conn().await?;
        let mut harness = AsyncMigrationHarness::new(conn);
        let pending = harness
            .has_pending_migration(MIGRATIONS)
            .map_err(|e| StoreError::Unavailable(format!("cannot read the schema version: {e}")))?;
        if pending {
            return Err(StoreError::Unavailable("the database schema is not up to date".into()));
        }
        Ok(())
    }

    async fn prepare(&self) -> Result<(), StoreError> {
        let mut c = self.conn().await?;
        let created = crate::partitions::prepare(&mut c).await.map_err(StoreError::from)?;
        if created > 0 {
            tracing::info!(partitions = created, "ledger partitions created ahead");
        }
        Ok(())
    }

    async fn end_stalled_writes(&self) -> Result<usize, StoreError> {
        self.end_stalled().await
    }
}
