//! End to end, over real TCP, against the `recruitd` binary: import a document and create
//! tokens with the CLI, serve, walk the ledger, provoke every error the three endpoints return,
//! probe across organizations, count the audit ledger, and shut down on SIGTERM. Once on SQLite
//! and once on PostgreSQL.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use recruit_domain::model::Role;
use recruit_ports::testkit::{ORG_A, ORG_B, job_id, t, user_id, world};
use serde_json::{Value, json};

use crate::common::*;

/// `GET /v1/me`: any valid token learns who it acts as, whatever its scopes; any other is
/// UNAUTHENTICATED.
fn me(server: &Server, member_b: &str, member_b_id: &str, admin_a: &Value) {
    let (status, me) = server.get("/v1/me", member_b);
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["user"]["id"], user_id(ORG_B, Role::Member).to_string());
    assert_eq!(me["user"]["role"], "MEMBER");
    assert!(me["user"]["email"].as_str().is_some_and(|e| e.contains('@')), "{me}");
    assert!(me["user"]["name"].as_str().is_some_and(|n| !n.is_empty()), "{me}");
    assert_eq!(me["organization_id"], org_id(ORG_B).to_string());
    assert_eq!(
        me["token"],
        json!({"id": member_b_id, "scopes": ["jobs:read"], "expires_at": null})
    );

    let secret = admin_a["token"].as_str().unwrap();
    let (status, me) = server.get("/v1/me", secret);
    assert_eq!(status, 200, "{me}");
    assert_eq!(
        (me["user"]["role"].as_str(), me["token"]["id"].as_str()),
        (Some("ADMIN"), admin_a["id"].as_str())
    );
    assert_eq!(me["token"]["expires_at"], admin_a["expires_at"]);
    assert_eq!(me["token"]["scopes"], json!(["users:read"]));
    assert_eq!(me["organization_id"], org_id(ORG_A).to_string());

    let (status, error) = server.get("/v1/me", "rtk_not-a-real-token");
    assert_eq!((status, code(&error)), (401, "UNAUTHENTICATED"));
    let (status, error) = server.get("/v1/me?scope=all", member_b);
    assert_eq!((status, code(&error)), (400, "VALIDATION_FAILED"));
}

const WINDOW: &str = "timestamp_gte=2026-01-01T00:00:00Z&timestamp_lt=2026-06-01T00:00:00Z";

