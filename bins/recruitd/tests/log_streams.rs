//! Log streams delivered by the server to an HTTPS destination that verifies every batch with
//! the Standard Webhooks reference library (`webhook_receiver.py`, PyPI `standardwebhooks`,
//! installed here in a virtual environment when missing), on SQLite and on PostgreSQL: the
//! whole chain delivered in order and checked link by link; destinations the outbound policy
//! refuses; a receiver that refuses, throttles, answers 410 or is slow, a pause, and a server
//! killed mid-delivery, each ending with every entry at the receiver, in order, and nothing
//! skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use recruit_client::{Client, ErrorCode};
use recruit_domain::chain::ExportLine;
use recruit_domain::model::{
    BatchFormat, LogStream, LogStreamDestination, LogStreamSettings, LogStreamState, Role,
};
use recruit_ports::testkit::ORG_A;
use serde_json::{Value, json};

use crate::common::*;

/// The pinned reference library.
const STANDARDWEBHOOKS: &str = "standardwebhooks==1.1.0";

/// The Python of a virtual environment holding [`STANDARDWEBHOOKS`], made when missing.
fn python() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv-webhooks");
    let python = root.join("bin/python");
    let installed = Command::new(&python)
        .args(["-c", "import standardwebhooks"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        let made = Command::new("python3").args(["-m", "venv"]).arg(&root).status();
        assert!(made.is_ok_and(|s| s.success()), "python3 -m venv (python3-venv is needed)");
        let pip = root.join("bin/pip");
        let status = Command::new(pip)
            .args(["install", "--quiet", "--disable-pip-version-check", STANDARDWEBHOOKS])
            .status()
            .unwrap();
        assert!(status.success(), "pip install {STANDARDWEBHOOKS}");
    }
    python
}

impl Peer {
    /// The lines acknowledged, by position (a batch delivered twice counts once), once the
    /// receiver holds every position up to `last`; panics after 60 s.
    async fn until(&self, last: u64) -> BTreeMap<u64, ExportLine> {
        self.of(None, last).await
    }

    /// [`Peer::until`] for the batches of `stream` only, when given.
    async fn of(&self, stream: Option<&LogStream>, last: u64) -> BTreeMap<u64, ExportLine> {
        let prefix = stream.map(|s| format!("lsb_{}_", s.id.uuid().simple()));
        held_up_to(last, || async {
            let received = self.received().await;
            let batches = received["received"].as_array().unwrap().iter().filter(|b| {
                prefix.as_ref().is_none_or(|p| b["id"].as_str().unwrap().starts_with(p))
            });
            let lines = batches
                .flat_map(|b| b["lines"].as_array().unwrap().iter())
                .map(|l| serde_json::from_value(l.clone()).unwrap())
                .collect();
            (lines, format!("attempts {}", received["attempts"]))
        })
        .await
    }
}

/// Organization A's privacy ledger as its export shows it, in chain order.
async fn exported(client: &Client) -> Vec<ExportLine> {
    let export = client.export(recruit_client::ChainPoint::START).await.unwrap();
    let lines: Vec<_> = futures_util::TryStreamExt::try_collect(export.lines).await.unwrap();
    lines.into_iter().map(|v: recruit_client::VerifiedLine| v.line).collect()
}

/// The last position of organization A's privacy ledger after recording `n` more accesses.
async fn record(client: &Client, n: usize) -> u64 {
    let batch = accesses(n, "READ", "Streams");
    client.record_privacy_accesses(&batch, None).await.unwrap();
    exported(client).await.last().and_then(|l| l.position).unwrap()
}

