//! Writes stalled at their client, ended: [`Maintenance::end_stalled_writes`].
//!
//! A writer's transaction holds its organization's chain head (`FOR UPDATE`) while its rows go
//! in by `COPY … FROM STDIN`. PostgreSQL ends a transaction idle between statements after
//! `idle_in_transaction_session_timeout`, but applies no timeout to a `COPY` waiting for data
//! (it handles no query cancel while it reads from its client). A writer frozen mid-`COPY`
//! (stopped, paused, starved) keeps a connection whose TCP still answers, so no keepalive ends
//! it either: every write of the organization waits until the writer runs again.
//!
//! Every replica therefore watches the `COPY … FROM STDIN` sessions of its own role in its
//! database (`pg_stat_progress_copy`): one seen waiting for its client (`ClientRead`) with
//! the same byte count for longer than the limit (the one PostgreSQL applies to a transaction
//! idle between statements) is terminated, by whichever replica sees it first. A `COPY` that
//! moves, however slowly, is never ended; nor is anything of another role.
//!
//! [`Maintenance::end_stalled_writes`]: recruit_ports::Maintenance::end_stalled_writes

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Bool, Integer};
use diesel_async::RunQueryDsl;
use recruit_ports::StoreError;

use crate::PgBackend;
use crate::error::TxError;

/// The `COPY … FROM STDIN` sessions of this role in this database that wait for their client
/// now, with when their statement began and how far it has read, by the database's clock.
const WAITING: &str = "\
    SELECT a.pid, \
           CAST(EXTRACT(EPOCH FROM a.query_start) * 1000000 AS BIGINT) AS started, \
           p.bytes_processed AS bytes, \
           CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT) AS now \
      FROM pg_stat_progress_copy p JOIN pg_stat_activity a ON a.pid = p.pid \
     WHERE p.command = 'COPY FROM' AND p.type = 'PIPE' \
       AND a.wait_event_type = 'Client' AND a.wait_event = 'ClientRead' \
       AND a.usename = current_user AND a.datname = current_database() \
       AND a.pid <> pg_backend_pid()";

/// Terminates session `$1` if it still runs the statement begun at `$2`, still waits for its
/// client, and has read no more than `$3` bytes.
const END: &str = "\
    SELECT pg_terminate_backend(a.pid) AS ended \
      FROM pg_stat_activity a JOIN pg_stat_progress_copy p ON p.pid = a.pid \
     WHERE a.pid = $1 \
       AND CAST(EXTRACT(EPOCH FROM a.query_start) * 1000000 AS BIGINT) = $2 \
       AND p.bytes_processed = $3 AND a.wait_event = 'ClientRead'";

#[derive(QueryableByName)]
struct Waiting {
    #[diesel(sql_type = Integer)]
    pid: i32,
    #[diesel(sql_type = BigInt)]
    started: i64,
    #[diesel(sql_type = BigInt)]
    bytes: i64,
    #[diesel(sql_type = BigInt)]
    now: i64,
}

#[derive(QueryableByName)]
struct Ended {
    #[diesel(sql_type = Bool)]
    ended: bool,
}

/// What one replica has seen of the sessions waiting for their client: by session and
/// statement, the bytes read and since when (the database's clock, in microseconds) that count
/// has not moved.
#[derive(Debug)]
pub(crate) struct Stalls {
    limit: Duration,
    seen: Mutex<HashMap<(i32, i64), (i64, i64)>>,
}

impl Stalls {
    /// Ends writes stalled for longer than `limit`.
    pub(crate) fn new(limit: Duration) -> Self {
        Self { limit, seen: Mutex::default() }
    }

    /// Takes in what waits now; returns the sessions stalled past the limit, as
    /// (pid, statement's start, bytes read). What no longer waits is forgotten.
    fn observe(&self, waiting: &[Waiting]) -> Vec<(i32, i64, i64)> {
        let limit = i64::try_from(self.limit.as_micros()).unwrap_or(i64::MAX);
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut kept = HashMap::with_capacity(waiting.len());
        let mut stalled = Vec::new();
        for w in waiting {
            let since = match seen.get(&(w.pid, w.started)) {
                Some(&(bytes, since)) if bytes == w.bytes => since,
                _ => w.now,
            };
            if w.now - since >= limit {
                stalled.push((w.pid, w.started, w.bytes));
            }
            kept.insert((w.pid, w.started), (w.bytes, since));
        }
        *seen = kept;
        stalled
    }
}

impl PgBackend {
    /// [`Maintenance::end_stalled_writes`](recruit_ports::Maintenance::end_stalled_writes).
    pub(crate) async fn end_stalled(&self) -> Result<usize, StoreError> {
        let mut c = self.conn().await?;
        let waiting: Vec<Waiting> =
            diesel::sql_query(WAITING).load(&mut *c).await.map_err(TxError::from)?;
        let mut ended = 0;
        for (pid, started, bytes) in self.stalls.observe(&waiting) {
            let done: Vec<Ended> = diesel::sql_query(END)
                .bind::<Integer, _>(pid)
                .bind::<BigInt, _>(started)
                .bind::<BigInt, _>(bytes)
                .load(&mut *c)
                .await
                .map_err(TxError::from)?;
            if done.iter().any(|d| d.ended) {
                tracing::warn!(
                    pid,
                    stalled_for = ?self.stalls.limit,
                    "ended a database session that stopped sending in the middle of a write \
                     (a writer frozen or cut off): its lock on the chain held every other write"
                );
                ended += 1;
            }
        }
        Ok(ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(pid: i32, bytes: i64, now_s: i64) -> Waiting {
        Waiting { pid, started: 1, bytes, now: now_s * 1_000_000 }
    }

    #[test]
    fn only_a_copy_that_read_nothing_for_the_whole_limit_is_stalled() {
        let stalls = Stalls::new(Duration::from_secs(10));
        assert!(stalls.observe(&[waiting(7, 100, 0), waiting(8, 5, 0)]).is_empty());
        // 8 moves on; 7 does not.
        assert!(stalls.observe(&[waiting(7, 100, 6), waiting(8, 50, 6)]).is_empty());
        assert_eq!(stalls.observe(&[waiting(7, 100, 10), waiting(8, 90, 10)]), [(7, 1, 100)]);
        // 8's count last moved at 10 s: not stalled until 20 s.
        assert!(stalls.observe(&[waiting(8, 90, 19)]).is_empty());
        assert_eq!(stalls.observe(&[waiting(8, 90, 20)]), [(8, 1, 90)]);
        // A session seen again after it stopped waiting starts over.
        assert!(stalls.observe(&[]).is_empty());
        assert!(stalls.observe(&[waiting(8, 90, 40)]).is_empty());
    }
}