fn scenario(database_url: &str, dir: &std::path::Path) {
    let document = dir.join("world.json");
    std::fs::write(&document, serde_json::to_string(&world()).unwrap()).unwrap();
    let out = cli(database_url, &["import", document.to_str().unwrap()]);
    assert!(out.contains("imported 2 organizations, 6 users"), "{out}");
    // The same document again: refused whole, with the path of the first problem.
    let again = Command::new(BIN)
        .args(["--database-url", database_url, "import", document.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("organizations[0].id: already exists"));

    let owner =
        token(database_url, ORG_A, Role::Owner, "audit_logs:read,jobs:read,organization:read");
    let member =
        token(database_url, ORG_A, Role::Member, "audit_logs:read,jobs:read,organization:read");
    let jobs_only = token(database_url, ORG_A, Role::Owner, "jobs:read");
    let owner_b =
        token(database_url, ORG_B, Role::Owner, "audit_logs:read,jobs:read,organization:read");

    let (token_id, expiring) = token_with_id(database_url, ORG_B, Role::Member, "jobs:read");
    let expiring_in = cli(
        database_url,
        &[
            "token",
            "create",
            "--user",
            &user_id(ORG_A, Role::Admin).to_string(),
            "--scopes",
            "users:read",
            "--expires-in",
            "1h",
            "--json",
        ],
    );
    let expiring_in: Value = serde_json::from_str(expiring_in.trim()).unwrap();

    let server = Server::start(database_url);
    me(&server, &expiring, &token_id, &expiring_in);

    // The three endpoints.
    let (status, org) = server.get("/v1/organization", &owner);
    assert_eq!((status, org["name"].as_str()), (200, Some("Organization A")));
    let (status, job) = server.get(&format!("/v1/jobs/{}", job_id(ORG_A, 1)), &owner);
    assert_eq!((status, job["id"].as_str()), (200, Some(job_id(ORG_A, 1).to_string().as_str())));

    // A full walk in pages of 2, across the entries that share an access time.
    let (_, all) = server.get(&format!("/v1/audit-logs/privacy?{WINDOW}&limit=100"), &owner);
    let all: Vec<String> = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(all.len(), 12);
    let mut seen = vec![];
    let mut cursor: Option<String> = None;
    let mut reads = 1;
    loop {
        let path = match &cursor {
            None => format!("/v1/audit-logs/privacy?{WINDOW}&limit=2"),
            Some(c) => format!("/v1/audit-logs/privacy?{WINDOW}&limit=2&cursor={c}"),
        };
        let (status, page) = server.get(&path, &owner);
        assert_eq!(status, 200, "{page}");
        reads += 1;
        seen.extend(
            page["data"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_owned()),
        );
        match page["pagination"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, all);

    // Every error code the three endpoints return, in the envelope with its status.
    let (status, headers, json) = server.request("GET", "/v1/organization", None);
    assert_eq!((status, code(&json)), (401, "UNAUTHENTICATED"));
    assert!(headers.iter().any(|(k, v)| k == "www-authenticate" && v == "Bearer"), "{headers:?}");
    let (status, headers, json) =
        server.request("GET", "/v1/organization", Some("rtk_not-a-real-token"));
    assert_eq!((status, code(&json)), (401, "UNAUTHENTICATED"));
    assert!(headers.iter().any(|(k, v)| k == "www-authenticate" && v.contains("invalid_token")));
    let cases = [
        (format!("/v1/audit-logs/privacy?{WINDOW}"), &jobs_only, 403, "INSUFFICIENT_SCOPE"),
        (format!("/v1/audit-logs/privacy?{WINDOW}"), &member, 403, "PERMISSION_DENIED"),
        ("/v1/audit-logs/privacy?limit=7".into(), &owner, 400, "VALIDATION_FAILED"),
        (
            format!("/v1/audit-logs/privacy?{WINDOW}&cursor=bm90LWEtY3Vyc29y"),
            &owner,
            400,
            "INVALID_CURSOR",
        ),
        ("/v1/jobs/job_nope".into(), &owner, 400, "VALIDATION_FAILED"),
        (format!("/v1/jobs/{}", job_id(ORG_A, 99)), &owner, 404, "NOT_FOUND"),
        ("/v2/anything".into(), &owner, 404, "NOT_FOUND"),
    ];
    for (path, token, expected_status, expected_code) in cases {
        let (status, json) = server.get(&path, token);
        assert_eq!((status, code(&json)), (expected_status, expected_code), "{path}");
    }
    let (status, headers, json) = server.request("DELETE", "/v1/organization", Some(&owner));
    assert_eq!((status, code(&json)), (405, "NOT_IMPLEMENTED"));
    assert!(headers.iter().any(|(k, v)| k == "allow" && v == "GET"));

    // Across organizations: another organization's job is not found; its cursor is refused.
    let (status, json) = server.get(&format!("/v1/jobs/{}", job_id(ORG_A, 1)), &owner_b);
    assert_eq!((status, code(&json)), (404, "NOT_FOUND"));
    let (_, first) = server.get(&format!("/v1/audit-logs/privacy?{WINDOW}&limit=1"), &owner);
    let a_cursor = first["pagination"]["next_cursor"].as_str().unwrap();
    reads += 1;
    let (status, json) =
        server.get(&format!("/v1/audit-logs/privacy?{WINDOW}&cursor={a_cursor}"), &owner_b);
    assert_eq!((status, code(&json)), (400, "INVALID_CURSOR"));

    // Every successful read of the ledger was recorded, and nothing else.
    let audit = cli(database_url, &["audit", "list", "--ledger", "api", "--json"]);
    let entries: Vec<Value> = audit.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(entries.len(), reads);
    assert!(
        entries
            .iter()
            .all(|e| e["operation"] == "listPrivacyAuditLogs" && e["interface"] == "REST")
    );

    // A revoked token stops working at once; SIGTERM stops the server cleanly.
    let (id, secret) = token_with_id(database_url, ORG_A, Role::Admin, "organization:read");
    assert_eq!(server.get("/v1/organization", &secret).0, 200);
    let out = cli(database_url, &["token", "revoke", &id]);
    assert!(out.contains("is revoked"), "{out}");
    let (status, json) = server.get("/v1/organization", &secret);
    assert_eq!((status, code(&json)), (401, "UNAUTHENTICATED"));
    // Operators list tokens with their state, never their secrets.
    let org_a = recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A));
    let tokens = cli(database_url, &["token", "list", "--org", &org_a.to_string(), "--json"]);
    assert!(!tokens.contains(&secret) && !tokens.contains("rtk_"), "{tokens}");
    let tokens: Vec<Value> = tokens.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let revoked = tokens.iter().find(|t| t["id"] == id.as_str()).expect("the revoked token");
    assert!(revoked["revoked_at"].is_string() && revoked["last_used_at"].is_string());
    assert!(tokens.iter().all(|t| t["organization_id"] == org_a.to_string()));
    assert!(tokens.iter().any(|t| t["revoked_at"].is_null()), "the others are live");
    let listed = cli(
        database_url,
        &[
            "audit",
            "list",
            "--ledger",
            "api",
            "--org",
            &recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_B))
                .to_string(),
        ],
    );
    assert!(listed.trim().is_empty(), "B's ledger was never read: {listed}");
    recording(&server, database_url);
    profiles(&server, database_url);
    let status = server.stop();
    assert!(status.success(), "the server exits cleanly on SIGTERM: {status}");
}

