//! Rows by binary `COPY`, on `tokio-postgres` connections of their own (diesel-async does not
//! offer `COPY`): ledger batches of an import on a connection opened for the call, and the
//! recording of accesses on connections of a second pool.

use std::sync::Arc;

use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use tokio_postgres::Client;
use tokio_postgres::binary_copy::BinaryCopyInWriter;

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

impl CopySettings {
    /// A new connection with the pool's session settings; its driver runs as a task of its
    /// own, which ends when the client is dropped.
    pub(crate) async fn connect(&self) -> Result<Client, tokio_postgres::Error> {
        let (client, connection) = self.config.connect(tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        client.batch_execute(&self.setup).await?;
        Ok(client)
    }
}

/// The manager of the pool of `tokio-postgres` connections that write with `COPY`.
#[derive(Debug)]
pub(crate) struct CopyManager(pub(crate) Arc<CopySettings>);

impl managed::Manager for CopyManager {
    type Type = Client;
    type Error = tokio_postgres::Error;

    async fn create(&self) -> Result<Client, tokio_postgres::Error> {
        self.0.connect().await
    }

    /// A connection the server closed is dropped, not reused; anything else fails its next
    /// statement, which the caller reports.
    async fn recycle(
        &self,
        client: &mut Client,
        _: &Metrics,
    ) -> RecycleResult<tokio_postgres::Error> {
        if client.is_closed() {
            Err(RecycleError::message("the connection is closed"))
        } else {
            Ok(())
        }
    }
}

/// The pool of `COPY` connections.
pub(crate) type CopyPool = managed::Pool<CopyManager>;

/// Writes `rows` into their table by binary `COPY`, on `client` (in its transaction).
pub(crate) async fn copy_rows<R: Copied>(
    client: &tokio_postgres::Transaction<'_>,
    rows: &[R],
) -> Result<u64, tokio_postgres::Error> {
    if rows.is_empty() {
        return Ok(0);
    }
    let sink = client
        .copy_in(&format!("COPY {} ({}) FROM STDIN (FORMAT binary)", R::TABLE, R::COLUMNS))
        .await?;
    let writer = std::pin::pin!(BinaryCopyInWriter::new(sink, R::TYPES));
    let mut writer = writer;
    for row in rows {
        writer.as_mut().write(&row.copy_values()).await?;
    }
    writer.finish().await
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
        use tokio_postgres::error::SqlState;
        let Ok(mut rows) = doc
            .privacy_audit_logs
            .iter()
            .map(neutral::LedgerRow::new)
            .collect::<Result<Vec<_>, _>>()
        else {
            return Ok(None);
        };
        let count = rows.len();
        let mut client = self.copy.connect().await.map_err(copy_error)?;
        let tx = client.transaction().await.map_err(copy_error)?;
        crate::chain::chain_copy(&tx, &mut rows).await?;
        let rows: Vec<LedgerRow> = rows.into_iter().map(LedgerRow::from).collect();
        let copied = async {
            copy_rows(&tx, &rows).await?;
            tx.commit().await
        }
        .await;
        drop(client);
        match copied {
            Ok(_) => {
                Ok(Some(ImportSummary { privacy_audit_logs: count, ..ImportSummary::default() }))
            }
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
