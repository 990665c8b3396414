//! `recruit-client` against the real server, on SQLite and on PostgreSQL: every method; a
//! batch whose server is killed and started again while it is sent, written once; 429 waited
//! out as the server says; a ledger altered in the database caught by the client at the
//! altered position; a follower stopped and started again over a growing ledger, its file
//! equal to the ledger.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use recruit_client::{
    ChainBreak, ChainPoint, Client, DownloadStatus, Error, ErrorCode, LogQuery, RetryPolicy,
};
use recruit_domain::Timestamp;
use recruit_domain::model::{ReviewRules, Role};
use recruit_domain::review::SignOffFigures;
use recruit_ports::testkit::{ORG_A, ORG_B, job_id, user_id};
use serde_json::{Value, json};

use crate::common::*;

/// The client calls every operation of the server, each at its method and path: an
/// operation added without a client method, or a path changed on one side, fails here.
#[test]
fn the_client_calls_every_operation_at_its_method_and_path() {
    use recruit_service::OperationKind;
    let mut server: Vec<(&str, &str, &str)> = OperationKind::ALL
        .iter()
        .map(|k| (k.operation_id(), k.spec().method.as_str(), k.spec().path))
        .collect();
    let mut client: Vec<(&str, &str, &str)> =
        recruit_client::ENDPOINTS.iter().map(|e| (e.operation_id, e.method, e.path)).collect();
    server.sort_unstable();
    client.sort_unstable();
    assert_eq!(client, server);
}

/// The whole chain of organization A's privacy ledger, verified.
async fn chain(client: &Client) -> Result<Vec<recruit_client::VerifiedLine>, Error> {
    client.export(ChainPoint::START).await?.lines.try_collect().await
}

