//! Recording accesses through REST (`POST /v1/audit-logs/privacy`) on a real SQLite store:
//! the idempotency key's every answer, validation, authorization, and concurrent duplicates.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use recruit_domain::model::Role;
use recruit_domain::{OrganizationId, Scope, Timestamp, Uuid};
use recruit_ports::Ledgers;
use recruit_ports::testkit::ORG_A;
use serde_json::{Value, json};

use crate::common::Fixture;

const PATH: &str = "/v1/audit-logs/privacy";

fn entry(menu: &str) -> Value {
    recruit_ports::testkit::access_entry(menu)
}

fn post(token: &str, key: Option<&str>, body: &str) -> Request<Full<Bytes>> {
    let mut request = Request::post(PATH)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json");
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    request.body(Full::new(Bytes::from(body.to_owned()))).unwrap()
}

/// The whole body of a response, as sent.
async fn bytes(response: hyper::Response<recruit_http::Body>) -> Bytes {
    response.into_body().collect().await.unwrap().to_bytes()
}

/// The entries of organization A's ledger recorded in the last hour.
async fn recent(f: &Fixture, token: &str) -> Vec<Value> {
    let now = Timestamp::now();
    let from = Timestamp::from_unix_micros(now.unix_micros() - 3_600_000_000).unwrap();
    let to = Timestamp::from_unix_micros(now.unix_micros() + 600_000_000).unwrap();
    let uri = format!("{PATH}?timestamp_gte={from}&timestamp_lt={to}&limit=100");
    let (status, _, body) = f.get(&uri, Some(token)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_is_recorded_once_and_its_response_replayed_byte_for_byte() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let body = json!({"entries": [entry("People"), entry("Candidates")]}).to_string();
    let (status, response, json) = f.send(post(&owner, Some("\"batch-1\""), &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{json}");
    let first = bytes(response).await;
    let stored = json["entries"].as_array().unwrap();
    assert_eq!(stored.len(), 2);
    assert!(stored.iter().all(|e| e["id"].as_str().unwrap().starts_with("pal_")));
    assert_eq!(stored[0]["account_id"], "0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e", "canonical form");
    assert_eq!(recent(&f, &owner).await.len(), 2);

    // The same request again, formatted otherwise and with the key as a bare token.
    let again: Value = serde_json::from_str(&body).unwrap();
    let (status, response, _) = f.send(post(&owner, Some("batch-1"), &format!("{again:#}"))).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(response.headers()["idempotent-replayed"], "true");
    assert_eq!(bytes(response).await, first, "the first response, byte for byte");
    assert_eq!(recent(&f, &owner).await.len(), 2, "nothing written again");

    // The key with other entries.
    let other = json!({"entries": [entry("Elsewhere")]}).to_string();
    let (status, _, json) = f.send(post(&owner, Some("batch-1"), &other)).await;
    assert_eq!(
        (status, json["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("IDEMPOTENCY_KEY_REUSED"))
    );
    assert_eq!(recent(&f, &owner).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_needs_a_key_the_scope_the_role_and_valid_entries() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let body = json!({"entries": [entry("People")]}).to_string();

    let (status, _, json) = f.send(post(&owner, None, &body)).await;
    assert_eq!(
        (status, json["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("IDEMPOTENCY_KEY_REQUIRED"))
    );

    let reader = f.token(ORG_A, Role::Owner, &[Scope::AuditLogsRead]).await;
    let (status, _, json) = f.send(post(&reader, Some("k"), &body)).await;
    assert_eq!(
        (status, json["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("INSUFFICIENT_SCOPE"))
    );
    let member = f.token(ORG_A, Role::Member, &Scope::ALL).await;
    let (status, _, json) = f.send(post(&member, Some("k"), &body)).await;
    assert_eq!(
        (status, json["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("PERMISSION_DENIED"))
    );
    let admin = f.token(ORG_A, Role::Admin, &Scope::ALL).await;

    // Every problem at once, the key's too; nothing written, and the key not used up.
    let mut bad = entry("People");
    bad["access_time"] = json!("2999-01-01T00:00:00Z");
    bad["ip_addresses"] = json!(["nowhere"]);
    let bad = json!({"entries": [entry("People"), bad], "extra": 1}).to_string();
    let (status, _, json) = f.send(post(&admin, Some("\"unterminated"), &bad)).await;
    assert_eq!(
        (status, json["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("VALIDATION_FAILED"))
    );
    let fields: Vec<&str> = json["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["Idempotency-Key", "extra", "entries[1].access_time", "entries[1].ip_addresses[0]"]
    );
    let (status, _, json) = f.send(post(&admin, Some("k2"), &bad)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    let (status, _, json) = f.send(post(&admin, Some("k2"), &body)).await;
    assert_eq!(status, StatusCode::CREATED, "a refused request does not use its key up: {json}");
    let (status, _, json) = f.send(post(&admin, Some("k3"), "not json")).await;
    assert_eq!(json["error"]["details"][0]["field"], "body", "{status} {json}");
}

/// A batch whose database dies before its commit leaves its key free: once the database is
/// back, the retry with the same key is written at once, not refused as still running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_cut_by_the_database_leaves_its_key_free_for_the_retry() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let body = json!({"entries": [entry("People")]}).to_string();
    f.store.die_on_record();
    let (status, response, json) = f.send(post(&owner, Some("cut"), &body)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{json}");
    let wait: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    f.store.set(recruit_ports::faulty::Fault::None);
    assert!(wait <= 5, "{wait}");
    let (status, response, json) = f.send(post(&owner, Some("cut"), &body)).await;
    assert_eq!(status, StatusCode::CREATED, "the retry is written at once: {json}");
    assert!(response.headers().get("idempotent-replayed").is_none());
    assert_eq!(recent(&f, &owner).await.len(), 1);
    let (status, response, _) = f.send(post(&owner, Some("cut"), &body)).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(response.headers()["idempotent-replayed"], "true");
}

/// An entry whose id is in the ledger: CONFLICT, nothing of the batch written, and its key free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_id_writes_nothing() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let body: Value = json!({"entries": [entry("People")]});
    let (_, _, first) = f.send(post(&owner, Some("one"), &body.to_string())).await;
    let taken = first["entries"][0]["id"].clone();
    let mut again = entry("Again");
    again["id"] = taken;
    let batch = json!({"entries": [entry("Fresh"), again]}).to_string();
    let (status, _, json) = f.send(post(&owner, Some("two"), &batch)).await;
    assert_eq!((status, json["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("CONFLICT")));
    assert_eq!(recent(&f, &owner).await.len(), 1);
    let fixed = json!({"entries": [entry("Fresh")]}).to_string();
    let (status, _, _) = f.send(post(&owner, Some("two"), &fixed)).await;
    assert_eq!(status, StatusCode::CREATED, "the refused request did not use its key up");
}

/// Sixteen requests at once with one key and one body: one batch is stored, and every answer
/// is the batch (201, or replayed) or "being written" (409); none fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_duplicates_store_one_batch() {
    let f = std::sync::Arc::new(Fixture::with(|_| {}).await);
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let body = json!({"entries": [entry("People"), entry("Jobs")]}).to_string();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (f, owner, body) = (f.clone(), owner.clone(), body.clone());
            tokio::spawn(async move { f.send(post(&owner, Some("same"), &body)).await.0 })
        })
        .collect();
    let mut statuses = vec![];
    for task in tasks {
        statuses.push(task.await.unwrap());
    }
    assert!(
        statuses.iter().all(|s| *s == StatusCode::CREATED || *s == StatusCode::CONFLICT),
        "{statuses:?}"
    );
    assert!(statuses.contains(&StatusCode::CREATED));
    assert_eq!(recent(&f, &owner).await.len(), 2, "exactly one batch: {statuses:?}");
}

/// The latest checkpoint of the privacy ledger's chain verifies with the key the server
/// publishes; it is signed again only once the chain moved (here, by recorded accesses), and
/// every read of it is recorded in the API audit ledger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_latest_checkpoint_verifies_with_the_published_key_and_follows_the_chain() {
    use base64::Engine as _;
    use recruit_domain::chain::{Checkpoint, VerifyingKey};
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let latest = "/v1/audit-logs/privacy/checkpoints/latest";
    let (status, _, keys) = f.get("/.well-known/recruitd-checkpoint-keys", None).await;
    assert_eq!(status, StatusCode::OK, "{keys}");
    let x = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(keys["keys"][0]["x"].as_str().unwrap())
        .unwrap();
    let key = VerifyingKey::from_bytes(&x.try_into().unwrap()).unwrap();

    let read = |body: Value| serde_json::from_value::<Checkpoint>(body).unwrap();
    let (status, _, body) = f.get(latest, Some(&owner)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let first = read(body);
    assert_eq!(first.key_id, keys["keys"][0]["kid"]);
    assert!(first.verify(&key).is_ok());
    assert_eq!(first.organization_id, OrganizationId::from_uuid(Uuid::from_u128(ORG_A)));
    let (_, _, again) = f.get(latest, Some(&owner)).await;
    assert_eq!(read(again), first, "nothing recorded since: the same checkpoint");

    let body = json!({"entries": [entry("People"), entry("People")]}).to_string();
    let (status, _, _) = f.send(post(&owner, Some("cp-1"), &body)).await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, _, moved) = f.get(latest, Some(&owner)).await;
    let moved = read(moved);
    assert_eq!(moved.position, first.position + 2);
    assert_ne!(moved.head_hash, first.head_hash);
    assert!(moved.verify(&key).is_ok());

    let all = recruit_ports::AuditListQuery { organization_id: None, limit: 100 };
    let reads: Vec<_> = f
        .store
        .api_audit_entries(&all)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.operation == "getLatestPrivacyAuditLogCheckpoint")
        .collect();
    assert_eq!(reads.len(), 3, "every read is recorded");
    assert!(reads.iter().all(|e| e.entries_returned == 0));
}

/// A call of the tool `record_privacy_accesses` with `arguments`; its result.
async fn tool(f: &Fixture, token: &str, arguments: Value) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "record_privacy_accesses", "arguments": arguments}});
    let request = Request::post("/mcp")
        .header("host", "127.0.0.1:8080")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(Full::new(Bytes::from(call.to_string())))
        .unwrap();
    let (status, _, json) = f.send(request).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    json["result"].clone()
}

/// One rule for keys: the key a REST client sends as a Structured Field string is the key a
/// tool sends as plain text, so the same batch through the other interface is a replay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_is_the_same_key_through_either_interface() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let entries = json!([entry("People")]);
    let body = json!({"entries": entries}).to_string();
    let (status, _, first) = f.send(post(&owner, Some(r#""a key \"with\" quotes""#), &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let result = tool(
        &f,
        &owner,
        json!({"idempotency_key": r#"a key "with" quotes"#,
        "entries": entries}),
    )
    .await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"], first, "the first response, replayed");
    assert_eq!(recent(&f, &owner).await.len(), 1, "written once");
}

/// A batch's body is JSON: `application/json` or a `+json` type, or no `Content-Type` at all
/// (read as JSON); any other type is VALIDATION_FAILED naming `Content-Type`, and writes
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_is_json_by_its_content_type_or_without_one() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let body = json!({"entries": [entry("People")]}).to_string();
    let send = |key: &str, content_type: Option<&str>| {
        let mut request = Request::post(PATH)
            .header("authorization", format!("Bearer {owner}"))
            .header("idempotency-key", key);
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        request.body(Full::new(Bytes::from(body.clone()))).unwrap()
    };
    let (status, _, json) = f.send(send("plain", Some("text/plain"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    assert_eq!(json["error"]["code"], "VALIDATION_FAILED");
    assert_eq!(json["error"]["details"][0]["field"], "Content-Type");
    assert!(recent(&f, &owner).await.is_empty(), "nothing written");
    let (status, _, json) = f.send(send("none", None)).await;
    assert_eq!(status, StatusCode::CREATED, "{json}");
    let (status, _, json) = f.send(send("problem", Some("application/problem+json"))).await;
    assert_eq!(status, StatusCode::CREATED, "{json}");
    assert_eq!(recent(&f, &owner).await.len(), 2);
}

/// An entry may carry the purpose it was for: stored, listed and chained with it; one without
/// a purpose is written without the field; a purpose that is empty, too long or not text is
/// refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_carries_its_stated_purpose() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let mut with = entry("Candidates > Export");
    with["activity_category"] = json!("DOWNLOAD");
    with["purpose"] = json!("채용 위원회 면접 자료 (interview panel pack)");
    let mut without = entry("People");
    without["purpose"] = Value::Null;
    let body = json!({"entries": [with, without]}).to_string();
    let (status, _, json) = f.send(post(&owner, Some("purpose-1"), &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{json}");
    assert_eq!(json["entries"][0]["purpose"], "채용 위원회 면접 자료 (interview panel pack)");
    assert!(json["entries"][1].get("purpose").is_none(), "{}", json["entries"][1]);
    let listed = recent(&f, &owner).await;
    let stated: Vec<&Value> = listed.iter().filter_map(|e| e.get("purpose")).collect();
    assert_eq!(stated, [&json!("채용 위원회 면접 자료 (interview panel pack)")]);
    let org = OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let ledgers = [recruit_domain::chain::Ledger::Privacy];
    let anchors = recruit_service::verify::Anchors::default();
    let found =
        recruit_service::verify::verify(&*f.store, &ledgers, Some(org), anchors).await.unwrap();
    assert!(!found.is_empty() && found.iter().all(|c| c.findings.is_empty()), "{found:?}");

    for (purpose, reason) in [
        (json!(""), "must be 1 to 500 characters"),
        (json!("x".repeat(501)), "must be 1 to 500 characters"),
        (json!(5), "string"),
    ] {
        let mut bad = entry("People");
        bad["purpose"] = purpose;
        let body = json!({"entries": [bad]}).to_string();
        let (status, _, json) = f.send(post(&owner, Some("purpose-bad"), &body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
        let detail = &json["error"]["details"][0];
        assert_eq!(detail["field"], "entries[0].purpose", "{json}");
        assert!(detail["reason"].as_str().unwrap().contains(reason), "{json}");
    }
}
