//! The maintenance port: readiness, server secrets, and whether the store holds anything.

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncMigrationHarness, RunQueryDsl};
use diesel_migrations::MigrationHarness;
use recruit_adapters_diesel::native::NativeMaintenance;
use recruit_ports::StoreError;

use crate::error::*;
use crate::schema::*;
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

    async fn server_secret(&self, name: &str, proposed: &[u8]) -> Result<Vec<u8>, StoreError> {
        let mut c = self.conn().await?;
        c.transaction::<_, TxError, _>(async |c| {
            diesel::insert_into(server_secrets::table)
                .values((server_secrets::name.eq(name), server_secrets::value.eq(proposed)))
                .on_conflict_do_nothing()
                .execute(c)
                .await?;
            Ok(server_secrets::table.find(name).select(server_secrets::value).first(c).await?)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn is_empty(&self) -> Result<bool, StoreError> {
        let mut c = self.conn().await?;
        diesel::select(diesel::dsl::not(diesel::dsl::exists(
            organizations::table.select(organizations::id),
        )))
        .get_result(&mut c)
        .await
        .map_err(store_error)
    }

    async fn prepare(&self) -> Result<(), StoreError> {
        let mut c = self.conn().await?;
        let created = crate::partitions::prepare(&mut c).await.map_err(StoreError::from)?;
        if created > 0 {
            tracing::info!(partitions = created, "ledger partitions created ahead");
        }
        Ok(())
    }
}