async fn every_method(world: World) {
    let server = world.serve(&[]);
    let client = world.client(&server);
    let me = client.me().await.unwrap();
    assert_eq!((me.organization_id, me.user.id), (org_id(ORG_A), user_id(ORG_A, Role::Owner)));
    assert_eq!(client.organization().await.unwrap().id, org_id(ORG_A));
    assert_eq!(client.job(job_id(ORG_A, 1)).await.unwrap().id, job_id(ORG_A, 1));
    let elsewhere = client.job(job_id(ORG_B, 1)).await.unwrap_err();
    assert_eq!(elsewhere.code(), Some(&ErrorCode::NotFound), "{elsewhere}");

    let member = user_id(ORG_A, Role::Member);
    let read = client.user(member).await.unwrap();
    let changed = client.update_user(member, &read.etag, &json!({"title": "Staff"})).await.unwrap();
    assert_eq!(changed.title.as_deref(), Some("Staff"));
    assert_ne!(changed.etag, read.etag);
    let stale = client.update_user(member, &read.etag, &json!({"title": "Other"})).await;
    assert_eq!(stale.unwrap_err().code(), Some(&ErrorCode::Conflict));

    let batch = accesses(3, "READ", "Client");
    let recorded = client.record_privacy_accesses(&batch, None).await.unwrap();
    assert!(!recorded.replayed && recorded.entries.len() == 3);
    let again = client.record_privacy_accesses(&batch, Some(&recorded.key)).await.unwrap();
    assert!(again.replayed, "the same key is answered with the batch stored");
    assert_eq!(again.entries, recorded.entries);
    let reused = client.record_privacy_accesses(&batch[..1], Some(&recorded.key)).await;
    assert_eq!(reused.unwrap_err().code(), Some(&ErrorCode::IdempotencyKeyReused));

    let from: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let to = Timestamp::from_unix_micros(Timestamp::now().unix_micros() + 3_600_000_000).unwrap();
    let small = LogQuery { limit: Some(2), ..LogQuery::new(from, to) };
    let streamed: Vec<_> = client.privacy_audit_logs(small.clone()).try_collect().await.unwrap();
    let whole = LogQuery { limit: Some(100), ..small };
    let page = client.privacy_audit_log_page(&whole, None).await.unwrap();
    assert!(streamed.len() > 2, "several pages");
    assert_eq!(streamed, page.data, "pages streamed in order, each entry once");
    let only = LogQuery { access_menu: Some("Client".into()), ..whole };
    let mine: Vec<_> = client.privacy_audit_logs(only).try_collect().await.unwrap();
    assert_eq!(mine, recorded.entries.iter().rev().cloned().collect::<Vec<_>>());

    // Recorded late: an access of 400 days ago, then one of now. The chain holds them in the
    // order they were recorded, and the verified export reads it whole.
    let mut late = accesses(1, "READ", "Late");
    let long_ago = Timestamp::now().unix_micros() - 400 * 86_400 * 1_000_000;
    late[0]["access_time"] = json!(Timestamp::from_unix_micros(long_ago).unwrap().to_string());
    let late = client.record_privacy_accesses(&late, None).await.unwrap().entries;
    let then = client.record_privacy_accesses(&accesses(1, "READ", "Late"), None).await.unwrap();

    let keys = client.checkpoint_keys().await.unwrap();
    assert_eq!(keys.len(), 1);
    let (checkpoint, _) = client.trusted_checkpoint().await.unwrap();
    assert_eq!(checkpoint, client.latest_checkpoint().await.unwrap());
    let lines = chain(&client).await.unwrap();
    assert_eq!(lines.last().unwrap().point.position, lines.len() as u64);
    assert!(lines.len() as u64 >= checkpoint.position);
    let ids: Vec<&Value> = lines.iter().map(|l| &l.line.entry["id"]).collect();
    let late = recorded.entries.iter().chain(&late).chain(&then.entries);
    assert!(late.into_iter().all(|e| ids.contains(&&json!(e.id.to_string()))));
    let rest = client.export(lines[2].point).await.unwrap();
    assert_eq!(rest.count, lines.len() as u64 - 3);
    let rest: Vec<_> = rest.lines.try_collect().await.unwrap();
    assert_eq!(rest, lines[3..], "from a point on, the rest of the chain");

    let text = &Timestamp::now().to_string()[..7];
    let month: recruit_domain::Month = text.parse().unwrap();
    let review = client.privacy_access_review(month).await.unwrap();
    assert_eq!(review.month, month);
    assert!(review.days.len() >= 28 && review.days.iter().all(|d| d.date.starts_with(text)));
    assert!(review.signed_off().is_none());
    let payroll = accesses(1, "DOWNLOAD", "Payroll");
    let download = client.record_privacy_accesses(&payroll, None).await.unwrap().entries[0].id;
    let decided = client.review_download(month, download, DownloadStatus::Confirmed, "payroll run");
    let decided = decided.await.unwrap();
    assert_eq!((decided.entry_id, decided.status), (download, DownloadStatus::Confirmed));
    let review = client.privacy_access_review(month).await.unwrap();
    let seen = review.downloads.iter().find(|d| d.id == download.to_string()).unwrap();
    assert_eq!(seen.review.as_ref(), Some(&decided));
    let rules = client.review_rules().await.unwrap();
    let stricter = ReviewRules { downloads: rules.downloads + 1, ..rules.clone() };
    assert_eq!(client.set_review_rules(&stricter).await.unwrap(), stricter);
    assert_eq!(client.review_rules().await.unwrap(), stricter, "kept");
    // Single sign-on: none yet; a provider this server may not reach refused, saying why.
    let none = client.single_sign_on().await.unwrap_err();
    assert_eq!(none.code(), Some(&ErrorCode::NotFound), "{none}");
    let settings = recruit_domain::model::SingleSignOnSettings {
        issuer: "http://127.0.0.1:9/".into(),
        client_id: "recruitd".into(),
        client_secret: Some("s3cr3t".into()),
        user_claim: "email".into(),
        owner_groups: vec![],
        tokens_and_links: true,
    };
    let refused = client.set_single_sign_on(&settings).await.unwrap_err();
    assert_eq!(refused.code(), Some(&ErrorCode::ValidationFailed), "{refused}");
    assert!(refused.to_string().contains("--outbound-allow"), "the reason: {refused}");
    client.remove_single_sign_on().await.unwrap();
    let unasked = client.explain_download(month, download, "for payroll").await.unwrap_err();
    assert_eq!(unasked.code(), Some(&ErrorCode::Conflict), "no explanation asked: {unasked}");
    let note = Some("exports by the client test");
    let running = client.sign_off_review(month, note).await.unwrap_err();
    assert_eq!(running.code(), Some(&ErrorCode::Conflict), "the running month: {running}");
    let month = month.previous().unwrap();
    let review = client.privacy_access_review(month).await.unwrap();
    let signed = client.sign_off_review(month, note).await.unwrap();
    assert_eq!((signed.month, signed.note.as_deref()), (month, note));
    assert_eq!(signed.figures, SignOffFigures::of(&review), "the figures of the review");
    assert!(signed.verification.intact);
    assert_eq!(client.sign_off_review(month, note).await.unwrap(), signed, "replayed");
    let review = client.privacy_access_review(month).await.unwrap();
    assert_eq!(review.signed_off().unwrap().unwrap(), signed, "the review holds its sign-off");
    let other = client.sign_off_review(month, Some("another")).await.unwrap_err();
    assert_eq!(other.code(), Some(&ErrorCode::Conflict));
}

