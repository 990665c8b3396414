//! The maintenance port: readiness, server secrets, and whether the store holds anything.

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel_migrations::MigrationHarness;
use recruit_adapters_diesel::native::NativeMaintenance;
use recruit_domain::Timestamp;
use recruit_ports::StoreError;

use crate::error::TxError;
use crate::schema::*;
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

    async fn server_secret(&self, name: &str, proposed: &[u8]) -> Result<Vec<u8>, StoreError> {
        let (name, value) = (name.to_owned(), proposed.to_vec());
        let now = Timestamp::now().unix_micros();
        self.transaction(move |c| -> Result<Vec<u8>, TxError> {
            diesel::insert_into(server_secrets::table)
                .values((
                    server_secrets::name.eq(&name),
                    server_secrets::value.eq(&value),
                    server_secrets::created_at.eq(now),
                ))
                .on_conflict_do_nothing()
                .execute(c)?;
            Ok(server_secrets::table.find(&name).select(server_secrets::value).first(c)?)
        })
        .await
        .map_err(StoreError::from)
    }

    async fn is_empty(&self) -> Result<bool, StoreError> {
        self.run(|c| {
            diesel::select(diesel::dsl::not(diesel::dsl::exists(
                organizations::table.select(organizations::id),
            )))
            .get_result(c)
        })
        .await
    }
}
