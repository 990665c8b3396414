//! Deprovisioning under load, on PostgreSQL: two replicas share the database; 16 clients use a
//! user's API token and console sessions on both; a SCIM `active: false` sent to one replica
//! must leave every client refused, on both, within a second of its answer.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use recruit_domain::model::Role;
use recruit_domain::{User, UserId};
use recruit_ports::testkit::{ORG_A, user_id, world};
use serde_json::{Value, json};

use crate::common::*;

/// How many clients use the leaver's credentials at once.
const CLIENTS: usize = 16;

/// The bound docs/operations.md promises for a deactivation, as for a revocation.
const BOUND: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scim_deactivation_refuses_every_client_on_two_replicas_within_a_second() {
    let db = recruit_adapters_pg::testkit::TestDatabase::fresh().await;
    let url = db.url().to_owned();
    tokio::task::spawn_blocking(move || deprovision(&url)).await.unwrap();
}

/// One request of a client: when it was sent (in seconds since the deactivation's answer,
/// negative before it) and its status.
type Answer = (f64, u16);

fn deprovision(url: &str) {
    // The world, with a second owner of organization A: the leaver, who uses the console.
    let owner = world().users.into_iter().find(|u| u.id == user_id(ORG_A, Role::Owner)).unwrap();
    let leaver = User {
        id: UserId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A << 64 | 0x1EA7E)),
        name: "Leaver".into(),
        email: "leaver@org-a.example".into(),
        manager: None,
        ..owner.clone()
    };
    let mut document = world();
    document.users.push(leaver.clone());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.json");
    std::fs::write(&path, serde_json::to_string(&document).unwrap()).unwrap();
    cli(url, &["import", path.to_str().unwrap()]);
    let made = |args: &[&str]| -> String {
        let out: Value = serde_json::from_str(cli(url, args).trim()).unwrap();
        out["token"].as_str().unwrap().to_owned()
    };
    let scim = made(&["token", "create", "--scim", "--user", &owner.id.to_string(), "--json"]);
    let api = made(&[
        "token",
        "create",
        "--user",
        &leaver.id.to_string(),
        "--scopes",
        "audit_logs:read,users:read",
        "--json",
    ]);
    // The clients ask as fast as they can: no quota may refuse them before the change.
    let unlimited = [
        "--rate-limit-reads",
        "off",
        "--rate-limit-ledger-reads",
        "off",
        "--rate-limit-auth-failures",
        "off",
    ];
    let replicas =
        [0, 1].map(|_| Arc::new(Server::spawn(url, &unlimited, "error", Stdio::inherit())));

    // A console session of the leaver's on each replica.
    let sessions = replicas.clone().map(|server| {
        let origin = server.url();
        let headers =
            [("Origin", origin.as_str()), ("Content-Type", "application/x-www-form-urlencoded")];
        let (status, headers, _) =
            send(&server, "POST", "/console/sign-in", &headers, &form(&[("token", &api)]));
        assert_eq!(status, 303, "the leaver signs in to the console");
        headers
            .iter()
            .filter(|(n, _)| n == "set-cookie")
            .map(|(_, v)| v.split(';').next().unwrap().to_owned())
            .find(|c| c.starts_with("recruitd_console="))
            .expect("a session cookie")
    });

    // The clients: half with the API token, half with a console session, alternating replicas.
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let server = Arc::clone(&replicas[n % 2]);
            let stop = Arc::clone(&stop);
            let api = api.clone();
            let cookie = sessions[n % 2].clone();
            std::thread::spawn(move || {
                let mut answers: Vec<(Instant, u16)> = vec![];
                while !stop.load(Ordering::Relaxed) {
                    let sent = Instant::now();
                    let status = if n < CLIENTS / 2 {
                        server.request("GET", "/v1/me", Some(&api)).0
                    } else {
                        send(&server, "GET", "/console/entries", &[("Cookie", &cookie)], "").0
                    };
                    answers.push((sent, status));
                }
                answers
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(700));

    let off = json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "path": "active", "value": false}]});
    let body = off.to_string();
    let auth = format!("Bearer {scim}");
    let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/scim+json")];
    let target = format!("/scim/v2/Users/{}", leaver.id);
    let asked = Instant::now();
    let (status, _, answer) = send(&replicas[0], "PATCH", &target, &headers, &body);
    let origin = Instant::now();
    assert_eq!(status, 200, "{answer}");
    std::thread::sleep(BOUND + Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let sent: Vec<(Instant, u16)> = clients.into_iter().flat_map(|c| c.join().unwrap()).collect();
    let before: Vec<&(Instant, u16)> = sent.iter().filter(|(at, _)| *at < asked).collect();
    let answers: Vec<Answer> = sent.iter().map(|(at, s)| (signed_secs(*at, origin), *s)).collect();
    assert!(before.len() >= CLIENTS, "every client was served before: {}", before.len());
    let refused: Vec<u16> = before.iter().map(|(_, s)| *s).filter(|s| *s != 200).collect();
    assert!(refused.is_empty(), "served before the change: {refused:?}");
    let served = answers.iter().filter(|(_, s)| *s == 200);
    let last = served.map(|(at, _)| *at).fold(f64::NEG_INFINITY, f64::max);
    let late: Vec<&Answer> = answers.iter().filter(|(at, _)| *at >= BOUND.as_secs_f64()).collect();
    assert!(!late.is_empty(), "clients kept asking after the bound");
    assert!(
        late.iter().all(|(_, s)| *s == 401 || *s == 303),
        "refused on both replicas after {BOUND:?}: {:?}",
        late.iter().filter(|(_, s)| *s != 401 && *s != 303).take(5).collect::<Vec<_>>()
    );
    assert!(answers.iter().all(|(_, s)| *s < 500), "no server error");
    let after = answers.iter().filter(|(at, _)| *at >= 0.0).count();
    #[expect(clippy::print_stderr, reason = "the figure docs/performance.md records")]
    let () = eprintln!(
        "deprovisioning: {} requests by {CLIENTS} clients on 2 replicas, {after} after the \
         change's answer; the last one served was sent {:.1} ms from it (negative: before)",
        answers.len(),
        last * 1000.0
    );
    assert!(last < BOUND.as_secs_f64(), "a request {last:.3} s after the change was served");
}

/// `sent` minus `origin` in seconds, negative when `sent` came first.
fn signed_secs(sent: Instant, origin: Instant) -> f64 {
    match sent.checked_duration_since(origin) {
        Some(d) => d.as_secs_f64(),
        None => -(origin - sent).as_secs_f64(),
    }
}
