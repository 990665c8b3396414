//! Rows by binary `COPY`, on the direct connections (diesel-async does not offer `COPY`):
//! ledger batches of an import, and the recording of accesses.

use tokio_postgres::binary_copy::BinaryCopyInWriter;

use recruit_ports::rows as neutral;
use recruit_ports::{ImportDocument, ImportSummary, StoreError};

use crate::PgBackend;
use crate::error::*;
use crate::rows::*;

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

impl PgBackend {
    /// Writes a document of ledger entries only with one binary `COPY`, relying on the
    /// schema's constraints in place of [`ImportDocument::check`]: the primary key refuses an
    /// entry stored or repeated, the foreign key a missing organization. `None` when a
    /// constraint refused it (nothing is written then): the checked path finds and names the
    /// problem.
    ///
    /// The chains' heads are locked first; then each [`LINKED_AT_A_TIME`] entries are linked
    /// (their canonical JSON and hashes computed) while PostgreSQL stores the ones sent before,
    /// so that neither side waits for the other's share of the work.
    ///
    /// `COPY` goes through a direct connection (`tokio-postgres`, as diesel-async
    /// does not offer it), the same one batch after batch: a connection opened for each batch
    /// cost PostgreSQL a new backend, which warms its caches for every partition again (the
    /// import ran 17 % faster once that stopped). One whose `COPY` failed is closed.
    pub(crate) async fn copy_ledger(
        &self,
        doc: &ImportDocument,
    ) -> Result<Option<ImportSummary>, StoreError> {
        use recruit_ports::chain::ChainedRows;
        use tokio_postgres::error::SqlState;
        let Ok(rows) = doc
            .privacy_audit_logs
            .iter()
            .map(neutral::LedgerRow::new)
            .collect::<Result<Vec<_>, _>>()
        else {
            return Ok(None);
        };
        let count = rows.len();
        let keys = rows.chain_keys();
        let mut client = self.direct.get().await.map_err(crate::error::writer_pool_error)?;
        let tx = client.transaction().await.map_err(copy_error)?;
        let mut heads = crate::chain::lock_heads_copy(&tx, &keys).await?;
        let copied = async {
            let sink = tx
                .copy_in(&format!(
                    "COPY {} ({}) FROM STDIN (FORMAT binary)",
                    LedgerRow::TABLE,
                    LedgerRow::COLUMNS
                ))
                .await?;
            let mut writer = std::pin::pin!(BinaryCopyInWriter::new(sink, LedgerRow::TYPES));
            let mut rows = rows.into_iter();
            loop {
                let mut part: Vec<neutral::LedgerRow> =
                    rows.by_ref().take(LINKED_AT_A_TIME).collect();
                if part.is_empty() {
                    break;
                }
                let contents = part.contents()?;
                heads.link(&mut part, &mut contents.iter())?;
                for row in part {
                    writer.as_mut().write(&LedgerRow::from(row).copy_values()).await?;
                }
            }
            writer.finish().await?;
            crate::chain::save_heads_copy(&tx, &heads).await?;
            tx.commit().await?;
            Ok::<_, Refusal>(())
        }
        .await;
        if copied.is_err() {
            // Whatever state a failed `COPY` left it in, the connection is not used again.
            drop(deadpool::managed::Object::take(client));
        }
        match copied {
            Ok(()) => {
                Ok(Some(ImportSummary { privacy_audit_logs: count, ..ImportSummary::default() }))
            }
            Err(Refusal::Database(e))
                if e.code() == Some(&SqlState::UNIQUE_VIOLATION)
                    || e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) =>
            {
                Ok(None)
            }
            Err(Refusal::Database(e)) => Err(copy_error(e)),
            Err(Refusal::Store(e)) => Err(e),
        }
    }
}

/// How many entries of an import are linked into their chains at a time, while the ones
/// linked before are stored.
const LINKED_AT_A_TIME: usize = 1_000;

/// Why a `COPY` of linked rows failed: the database's answer, or a row that could not be
/// linked.
enum Refusal {
    Database(tokio_postgres::Error),
    Store(StoreError),
}

impl From<tokio_postgres::Error> for Refusal {
    fn from(e: tokio_postgres::Error) -> Self {
        Self::Database(e)
    }
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}
