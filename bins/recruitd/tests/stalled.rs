//! A replica frozen in the middle of a write (stopped, paused, starved: its connection to
//! PostgreSQL still alive) holds its organization's chain, which every other write there
//! waits for. PostgreSQL never ends such a `COPY` by itself; a live replica does, once it has
//! read nothing for twice the statement timeout, and the organization's writes go on.

use std::time::{Duration, Instant};

use recruit_ports::testkit::ORG_A;
use serde_json::json;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_frozen_mid_copy_holds_the_organizations_writes_no_longer_than_twice_the_statement_timeout()
 {
    let world = World::postgres().await;
    // Statements of 1 s: a write may wait on its client for 2 s.
    let server = world.serve(&["--db-statement-timeout", "1s"]);
    let body = json!({ "entries": accesses(3, "READ", "People") }).to_string();
    let write = |key: &str| {
        tokio::task::block_in_place(|| {
            server.post("/v1/audit-logs/privacy", &world.secret, Some(key), &body)
        })
    };
    let (status, _, said) = write("before");
    assert_eq!(status, 201, "{said}");

    // The frozen replica: the organization's chain locked, then a COPY given no data.
    let (frozen, connection) =
        tokio_postgres::connect(&world.url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    frozen
        .batch_execute(&format!(
            "BEGIN; SELECT 1 FROM ledger_heads WHERE organization_id = '{}' FOR UPDATE; \
             CREATE TEMP TABLE stuck (n int);",
            recruit_domain::Uuid::from_u128(ORG_A)
        ))
        .await
        .unwrap();
    let _stuck = frozen.copy_in::<_, bytes::Bytes>("COPY stuck FROM STDIN").await.unwrap();
    let frozen_at = Instant::now();

    // Writes wait for it and are refused, until a replica ends it.
    let mut refused = 0;
    let mut n = 0;
    loop {
        n += 1;
        let (status, headers, said) = write(&format!("during-{n}"));
        if status == 201 {
            break;
        }
        assert!(matches!(status, 503 | 504), "{status} {said}");
        assert!(!header(&headers, "retry-after").is_empty() || status == 504, "{headers:?}");
        refused += 1;
        assert!(
            frozen_at.elapsed() < Duration::from_secs(15),
            "the frozen write still holds the organization's writes after 15 s"
        );
    }
    let held = frozen_at.elapsed();
    assert!(refused > 0, "the frozen write held the chain for a while ({held:?})");
    // The replica signals the frozen session's end; its client hears of it a moment later.
    let told_by = Instant::now() + Duration::from_secs(5);
    while !frozen.is_closed() && Instant::now() < told_by {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(frozen.is_closed(), "its session was ended");
    cli(&world.url, &["audit", "verify"]);
    server.stop();
}