/// Recording accesses on the real server: sixteen requests at once with one key and one body
/// store one batch, every answer being the batch (201) or "still running" (409); the same
/// request later is the first response again, byte for byte; other entries with the key are
/// refused; a request without a key is refused.
fn recording(server: &Server, database_url: &str) {
    let writer = token(database_url, ORG_A, Role::Admin, "audit_logs:write");
    let reader = token(database_url, ORG_A, Role::Owner, "audit_logs:read");
    let entry = |menu: &str| {
        serde_json::json!({
            "access_time": recruit_domain::Timestamp::now().to_string(),
            "account_id": "0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e",
            "ip_addresses": ["192.0.2.44"],
            "data_subject": {"type": "EMPLOYEE", "user": user_id(ORG_A, Role::Member).to_string()},
            "access_data": ["NAME", "EMAIL_ADDRESS"],
            "access_menu": menu,
            "access_menu_path": "/people/profile",
            "activity_category": "READ"
        })
    };
    let body = serde_json::json!({"entries": [entry("People"), entry("People")]}).to_string();
    let answers: Vec<(u16, String)> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..16)
            .map(|_| {
                scope.spawn(|| {
                    let (status, _, body) =
                        server.post("/v1/audit-logs/privacy", &writer, Some("\"same\""), &body);
                    (status, body)
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    assert!(answers.iter().all(|(s, _)| *s == 201 || *s == 409), "{answers:?}");
    let created: Vec<&String> = answers.iter().filter(|(s, _)| *s == 201).map(|(_, b)| b).collect();
    assert!(!created.is_empty() && created.iter().all(|b| *b == created[0]), "one response");
    let stored: Value = serde_json::from_str(created[0]).unwrap();
    let ids: Vec<&str> =
        stored["entries"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    let now = recruit_domain::Timestamp::now();
    let from =
        recruit_domain::Timestamp::from_unix_micros(now.unix_micros() - 3_600_000_000).unwrap();
    let to = recruit_domain::Timestamp::from_unix_micros(now.unix_micros() + 600_000_000).unwrap();
    let window = format!("timestamp_gte={from}&timestamp_lt={to}&limit=100");
    let (status, page) = server.get(&format!("/v1/audit-logs/privacy?{window}"), &reader);
    assert_eq!(status, 200, "{page}");
    let listed: Vec<&str> =
        page["data"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(listed.len(), 2, "exactly one batch stored: {listed:?}");
    assert!(ids.iter().all(|id| listed.contains(id)));

    let (status, headers, again) =
        server.post("/v1/audit-logs/privacy", &writer, Some("same"), &body);
    assert_eq!((status, again.as_str()), (201, created[0].as_str()));
    assert!(headers.iter().any(|(k, v)| k == "idempotent-replayed" && v == "true"));
    let other = serde_json::json!({"entries": [entry("Other")]}).to_string();
    let (status, _, refused) = server.post("/v1/audit-logs/privacy", &writer, Some("same"), &other);
    assert_eq!(status, 422, "{refused}");
    assert!(refused.contains("IDEMPOTENCY_KEY_REUSED"));
    let (status, _, refused) = server.post("/v1/audit-logs/privacy", &writer, None, &other);
    assert_eq!(status, 400, "{refused}");
    assert!(refused.contains("IDEMPOTENCY_KEY_REQUIRED"));
}

/// Profiles on the real server: read with its entity tag; every refusal (another
/// organization's user, a missing scope, a member changing someone else, a stale `If-Match`,
/// a manager that is the user, below them or elsewhere, an unknown field, fields kept by a
/// sync); eight changes sent at once with one `If-Match`, of which exactly one is made; and
/// the privacy ledger holding one entry for every read and change that succeeded, none for
/// the others.
fn profiles(server: &Server, database_url: &str) {
    let owner = token(database_url, ORG_A, Role::Owner, "users:read,users:write,audit_logs:read");
    let member = token(database_url, ORG_A, Role::Member, "users:read,users:write");
    let no_scope = token(database_url, ORG_A, Role::Owner, "jobs:read");
    let b_owner = token(database_url, ORG_B, Role::Owner, "users:write");
    let path = |org, role| format!("/v1/users/{}", user_id(org, role));
    let (member_path, admin_path) = (path(ORG_A, Role::Member), path(ORG_A, Role::Admin));
    let started = recruit_domain::Timestamp::now();

    let (status, headers, read) = server.request("GET", &member_path, Some(&owner));
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["manager"], user_id(ORG_A, Role::Admin).to_string());
    let etag = header(&headers, "etag").to_owned();
    assert_eq!(read["etag"], etag.as_str());
    let (status, _, refused) = server.request("GET", &path(ORG_B, Role::Member), Some(&owner));
    assert_eq!((status, code(&refused)), (404, "NOT_FOUND"));
    let (status, _, refused) = server.request("GET", &member_path, Some(&no_scope));
    assert_eq!((status, code(&refused)), (403, "INSUFFICIENT_SCOPE"));

    let refusals = [
        (&member, &admin_path, None, r#"{"title": "Boss"}"#, 403, "PERMISSION_DENIED"),
        (&owner, &member_path, Some("\"stale\""), r#"{"title": "T"}"#, 409, "CONFLICT"),
        (
            &owner,
            &admin_path,
            None,
            r#"{"manager": null, "nickname": "x"}"#,
            400,
            "VALIDATION_FAILED",
        ),
        (
            &owner,
            &member_path,
            None,
            &format!(r#"{{"manager": "{}"}}"#, user_id(ORG_B, Role::Owner)),
            400,
            "VALIDATION_FAILED",
        ),
        (
            &owner,
            &member_path,
            None,
            r#"{"manager": "usr_000000000000000000000000000dead0"}"#,
            400,
            "VALIDATION_FAILED",
        ),
        (
            &owner,
            &member_path,
            None,
            &format!(r#"{{"manager": "{}"}}"#, user_id(ORG_A, Role::Member)),
            409,
            "CONFLICT",
        ),
        (
            &owner,
            &path(ORG_A, Role::Owner),
            None,
            &format!(r#"{{"manager": "{}"}}"#, user_id(ORG_A, Role::Member)),
            409,
            "CONFLICT",
        ),
        (
            &b_owner,
            &path(ORG_B, Role::Member),
            None,
            r#"{"name": "Same", "title": null, "linkedin_url": null}"#,
            409,
            "CANNOT_UPDATE_SYNC_MANAGED_FIELDS",
        ),
    ];
    for (token, target, if_match, body, status, expected) in refusals {
        let (got, _, refused) = server.patch(target, token, if_match, body);
        assert_eq!((got, code(&refused)), (status, expected), "{body}: {refused}");
        if expected == "CANNOT_UPDATE_SYNC_MANAGED_FIELDS" {
            assert_eq!(
                refused["error"]["details"],
                serde_json::json!([{"field": "name", "source": "SCIM"}, {"field": "title", "source": "DIRECTORY"}])
            );
        }
    }
    let (status, _, after) = server.request("GET", &member_path, Some(&owner));
    assert_eq!((status, &after["etag"]), (200, &read["etag"]), "nothing was written");

    // A member changes their own profile.
    let (status, headers, own) = server.patch(
        &member_path,
        &member,
        None,
        r#"{"linkedin_url": "https://www.linkedin.com/in/member-a"}"#,
    );
    assert_eq!(status, 200, "{own}");
    assert_ne!(header(&headers, "etag"), etag);
    let etag = header(&headers, "etag").to_owned();

    // Eight changes decided on one version: one is made, the others are stale.
    let answers: Vec<(u16, Value)> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..8)
            .map(|n| {
                let (owner, member_path, etag) = (&owner, &member_path, &etag);
                scope.spawn(move || {
                    let body = format!(r#"{{"title": "Title {n}"}}"#);
                    let (status, _, json) = server.patch(member_path, owner, Some(etag), &body);
                    (status, json)
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let made: Vec<&Value> = answers.iter().filter(|(s, _)| *s == 200).map(|(_, j)| j).collect();
    assert_eq!(made.len(), 1, "{answers:?}");
    assert!(answers.iter().all(|(s, j)| *s == 200 || (*s == 409 && code(j) == "CONFLICT")));
    let (_, _, stored) = server.request("GET", &member_path, Some(&owner));
    assert_eq!(stored["title"], made[0]["title"]);

    // The ledger: a READ for each of the three reads, an UPDATE for each of the two changes.
    let to = recruit_domain::Timestamp::from_unix_micros(
        recruit_domain::Timestamp::now().unix_micros() + 1,
    )
    .unwrap();
    let list =
        format!("/v1/audit-logs/privacy?timestamp_gte={started}&timestamp_lt={to}&limit=100");
    let (status, page) = server.get(&list, &owner);
    assert_eq!(status, 200, "{page}");
    let profile_entries: Vec<(&str, &str)> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["access_menu"] == "API")
        .map(|e| {
            (e["activity_category"].as_str().unwrap(), e["access_menu_path"].as_str().unwrap())
        })
        .collect();
    let count = |what| profile_entries.iter().filter(|e| **e == what).count();
    assert_eq!(
        (count(("READ", "getUser")), count(("UPDATE", "updateUser"))),
        (3, 2),
        "{profile_entries:?}"
    );
    assert!(page["data"].as_array().unwrap().iter().all(|e| e["access_menu"] != "API"
        || e["data_subject"] == serde_json::json!({"type": "EMPLOYEE", "user": user_id(ORG_A, Role::Member).to_string()})));
}

#[test]
fn the_whole_api_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("recruitd.db").display());
    scenario(&url, dir.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_api_on_postgresql() {
    let db = recruit_adapters_pg::testkit::TestDatabase::fresh().await;
    let url = db.url().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    tokio::task::spawn_blocking(move || scenario(&url, &path)).await.unwrap();
}

/// The README's tour, step by step: the example document, a token for its owner, the three
/// endpoints.
#[test]
fn the_readme_tour_works_as_written() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/examples/quickstart.json");
    assert!(readme.contains("import docs/examples/quickstart.json"));
    assert!(readme.contains("--user usr_0190c7d8e4a27cc3b1f0a2d4e6f80002"));
    assert!(readme.contains("/v1/jobs/job_0190c7d8e4a27cc3b1f0a2d4e6f80001"));

    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("recruitd.db").display());
    let out = cli(&url, &["import", example]);
    assert!(out.contains("imported 1 organizations, 1 users, 1 task queues, 1 candidates, 1 jobs, 1 privacy audit log entries"), "{out}");
    let user = "usr_0190c7d8e4a27cc3b1f0a2d4e6f80002";
    let out = cli(
        &url,
        &[
            "token",
            "create",
            "--user",
            user,
            "--scopes",
            "audit_logs:read,jobs:read,organization:read",
            "--json",
        ],
    );
    let secret =
        serde_json::from_str::<Value>(out.trim()).unwrap()["token"].as_str().unwrap().to_owned();
    let server = Server::start(&url);
    assert_eq!(server.get("/v1/organization", &secret).1["name"], "Northwind Labs");
    assert_eq!(server.get("/v1/jobs/job_0190c7d8e4a27cc3b1f0a2d4e6f80001", &secret).0, 200);
    let (status, page) = server.get(
        "/v1/audit-logs/privacy?timestamp_gte=2026-01-01T00:00:00Z&timestamp_lt=2026-12-31T00:00:00Z",
        &secret,
    );
    assert_eq!(
        (status, page["data"][0]["access_time"].as_str()),
        (200, Some("2026-11-20T01:30:59.656105Z"))
    );
    let audit = cli(&url, &["audit", "list", "--ledger", "api"]);
    assert_eq!(audit.lines().count(), 1, "{audit}");
    assert!(readme.contains("recruitd audit verify"));
    let verified = cli(&url, &["audit", "verify"]);
    assert!(verified.contains("2 chains verified, nothing found."), "{verified}");
    assert!(server.stop().success());
}

/// The database stops under a running server: requests get UNAVAILABLE quickly, the server
/// stays up, and it serves again by itself once the database is back.
#[test]
fn the_server_survives_its_database_going_away_and_coming_back() {
    let cluster = recruit_adapters_pg::testkit::DedicatedCluster::start();
    cluster.create_database("recruitd");
    let url = cluster.url("recruitd");
    let dir = tempfile::tempdir().unwrap();
    let document = dir.path().join("world.json");
    std::fs::write(&document, serde_json::to_string(&world()).unwrap()).unwrap();
    cli(&url, &["import", document.to_str().unwrap()]);
    let secret = token(&url, ORG_A, Role::Owner, "organization:read");

    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(BIN)
        .args([
            "--database-url",
            &url,
            "--db-wait-timeout",
            "1s",
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut server = Server { child, port };
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the server did not listen within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(server.get("/v1/organization", &secret).0, 200);

    cluster.stop();
    for _ in 0..3 {
        let started = Instant::now();
        let (status, headers, json) = server.request("GET", "/v1/organization", Some(&secret));
        assert_eq!((status, code(&json)), (503, "UNAVAILABLE"), "{json}");
        assert!(headers.iter().any(|(k, _)| k == "retry-after"));
        assert!(started.elapsed() < Duration::from_secs(8), "answered in {:?}", started.elapsed());
    }
    assert!(server.child.try_wait().unwrap().is_none(), "the server is still running");

    cluster.start_again();
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.get("/v1/organization", &secret).0 != 200 {
        assert!(Instant::now() < deadline, "the server did not recover within 20 s");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(server.stop().success());
}

/// `serve --demo` on an empty database loads the demo and prints tokens and curl commands that
/// work as printed; on a database with data it changes nothing.
#[test]
fn demo_mode_prints_what_works() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("recruitd.db").display());
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(BIN)
        .args(["--database-url", &url, "serve", "--demo", "--listen", &format!("127.0.0.1:{port}")])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The summary is printed before the server starts accepting.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    while !printed.contains("PERMISSION_DENIED") {
        let mut line = String::new();
        assert!(
            std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() > 0,
            "the demo summary ended early: {printed}"
        );
        printed.push_str(&line);
    }
    let server = Server { child, port };
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(printed.contains("40000 privacy ledger entries"), "{printed}");
    let token_after = |label: &str| {
        let at = printed.find(label).unwrap();
        printed[at..].lines().nth(1).unwrap().trim().to_owned()
    };
    let (owner, member) = (token_after("Owner token"), token_after("Member token"));
    let paths: Vec<String> = printed
        .lines()
        .filter_map(|l| l.trim().strip_prefix("curl -H 'Authorization: Bearer "))
        .map(|rest| {
            let url = rest.split_whitespace().nth(1).unwrap().trim_matches('\'');
            url.split_once(&format!("127.0.0.1:{port}")).unwrap().1.to_owned()
        })
        .collect();
    assert_eq!(paths.len(), 4, "{printed}");
    for path in &paths {
        let (status, json) = server.get(path, &owner);
        assert_eq!(status, 200, "{path}: {json}");
    }
    let ledger = paths.iter().find(|p| p.contains("audit-logs")).unwrap();
    assert_eq!(server.get(ledger, &owner).1["data"].as_array().unwrap().len(), 5);
    let (status, json) = server.get(ledger, &member);
    assert_eq!((status, code(&json)), (403, "PERMISSION_DENIED"));
    let job = paths.iter().find(|p| p.contains("/v1/jobs/")).unwrap();
    let (status, json) = server.get(job, &member);
    assert_eq!((status, code(&json)), (403, "PERMISSION_DENIED"));
    // The profile shown is the member's own.
    let profile = paths.iter().find(|p| p.contains("/v1/users/")).unwrap();
    let (status, json) = server.get(profile, &member);
    assert_eq!((status, json["role"].as_str()), (200, Some("MEMBER")), "{json}");
    // The demo signs checkpoints with a key kept beside its database, readable by its owner.
    let checkpoint = "/v1/audit-logs/privacy/checkpoints/latest";
    let signed = (0..100)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            server.get(checkpoint, &owner)
        })
        .find(|(status, _)| *status == 200);
    let (_, signed) = signed.expect("the demo's ledger is signed at start");
    let key = dir.path().join("recruitd.db.checkpoint-key.pem");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&key).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    assert!(server.stop().success());

    // Again, on the same database: nothing changes, and the same key signs.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut again = Command::new(BIN)
        .args(["--database-url", &url, "serve", "--demo", "--listen", &format!("127.0.0.1:{port}")])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(again.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert!(line.contains("already holds data"), "{line}");
    let server = Server { child: again, port };
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let (status, again) = server.get(checkpoint, &owner);
    assert_eq!((status, &again["key_id"]), (200, &signed["key_id"]), "{again}");
    assert!(server.stop().success());
}

/// A session of `recruitd mcp` over stdio: JSON-RPC lines in, JSON-RPC lines out.
struct McpSession {
    child: Child,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl McpSession {
    fn start(database_url: &str, token_file: &std::path::Path) -> Self {
        let mut child = Command::new(BIN)
            .args(["--database-url", database_url, "mcp", "--token-file"])
            .arg(token_file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        Self { child, lines: std::io::BufRead::lines(std::io::BufReader::new(stdout)) }
    }

    /// Sends one message; for a request (with an id), returns the response.
    fn send(&mut self, message: Value) -> Option<Value> {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        let id = message.get("id")?;
        for line in self.lines.by_ref() {
            let response: Value = serde_json::from_str(&line.unwrap()).expect("stdout is JSON-RPC");
            if response.get("id") == Some(id) {
                return Some(response);
            }
        }
        panic!("the server closed its output before answering {message}");
    }

    fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        let request = serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        });
        self.send(request).unwrap()
    }
}

#[test]
fn the_tools_over_stdio_act_as_the_token_in_the_file_and_check_it_on_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("recruitd.db").display());
    let document = dir.path().join("world.json");
    std::fs::write(&document, serde_json::to_string(&world()).unwrap()).unwrap();
    cli(&url, &["import", document.to_str().unwrap()]);
    let (id, owner) =
        token_with_id(&url, ORG_A, Role::Owner, "audit_logs:read,jobs:read,organization:read");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("  {owner}\n")).unwrap();

    let mut session = McpSession::start(&url, &token_file);
    let init = session
        .send(serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "e2e", "version": "1"}},
        }))
        .unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    session.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let organization = session.call(2, "get_organization", serde_json::json!({}));
    assert_eq!(organization["result"]["isError"], false, "{organization}");
    assert_eq!(organization["result"]["structuredContent"]["name"], "Organization A");
    let window = serde_json::json!({
        "timestamp_gte": "2026-01-01T00:00:00Z", "timestamp_lt": "2026-06-01T00:00:00Z", "limit": 4,
    });
    let page = session.call(3, "list_privacy_audit_logs", window.clone());
    assert_eq!(page["result"]["structuredContent"]["data"].as_array().unwrap().len(), 4);
    let job =
        session.call(4, "get_job", serde_json::json!({"job_id": job_id(ORG_B, 1).to_string()}));
    assert_eq!(job["result"]["isError"], true);
    assert_eq!(job["result"]["structuredContent"]["error"]["code"], "NOT_FOUND");
    let unknown = session.call(5, "nope", serde_json::json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    // The read is in the tool-interface ledger.
    let listed = cli(&url, &["audit", "list", "--ledger", "tool", "--json"]);
    let entry: Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    assert_eq!(
        (entry["tool_name"].as_str(), entry["entries_returned"].as_u64()),
        (Some("list_privacy_audit_logs"), Some(4))
    );

    // Revoked while the session runs: the next call is refused.
    cli(&url, &["token", "revoke", &id]);
    let refused = session.call(6, "get_organization", serde_json::json!({}));
    assert_eq!(refused["result"]["isError"], true);
    assert_eq!(refused["result"]["structuredContent"]["error"]["code"], "UNAUTHENTICATED");

    drop(session.child.stdin.take());
    let status = session.child.wait().unwrap();
    assert!(status.success(), "the server exits when the client closes: {status}");

    // A revoked (or unknown) token does not start a session at all, and says why.
    let out = Command::new(BIN)
        .args(["--database-url", &url, "mcp", "--token-file"])
        .arg(&token_file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not valid"), "{out:?}");
    assert!(out.stdout.is_empty(), "nothing but the protocol on stdout");
}

/// A world on a fresh SQLite file and an owner token for it.
fn sqlite_world(dir: &std::path::Path) -> (String, String) {
    let url = format!("sqlite://{}", dir.join("recruitd.db").display());
    let document = dir.join("world.json");
    std::fs::write(&document, serde_json::to_string(&world()).unwrap()).unwrap();
    cli(&url, &["import", document.to_str().unwrap()]);
    let secret = token(&url, ORG_A, Role::Owner, "audit_logs:read,jobs:read,organization:read");
    (url, secret)
}

/// Standard error a closed pipe (its reader gone) or a full device: every request is still
/// answered, the lost lines are counted, and SIGTERM still stops the server cleanly.
#[test]
fn a_broken_log_sink_fails_no_request_and_not_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let (url, secret) = sqlite_world(dir.path());
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    for sink in ["closed pipe", "/dev/full"] {
        let stderr = if sink == "/dev/full" { Stdio::from(full()) } else { Stdio::piped() };
        let mut server = Server::spawn(&url, &[], "debug", stderr);
        // The reader of the pipe goes away: every write to standard error now fails.
        drop(server.child.stderr.take());
        for _ in 0..20 {
            assert_eq!(server.get("/v1/organization", &secret).0, 200, "with a {sink}");
            let (status, _, json) = server.request("GET", "/v1/nowhere", None);
            assert_eq!((status, code(&json)), (404, "NOT_FOUND"), "with a {sink}");
        }
        assert!(counter(&server, "recruitd_log_lines_dropped_total") > 0.0, "with a {sink}");
        let status = server.stop();
        assert!(status.success(), "with a {sink}, SIGTERM ends the server cleanly: {status}");
    }
}

/// `recruitd import` killed (SIGKILL) halfway through an NDJSON ledger: the same command run
/// again finishes the job, skipping what the first run wrote and saying how much that was.
#[test]
fn an_import_killed_halfway_finishes_when_run_again() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let (url, _) = sqlite_world(dir.path());
    let total = 20_000;
    let ledger = dir.path().join("ledger.ndjson");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&ledger).unwrap());
    for n in 0..total {
        let mut entry = recruit_ports::testkit::ledger_entry(ORG_A, 1, t(n as i64));
        entry.entry.id = recruit_domain::PrivacyAuditLogId::from_uuid(
            recruit_domain::Uuid::from_u128(0xE2E0_0000_0000_0000_0000_0000_0000_0000 | n),
        );
        writeln!(file, "{}", serde_json::to_string(&entry).unwrap()).unwrap();
    }
    file.flush().unwrap();
    drop(file);

    let mut first = Command::new(BIN)
        .args(["--database-url", &url, "import", "--batch-size", "500", ledger.to_str().unwrap()])
        .env("RUST_LOG", "recruitd=debug")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed once the first batches are written, with many more to go.
    let stderr = std::io::BufReader::new(first.stderr.take().unwrap());
    let mut seen = vec![];
    for line in stderr.lines() {
        let line = line.unwrap();
        let progressed = line.contains("importing") && line.contains("written=1000");
        seen.push(line);
        if progressed {
            break;
        }
    }
    first.kill().unwrap();
    let status = first.wait().unwrap();
    assert!(!status.success(), "the first run was killed, not finished: {seen:?}");

    let out = cli(&url, &["import", "--batch-size", "500", ledger.to_str().unwrap()]);
    let numbers: Vec<u128> = out
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    assert!(out.contains("were already there, from an earlier run, and were skipped"), "{out}");
    let (written, already) = (numbers[numbers.len() - 2], numbers[numbers.len() - 1]);
    assert_eq!(written + already, total, "{out}");
    assert!(already >= 1_000 && written > 0, "the first run was cut short: {out}");
}