#[tokio::test(flavor = "multi_thread")]
async fn every_method_on_sqlite() {
    every_method(World::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_method_on_postgresql() {
    every_method(World::postgres().await).await;
}

/// A TCP proxy to `server` on a port of its own: the first connection's answer is cut as it
/// begins (the server has done the work, the client never learns it), and `cut` is told so;
/// later connections pass through.
async fn cutting_proxy(server: u16, cut: tokio::sync::oneshot::Sender<()>) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut cut = Some(cut);
        while let Ok((client, _)) = listener.accept().await {
            let Ok(upstream) = tokio::net::TcpStream::connect(("127.0.0.1", server)).await else {
                continue; // the server is down: the client sees the connection closed
            };
            let first = cut.take();
            tokio::spawn(async move {
                let (mut client_read, mut client_write) = client.into_split();
                let (mut upstream_read, mut upstream_write) = upstream.into_split();
                let up = tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut client_read, &mut upstream_write).await;
                });
                match first {
                    Some(cut) => {
                        let mut byte = [0; 1];
                        let _ = upstream_read.read(&mut byte).await;
                        up.abort();
                        drop(client_write);
                        let _ = cut.send(());
                    }
                    None => {
                        let _ = tokio::io::copy(&mut upstream_read, &mut client_write).await;
                        let _ = client_write.shutdown().await;
                    }
                }
            });
        }
    });
    port
}

