//! `--read-database-url` against a real hot standby of a real primary: exports, `audit verify`
//! and the monthly review read on the standby what they read on the primary, see what was
//! written just before them, and run on the primary, counted, when the standby lags behind or
//! is gone.

use std::process::Stdio;
use std::time::{Duration, Instant};

use recruit_adapters_pg::testkit::DedicatedCluster;
use recruit_domain::model::Role;
use recruit_ports::testkit::{ORG_A, user_id, world};
use serde_json::{Value, json};

use crate::common::*;

/// Records one access of organization A with `key`; returns the stored entry's id.
fn record(server: &Server, writer: &str, key: &str) -> String {
    let entry = json!({
        "access_time": recruit_domain::Timestamp::now().to_string(),
        "account_id": "0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e",
        "ip_addresses": ["192.0.2.44"],
        "data_subject": {"type": "EMPLOYEE", "user": user_id(ORG_A, Role::Member).to_string()},
        "access_data": ["NAME"],
        "access_menu": "People",
        "access_menu_path": "/people/profile",
        "activity_category": "READ"
    });
    let body = json!({ "entries": [entry] }).to_string();
    let (status, _, body) = server.post("/v1/audit-logs/privacy", writer, Some(key), &body);
    assert_eq!(status, 201, "{body}");
    let stored: Value = serde_json::from_str(&body).unwrap();
    stored["entries"][0]["id"].as_str().unwrap().to_owned()
}

/// Organization A's privacy ledger from the start of the year to a day from now, exported
/// through `server`: its lines as JSON.
fn export(server: &Server, reader: &str) -> Vec<Value> {
    let now = recruit_domain::Timestamp::now();
    let to = recruit_domain::Timestamp::from_unix_micros(now.unix_micros() + 86_400_000_000);
    let window = format!("timestamp_gte=2026-01-01T00:00:00Z&timestamp_lt={}", to.unwrap());
    let path = format!("/v1/audit-logs/privacy/export?{window}");
    let (status, _, raw) = server.request_raw("GET", &path, Some(reader));
    assert_eq!(status, 200, "{raw}");
    let body = dechunk(&raw).expect("the export ends with its last chunk");
    body.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn holds(lines: &[Value], id: &str) -> bool {
    lines.iter().any(|l| l["entry"]["id"] == id)
}

/// Heavy reads so far that ran where `on` says (`standby`, `fallback`).
fn heavy_reads(server: &Server, on: &str) -> f64 {
    counter(server, &format!("recruitd_heavy_reads_total{{on=\"{on}\"}}"))
}

#[test]
fn heavy_reads_run_on_a_standby_that_caught_up_and_on_the_primary_when_it_did_not() {
    let primary = DedicatedCluster::start();
    primary.create_database("recruitd");
    let url = primary.url("recruitd");
    let dir = tempfile::tempdir().unwrap();
    let document = dir.path().join("world.json");
    std::fs::write(&document, serde_json::to_string(&world()).unwrap()).unwrap();
    cli(&url, &["import", document.to_str().unwrap()]);
    let standby = primary.standby();
    let standbys = standby.url("recruitd");
    let reader = token(&url, ORG_A, Role::Owner, "audit_logs:read");
    let writer = token(&url, ORG_A, Role::Admin, "audit_logs:write");
    let reads = ["--read-database-url", &standbys, "--read-replica-wait", "1s"];
    let server = Server::spawn(&url, &reads, "error", Stdio::inherit());

    // Written on the primary, then at once exported: the standby waits until it holds it.
    let first = record(&server, &writer, "first");
    let on_standby = export(&server, &reader);
    assert!(holds(&on_standby, &first), "the export holds the access recorded just before");
    assert_eq!((heavy_reads(&server, "standby"), heavy_reads(&server, "fallback")), (1.0, 0.0));

    // The primary alone exports the same lines, positions and hashes.
    let alone = Server::start(&url);
    assert_eq!(export(&alone, &reader), on_standby, "the chains read the same from either");
    let month = &recruit_domain::Timestamp::now().to_string()[..7];
    let review = format!("/v1/audit-logs/privacy/reviews/{month}");
    let (status, from_standby) = server.get(&review, &reader);
    assert_eq!(status, 200, "{from_standby}");
    assert_eq!(alone.get(&review, &reader), (200, from_standby), "one review from either");
    assert_eq!(heavy_reads(&server, "standby"), 2.0);
    drop(alone);

    // The operator's commands read the same through the standby.
    let org = org_id(ORG_A).to_string();
    let verify = ["audit", "verify", "--json"];
    fn reads_too<'a>(reads: &[&'a str], args: &[&'a str]) -> Vec<&'a str> {
        [reads, args].concat()
    }
    assert_eq!(cli(&url, &reads_too(&reads, &verify)), cli(&url, &verify));
    let export_args = ["audit", "export", "--ledger", "privacy", "--org", &org, "-"];
    let exported = cli(&url, &reads_too(&reads, &export_args));
    assert_eq!(exported, cli(&url, &export_args));
    assert!(exported.contains(&first));

    // A standby that stopped replaying: the export waits its second, then reads the primary,
    // and holds what was written just before it.
    standby.execute("postgres", "SELECT pg_wal_replay_pause()");
    let second = record(&server, &writer, "second");
    let started = Instant::now();
    let lines = export(&server, &reader);
    let took = started.elapsed();
    assert!(holds(&lines, &second), "a lagging standby is not read");
    assert!(took >= Duration::from_secs(1) && took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(heavy_reads(&server, "fallback"), 1.0);
    standby.execute("postgres", "SELECT pg_wal_replay_resume()");
    let third = record(&server, &writer, "third");
    assert!(holds(&export(&server, &reader), &third));
    assert_eq!((heavy_reads(&server, "standby"), heavy_reads(&server, "fallback")), (3.0, 1.0));

    // A standby that is gone: the primary serves, as fast as a refused connection allows.
    standby.stop();
    let fourth = record(&server, &writer, "fourth");
    assert!(holds(&export(&server, &reader), &fourth));
    let (status, _) = server.get(&review, &reader);
    assert_eq!(status, 200);
    assert_eq!(heavy_reads(&server, "fallback"), 3.0);
    assert!(server.stop().success());
}
