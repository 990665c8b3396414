//! A writer that stops sending in the middle of a `COPY … FROM STDIN`, its connection still
//! alive (a process frozen, not dead): PostgreSQL never ends it by itself, whatever the
//! timeouts. `end_stalled_writes` ends it once it has read nothing for twice the statement
//! timeout, and with it the locks it held; a `COPY` that keeps moving, however slowly, is
//! left alone.

use std::time::{Duration, Instant};

use futures_util::SinkExt;
use recruit_adapters_pg::testkit::TestDatabase;
use recruit_adapters_pg::{PgBackend, PgConfig};
use recruit_ports::Maintenance;
use tokio_postgres::{Client, NoTls};

async fn client(url: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// Whether a new session can take advisory lock `n` now.
async fn free(url: &str, n: i64) -> bool {
    let c = client(url).await;
    c.query_one("SELECT pg_try_advisory_lock($1)", &[&n]).await.unwrap().get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_that_reads_nothing_is_ended_with_its_locks_and_one_that_moves_is_not() {
    let db = TestDatabase::fresh().await;
    // Statements of 1 s: a write may wait on its client for 2 s.
    let mut config = PgConfig::new(db.url());
    config.statement_timeout = Duration::from_secs(1);
    let store = PgBackend::connect(&config).unwrap();

    // The frozen writer: a lock, then a COPY that gets no data.
    let frozen = client(db.url()).await;
    frozen
        .batch_execute(
            "BEGIN; CREATE TEMP TABLE stuck (n int); SELECT pg_advisory_xact_lock(4242);",
        )
        .await
        .unwrap();
    let stuck = frozen.copy_in::<_, bytes::Bytes>("COPY stuck FROM STDIN").await.unwrap();
    let mut stuck = Box::pin(stuck);

    // The slow writer: a row every 300 ms, in a transaction holding a lock too.
    let slow = client(db.url()).await;
    slow.batch_execute(
        "BEGIN; CREATE TEMP TABLE moving (n int); SELECT pg_advisory_xact_lock(4343);",
    )
    .await
    .unwrap();
    let moving = slow.copy_in::<_, bytes::Bytes>("COPY moving FROM STDIN").await.unwrap();
    let mut moving = Box::pin(moving);

    let started = Instant::now();
    let mut ended = 0;
    let mut rows = 0;
    while started.elapsed() < Duration::from_secs(6) {
        rows += 1;
        moving.send(bytes::Bytes::from(format!("{rows}\n"))).await.unwrap();
        moving.flush().await.unwrap();
        ended += store.end_stalled_writes().await.unwrap();
        if ended == 0 {
            assert!(!free(db.url(), 4242).await, "the frozen writer's lock is held until ended");
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(ended, 1, "the frozen writer alone is ended");
    assert!(free(db.url(), 4242).await, "its lock went with it");
    assert!(stuck.send(bytes::Bytes::from_static(b"1\n")).await.is_err() || frozen.is_closed());
    assert!(!free(db.url(), 4343).await, "the slow writer still holds its lock");

    // The slow writer finishes as if nothing happened.
    let copied = moving.as_mut().finish().await.unwrap();
    assert_eq!(copied, rows);
    slow.batch_execute("COMMIT").await.unwrap();
    let _ = stuck.as_mut().finish().await;
}