/// A batch of 1 000 accesses is stored, but its answer is lost and the server killed and
/// started again: the client retries with the batch's key until it is answered, is told the
/// batch was stored already, and the batch is stored once.
async fn a_batch_cut_by_a_restart_is_written_once(world: World) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let args = ["--checkpoint-key", world.key.to_str().unwrap()];
    let server = Server::spawn_at(port, &world.url, &args, "error", Stdio::null());
    let (cut, was_cut) = tokio::sync::oneshot::channel();
    let proxy = cutting_proxy(port, cut).await;
    let patient = RetryPolicy {
        max_attempts: 100,
        max_elapsed: Duration::from_secs(60),
        initial_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(500),
    };
    let through = format!("http://127.0.0.1:{proxy}");
    let client = Client::builder(through, &world.secret).retry(patient).build().unwrap();
    let batch = accesses(1_000, "READ", "Restart");
    let sending = tokio::spawn({
        let client = client.clone();
        async move { client.record_privacy_accesses(&batch, None).await }
    });
    was_cut.await.unwrap();
    server.kill();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let server = Server::spawn_at(port, &world.url, &args, "error", Stdio::null());
    let recorded = sending.await.unwrap().unwrap();
    assert!(recorded.replayed, "the first attempt had stored the batch");
    assert_eq!(recorded.entries.len(), 1_000);
    let from: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let to = Timestamp::from_unix_micros(Timestamp::now().unix_micros() + 3_600_000_000).unwrap();
    let restart = LogQuery {
        access_menu: Some("Restart".into()),
        limit: Some(100),
        ..LogQuery::new(from, to)
    };
    let stored: Vec<_> = client.privacy_audit_logs(restart).try_collect().await.unwrap();
    assert_eq!(stored.len(), 1_000, "the batch stored once");
    let mut ids: Vec<_> = stored.iter().map(|e| e.id).collect();
    ids.sort_unstable();
    let mut sent: Vec<_> = recorded.entries.iter().map(|e| e.id).collect();
    sent.sort_unstable();
    assert_eq!(ids, sent);
    assert!(server.stop().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_cut_by_a_restart_is_written_once_on_sqlite() {
    a_batch_cut_by_a_restart_is_written_once(World::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_cut_by_a_restart_is_written_once_on_postgresql() {
    a_batch_cut_by_a_restart_is_written_once(World::postgres().await).await;
}

/// A token past its quota gets 429 with `Retry-After`; a client that retries waits that long
/// and then succeeds, and one that does not gets RATE_LIMITED with the wait.
#[tokio::test(flavor = "multi_thread")]
async fn a_rate_limited_call_waits_as_the_server_says() {
    let world = World::sqlite();
    let server = world.serve(&["--rate-limit-reads", "10/min"]);
    let once =
        Client::builder(server.url(), &world.secret).retry(RetryPolicy::none()).build().unwrap();
    let told = loop {
        match once.organization().await {
            Ok(_) => continue,
            Err(Error::Api { code: ErrorCode::RateLimited, retry_after, .. }) => {
                break retry_after.expect("a wait");
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert!(told >= Duration::from_secs(1), "{told:?}");
    let started = Instant::now();
    world.client(&server).organization().await.unwrap();
    assert!(started.elapsed() >= told - Duration::from_secs(1), "{:?}", started.elapsed());
}

/// An entry changed in the database, then one removed: the client's export stops at the
/// position, naming what it found.
async fn an_altered_ledger_is_caught_at_its_position(world: World, org: &str) {
    let server = world.serve(&[]);
    let client = world.client(&server);
    let whole = chain(&client).await.unwrap();
    assert!(whole.len() > 5);
    (world.tamper)(&format!(
        "UPDATE privacy_audit_logs SET access_menu = 'forged' \
         WHERE organization_id = {org} AND position = 3"
    ));
    let altered = chain(&client).await.unwrap_err();
    assert!(matches!(altered, Error::Chain(ChainBreak::Altered { position: 3 })), "{altered}");
    assert_eq!(altered.position(), Some(3));
    (world.tamper)(&format!(
        "DELETE FROM privacy_audit_logs WHERE organization_id = {org} AND position = 3"
    ));
    let removed = chain(&client).await.unwrap_err();
    assert!(
        matches!(removed, Error::Chain(ChainBreak::Gap { expected: 3, found: 4 })),
        "{removed}"
    );
    // A pinned key other than the server's: no checkpoint is trusted.
    let other = recruit_domain::chain::SigningKey::from_bytes(&[3; 32]).verifying_key();
    let pinned = Client::builder(server.url(), &world.secret).pin_key(other).build().unwrap();
    assert!(matches!(pinned.export(ChainPoint::START).await, Err(Error::Untrusted(_))));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_altered_ledger_is_caught_at_its_position_on_sqlite() {
    let org = format!("X'{:032x}'", ORG_A);
    an_altered_ledger_is_caught_at_its_position(World::sqlite(), &org).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_altered_ledger_is_caught_at_its_position_on_postgresql() {
    let org = format!("'{}'::uuid", recruit_domain::Uuid::from_u128(ORG_A));
    an_altered_ledger_is_caught_at_its_position(World::postgres().await, &org).await;
}

/// The lines of the follower's file.
fn file_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A follower run three times over a growing ledger, once after a crash left half a line:
/// its file ends equal to the ledger, every entry once and in the chain's order.
async fn the_follower_keeps_a_file_equal_to_the_ledger(world: World) {
    let server = world.serve(&[]);
    let client = world.client(&server);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.ndjson");
    let mut total = 0;
    for run in 0..3 {
        client.record_privacy_accesses(&accesses(7, "READ", "Follow"), None).await.unwrap();
        if run == 2 {
            // A crash in the middle of a write.
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
            file.write_all(br#"{"ledger":"privacy","organization_id":"#).unwrap();
        }
        let appended = recruit_client::follow::append_new(&client, &path).await.unwrap();
        total += appended.written;
        assert_eq!(appended.point.position, total);
        assert_eq!(file_lines(&path).len() as u64, total);
    }
    let idle = recruit_client::follow::append_new(&client, &path).await.unwrap();
    assert_eq!(idle.written, 0);
    let ledger: Vec<Value> = chain(&client)
        .await
        .unwrap()
        .into_iter()
        .map(|l| serde_json::to_value(l.line).unwrap())
        .collect();
    assert_eq!(file_lines(&path), ledger, "the file is the ledger");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_follower_keeps_a_file_equal_to_the_ledger_on_sqlite() {
    the_follower_keeps_a_file_equal_to_the_ledger(World::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_follower_keeps_a_file_equal_to_the_ledger_on_postgresql() {
    the_follower_keeps_a_file_equal_to_the_ledger(World::postgres().await).await;
}
