//! The OpenAPI document against the server: the served document is `docs/openapi.yaml`, it names
//! what the server knows (codes, scopes, routes), and real responses of every endpoint, for
//! every status the server can give, match the document's status, content type, headers and
//! schema.

use std::collections::BTreeSet;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use recruit_domain::model::Role;
use recruit_domain::{ErrorCode, Scope, Timestamp};
use recruit_http::Body;
use recruit_ports::faulty::Fault;
use recruit_ports::testkit::{ORG_A, ORG_B, ORG_C, job_id, lone_organization, user_id};
use recruit_service::demo::{self, DemoConfig};
use serde_json::{Value, json};

use crate::common::Fixture;

/// `GET /v1/me`.
const ME: &str = "/v1/me";

/// The review rules.
const RULES: &str = "/v1/audit-logs/privacy/review-rules";

/// A month's review of the privacy ledger.
const REVIEW: &str = "/v1/audit-logs/privacy/reviews/2026-10";

/// A body one byte over the limit of every operation but a batch's.
const TOO_LARGE: usize = recruit_service::BODY_LIMIT + 1;

/// The document as kept in the repository.
fn document() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.yaml");
    let yaml = std::fs::read_to_string(path).unwrap();
    serde_norway::from_str(&yaml).unwrap()
}

/// A response as the test sees it.
struct Seen {
    method: &'static str,
    uri: String,
    status: StatusCode,
    headers: hyper::HeaderMap,
    body: Bytes,
}

/// What the checks need of a response.
async fn seen(method: &'static str, uri: &str, response: Response<Body>) -> Seen {
    let status = response.status();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    Seen { method, uri: uri.to_owned(), status, headers: parts.headers, body }
}

/// Sends a GET with a body of `body` bytes.
async fn send(f: &Fixture, uri: &str, token: &str, body: usize) -> Seen {
    let request = Request::get(uri).header("authorization", format!("Bearer {token}"));
    let (_, response, _) =
        f.send(request.body(Full::new(Bytes::from(vec![b'x'; body]))).unwrap()).await;
    seen("GET", uri, response).await
}

/// Records accesses: a POST of `body` with `key` as the idempotency key.
async fn post(f: &Fixture, token: Option<&str>, key: Option<&str>, body: &str) -> Seen {
    let mut request = Request::post(WRITE).header("content-type", "application/json");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    let (_, response, _) =
        f.send(request.body(Full::new(Bytes::from(body.to_owned()))).unwrap()).await;
    seen("POST", WRITE, response).await
}

const WRITE: &str = "/v1/audit-logs/privacy";

/// A body of `n` entries to record, timed now.
fn entries(n: usize, menu: &str) -> String {
    let entry = json!({
        "access_time": recruit_domain::Timestamp::now().to_string(),
        "account_id": "0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e",
        "ip_addresses": ["203.0.113.9"],
        "data_subject": {"type": "BULK", "bulk_count": 3,
            "query": {"type": "EMPLOYEE_SEARCH", "values": ["kim"]}},
        "access_data": ["NAME", "PHONE_NUMBER"],
        "access_menu": menu,
        "access_menu_path": "/people/search",
        "activity_category": "BULK_READ"
    });
    json!({"entries": vec![entry; n]}).to_string()
}

/// Changes a profile: a PATCH of `body` to `uri`, with `If-Match` when given.
/// A PUT or POST of a JSON `body` to `uri`.
async fn write(
    f: &Fixture,
    method: &'static str,
    uri: &str,
    token: Option<&str>,
    body: &str,
) -> Seen {
    let mut request =
        Request::builder().method(method).uri(uri).header("content-type", "application/json");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let (_, response, _) =
        f.send(request.body(Full::new(Bytes::from(body.to_owned()))).unwrap()).await;
    seen(method, uri, response).await
}

/// A fixture whose every quota is one request a minute.
async fn one_a_minute() -> Fixture {
    let one = "1/min".parse().unwrap();
    let limits = recruit_service::limits::RateLimitConfig {
        reads: one,
        ledger_reads: one,
        writes: one,
        auth_failures: one,
    };
    Fixture::limited(limits, |_| {}).await
}

/// The organization's single sign-on: read, set, removed, and each refusal, on fixtures of its
/// own (their quotas and faults touch no other request).
async fn sso_responses() -> Vec<Seen> {
    const SSO: &str = "/v1/organization/sso";
    let f = &Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let member = f.token(ORG_A, Role::Member, &Scope::ALL).await;
    let unscoped = f.token(ORG_A, Role::Owner, &[Scope::OrganizationRead]).await;
    let (owner, member, unscoped) = (Some(owner.as_str()), Some(member.as_str()), Some(&*unscoped));
    let settings = format!(
        r#"{{"issuer": "{}", "client_id": "recruitd", "client_secret": "s3cr3t"}}"#,
        crate::common::ISSUER
    );
    let too_large = " ".repeat(TOO_LARGE);
    let mut seen = vec![get(f, SSO, owner).await];
    seen.push(write(f, "PUT", SSO, owner, &settings).await);
    seen.push(get(f, SSO, owner).await);
    assert!(!String::from_utf8_lossy(&seen[2].body).contains("s3cr3t"), "never shown");
    for (method, body) in [("GET", ""), ("PUT", settings.as_str()), ("DELETE", "")] {
        seen.push(write(f, method, &format!("{SSO}?x=1"), owner, body).await);
        seen.push(write(f, method, SSO, None, body).await);
        seen.push(write(f, method, SSO, member, body).await);
        seen.push(write(f, method, SSO, unscoped, body).await);
        seen.push(write(f, method, SSO, owner, &too_large).await);
    }
    let elsewhere = r#"{"issuer": "https://elsewhere.example.com", "client_id": "recruitd"}"#;
    seen.push(write(f, "PUT", SSO, owner, elsewhere).await);
    for fault in [Fault::Unavailable, Fault::Panic, Fault::Slow(Duration::from_secs(2))] {
        f.store.set(fault);
        for (method, body) in [("GET", ""), ("PUT", settings.as_str()), ("DELETE", "")] {
            seen.push(write(f, method, SSO, owner, body).await);
        }
        f.store.set(Fault::None);
    }
    seen.push(write(f, "DELETE", SSO, owner, "").await);
    let bare = Fixture::keyed(recruit_service::limits::RateLimitConfig::DEFAULT, None, |_| {});
    let bare = bare.await;
    let bare_owner = bare.token(ORG_A, Role::Owner, &Scope::ALL).await;
    seen.push(write(&bare, "PUT", SSO, Some(&bare_owner), &settings).await);
    let limited = one_a_minute().await;
    let token = limited.token(ORG_A, Role::Owner, &Scope::ALL).await;
    for (method, body) in [("GET", ""), ("GET", ""), ("PUT", ""), ("PUT", ""), ("DELETE", "")] {
        seen.push(write(&limited, method, SSO, Some(&token), body).await);
    }
    seen
}

