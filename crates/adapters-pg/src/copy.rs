//! Ledger batches by binary `COPY`, on a `tokio-postgres` connection of their own.

use std::sync::Arc;

use recruit_ports::rows as neutral;
use recruit_ports::{ImportDocument, ImportSummary, StoreError};

use crate::PgStore;
use crate::error::*;
use crate::rows::*;

/// How connections for `COPY` are opened: as the pool's, with its session settings.
#[derive(Debug)]
pub(crate) struct CopySettings {
    pub(crate) config: tokio_postgres::Config,
    pub(crate) setup: Arc<str>,
}

impl PgStore {
    /// Writes a document of ledger entries only with one binary `COPY`, relying on the
    /// schema's constraints in place of [`ImportDocument::check`]: the primary key refuses an
    /// entry stored or repeated, the foreign key a missing organization. `None` when a
    /// constraint refused it (nothing is written then): the checked path finds and names the
    /// problem.
    ///
    /// `COPY` goes through a `tokio-postgres` connection of its own, opened for the call, as
    /// diesel-async does not offer it; it carries the pool's session settings.
    pub(crate) async fn copy_ledger(
        &self,
        doc: &ImportDocument,
    ) -> Result<Option<ImportSummary>, StoreError> {
        use tokio_postgres::binary_copy::BinaryCopyInWriter;
        use tokio_postgres::error::SqlState;
        let Ok(rows) = doc
            .privacy_audit_logs
            .iter()
            .map(|e| neutral::LedgerRow::new(e).map(LedgerRow::from))
            .collect::<Result<Vec<_>, _>>()
        else {
            return Ok(None);
        };
        let (client, connection) =
            self.copy.config.connect(tokio_postgres::NoTls).await.map_err(copy_error)?;
        let driver = tokio::spawn(connection);
        let copied = async {
            client.batch_execute(&self.copy.setup).await?;
            let sink = client
                .copy_in(&format!(
                    "COPY privacy_audit_logs ({}) FROM STDIN (FORMAT binary)",
                    LedgerRow::COLUMNS
                ))
                .await?;
            let writer = BinaryCopyInWriter::new(sink, LedgerRow::TYPES);
            let mut writer = std::pin::pin!(writer);
            for row in &rows {
                writer.as_mut().write(&row.copy_values()).await?;
            }
            writer.finish().await
        }
        .await;
        drop(client);
        let _ = driver.await;
        match copied {
            Ok(_) => Ok(Some(ImportSummary {
                privacy_audit_logs: rows.len(),
                ..ImportSummary::default()
            })),
            Err(e)
                if e.code() == Some(&SqlState::UNIQUE_VIOLATION)
                    || e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) =>
            {
                Ok(None)
            }
            Err(e) => Err(copy_error(e)),
        }
    }
}
