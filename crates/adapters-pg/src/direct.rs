//! The direct connections: `tokio-postgres` clients pooled beside diesel-async's, for what
//! diesel-async cannot do or does at a cost the hottest paths should not pay. They write by
//! `COPY` (the recording of accesses, an import's ledger), and they answer the job and the
//! organization reads with statements each connection prepares once.
//!
//! A read's text is diesel's, built once per process from the same query as ever; its row is
//! decoded by diesel from the bytes `tokio-postgres` received ([`DieselRow`]), into the same
//! row types. What the direct path saves is diesel-async's work around the round trip: the
//! statement's text built and copied at every execution, its cache looked up by that text,
//! and the values serialized twice (D60).

use std::num::NonZeroU32;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use diesel::pg::Pg;
use diesel::row::{Field, PartialRow, RowIndex, RowSealed};
use recruit_ports::StoreError;
use tokio_postgres::types::{FromSql, ToSql, Type};
use tokio_postgres::{Client, Statement};

use crate::PgBackend;
use crate::error::{copy_error, writer_pool_error};

/// How direct connections are opened: as the pool's, with its session settings.
#[derive(Debug)]
pub(crate) struct DirectSettings {
    pub(crate) config: tokio_postgres::Config,
    pub(crate) setup: Arc<str>,
}

impl DirectSettings {
    /// A new connection with the pool's session settings; its driver runs as a task of its
    /// own, which ends when the client is dropped.
    pub(crate) async fn connect(&self) -> Result<Client, tokio_postgres::Error> {
        let (client, connection) = self.config.connect(tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        client.batch_execute(&self.setup).await?;
        Ok(client)
    }
}

/// The reads kept prepared on every direct connection.
#[derive(Clone, Copy, Debug)]
pub(crate) enum DirectRead {
    Job,
    Organization,
}

/// How many kinds of [`DirectRead`] there are.
const KEPT: usize = 2;

/// A direct connection, with the statements of its [`DirectRead`]s once they have run on it.
pub(crate) struct Direct {
    client: Client,
    kept: [Option<Statement>; KEPT],
}

impl Deref for Direct {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}

impl DerefMut for Direct {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.client
    }
}

/// The manager of the pool of direct connections.
#[derive(Debug)]
pub(crate) struct DirectManager(pub(crate) Arc<DirectSettings>);

impl managed::Manager for DirectManager {
    type Type = Direct;
    type Error = tokio_postgres::Error;

    async fn create(&self) -> Result<Direct, tokio_postgres::Error> {
        Ok(Direct { client: self.0.connect().await?, kept: Default::default() })
    }

    /// A connection the server closed is dropped, not reused; anything else fails its next
    /// statement, which the caller reports.
    async fn recycle(&self, c: &mut Direct, _: &Metrics) -> RecycleResult<tokio_postgres::Error> {
        if c.client.is_closed() {
            Err(RecycleError::message("the connection is closed"))
        } else {
            Ok(())
        }
    }
}

/// The pool of direct connections.
pub(crate) type DirectPool = managed::Pool<DirectManager>;

impl PgBackend {
    /// The row of `read`, whose text is `text`, with `values` for its
    /// parameters; `None` when it finds none. On a standby, the connection first reaches the
    /// store's floor. A connection whose read failed is closed rather than reused: whatever
    /// broke (the connection, a statement a migration made stale) is not carried to the next
    /// read.
    pub(crate) async fn read_kept(
        &self,
        read: DirectRead,
        text: &str,
        values: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<DieselRow>, StoreError> {
        // Boxed, as the other pool's: its future holds a connection's opening.
        let mut c = Box::pin(self.direct.get()).await.map_err(writer_pool_error)?;
        let read = async {
            if let Some(floor) = &self.floor {
                Box::pin(crate::replica::reach_direct(&c, floor)).await?;
            }
            let statement = match &c.kept[read as usize] {
                Some(statement) => statement.clone(),
                None => {
                    let statement = c.client.prepare(text).await.map_err(copy_error)?;
                    c.kept[read as usize] = Some(statement.clone());
                    statement
                }
            };
            c.client.query_opt(&statement, values).await.map_err(copy_error)
        };
        match read.await {
            Ok(row) => Ok(row.map(DieselRow)),
            Err(e) => {
                drop(managed::Object::take(c));
                Err(e)
            }
        }
    }
}

/// A row `tokio-postgres` received, as diesel reads rows: the row types of the diesel path
/// decode it, column by column, from the same bytes.
pub(crate) struct DieselRow(tokio_postgres::Row);

impl DieselRow {
    /// The row as `T`, the Rust type of a query whose rows are of SQL type `ST`.
    pub(crate) fn decode<ST, T>(&self) -> Result<T, StoreError>
    where
        T: diesel::deserialize::FromSqlRow<ST, Pg>,
    {
        T::build_from_row(self).map_err(|e| StoreError::other(format!("a row cannot be read: {e}")))
    }
}

impl RowSealed for DieselRow {}

impl<'a> diesel::row::Row<'a, Pg> for DieselRow {
    type Field<'f>
        = Column<'f>
    where
        'a: 'f,
        Self: 'f;
    type InnerPartialRow = Self;

    fn field_count(&self) -> usize {
        self.0.len()
    }

    fn get<'b, I>(&'b self, idx: I) -> Option<Column<'b>>
    where
        'a: 'b,
        Self: RowIndex<I>,
    {
        let idx = self.idx(idx)?;
        let Raw(raw) = self.0.try_get(idx).ok()?;
        let column = &self.0.columns()[idx];
        let oid = NonZeroU32::new(column.type_().oid())?;
        Some(Column { name: column.name(), raw, oid })
    }

    fn partial_row(&self, range: std::ops::Range<usize>) -> PartialRow<'_, Self> {
        PartialRow::new(self, range)
    }
}

impl RowIndex<usize> for DieselRow {
    fn idx(&self, idx: usize) -> Option<usize> {
        (idx < self.0.len()).then_some(idx)
    }
}

impl<'a> RowIndex<&'a str> for DieselRow {
    fn idx(&self, name: &'a str) -> Option<usize> {
        self.0.columns().iter().position(|c| c.name() == name)
    }
}

/// A column of a [`DieselRow`]: its name, its bytes (`None` for NULL) and its type.
pub(crate) struct Column<'a> {
    name: &'a str,
    raw: Option<&'a [u8]>,
    oid: NonZeroU32,
}

impl<'a> Field<'a, Pg> for Column<'a> {
    fn field_name(&self) -> Option<&str> {
        Some(self.name)
    }

    fn value(&self) -> Option<diesel::pg::PgValue<'_>> {
        self.raw.map(|raw| diesel::pg::PgValue::new(raw, &self.oid))
    }
}

/// A column's bytes as received, for diesel to decode.
struct Raw<'a>(Option<&'a [u8]>);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Self(Some(raw)))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Self(None))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}