/// The organization's log streams: each operation answered, and refused each way the document
/// says, on fixtures of their own.
async fn log_stream_responses() -> Vec<Seen> {
    const STREAMS: &str = "/v1/log-streams";
    let f = &Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let member = f.token(ORG_A, Role::Member, &Scope::ALL).await;
    let unscoped = f.token(ORG_A, Role::Owner, &[Scope::AuditLogsRead]).await;
    let (owner, member, unscoped) = (Some(owner.as_str()), Some(member.as_str()), Some(&*unscoped));
    let settings = r#"{"name": "SIEM", "destination": {"type": "https", "url": "https://siem.example.com/in"}, "after_position": 0}"#;
    let made = write(f, "POST", STREAMS, owner, settings).await;
    let stream: Value = serde_json::from_slice(&made.body).unwrap();
    assert!(stream["signing_secret"].as_str().unwrap().starts_with("whsec_"), "{stream}");
    let one = format!("{STREAMS}/{}", stream["id"].as_str().unwrap());
    let (pause, resume) = (format!("{one}/pause"), format!("{one}/resume"));
    let rotate = format!("{one}/rotate-secret");
    let missing = format!("{STREAMS}/lst_{:032x}", 7);
    let rename = r#"{"name": "SIEM 2"}"#;
    let too_large = " ".repeat(TOO_LARGE);
    let mut seen = vec![made, get(f, STREAMS, owner).await, get(f, &one, owner).await];
    assert!(!String::from_utf8_lossy(&seen[2].body).contains("whsec_"), "shown once");
    let each: [(&'static str, &str, &str); 7] = [
        ("POST", &rotate, r#"{"overlap_seconds": 60}"#),
        ("GET", STREAMS, ""),
        ("POST", STREAMS, settings),
        ("GET", &one, ""),
        ("PATCH", &one, rename),
        ("POST", &pause, ""),
        ("POST", &resume, ""),
    ];
    for (method, uri, body) in each {
        seen.push(write(f, method, uri, owner, body).await);
        seen.push(write(f, method, &format!("{uri}?x=1"), owner, body).await);
        seen.push(write(f, method, uri, None, body).await);
        seen.push(write(f, method, uri, member, body).await);
        seen.push(write(f, method, uri, unscoped, body).await);
        seen.push(write(f, method, uri, owner, &too_large).await);
    }
    for (method, uri) in [("GET", &missing), ("PATCH", &missing), ("POST", &missing)] {
        let uri = if method == "POST" { format!("{uri}/pause") } else { uri.clone() };
        seen.push(write(f, method, &uri, owner, rename).await);
    }
    seen.push(write(f, "POST", &format!("{missing}/resume"), owner, "").await);
    seen.push(write(f, "POST", &format!("{missing}/rotate-secret"), owner, "{}").await);
    seen.push(write(f, "POST", &rotate, owner, r#"{"overlap_seconds": -1}"#).await);
    let rotated = write(f, "POST", &rotate, owner, "{}").await;
    let empty = write(f, "POST", &rotate, owner, "").await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST, "{}", String::from_utf8_lossy(&empty.body));
    seen.push(empty);
    let shown: Value = serde_json::from_slice(&rotated.body).unwrap();
    assert!(shown["signing_secret"].as_str().unwrap().starts_with("whsec_"), "{shown}");
    seen.push(rotated);
    seen.push(write(f, "PATCH", &one, owner, r#"{"name": ""}"#).await);
    for fault in [Fault::Unavailable, Fault::Panic, Fault::Slow(Duration::from_secs(2))] {
        f.store.set(fault);
        for (method, uri, body) in each {
            seen.push(write(f, method, uri, owner, body).await);
        }
        seen.push(write(f, "DELETE", &one, owner, "").await);
        f.store.set(Fault::None);
    }
    for uri in [&one, &missing, &format!("{STREAMS}/nope")] {
        seen.push(write(f, "DELETE", uri, owner, "").await);
    }
    for token in [None, member, unscoped] {
        seen.push(write(f, "DELETE", &one, token, "").await);
    }
    seen.push(write(f, "DELETE", &format!("{one}?x=1"), owner, "").await);
    seen.push(write(f, "DELETE", &one, owner, &too_large).await);
    let bare = Fixture::keyed(recruit_service::limits::RateLimitConfig::DEFAULT, None, |_| {});
    let bare = bare.await;
    let bare_owner = bare.token(ORG_A, Role::Owner, &Scope::ALL).await;
    seen.push(write(&bare, "POST", STREAMS, Some(&bare_owner), settings).await);
    seen.push(write(&bare, "PATCH", &missing, Some(&bare_owner), rename).await);
    let limited = one_a_minute().await;
    let token = limited.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let pairs: [(&'static str, &str, &str); 4] = [
        ("GET", STREAMS, ""),
        ("POST", STREAMS, settings),
        ("GET", &missing, ""),
        ("DELETE", &missing, ""),
    ];
    for (method, uri, body) in pairs {
        seen.push(write(&limited, method, uri, Some(&token), body).await);
    }
    for (method, uri, body) in each.into_iter().chain([("DELETE", one.as_str(), "")]) {
        seen.push(write(&limited, method, uri, Some(&token), body).await);
    }
    seen
}

/// Each SCIM operation answered once and refused once, with a SCIM token of the owner of
/// `ORG_A`, on a fixture of its own (the address's failed authentications start at none).
async fn scim_responses() -> Vec<Seen> {
    let f = &Fixture::with(|_| {}).await;
    let owner = user_id(ORG_A, Role::Owner);
    let (_, scim) = recruit_service::auth::create_scim_token(&*f.store, owner, "idp".into(), None)
        .await
        .unwrap();
    let token = Some(scim.as_str());
    let user = r#"{"userName": "scim.user@org-a.example", "displayName": "SCIM User"}"#;
    let created = write(f, "POST", "/scim/v2/Users", token, user).await;
    let id: Value = serde_json::from_slice(&created.body).unwrap();
    let one = format!("/scim/v2/Users/{}", id["id"].as_str().unwrap());
    let patch = r#"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "path": "title", "value": "Engineer"}]}"#;
    let search = r#"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
        "filter": "userName eq \"scim.user@org-a.example\""}"#;
    let schema = "/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:User";
    let mut seen = vec![created];
    for uri in [
        "/scim/v2/ServiceProviderConfig",
        "/scim/v2/ResourceTypes",
        "/scim/v2/ResourceTypes/User",
        "/scim/v2/Schemas",
        schema,
        "/scim/v2/Users?filter=userName%20eq%20%22scim.user%40org-a.example%22",
        &one,
    ] {
        seen.push(get(f, uri, token).await);
        seen.push(get(f, uri, None).await);
    }
    seen.push(write(f, "PUT", &one, token, user).await);
    seen.push(write(f, "PATCH", &one, token, patch).await);
    seen.push(write(f, "POST", "/scim/v2/Users/.search", token, search).await);
    seen.push(write(f, "POST", "/scim/v2/.search", token, search).await);
    seen.push(write(f, "DELETE", &one, token, "").await);
    for (method, uri) in [
        ("POST", "/scim/v2/Users"),
        ("PUT", one.as_str()),
        ("PATCH", one.as_str()),
        ("DELETE", one.as_str()),
        ("POST", "/scim/v2/Users/.search"),
        ("POST", "/scim/v2/.search"),
    ] {
        seen.push(write(f, method, uri, token, "[]").await);
    }
    seen
}

/// A decision's body.
const CONFIRM: &str = r#"{"status": "CONFIRMED", "reason": "The quarterly report."}"#;

/// What [`review_responses`] saw and made.
struct Reviewed {
    seen: Vec<Seen>,
    /// The path of the decision on the month's download.
    decide: String,
    /// The path of the month's sign-off.
    sign: String,
    /// The body of the month's sign-off, as first answered.
    signed: bytes::Bytes,
}

/// The review's records, each status: a download of the month imported, decided on, the
/// month signed off.
async fn review_responses(f: &Fixture, owner: &str, member: &str, audit_only: &str) -> Reviewed {
    let mut download =
        recruit_ports::testkit::ledger_entry(ORG_A, 900, "2026-10-10T10:00:00Z".parse().unwrap());
    download.entry.activity_category = recruit_domain::model::ActivityCategory::Download;
    let mut asked =
        recruit_ports::testkit::ledger_entry(ORG_A, 901, "2026-10-11T10:00:00Z".parse().unwrap());
    asked.entry.activity_category = recruit_domain::model::ActivityCategory::Download;
    let by_member = user_id(ORG_A, Role::Member).uuid();
    asked.entry.account_id = recruit_domain::AccountId::from_uuid(by_member);
    let doc_download = recruit_ports::ImportDocument {
        privacy_audit_logs: vec![download.clone(), asked.clone()],
        ..Default::default()
    };
    recruit_ports::Import::import(&*f.store, &doc_download).await.unwrap();
    let decide = format!("{REVIEW}/downloads/{}", download.entry.id);
    let nowhere = format!("{REVIEW}/downloads/pal_{}", "0".repeat(32));
    let sign = format!("{REVIEW}/sign-off");
    let ask = format!("{REVIEW}/downloads/{}", asked.entry.id);
    let explain = format!("{ask}/explanation");
    let confirm = CONFIRM;
    let review_only = f.token(ORG_A, Role::Owner, &[Scope::AuditLogsReview]).await;
    let (f, owner, member, audit_only) = (f, Some(owner), Some(member), Some(audit_only));
    let mut seen = vec![
        write(f, "PUT", &decide, Some(&review_only), confirm).await,
        write(f, "PUT", &decide, owner, r#"{"status": "MAYBE"}"#).await,
        write(f, "PUT", &nowhere, owner, confirm).await,
        write(f, "PUT", &decide, None, confirm).await,
        write(f, "PUT", &decide, audit_only, confirm).await,
        write(f, "PUT", &decide, member, confirm).await,
        write(f, "PUT", &decide, owner, &" ".repeat(TOO_LARGE)).await,
        // The explanation of the member's download, asked for; and each refusal.
        write(f, "PUT", &ask, owner, r#"{"status": "EXPLANATION_REQUESTED", "reason": "Why?"}"#)
            .await,
        write(f, "PUT", &explain, member, r#"{"explanation": "For the board."}"#).await,
        write(f, "PUT", &explain, member, r#"{"explanation": " "}"#).await,
        write(f, "PUT", &explain, None, r#"{"explanation": "x"}"#).await,
        write(f, "PUT", &format!("{nowhere}/explanation"), member, r#"{"explanation": "x"}"#).await,
        write(f, "PUT", &explain, owner, r#"{"explanation": "Not mine."}"#).await,
        write(f, "PUT", &explain, member, &" ".repeat(TOO_LARGE)).await,
    ];
    let signed = write(f, "POST", &sign, owner, r#"{"note": "Checked with the team."}"#).await;
    let signed_body = signed.body.clone();
    seen.push(signed);
    seen.extend(vec![
        write(f, "POST", &sign, owner, r#"{"note": 5}"#).await,
        write(f, "POST", &sign, owner, "{}").await,
        write(f, "POST", &sign, None, "{}").await,
        write(f, "POST", &sign, member, "{}").await,
        write(f, "POST", &sign, owner, &" ".repeat(TOO_LARGE)).await,
    ]);
    Reviewed { seen, decide, sign, signed: signed_body }
}

async fn patch(
    f: &Fixture,
    uri: &str,
    token: Option<&str>,
    if_match: Option<&str>,
    body: &str,
) -> Seen {
    let mut request = Request::patch(uri).header("content-type", "application/merge-patch+json");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(tag) = if_match {
        request = request.header("if-match", tag);
    }
    let (_, response, _) =
        f.send(request.body(Full::new(Bytes::from(body.to_owned()))).unwrap()).await;
    seen("PATCH", uri, response).await
}

async fn get(f: &Fixture, uri: &str, token: Option<&str>) -> Seen {
    let (_, response, _) = f.get(uri, token).await;
    seen("GET", uri, response).await
}

/// Follows a local `$ref` of the document.
fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let target = doc.pointer(reference.trim_start_matches('#')).unwrap_or_else(|| {
                panic!("{reference} does not resolve");
            });
            resolve(doc, target)
        }
        None => value,
    }
}

/// Checks `value` against `schema`, a schema of the document whose references point into the
/// document's components.
fn check_schema(doc: &Value, schema: &Value, value: &Value, what: &str) {
    let mut root = schema.clone();
    if let Some(object) = root.as_object_mut() {
        object.insert("components".into(), doc["components"].clone());
    } else {
        panic!("{what}: the schema is not an object");
    }
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("{what}: the schema does not compile: {e}"));
    let problems: Vec<String> =
        validator.iter_errors(value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(problems.is_empty(), "{what}: {value} does not match its schema:\n{problems:#?}");
}

/// The status a response documented as `default` is counted as.
const DEFAULT: u16 = 0;

/// The path template of the document that `path` matches.
fn template_of<'a>(doc: &'a Value, path: &str) -> &'a str {
    let segments: Vec<&str> = path.split('/').collect();
    doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .find(|template| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == segments.len()
                && parts.iter().zip(&segments).all(|(t, s)| t.starts_with('{') || t == s)
        })
        .unwrap_or_else(|| panic!("{path} is not in the document"))
}

/// Checks one response against the document: its status is documented for the operation, its
/// content type is the documented one, every required header is there and matches, and the
/// body matches the schema. Returns the operation's path template and the status.
fn conforms(doc: &Value, seen: &Seen) -> (String, String, u16) {
    let path = seen.uri.split('?').next().unwrap();
    let template = template_of(doc, path);
    let operation = &doc["paths"][template][seen.method.to_lowercase()];
    assert!(operation.is_object(), "{} {template} is not in the document", seen.method);
    let status = seen.status.as_u16();
    let what = format!("{} {} → {status}", seen.method, seen.uri);
    // SCIM's operations document their success and `default`, SCIM's error message.
    let documented = operation["responses"].get(status.to_string());
    let (response, status) = match documented.or_else(|| operation["responses"].get("default")) {
        Some(r) => (resolve(doc, r), if documented.is_some() { status } else { DEFAULT }),
        None => panic!("{what}: the status is not documented"),
    };
    if response.get("content").is_none() {
        assert!(seen.body.is_empty(), "{what}: a body where none is documented");
        return (seen.method.to_lowercase(), template.to_owned(), status);
    }

    for (name, header) in response["headers"].as_object().into_iter().flatten() {
        let header = resolve(doc, header);
        match seen.headers.get(name.as_str()).and_then(|v| v.to_str().ok()) {
            Some(value) => {
                let schema = &header["schema"];
                let value = if schema["type"] == "integer" {
                    json!(value.parse::<i64>().unwrap_or_else(|_| panic!("{what}: {name}")))
                } else {
                    json!(value)
                };
                check_schema(doc, schema, &value, &format!("{what}: header {name}"));
            }
            None => {
                assert!(
                    header["required"] != true,
                    "{what}: the required header {name} is missing"
                );
            }
        }
    }

    let content_type = seen.headers["content-type"].to_str().unwrap();
    let media = content_type.split(';').next().unwrap().trim();
    let content = response["content"].get(media).unwrap_or_else(|| {
        panic!("{what}: {content_type} is not documented ({})", response["content"])
    });
    // JSON, and the JSON-based types (`application/jwk-set+json`), are checked as JSON.
    let body: Value = if media == "application/json" || media.ends_with("+json") {
        serde_json::from_slice(&seen.body).unwrap_or_else(|e| panic!("{what}: not JSON: {e}"))
    } else if media == "application/x-ndjson" {
        // Each line is a value of the schema.
        let text = std::str::from_utf8(&seen.body).unwrap();
        assert!(text.is_empty() || text.ends_with('\n'), "{what}: the last line is cut");
        for line in text.lines() {
            let line = serde_json::from_str(line).unwrap_or_else(|e| panic!("{what}: {e}"));
            check_schema(doc, &content["schema"], &line, &what);
        }
        return (seen.method.to_lowercase(), template.to_owned(), status);
    } else {
        Value::String(String::from_utf8(seen.body.to_vec()).unwrap())
    };
    check_schema(doc, &content["schema"], &body, &what);
    (seen.method.to_lowercase(), template.to_owned(), status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_document_is_docs_openapi_yaml() {
    let f = Fixture::with(|http| http.request_deadline = Duration::from_millis(300)).await;
    let seen = get(&f, "/openapi.json", None).await;
    assert_eq!(seen.status, StatusCode::OK);
    assert_eq!(seen.headers["content-type"], "application/json");
    let served: Value = serde_json::from_slice(&seen.body).unwrap();
    assert_eq!(served, document(), "the served document differs from docs/openapi.yaml");
    assert_eq!(served["openapi"], "3.1.0");
    assert_eq!(served["info"]["version"], "0.1.0");
}

#[test]
fn the_document_names_every_error_code_and_scope_the_server_has() {
    let doc = document();
    let codes: Vec<&str> = doc["components"]["schemas"]["ErrorCode"]["anyOf"][0]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(codes, ErrorCode::KNOWN);

    let mut required = BTreeSet::new();
    for path in doc["paths"].as_object().unwrap().values() {
        for operation in path.as_object().unwrap().values() {
            let security = operation.get("security").unwrap_or(&doc["security"]);
            for requirement in security.as_array().unwrap() {
                for scope in requirement["bearerAuth"].as_array().into_iter().flatten() {
                    required.insert(scope.as_str().unwrap().to_owned());
                }
            }
        }
    }
    let scopes: BTreeSet<String> = Scope::ALL.iter().map(|s| s.as_str().to_owned()).collect();
    assert_eq!(required, scopes);
}

/// A parameter of the document, its reference resolved.
fn parameter<'a>(doc: &'a Value, parameter: &'a Value) -> &'a Value {
    match parameter["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/parameters/")) {
        Some(name) => &doc["components"]["parameters"][name],
        None => parameter,
    }
}

#[test]
fn every_operation_is_documented_as_it_is_declared_and_nothing_else_is() {
    use recruit_service::{OperationKind, Place, RequestBody as Taken};
    let doc = document();
    let mut documented = vec![];
    for (template, path) in doc["paths"].as_object().unwrap() {
        if !template.starts_with("/v1/") {
            continue;
        }
        for (method, operation) in path.as_object().unwrap() {
            let id = operation["operationId"].as_str().unwrap();
            documented.push(id);
            let kind = OperationKind::ALL.into_iter().find(|k| k.operation_id() == id);
            let spec = kind.unwrap_or_else(|| panic!("{id} is documented, not declared")).spec();
            assert_eq!(method.to_uppercase(), spec.method.as_str(), "{id}");
            assert_eq!(template, spec.path, "{id}");
            let statuses: Vec<u16> = operation["responses"]
                .as_object()
                .unwrap()
                .keys()
                .map(|s| s.parse().unwrap())
                .collect();
            assert_eq!(statuses, spec.statuses, "{id}: documented statuses");
            assert!(statuses.contains(&spec.success), "{id}");
            let scopes = &operation["security"][0]["bearerAuth"];
            let scope = spec.scope.map(|s| s.as_str());
            assert_eq!(scopes, &json!(scope.into_iter().collect::<Vec<_>>()), "{id}: scope");
            let permission = spec.permission.map(|(p, _)| p.as_str());
            assert_eq!(operation["x-permission"].as_str(), permission, "{id}: permission");
            let tool = operation.get("x-tool-description").is_some();
            assert_eq!(tool, spec.tool, "{id}: a tool, or not");
            // Its parameters, by name and place.
            let mut given: Vec<(String, String)> = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| parameter(&doc, p))
                .map(|p| (p["name"].as_str().unwrap().into(), p["in"].as_str().unwrap().into()))
                .collect();
            let place = |p: Place| match p {
                Place::Path => "path",
                Place::Query => "query",
                Place::Header => "header",
            };
            let mut declared: Vec<(String, String)> =
                spec.params.iter().map(|p| (p.rest.into(), place(p.place).into())).collect();
            given.sort();
            declared.sort();
            assert_eq!(given, declared, "{id}: parameters");
            let body = operation.get("requestBody").is_some();
            assert_eq!(body, spec.body != Taken::None, "{id}: a body, or not");
        }
    }
    let declared: Vec<&str> = OperationKind::ALL.iter().map(|k| k.operation_id()).collect();
    let mut sorted = documented.clone();
    sorted.sort_unstable();
    let mut all = declared.clone();
    all.sort_unstable();
    assert_eq!(sorted, all, "every declared operation is documented, once");
}

#[test]
fn the_job_example_is_a_job_of_the_demo_owners_organization() {
    let doc = document();
    let example = doc["paths"]["/v1/jobs/{jobId}"]["get"]["parameters"][0]["example"].clone();
    let config = DemoConfig::quick_start(recruit_domain::Timestamp::now());
    let directory = demo::directory(&config);
    let job = directory.jobs.iter().find(|j| json!(j.id.to_string()) == example);
    let job = job.unwrap_or_else(|| panic!("{example} is not a job of the demo"));
    assert_eq!(job.organization_id, directory.organizations[0].id);
    assert!(!job.confidential, "the owner and the member can both read the example");
}

#[test]
fn the_user_example_is_a_member_of_the_demo_owners_organization_whose_fields_the_api_keeps() {
    let doc = document();
    let example = doc["components"]["parameters"]["UserId"]["example"].clone();
    let config = DemoConfig::quick_start(recruit_domain::Timestamp::now());
    let directory = demo::directory(&config);
    let user = directory.users.iter().find(|u| json!(u.id.to_string()) == example);
    let user = user.unwrap_or_else(|| panic!("{example} is not a user of the demo"));
    assert_eq!(user.organization_id, directory.organizations[0].id);
    assert_eq!(user.role, Role::Member, "the owner may change the example, and the member too");
    let sources = directory.organizations[0].profile_field_sources;
    assert_eq!(sources, Default::default(), "every field of the example can be changed");
}

#[test]
fn every_response_of_every_endpoint_matches_the_document() {
    // A debug build gives this one long body a frame of nearly 2 MiB, a test thread's whole
    // stack: it runs on a thread with room for it.
    let run = || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(every_response());
    };
    let thread = std::thread::Builder::new().stack_size(16 << 20).spawn(run).unwrap();
    if let Err(panic) = thread.join() {
        std::panic::resume_unwind(panic);
    }
}

async fn every_response() {
    let doc = document();
    let f = Fixture::with(|http| http.request_deadline = Duration::from_millis(300)).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let member = f.token(ORG_A, Role::Member, &Scope::ALL).await;
    let jobs_only = f.token(ORG_A, Role::Owner, &[Scope::JobsRead]).await;
    let audit_only = f.token(ORG_A, Role::Owner, &[Scope::AuditLogsRead]).await;
    let b_owner = f.token(ORG_B, Role::Owner, &Scope::ALL).await;
    let list = "/v1/audit-logs/privacy?timestamp_gte=2026-01-01T00:00:00Z&timestamp_lt=2026-06-01T00:00:00%2B02:00";
    let job = format!("/v1/jobs/{}", job_id(ORG_A, 1));
    let confidential = format!("/v1/jobs/{}", job_id(ORG_A, 2));
    let org = "/v1/organization";
    let users_only = f.token(ORG_A, Role::Owner, &[Scope::UsersRead]).await;
    let member_user = format!("/v1/users/{}", user_id(ORG_A, Role::Member));
    let admin_user = format!("/v1/users/{}", user_id(ORG_A, Role::Admin));
    let b_member = format!("/v1/users/{}", user_id(ORG_B, Role::Member));
    let checkpoint = "/v1/audit-logs/privacy/checkpoints/latest";
    let keys = "/.well-known/recruitd-checkpoint-keys";
    let export = "/v1/audit-logs/privacy/export?timestamp_gte=2025-01-01T00:00:00Z&timestamp_lt=2027-01-01T00:00:00Z";
    recruit_ports::Import::import(&*f.store, &lone_organization(ORG_C)).await.unwrap();
    let c_owner = f.token(ORG_C, Role::Owner, &Scope::ALL).await;
    let keyless =
        Fixture::keyed(recruit_service::limits::RateLimitConfig::DEFAULT, None, |_| {}).await;
    let keyless_owner = keyless.token(ORG_A, Role::Owner, &Scope::ALL).await;
    // Tokens of their own for the review rules, so that their writes use no other's quota.
    let rules_owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let rules_member = f.token(ORG_A, Role::Member, &Scope::ALL).await;

    // A month's decisions and sign-off, and each refusal (a function of its own: one body with
    // every request's future overflows a test thread's stack in a debug build).
    let Reviewed { mut seen, decide, sign, signed } =
        Box::pin(review_responses(&f, &owner, &member, &audit_only)).await;
    let confirm = CONFIRM;
    // Successes; the list in pages, so that a cursor is followed too.
    let first_page = get(&f, &format!("{list}&limit=5"), Some(&owner)).await;
    let first: Value = serde_json::from_slice(&first_page.body).unwrap();
    seen.push(first_page);
    seen.extend(vec![
        get(&f, &job, Some(&owner)).await,
        get(&f, &confidential, Some(&owner)).await,
        get(&f, org, Some(&owner)).await,
        get(&f, "/healthz", None).await,
        get(&f, "/readyz", None).await,
        get(&f, "/metrics", None).await,
        get(&f, "/openapi.json", None).await,
        get(&f, "/docs/errors", None).await,
        // The client's mistakes.
        get(&f, &format!("{list}&limit=0&ids="), Some(&owner)).await,
        get(&f, &format!("{list}&cursor=garbage"), Some(&owner)).await,
        get(&f, "/v1/jobs/can_0190b3c1d2e37f4a8b9c0d1e2f3a4b5c", Some(&owner)).await,
        get(&f, &format!("{org}?expand=all"), Some(&owner)).await,
        get(&f, org, None).await,
        get(&f, &job, Some("rtk_not-a-real-token")).await,
        get(&f, list, None).await,
        get(&f, list, Some(&jobs_only)).await,
        get(&f, list, Some(&member)).await,
        get(&f, &job, Some(&audit_only)).await,
        get(&f, org, Some(&jobs_only)).await,
        get(&f, &confidential, Some(&member)).await,
        get(&f, &job, Some(&b_owner)).await,
        send(&f, list, &owner, TOO_LARGE).await,
        send(&f, &job, &owner, TOO_LARGE).await,
        send(&f, org, &owner, TOO_LARGE).await,
        // Profiles: read, changed, and each refusal.
        get(&f, &member_user, Some(&owner)).await,
        get(&f, "/v1/users/job_0190b3c1d2e37f4a8b9c0d1e2f3a4b5c", Some(&owner)).await,
        get(&f, &member_user, None).await,
        get(&f, &member_user, Some(&jobs_only)).await,
        get(&f, &b_member, Some(&owner)).await,
        send(&f, &member_user, &owner, TOO_LARGE).await,
        patch(&f, &member_user, Some(&owner), None, r#"{"title": "Lead", "linkedin_url": null}"#)
            .await,
        patch(&f, &member_user, Some(&owner), None, r#"{"email": "x@example.com"}"#).await,
        patch(&f, &member_user, None, None, "{}").await,
        patch(&f, &member_user, Some(&users_only), None, "{}").await,
        patch(&f, &admin_user, Some(&member), None, r#"{"title": "Boss"}"#).await,
        patch(&f, &b_member, Some(&owner), None, "{}").await,
        patch(&f, &member_user, Some(&owner), Some("\"stale\""), "{}").await,
        patch(&f, &b_member, Some(&b_owner), None, r#"{"name": "N", "title": null}"#).await,
        patch(&f, &member_user, Some(&owner), None, &" ".repeat(TOO_LARGE)).await,
        // Checkpoints: signed, and each refusal; the key they are signed with.
        get(&f, checkpoint, Some(&owner)).await,
        get(&f, &format!("{checkpoint}?position=1"), Some(&owner)).await,
        get(&f, checkpoint, None).await,
        get(&f, checkpoint, Some(&jobs_only)).await,
        get(&f, checkpoint, Some(&member)).await,
        get(&f, checkpoint, Some(&c_owner)).await,
        send(&f, checkpoint, &owner, TOO_LARGE).await,
        get(&keyless, checkpoint, Some(&keyless_owner)).await,
        get(&f, keys, None).await,
        get(&keyless, keys, None).await,
        // Exports: streamed, and each refusal.
        get(&f, export, Some(&owner)).await,
        get(&f, "/v1/audit-logs/privacy/export?limit=5", Some(&owner)).await,
        get(&f, export, None).await,
        get(&f, export, Some(&member)).await,
        send(&f, export, &owner, TOO_LARGE).await,
        // A month's review, and each refusal.
        get(&f, REVIEW, Some(&owner)).await,
        get(&f, "/v1/audit-logs/privacy/reviews/2026-13", Some(&owner)).await,
        get(&f, REVIEW, None).await,
        get(&f, REVIEW, Some(&member)).await,
        send(&f, REVIEW, &owner, TOO_LARGE).await,
        // The caller: any valid token, whatever its scopes.
        get(&f, ME, Some(&jobs_only)).await,
        get(&f, &format!("{ME}?x=1"), Some(&owner)).await,
        get(&f, ME, None).await,
        send(&f, ME, &owner, TOO_LARGE).await,
        // The review rules: read, replaced, and each refusal.
        get(&f, RULES, Some(&rules_owner)).await,
        get(&f, &format!("{RULES}?x=1"), Some(&rules_owner)).await,
        get(&f, RULES, None).await,
        get(&f, RULES, Some(&rules_member)).await,
        send(&f, RULES, &rules_owner, TOO_LARGE).await,
        write(
            &f,
            "PUT",
            RULES,
            Some(&rules_owner),
            r#"{"downloads": 3, "holidays": ["2026-10-09"]}"#,
        )
        .await,
        write(&f, "PUT", RULES, Some(&rules_owner), r#"{"outside_hours_percent": 101}"#).await,
        write(&f, "PUT", RULES, None, "{}").await,
        write(&f, "PUT", RULES, Some(&rules_member), "{}").await,
        write(&f, "PUT", RULES, Some(&rules_owner), &" ".repeat(TOO_LARGE)).await,
    ]);
    let replay =
        write(&f, "POST", &sign, Some(&owner), r#"{"note": "Checked with the team."}"#).await;
    assert_eq!(replay.headers["idempotent-replayed"], "true");
    assert_eq!(replay.body, signed, "the same sign-off is the one recorded");
    seen.push(replay);
    let cursor = first["pagination"]["next_cursor"].as_str().unwrap();
    seen.push(get(&f, &format!("{list}&limit=100&cursor={cursor}"), Some(&owner)).await);
    // The running month is not signed off: CONFLICT naming `month`.
    let running = &Timestamp::now().to_string()[..7];
    let early = format!("/v1/audit-logs/privacy/reviews/{running}/sign-off");
    let refused = write(&f, "POST", &early, Some(&owner), r#"{"note": "Early."}"#).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", String::from_utf8_lossy(&refused.body));
    seen.push(refused);

    // Recording accesses: created, replayed, and each refusal.
    let batch = entries(3, "People");
    seen.push(post(&f, Some(&owner), Some("\"k-1\""), &batch).await);
    let replay = post(&f, Some(&owner), Some("k-1"), &batch).await;
    assert_eq!(replay.headers["idempotent-replayed"], "true");
    seen.push(replay);
    seen.push(post(&f, Some(&owner), Some("k-1"), &entries(1, "Other")).await);
    seen.push(post(&f, Some(&owner), None, &batch).await);
    seen.push(post(&f, Some(&owner), Some("k-2"), &entries(0, "People")).await);
    seen.push(post(&f, None, Some("k-2"), &batch).await);
    seen.push(post(&f, Some(&audit_only), Some("k-2"), &batch).await);
    seen.push(post(&f, Some(&member), Some("k-2"), &batch).await);
    seen.push(
        post(&f, Some(&owner), Some("k-2"), &" ".repeat(recruit_service::BATCH_BODY_LIMIT + 1))
            .await,
    );
    // An entry whose id is in the ledger: CONFLICT.
    let written = post(&f, Some(&owner), Some("first"), &batch).await;
    let entry: Value = serde_json::from_slice(&written.body).unwrap();
    let taken = serde_json::json!({"entries": [entry["entries"][0].clone()]}).to_string();
    let conflict = post(&f, Some(&owner), Some("taken"), &taken).await;
    assert_eq!(conflict.status, hyper::StatusCode::CONFLICT);
    seen.push(written);
    seen.push(conflict);

    // The database's failures.
    for fault in
        [Fault::Unavailable, Fault::Timeout, Fault::Panic, Fault::Slow(Duration::from_secs(2))]
    {
        f.store.set(fault);
        for uri in [list, job.as_str(), org, checkpoint, export, ME, REVIEW] {
            seen.push(get(&f, uri, Some(&owner)).await);
        }
        seen.push(get(&f, &member_user, Some(&owner)).await);
        seen.push(patch(&f, &member_user, Some(&owner), None, "{}").await);
        seen.push(write(&f, "PUT", &decide, Some(&owner), confirm).await);
        let explain = format!("{decide}/explanation");
        seen.push(write(&f, "PUT", &explain, Some(&member), r#"{"explanation": "x"}"#).await);
        seen.push(get(&f, RULES, Some(&owner)).await);
        seen.push(write(&f, "PUT", RULES, Some(&owner), "{}").await);
        let october = "/v1/audit-logs/privacy/reviews/2026-10/sign-off";
        seen.push(write(&f, "POST", october, Some(&owner), "{}").await);
        let key = format!("fault-{fault:?}");
        seen.push(post(&f, Some(&owner), Some(&key), &entries(1, "Faults")).await);
        let ready = get(&f, "/readyz", None).await;
        let expected = match fault {
            Fault::Unavailable | Fault::Timeout => StatusCode::SERVICE_UNAVAILABLE,
            Fault::Panic => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::GATEWAY_TIMEOUT,
        };
        assert_eq!(ready.status, expected, "/readyz under {fault:?}");
        seen.push(ready);
        f.store.set(Fault::None);
    }

    // Past the quotas: a token's, and an address's quota of failed authentications.
    let limited = one_a_minute().await;
    let token = limited.token(ORG_A, Role::Owner, &Scope::ALL).await;
    for uri in [list, job.as_str(), org, list, job.as_str(), org, checkpoint, export, REVIEW] {
        seen.push(get(&limited, uri, Some(&token)).await);
    }
    for key in ["q-1", "q-2"] {
        seen.push(post(&limited, Some(&token), Some(key), &entries(1, "Quota")).await);
    }
    seen.push(get(&limited, &member_user, Some(&token)).await);
    seen.push(get(&limited, ME, Some(&token)).await);
    seen.push(patch(&limited, &member_user, Some(&token), None, "{}").await);
    seen.push(write(&limited, "PUT", &decide, Some(&token), confirm).await);
    seen.push(write(&limited, "POST", &sign, Some(&token), "{}").await);
    let explain = format!("{decide}/explanation");
    seen.push(write(&limited, "PUT", &explain, Some(&token), r#"{"explanation": "x"}"#).await);
    seen.push(get(&limited, RULES, Some(&token)).await);
    seen.push(write(&limited, "PUT", RULES, Some(&token), "{}").await);
    for _ in 0..2 {
        seen.push(get(&limited, org, Some("rtk_not-a-real-token")).await);
    }
    assert_eq!(seen.iter().filter(|r| r.status == StatusCode::TOO_MANY_REQUESTS).count(), 17);

    seen.extend(Box::pin(scim_responses()).await);
    seen.extend(Box::pin(sso_responses()).await);
    seen.extend(Box::pin(log_stream_responses()).await);

    let mut covered = BTreeSet::new();
    for response in &seen {
        covered.insert(conforms(&doc, response));
    }
    // Every status the document gives is one the server was seen to give, except those the
    // specification declares for the list and this version never returns.
    let mut documented = BTreeSet::new();
    for (template, path) in doc["paths"].as_object().unwrap() {
        for (method, operation) in path.as_object().unwrap() {
            for (status, response) in operation["responses"].as_object().into_iter().flatten() {
                let never = response["$ref"] == "#/components/responses/Declared";
                if !never {
                    let status = status.parse::<u16>().unwrap_or(DEFAULT);
                    documented.insert((method.clone(), template.clone(), status));
                }
            }
        }
    }
    let untested: Vec<_> = documented.difference(&covered).collect();
    assert!(untested.is_empty(), "documented but never seen: {untested:?}");
    assert!(
        covered.iter().any(|(m, t, s)| m == "get" && t == "/v1/audit-logs/privacy" && *s == 200)
    );
    assert!(covered.iter().any(|(m, t, s)| m == "post" && t == WRITE && *s == 201));
}
