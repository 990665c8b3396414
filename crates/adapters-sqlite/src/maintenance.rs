//! The maintenance port: readiness, server secrets, and whether the store holds anything.

use diesel::result::Error as DieselError;
use diesel_migrations::MigrationHarness;
use recruit_adapters_diesel::native::NativeMaintenance;
use recruit_ports::StoreError;

use crate::{MIGRATIONS, SqliteBackend};

impl NativeMaintenance for SqliteBackend {
    async fn ping(&self) -> Result<(), StoreError> {
        let pending = self
            .run(|c| c.has_pending_migration(MIGRATIONS).map_err(DieselError::QueryBuilderError))
            .await?;
        if pending {
            return Err(StoreError::Unavailable("the database schema is not up to date".into()));
        }
        Ok(())
    }
}
