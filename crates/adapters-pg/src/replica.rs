//! Standbys for the heavy reads ([`recruit_ports::Replica`]): a store over the standbys whose
//! every connection first waits until its standby has replayed the primary's write-ahead log
//! up to the position read on the primary when the read began. A read that follows a write
//! sees it, whichever standby a balancer hands each connection to.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use diesel::QueryableByName;
use diesel::sql_types::{Bool, Text};
use diesel_async::RunQueryDsl;
use recruit_ports::{Replica, Store, StoreError};
use tokio_postgres::Client;

use crate::error::{copy_error, store_error};
use crate::{Conn, PgBackend, PgConfig, PgStore};

/// How often a connection asks its standby how far it has replayed.
const POLL: Duration = Duration::from_millis(5);

/// What a standby's connections must have replayed before they read, and until when they
/// may wait for it.
#[derive(Clone, Debug)]
pub(crate) struct Floor {
    /// The primary's position (`pg_current_wal_insert_lsn()`: past every commit made, even one
    /// with `synchronous_commit = off` not written yet), as PostgreSQL writes an LSN.
    lsn: Arc<str>,
    deadline: Instant,
}

/// The standbys of a primary, reached through one URL (a balancer's read-only port, or one
/// standby), for the heavy reads of [`PgStore`]s on the primary.
#[derive(Clone, Debug)]
pub struct PgReplica {
    primary: PgStore,
    standbys: PgStore,
}

impl PgReplica {
    /// The standbys `config` reaches, reading what `primary` has written. Connections are
    /// opened when first needed; nothing is migrated or cached on them.
    pub fn connect(primary: PgStore, config: &PgConfig) -> Result<Self, StoreError> {
        let config = PgConfig { credential_cache: None, ..config.clone() };
        Ok(Self { primary, standbys: PgBackend::connect(&config)? })
    }
}

#[derive(QueryableByName)]
struct Position {
    #[diesel(sql_type = Text)]
    lsn: String,
}

#[derive(QueryableByName)]
struct Replayed {
    #[diesel(sql_type = Bool)]
    behind: bool,
}

#[async_trait]
impl Replica for PgReplica {
    async fn caught_up(&self, deadline: Instant) -> Result<Arc<dyn Store>, StoreError> {
        let mut c = self.primary.conn().await?;
        let Position { lsn } = diesel::sql_query("SELECT pg_current_wal_insert_lsn()::text AS lsn")
            .get_result(&mut *c)
            .await
            .map_err(store_error)?;
        let floor = Floor { lsn: lsn.into(), deadline };
        let floored = PgBackend { floor: Some(floor), ..self.standbys.backend().clone() };
        Ok(Arc::new(recruit_adapters_diesel::Diesel::new(floored)))
    }
}

/// Whether a standby has not replayed `$1` yet. A server that is not in recovery is a primary,
/// and has everything it has.
const BEHIND: &str = "SELECT pg_is_in_recovery() \
    AND coalesce(pg_last_wal_replay_lsn() < $1::text::pg_lsn, true) AS behind";

/// Waits until the standby of `conn` has replayed `floor`'s position, until its deadline.
pub(crate) async fn reach(conn: &mut Conn, floor: &Floor) -> Result<(), StoreError> {
    loop {
        let Replayed { behind } = diesel::sql_query(BEHIND)
            .bind::<Text, _>(&*floor.lsn)
            .get_result(&mut **conn)
            .await
            .map_err(store_error)?;
        match floor.wait(behind)? {
            Some(wait) => tokio::time::sleep(wait).await,
            None => return Ok(()),
        }
    }
}

/// [`reach`], on a direct connection.
pub(crate) async fn reach_direct(client: &Client, floor: &Floor) -> Result<(), StoreError> {
    loop {
        let row = client.query_one(BEHIND, &[&&*floor.lsn]).await.map_err(copy_error)?;
        match floor.wait(row.try_get(0).map_err(copy_error)?)? {
            Some(wait) => tokio::time::sleep(wait).await,
            None => return Ok(()),
        }
    }
}

impl Floor {
    /// How long to wait before asking again a standby that is `behind` (`None`: it is not);
    /// unavailable once the deadline has passed.
    fn wait(&self, behind: bool) -> Result<Option<Duration>, StoreError> {
        if !behind {
            return Ok(None);
        }
        let now = Instant::now();
        if now >= self.deadline {
            return Err(StoreError::Unavailable(format!(
                "the standby has not replayed the primary's position {} in time",
                self.lsn
            )));
        }
        Ok(Some(POLL.min(self.deadline - now)))
    }
}
