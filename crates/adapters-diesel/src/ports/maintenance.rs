//! `Import` and `Maintenance`, each its store's own.

use async_trait::async_trait;
use recruit_ports::{
    Import, ImportDocument, ImportError, ImportSummary, Maintenance, ResumedBatch, StoreError,
};

use super::dialect;
use crate::CountRow;
use crate::db::Db;
use crate::filter::Value;
use crate::native::*;
use crate::statement::Statement;
use crate::store::{Backend, Diesel, pending};
use recruit_domain::Timestamp;

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
impl<B: Backend + NativeMaintenance> Maintenance for Diesel<B>
where
    Secret: diesel::QueryableByName<B::Sql>,
    CountRow: diesel::QueryableByName<B::Sql>,
{
    async fn ping(&self) -> Result<(), StoreError> {
        self.0.ping().await
    }

    async fn server_secret(&self, name: &str, proposed: &[u8]) -> Result<Vec<u8>, StoreError> {
        let p = dialect::<B>().param;
        let insert = format!(
            "INSERT INTO server_secrets (name, value, created_at) VALUES ({}, {}, {}) \
             ON CONFLICT DO NOTHING",
            p(1),
            p(2),
            p(3)
        );
        let select = format!("SELECT value FROM server_secrets WHERE name = {}", p(1));
        let (name, proposed) = (name.to_owned(), proposed.to_vec());
        self.0
            .transaction(move |db| {
                pending(async move {
                    let values = vec![
                        Value::Text(&name),
                        Value::Bytes(&proposed),
                        Value::Time(Timestamp::now()),
                    ];
                    db.execute(Statement { sql: insert, values }).await?;
                    let values = vec![Value::Text(&name)];
                    let kept: Vec<Secret> = db.load(Statement { sql: select, values }).await?;
                    kept.into_iter().next().map(|s| s.value).ok_or(StoreError::NotFound)
                })
            })
            .await
    }

    async fn database_clock(&self) -> Result<Option<Timestamp>, StoreError> {
        let Some(sql) = dialect::<B>().clock else { return Ok(None) };
        let sql = sql.to_owned();
        let read = self.0.connection(move |db| {
            pending(async move { db.load::<CountRow>(Statement { sql, values: vec![] }).await })
        });
        let micros = read.await?.first().map(|row| row.count);
        let clock = micros.and_then(|m| Timestamp::from_unix_micros(m).ok());
        clock.map(Some).ok_or_else(|| StoreError::other("the database did not tell its time"))
    }

    async fn is_empty(&self) -> Result<bool, StoreError> {
        let sql = "SELECT count(*) AS count FROM (SELECT 1 FROM organizations LIMIT 1) AS o".into();
        let counted = self.0.connection(move |db| {
            pending(async move { db.load::<CountRow>(Statement { sql, values: vec![] }).await })
        });
        Ok(counted.await?.first().is_none_or(|row| row.count == 0))
    }

    async fn prepare(&self) -> Result<(), StoreError> {
        self.0.prepare().await
    }

    async fn end_stalled_writes(&self) -> Result<usize, StoreError> {
        self.0.end_stalled_writes().await
    }
}

/// A server secret's value.
#[derive(Debug, diesel::QueryableByName)]
pub struct Secret {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    value: Vec<u8>,
}