/// The quotas are the operator's to set: with `--rate-limit-reads 2/min` the third read of a
/// token is 429 RATE_LIMITED with `Retry-After` and the draft's fields, and the ledger's own
/// quota (`--rate-limit-ledger-reads off`) is not touched by it.
#[test]
fn rate_limits_are_set_by_flag() {
    let dir = tempfile::tempdir().unwrap();
    let (url, secret) = sqlite_world(dir.path());
    let flags = ["--rate-limit-reads", "2/min", "--rate-limit-ledger-reads", "off"];
    let server = Server::spawn(&url, &flags, "warn", Stdio::inherit());
    let auth = Some(secret.as_str());
    for remaining in ["1", "0"] {
        let (status, headers, _) = server.request("GET", "/v1/organization", auth);
        assert_eq!(status, 200);
        let field = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        assert_eq!(field("ratelimit-policy").as_deref(), Some(r#""reads";q=2;w=60"#));
        assert!(field("ratelimit").unwrap().starts_with(&format!(r#""reads";r={remaining};t="#)));
    }
    let (status, headers, json) = server.request("GET", "/v1/organization", auth);
    assert_eq!((status, code(&json)), (429, "RATE_LIMITED"));
    let wait = headers.iter().find(|(k, _)| k == "retry-after").map(|(_, v)| v.clone());
    assert!(wait.is_some_and(|w| (29..=30).contains(&w.parse::<u32>().unwrap())));
    let (status, headers, _) =
        server.request("GET", &format!("/v1/audit-logs/privacy?{WINDOW}"), auth);
    assert_eq!(status, 200);
    assert!(!headers.iter().any(|(k, _)| k.starts_with("ratelimit")), "{headers:?}");
}

/// With a checkpoint key, the server signs the head of every chain when it starts (then every
/// `--checkpoint-interval`): `audit verify` with the key finds each chain checked against one
/// checkpoint, and the server publishes the key's public half.
#[test]
fn the_server_signs_every_chain_when_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("recruitd.db").display());
    let document = dir.path().join("world.json");
    std::fs::write(&document, serde_json::to_string(&world()).unwrap()).unwrap();
    cli(&url, &["import", document.to_str().unwrap()]);
    let key = dir.path().join("checkpoint.pem");
    let key = key.to_str().unwrap();
    let said = cli(&url, &["audit", "keygen", key]);
    let key_id =
        said.split("(key id ").nth(1).and_then(|s| s.split(')').next()).unwrap().to_owned();
    let verify = || cli(&url, &["--checkpoint-key", key, "audit", "verify", "--json"]);
    let chains = verify().lines().count();
    assert!(chains >= 2, "the world has a privacy chain per organization");
    assert!(verify().lines().all(|l| l.contains("\"checkpoints\":0")), "none signed yet");

    let server = Server::spawn(
        &url,
        &["--checkpoint-key", key, "--checkpoint-interval", "1h"],
        "warn",
        Stdio::inherit(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let report = verify();
        if report.lines().all(|l| l.contains("\"checkpoints\":1")) {
            assert_eq!(report.lines().count(), chains);
            break;
        }
        assert!(Instant::now() < deadline, "not every chain signed within 30 s: {report}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, _, keys) = server.request("GET", "/.well-known/recruitd-checkpoint-keys", None);
    assert_eq!(status, 200);
    assert_eq!(keys["keys"][0]["kid"], key_id.as_str(), "the key it signs with: {keys}");
    let signed = cli(&url, &["--checkpoint-key", key, "audit", "checkpoint"]);
    assert_eq!(signed, "", "the server signed every head already");
    let stored = verify();
    assert!(stored.lines().all(|l| !l.contains("BAD_CHECKPOINT")), "{stored}");
    drop(server);
}

/// An export through the server is chunked NDJSON that ends with its last chunk and holds the
/// count it announces; the monthly review lists it as a download of the owner who made it,
/// and `audit review --json` prints the body `GET /v1/audit-logs/privacy/reviews/{month}`
/// returns.
#[test]
fn an_export_streams_through_the_server_and_shows_in_the_monthly_review() {
    let dir = tempfile::tempdir().unwrap();
    let (url, secret) = sqlite_world(dir.path());
    let server = Server::start(&url);
    let path = format!("/v1/audit-logs/privacy/export?{WINDOW}");
    let (status, headers, raw) = server.request_raw("GET", &path, Some(&secret));
    assert_eq!(status, 200, "{raw}");
    assert_eq!(header(&headers, "transfer-encoding"), "chunked");
    assert_eq!(header(&headers, "content-type"), "application/x-ndjson");
    let count: usize = header(&headers, "recruitd-export-count").parse().unwrap();
    let body = dechunk(&raw).expect("the response ends with its last chunk");
    assert_eq!(body.lines().count(), count);
    assert!(count > 0);
    for line in body.lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        assert_eq!(line["ledger"], "privacy");
        assert!(line["hash"].as_str().is_some_and(|h| h.len() == 64), "{line}");
    }

    let month = &recruit_domain::Timestamp::now().to_string()[..7];
    let path = format!("/v1/audit-logs/privacy/reviews/{month}");
    let (status, _, rest) = server.request("GET", &path, Some(&secret));
    assert_eq!(status, 200, "{rest}");
    drop(server);

    let org = recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A));
    let args = ["audit", "review", "--month", month, "--org", &org.to_string(), "--json"];
    let review: Value = serde_json::from_str(cli(&url, &args).trim()).unwrap();
    assert_eq!(review, rest, "the CLI and REST give one review");
    let exports = review["ledger_exports"].as_array().unwrap();
    assert_eq!(exports.len(), 1, "{review}");
    assert_eq!(exports[0]["entries"], count);
    assert_eq!(exports[0]["filters"]["activity_category"], "DOWNLOAD");
    let owner = review["accounts"].as_array().unwrap().iter().find(|a| a["ledger_exports"] == 1);
    assert_eq!(owner.unwrap()["downloads"], 0, "an export of the ledger is not a download");
    assert_eq!(owner.unwrap()["flags"], serde_json::json!([]), "one export is within the rules");

    // With two organizations stored, the CLI asks which.
    let out = Command::new(BIN)
        .args(["--database-url", &url, "audit", "review", "--month", month])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("choose one with --org") && stderr.contains(&org.to_string()));
}