async fn delivered_to_a_receiver_that_verifies_every_batch(world: World) {
    let receiver = Peer::start(&python(), "webhook_receiver.py");
    let serve = ["--outbound-allow", "127.0.0.1", "--log-stream-lease", "3s"];
    let server = world.serve(&serve);
    let client = world.client(&server);
    let first = record(&client, 5).await;

    // Destinations the outbound policy refuses, whatever the flag allows, and settings that
    // are not a destination, each named.
    for (url, field) in [
        ("https://10.1.2.3/in", "destination.url"),
        ("https://169.254.169.254/latest", "destination.url"),
        ("https://[::1]:9/in", "destination.url"),
        ("http://siem.example.com/in", "destination.url"),
        ("https://user:pw@siem.example.com/in", "destination.url"),
    ] {
        let settings = LogStreamSettings {
            name: "SIEM".into(),
            destination: LogStreamDestination::Https {
                url: url.into(),
                format: BatchFormat::Ndjson,
            },
            after_position: None,
            after_time: None,
        };
        let refused = client.create_log_stream(&settings).await.unwrap_err();
        assert_eq!(refused.code(), Some(&ErrorCode::ValidationFailed), "{url}: {refused}");
        assert!(refused.to_string().contains(field), "{url}: {refused}");
    }
    let member = token(&world.url, ORG_A, Role::Member, "log_streams:admin");
    let (status, body) = server.get("/v1/log-streams", &member);
    assert_eq!((status, code(&body)), (403, "PERMISSION_DENIED"), "{body}");
    let unscoped = token(&world.url, ORG_A, Role::Owner, "audit_logs:read");
    let (status, body) = server.get("/v1/log-streams", &unscoped);
    assert_eq!((status, code(&body)), (403, "INSUFFICIENT_SCOPE"), "{body}");

    // Every entry from the chain's start; the secret shown once, and the receiver holds it
    // only now: until then it answers 503 with Retry-After, which is waited out (when a batch
    // comes before the secret).
    let settings = LogStreamSettings {
        name: "SIEM".into(),
        destination: LogStreamDestination::Https {
            url: format!("{}/in", receiver.url),
            format: BatchFormat::Ndjson,
        },
        after_position: Some(0),
        after_time: None,
    };
    let stream = client.create_log_stream(&settings).await.unwrap();
    let secret = stream.signing_secret.clone().expect("shown once");
    assert!(secret.starts_with("whsec_"));
    let read = client.log_stream(stream.id).await.unwrap();
    assert_eq!(read.signing_secret, None, "never shown again");
    assert_eq!(client.log_streams().await.unwrap().len(), 1);
    receiver.control("__secrets", json!({"secrets": [secret]})).await;
    let lines = receiver.until(first).await;
    chained(&lines);
    let export = exported(&client).await;
    assert_eq!(lines.values().cloned().collect::<Vec<_>>(), export, "the export's lines");
    let caught_up = client.log_stream(stream.id).await.unwrap();
    assert_eq!((caught_up.delivered_position, caught_up.lag_entries), (first, 0));
    assert_eq!(caught_up.state, LogStreamState::Active);
    let labelled = |name: &str| format!("recruitd_stream_{name}{{stream=\"{}\"}}", stream.id);
    assert_eq!(counter(&server, &labelled("delivered_entries_total")), first as f64);
    assert_eq!(counter(&server, &labelled("lag_entries")), 0.0);
    let (status, _, ready) = server.request("GET", "/readyz", None);
    assert_eq!((status, &ready["log_streams"]), (200, &json!({"OK": 1})), "{ready}");

    // Refused, throttled and failed batches are sent again, whole, with the same id.
    receiver
        .control(
            "__faults",
            json!({"faults": [{"status": 500}, {"status": 429, "retry_after": "1"}, {"status": 503}]}),
        )
        .await;
    let second = record(&client, 3).await;
    chained(&receiver.until(second).await);
    let report = receiver.received().await;
    let attempts: Vec<&str> =
        report["attempts"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let last_id = report["received"].as_array().unwrap().last().unwrap()["id"].as_str().unwrap();
    assert!(attempts.iter().filter(|a| **a == last_id).count() >= 4, "{attempts:?}");
    assert_eq!(report["unverified"], 0);
    assert!(counter(&server, &labelled("retried_batches_total")) >= 3.0);
    assert!(counter(&server, &labelled("failed_attempts_total")) >= 3.0);
    assert_eq!(counter(&server, &labelled("delivered_entries_total")), second as f64);

    // 410 Gone suspends the stream; it keeps its position, and resuming delivers the rest.
    receiver.control("__faults", json!({"faults": [{"status": 410}]})).await;
    let third = record(&client, 2).await;
    let suspended = in_state(&client, &stream, LogStreamState::Suspended).await;
    assert_eq!(suspended.delivered_position, second);
    assert_eq!(suspended.lag_entries, third - second);
    assert_eq!(suspended.last_error.as_ref().and_then(|e| e.status), Some(410));
    client.resume_log_stream(stream.id).await.unwrap();
    chained(&receiver.until(third).await);

    // Paused, nothing is delivered; resumed, everything is.
    let paused = client.pause_log_stream(stream.id).await.unwrap();
    assert_eq!(paused.state, LogStreamState::Paused);
    let fourth = record(&client, 2).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let held = receiver.until(third).await;
    assert_eq!(held.keys().next_back(), Some(&third), "nothing delivered while paused");
    client.resume_log_stream(stream.id).await.unwrap();
    chained(&receiver.until(fourth).await);

    // The server killed while the receiver holds a batch: another process delivers it again
    // once the lease runs out; nothing is lost or out of order.
    receiver.control("__faults", json!({"faults": [{"status": 200, "delay": 3}]})).await;
    let fifth = record(&client, 4).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.kill();
    let server = world.serve(&serve);
    let client = world.client(&server);
    chained(&receiver.until(fifth).await);

    // A new secret: during its overlap a receiver holding either verifies every batch (both
    // sign); once it ends, only the new one does, and a receiver still on the old one refuses
    // (401) until it is given the new one.
    let rotated = client.rotate_log_stream_secret(stream.id, Some(Duration::from_secs(3))).await;
    let new = rotated.unwrap().signing_secret.expect("shown once");
    assert_ne!(new, secret);
    let overlap_ends = Instant::now() + Duration::from_secs(3);
    receiver.control("__secrets", json!({"secrets": [secret]})).await;
    let during = record(&client, 1).await;
    chained(&receiver.until(during).await);
    receiver.control("__secrets", json!({"secrets": [new]})).await;
    let with_new = record(&client, 1).await;
    chained(&receiver.until(with_new).await);
    tokio::time::sleep(overlap_ends.saturating_duration_since(Instant::now())).await;
    receiver.control("__secrets", json!({"secrets": [secret]})).await;
    let after = record(&client, 1).await;
    let refused = in_state(&client, &stream, LogStreamState::Failing).await;
    assert_eq!(refused.last_error.as_ref().and_then(|e| e.status), Some(401));
    assert!(receiver.received().await["unverified"].as_u64().unwrap() >= 1);
    receiver.control("__secrets", json!({"secrets": [new]})).await;
    chained(&receiver.until(after).await);

    // Renamed, in JSON arrays; then removed.
    let patch = json!({"name": "SIEM (arrays)", "destination": {"format": "JSON_ARRAY"}});
    let changed = client.update_log_stream(stream.id, &patch).await.unwrap();
    assert_eq!(changed.name, "SIEM (arrays)");
    let sixth = record(&client, 2).await;
    chained(&receiver.until(sixth).await);
    let report = receiver.received().await;
    let newest = report["received"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(newest["content_type"], "application/json", "{newest}");
    client.delete_log_stream(stream.id).await.unwrap();
    let gone = client.log_stream(stream.id).await.unwrap_err();
    assert_eq!(gone.code(), Some(&ErrorCode::NotFound));

    // What the receiver holds, checked as a receiver would: every batch as delivered (its
    // duplicates too, in another order) against a checkpoint signed now, needing no database.
    let org = org_id(ORG_A).to_string();
    let key = world.key.to_str().unwrap();
    cli(&world.url, &["--checkpoint-key", key, "audit", "checkpoint", "--org", &org]);
    let files = tempfile::tempdir().unwrap();
    let checkpoint = files.path().join("checkpoint.json");
    let latest = client.latest_checkpoint().await.unwrap();
    std::fs::write(&checkpoint, serde_json::to_string(&latest).unwrap()).unwrap();
    let report = receiver.received().await;
    let mut held: Vec<Value> = vec![];
    for batch in report["received"].as_array().unwrap().iter().rev() {
        held.extend(batch["lines"].as_array().unwrap().iter().cloned());
    }
    held.push(held[0].clone());
    let verify = |lines: &[Value]| {
        let file = files.path().join("received.ndjson");
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        std::fs::write(&file, text.join("\n")).unwrap();
        let output = std::process::Command::new(BIN)
            .args(["audit", "verify", "--stream"])
            .arg(&file)
            .arg("--checkpoint")
            .arg(&checkpoint)
            .args(["--public-key", key, "--from-position", "0"])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stdout).into_owned();
        (output.status.success(), said + &String::from_utf8_lossy(&output.stderr))
    };
    let (complete, said) = verify(&held);
    assert!(complete && said.contains(": complete"), "{said}");
    let broken: Vec<Value> = held
        .iter()
        .filter(|l| l["position"] != 3)
        .cloned()
        .map(|mut l| {
            if l["position"] == 5 {
                l["entry"]["access_menu_path"] = "elsewhere".into();
            }
            l
        })
        .collect();
    let (complete, said) = verify(&broken);
    assert!(!complete, "{said}");
    for problem in ["INCOMPLETE", "MISSING position 3", "ALTERED position 5"] {
        assert!(said.contains(problem), "{problem}: {said}");
    }
    // The same through the client, against the checkpoint the server serves.
    let parsed = |lines: &[Value]| -> Vec<ExportLine> {
        lines.iter().map(|l| serde_json::from_value(l.clone()).unwrap()).collect()
    };
    let checked = client.verify_received(parsed(&held), Some(0)).await.unwrap();
    assert!(checked.len() == 1 && checked[0].is_complete(), "{checked:?}");
    let checked = client.verify_received(parsed(&broken), Some(0)).await.unwrap();
    assert_eq!(
        checked[0].problems,
        [
            recruit_client::Problem::Missing { first: 3, last: 3 },
            recruit_client::Problem::Altered { position: 5 }
        ]
    );

    // On the API ledger: each change by the owner, each batch read for delivery (the entries it
    // carried), and each change of the stream's health.
    let org = org_id(ORG_A).to_string();
    let api = cli(&world.url, &["audit", "list", "--ledger", "api", "--org", &org, "--json"]);
    let entries: Vec<Value> = api.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let of = |operation: &str| -> Vec<&Value> {
        entries.iter().filter(|e| e["operation"] == operation).collect()
    };
    for operation in [
        "createLogStream",
        "updateLogStream",
        "pauseLogStream",
        "resumeLogStream",
        "deleteLogStream",
    ] {
        assert!(!of(operation).is_empty(), "{operation} recorded: {api}");
    }
    let read: u64 =
        of("deliverLogStream").iter().map(|e| e["entries_returned"].as_u64().unwrap()).sum();
    assert!(read >= sixth, "every entry delivered was recorded as read: {read} of {sixth}");
    let health: Vec<&str> = of("changeLogStreamHealth")
        .iter()
        .map(|e| e["filters"]["health"].as_str().unwrap())
        .collect();
    for changed in ["FAILING", "SUSPENDED", "OK"] {
        assert!(health.contains(&changed), "{changed} recorded: {health:?}");
    }
}

/// Whether `server` delivers `stream` now: the replica holding a stream reports its lag.
fn holds(server: &Server, stream: &LogStream) -> bool {
    use std::io::{Read, Write};
    let mut connection = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(connection, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    connection.read_to_string(&mut text).unwrap();
    text.contains(&format!("recruitd_stream_lag_entries{{stream=\"{}\"}}", stream.id))
}

/// Two replicas on one PostgreSQL database: each stream delivered by one of them, and a dead
/// one's streams taken over once their leases run out, nothing lost or out of order.
#[tokio::test(flavor = "multi_thread")]
async fn several_replicas_deliver_each_stream_from_one_and_take_over_a_dead_ones() {
    let world = World::postgres().await;
    let receiver = Peer::start(&python(), "webhook_receiver.py");
    let serve = ["--outbound-allow", "127.0.0.1", "--log-stream-lease", "3s"];
    let (a, b) = (world.serve(&serve), world.serve(&serve));
    let client = world.client(&a);
    let mut streams = vec![];
    for n in 0..3 {
        let settings = LogStreamSettings {
            name: format!("SIEM {n}"),
            destination: LogStreamDestination::Https {
                url: format!("{}/in/{n}", receiver.url),
                format: BatchFormat::Ndjson,
            },
            after_position: Some(0),
            after_time: None,
        };
        streams.push(client.create_log_stream(&settings).await.unwrap());
    }
    let secrets: Vec<_> = streams.iter().map(|s| s.signing_secret.clone().unwrap()).collect();
    receiver.control("__secrets", json!({"secrets": secrets})).await;
    let first = record(&client, 5).await;
    for stream in &streams {
        chained(&receiver.of(Some(stream), first).await);
        assert!(holds(&a, stream) != holds(&b, stream), "held by one replica: {stream:?}");
    }
    let (dead, alive) = if holds(&a, &streams[0]) { (a, b) } else { (b, a) };
    dead.kill();
    let client = world.client(&alive);
    let second = record(&client, 5).await;
    for stream in &streams {
        chained(&receiver.of(Some(stream), second).await);
        assert!(holds(&alive, stream), "taken over: {stream:?}");
    }
    assert_eq!(receiver.received().await["unverified"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn delivered_to_a_receiver_that_verifies_every_batch_on_sqlite() {
    delivered_to_a_receiver_that_verifies_every_batch(World::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn delivered_to_a_receiver_that_verifies_every_batch_on_postgresql() {
    delivered_to_a_receiver_that_verifies_every_batch(World::postgres().await).await;
}

/// Streams made, shown, paused, resumed and removed from the command line as an owner, under
/// the API's rules and recorded as the owner's; one started at a time starts after the last
/// entry recorded before it.
#[tokio::test(flavor = "multi_thread")]
async fn configured_from_the_command_line_and_started_at_a_time() {
    let world = World::sqlite();
    let server = world.serve(&["--log-streams", "off"]);
    let client = world.client(&server);
    let before = record(&client, 4).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let at = recruit_domain::Timestamp::now();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let head = record(&client, 3).await;

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let path = file.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(["--database-url", &world.url, "--outbound-allow", "127.0.0.1", "log-stream"])
            .args(args)
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    };
    let owner = recruit_ports::testkit::user_id(ORG_A, Role::Owner).to_string();
    let member = recruit_ports::testkit::user_id(ORG_A, Role::Member).to_string();
    let destination = json!({"type": "https", "url": "https://127.0.0.1:9/in"});
    let settings = |start: Value| {
        let mut s = json!({"name": "SIEM", "destination": destination});
        s.as_object_mut().unwrap().extend(start.as_object().unwrap().clone());
        std::fs::write(&file, s.to_string()).unwrap();
    };

    // Refused as the API refuses: a member, a time to come, a position and a time at once.
    settings(json!({"after_time": at}));
    let (ok, _, err) = run(&["create", "--user", &member, "--settings", path]);
    assert!(!ok && err.contains("owner"), "{err}");
    let later = recruit_domain::Timestamp::from_unix_micros(at.unix_micros() + 3_600_000_000);
    settings(json!({"after_time": later.unwrap()}));
    let (ok, _, err) = run(&["create", "--user", &owner, "--settings", path]);
    assert!(!ok && err.contains("field: after_time"), "{err}");
    settings(json!({"after_time": at, "after_position": 0}));
    let (ok, _, err) = run(&["create", "--user", &owner, "--settings", path]);
    assert!(!ok && err.contains("field: after_time"), "{err}");

    settings(json!({"after_time": at}));
    let (ok, out, err) = run(&["create", "--user", &owner, "--settings", path, "--json"]);
    assert!(ok, "{err}");
    let made: LogStream = serde_json::from_str(out.trim()).unwrap();
    assert_eq!((made.delivered_position, made.lag_entries), (before, head - before));
    assert!(made.signing_secret.is_some_and(|s| s.starts_with("whsec_")), "shown once");
    let id = made.id.to_string();
    let (ok, out, err) = run(&["show", &id, "--user", &owner]);
    assert!(ok && out.contains("ACTIVE") && !out.contains("whsec_"), "{out}{err}");
    let (ok, out, _) = run(&["pause", &id, "--user", &owner]);
    assert!(ok && out.starts_with(&format!("{id}  PAUSED")), "{out}");
    let (_, out, _) = run(&["list", "--user", &owner, "--json"]);
    let listed: Vec<LogStream> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        listed.iter().map(|s| s.state.clone()).collect::<Vec<_>>(),
        [LogStreamState::Paused]
    );
    let (ok, out, _) = run(&["rotate-secret", &id, "--user", &owner, "--overlap", "1h"]);
    assert!(ok && out.contains("whsec_"), "{out}");
    let (ok, out, _) = run(&["delete", &id, "--user", &owner]);
    assert!(ok && out.contains("removed"), "{out}");
    assert_eq!(client.log_streams().await.unwrap().len(), 0);

    // Each change is on the API ledger as the owner's.
    let ledger = cli(&world.url, &["audit", "list", "--ledger", "api", "--json"]);
    let operations: Vec<String> = ledger
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["user_id"] == owner.as_str())
        .map(|e| e["operation"].as_str().unwrap().to_owned())
        .filter(|o| o.contains("LogStream"))
        .collect();
    assert_eq!(
        operations,
        ["deleteLogStream", "rotateLogStreamSecret", "pauseLogStream", "createLogStream"],
        "newest first"
    );
}
