//! The REST API without sockets: requests go straight to `Api::handle`, on a real SQLite store
//! loaded with the ports' test world and wrapped so that it can fail on demand.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, StreamBody};
use hyper::body::Frame;
use hyper::{Request, Response, StatusCode};
use recruit_domain::model::Role;
use recruit_domain::{OrganizationId, Scope, Uuid};
use recruit_http::{Api, Body, HttpConfig};
use recruit_ports::faulty::Fault;
use recruit_ports::testkit::{ORG_A, ORG_B, job_id};
use recruit_ports::{AuditListQuery, Ledgers};
use serde_json::Value;

use crate::common::Fixture;

async fn fixture() -> Fixture {
    Fixture::with(|_| {}).await
}

fn header<'a>(response: &'a Response<Body>, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The error envelope's code, with the checks every error response must pass.
fn error_code(status: StatusCode, response: &Response<Body>, json: &Value) -> String {
    assert_eq!(header(response, "content-type"), Some("application/json"));
    assert!(header(response, "x-request-id").is_some());
    let code =
        json["error"]["code"].as_str().unwrap_or_else(|| panic!("no envelope: {json}")).to_owned();
    assert!(json["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert_eq!(json["error"]["docs_url"], format!("http://127.0.0.1:8080/docs/errors#{code}"));
    assert_eq!(
        status.as_u16(),
        recruit_domain::ErrorCode::from(code.as_str()).http_status(),
        "{code}"
    );
    code
}

const LIST: &str =
    "/v1/audit-logs/privacy?timestamp_gte=2026-01-01T00:00:00Z&timestamp_lt=2026-06-01T00:00:00Z";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_three_endpoints_answer_with_the_specs_json() {
    let f = fixture().await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let (status, response, json) = f.get("/v1/organization", Some(&owner)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&response, "content-type"), Some("application/json"));
    assert_eq!(json["id"], OrganizationId::from_uuid(Uuid::from_u128(ORG_A)).to_string());
    assert_eq!(json["app_url"], "https://app.example.com/organization");

    let id = job_id(ORG_A, 2);
    let dashed = format!("JOB_{}", id.uuid().hyphenated()).to_uppercase();
    let (status, _, json) = f.get(&format!("/v1/jobs/{dashed}"), Some(&owner)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json["id"], id.to_string());
    assert_eq!(json["hiring_team"][1]["user"]["name"], "OWNER of A");

    let (status, _, json) = f.get(&format!("{LIST}&limit=5"), Some(&owner)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json["data"].as_array().unwrap().len(), 5);
    let cursor = json["pagination"]["next_cursor"].as_str().unwrap().to_owned();
    let (status, _, json) = f.get(&format!("{LIST}&limit=100&cursor={cursor}"), Some(&owner)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json["data"].as_array().unwrap().len(), 7);
    assert_eq!(json["pagination"]["next_cursor"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_comes_in_the_envelope_with_its_status_and_headers() {
    let f = fixture().await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let member = f.token(ORG_A, Role::Member, &Scope::ALL).await;
    let jobs_only = f.token(ORG_A, Role::Owner, &[Scope::JobsRead]).await;
    let b_owner = f.token(ORG_B, Role::Owner, &Scope::ALL).await;

    let cases: Vec<(String, Option<&str>, &str)> = vec![
        ("/v1/organization".into(), None, "UNAUTHENTICATED"),
        ("/v1/organization".into(), Some("rtk_not-a-real-token"), "UNAUTHENTICATED"),
        (LIST.into(), Some(&jobs_only), "INSUFFICIENT_SCOPE"),
        (LIST.into(), Some(&member), "PERMISSION_DENIED"),
        (format!("{LIST}&limit=0"), Some(&owner), "VALIDATION_FAILED"),
        (format!("{LIST}&cursor=garbage"), Some(&owner), "INVALID_CURSOR"),
        ("/v1/jobs/not-an-id".into(), Some(&owner), "VALIDATION_FAILED"),
        (format!("/v1/jobs/{}", job_id(ORG_A, 1)), Some(&b_owner), "NOT_FOUND"),
        ("/v1/nothing-here".into(), Some(&owner), "NOT_FOUND"),
        ("/v1/organization?expand=all".into(), Some(&owner), "VALIDATION_FAILED"),
    ];
    for (uri, token, expected) in cases {
        let (status, response, json) = f.get(&uri, token).await;
        assert_eq!(error_code(status, &response, &json), expected, "{uri}");
        match expected {
            // No credential: a challenge without an error code (RFC 6750 §3.1).
            "UNAUTHENTICATED" if token.is_none() => {
                assert_eq!(header(&response, "www-authenticate"), Some("Bearer"), "{uri}");
            }
            "UNAUTHENTICATED" => {
                assert_eq!(
                    header(&response, "www-authenticate"),
                    Some(r#"Bearer error="invalid_token""#)
                );
            }
            "INSUFFICIENT_SCOPE" => assert_eq!(
                header(&response, "www-authenticate"),
                Some(r#"Bearer error="insufficient_scope", scope="audit_logs:read""#)
            ),
            _ => assert_eq!(header(&response, "www-authenticate"), None, "{uri}"),
        }
    }

    for method in ["POST", "DELETE", "TRACE", "HEAD"] {
        let request = Request::builder().method(method).uri("/v1/organization");
        let (status, response, json) = f.send(request.body(Empty::<Bytes>::new()).unwrap()).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(header(&response, "allow"), Some("GET"));
        assert_eq!(json["error"]["code"], "NOT_IMPLEMENTED");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validation_reports_every_problem_with_its_field() {
    let f = fixture().await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let uri =
        "/v1/audit-logs/privacy?timestamp_gte=yesterday&limit=abc&limit=2&ids=,pal_1&sort=desc";
    let (status, response, json) = f.get(uri, Some(&owner)).await;
    assert_eq!(error_code(status, &response, &json), "VALIDATION_FAILED");
    let fields: Vec<&str> = json["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["limit", "sort", "timestamp_gte", "timestamp_lt", "limit", "ids", "ids"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_ids_are_echoed_when_sane_and_made_otherwise() {
    let f = fixture().await;
    let send = |id: &str| {
        Request::get("/v1/organization")
            .header("x-request-id", id)
            .body(Empty::<Bytes>::new())
            .unwrap()
    };
    let (_, response, _) = f.send(send("abc-123_x.y")).await;
    assert_eq!(header(&response, "x-request-id"), Some("abc-123_x.y"));
    for bad in ["has space", &"x".repeat(129), "emoji-é"] {
        let (_, response, _) = f.send(send(bad)).await;
        let made = header(&response, "x-request-id").unwrap();
        assert_ne!(made, bad);
        assert_eq!(made.len(), 32, "{made}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_limit_are_refused() {
    let f = fixture().await;
    let declared = Request::get("/v1/organization")
        .header("content-length", (recruit_service::BODY_LIMIT + 1).to_string())
        .body(Empty::<Bytes>::new())
        .unwrap();
    let (status, response, json) = f.send(declared).await;
    assert_eq!(error_code(status, &response, &json), "PAYLOAD_TOO_LARGE");
    // A chunked body with no declared length is counted as it arrives.
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let half = recruit_service::BODY_LIMIT / 2 + 1;
    let chunks = futures_chunks(vec![vec![b'x'; half], vec![b'x'; half]]);
    let request = Request::get("/v1/organization")
        .header("authorization", format!("Bearer {owner}"))
        .body(chunks)
        .unwrap();
    let (status, response, json) = f.send(request).await;
    assert_eq!(error_code(status, &response, &json), "PAYLOAD_TOO_LARGE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_body_is_read_before_its_sender_is_known() {
    let f = fixture().await;
    // A body that never arrives: a request without a valid token is answered all the same,
    // by the REST API and by the tool interface alike.
    for path in ["/v1/audit-logs/privacy", "/mcp"] {
        let request = Request::post(path)
            .header("authorization", "Bearer rtk_not-a-token")
            .header("content-type", "application/json")
            .body(StreamBody::new(Never))
            .unwrap();
        let answer = tokio::time::timeout(std::time::Duration::from_secs(5), f.send(request));
        let (status, response, json) = answer.await.expect("answered without the body");
        assert_eq!(error_code(status, &response, &json), "UNAUTHENTICATED", "{path}");
    }
}

/// A body stream that never yields a frame.
struct Never;

impl futures_core::Stream for Never {
    type Item = Result<Frame<Bytes>, std::convert::Infallible>;
    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        std::task::Poll::Pending
    }
}

fn futures_chunks(
    chunks: Vec<Vec<u8>>,
) -> StreamBody<impl futures_core::Stream<Item = Result<Frame<Bytes>, std::convert::Infallible>>> {
    let frames: Vec<Result<Frame<Bytes>, std::convert::Infallible>> =
        chunks.into_iter().map(|c| Ok(Frame::data(Bytes::from(c)))).collect();
    StreamBody::new(tokio_stream_iter(frames))
}

/// A stream over a vector, without a stream utility crate.
fn tokio_stream_iter<T: Unpin>(items: Vec<T>) -> impl futures_core::Stream<Item = T> {
    struct Iter<T>(std::vec::IntoIter<T>);
    impl<T: Unpin> futures_core::Stream for Iter<T> {
        type Item = T;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<T>> {
            std::task::Poll::Ready(self.0.next())
        }
    }
    Iter(items.into_iter())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_failures_become_retryable_errors_and_the_api_recovers() {
    let f = fixture().await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;

    f.store.set(Fault::Unavailable);
    let (status, response, json) = f.get("/v1/organization", Some(&owner)).await;
    assert_eq!(error_code(status, &response, &json), "UNAVAILABLE");
    assert_eq!(header(&response, "retry-after"), Some("1"));

    f.store.set(Fault::Timeout);
    let (status, response, json) = f.get("/v1/organization", Some(&owner)).await;
    assert_eq!(error_code(status, &response, &json), "UPSTREAM_TIMEOUT");

    // Slower than the request deadline (500 ms here).
    f.store.set(Fault::Slow(Duration::from_secs(3)));
    let started = std::time::Instant::now();
    let (status, response, json) = f.get("/v1/organization", Some(&owner)).await;
    assert_eq!(error_code(status, &response, &json), "UPSTREAM_TIMEOUT");
    assert!(started.elapsed() < Duration::from_secs(2));

    f.store.set(Fault::Panic);
    let (status, response, json) = f.get("/v1/organization", Some(&owner)).await;
    assert_eq!(error_code(status, &response, &json), "INTERNAL");
    assert!(!json["error"]["message"].as_str().unwrap().contains("panic"));

    f.store.set(Fault::None);
    let (status, _, _) = f.get("/v1/organization", Some(&owner)).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_of_the_ledger_are_recorded_with_the_request() {
    let f = fixture().await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let request = Request::get(format!("{LIST}&limit=3"))
        .header("authorization", format!("Bearer {owner}"))
        .header("x-request-id", "trace-7");
    let (status, _, _) = f.send(request.body(Empty::<Bytes>::new()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    let entries = f
        .store
        .inner()
        .api_audit_entries(&AuditListQuery { organization_id: None, limit: 10 })
        .await
        .unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!((entries[0].request_id.as_str(), entries[0].entries_returned), ("trace-7", 3));
    assert_eq!(entries[0].client_ip.as_deref(), Some("127.0.0.1"));
    // Without trusted proxies, `X-Forwarded-For` is the client's to write and is ignored.
    let request = Request::get(format!("{LIST}&limit=3"))
        .header("authorization", format!("Bearer {owner}"))
        .header("x-forwarded-for", "198.51.100.7");
    f.send(request.body(Empty::<Bytes>::new()).unwrap()).await;
    let query = AuditListQuery { organization_id: None, limit: 10 };
    let entries = f.store.inner().api_audit_entries(&query).await.unwrap();
    assert_eq!(entries[0].client_ip.as_deref(), Some("127.0.0.1"));
}

/// Behind a trusted load balancer the client is the address it forwarded: the audit ledger
/// records it and failed authentications are counted against it, one client at a time. A peer
/// that is not a trusted proxy cannot choose its address by sending the header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_trusted_proxy_the_forwarded_address_is_the_client() {
    let f = Fixture::limited(limits("off", "off", "1/min"), |http| {
        http.trusted_proxies = vec!["127.0.0.0/8".parse().unwrap()];
    })
    .await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let from = |client: &str, token: Option<&str>, uri: &str| {
        let mut request = get_with(uri, token);
        request
            .headers_mut()
            .insert("x-forwarded-for", format!("6.6.6.6, {client}").parse().unwrap());
        request
    };
    assert_eq!(f.send(from("198.51.100.7", Some(&owner), LIST)).await.0, StatusCode::OK);
    let (status, _, _) =
        f.send_from("203.0.113.5".parse().unwrap(), from("198.51.100.9", Some(&owner), LIST)).await;
    assert_eq!(status, StatusCode::OK);
    let query = AuditListQuery { organization_id: None, limit: 10 };
    let entries = f.store.inner().api_audit_entries(&query).await.unwrap();
    let recorded: Vec<_> = entries.iter().map(|e| e.client_ip.as_deref().unwrap()).collect();
    assert_eq!(recorded, ["203.0.113.5", "198.51.100.7"], "newest first");
    // One client's failures lock out that client only.
    let org = "/v1/organization";
    assert_eq!(f.send(from("198.51.100.8", None, org)).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(f.send(from("198.51.100.8", None, org)).await.0, StatusCode::TOO_MANY_REQUESTS);
    let (status, _, _) = f.send(from("198.51.100.8", Some(&owner), org)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(f.send(from("198.51.100.7", Some(&owner), org)).await.0, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_and_the_error_reference_need_no_token() {
    let f = fixture().await;
    let (status, _, json) = f.get("/healthz", None).await;
    assert_eq!((status, json["status"].as_str()), (StatusCode::OK, Some("ok")));
    let (status, _, json) = f.get("/readyz", None).await;
    assert_eq!((status, json["status"].as_str()), (StatusCode::OK, Some("ready")));
    f.store.set(Fault::Unavailable);
    let (status, response, json) = f.get("/readyz", None).await;
    assert_eq!(error_code(status, &response, &json), "UNAVAILABLE");
    let (status, _, json) = f.get("/healthz", None).await;
    assert_eq!(
        (status, json["status"].as_str()),
        (StatusCode::OK, Some("ok")),
        "the process is up all the same"
    );
    f.store.set(Fault::None);

    let response =
        f.api.handle(Request::get("/docs/errors").body(Empty::<Bytes>::new()).unwrap(), None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(&response, "content-type"), Some("text/html; charset=utf-8"));
    let page = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec())
        .unwrap();
    for code in recruit_domain::ErrorCode::KNOWN {
        let status = recruit_domain::ErrorCode::from(*code).http_status();
        assert!(page.contains(&format!("<section id=\"{code}\">")), "{code} has an anchor");
        assert!(page.contains(&format!("<strong>HTTP {status}")), "{code} shows its status");
    }
    // The link of an actual error leads to its section.
    let (_, _, json) = f.get("/v1/organization", None).await;
    let fragment =
        json["error"]["docs_url"].as_str().unwrap().split_once('#').unwrap().1.to_owned();
    assert!(page.contains(&format!("id=\"{fragment}\"")));

    let (status, response, json) =
        f.send(Request::post("/healthz").body(Empty::<Bytes>::new()).unwrap()).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header(&response, "allow"), Some("GET"));
    assert_eq!(json["error"]["code"], "NOT_IMPLEMENTED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_by_route_and_status_and_show_the_pool() {
    let f = fixture().await;
    let sqlite = f.store.clone();
    let api = Api::new(f.service.clone(), HttpConfig::new("http://127.0.0.1:8080"))
        .with_pool_status(move || sqlite.inner().pool_status());
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let get = |uri: &str, token: Option<&str>| {
        let mut request = Request::get(uri);
        if let Some(t) = token {
            request = request.header("authorization", format!("Bearer {t}"));
        }
        request.body(Empty::<Bytes>::new()).unwrap()
    };
    for _ in 0..3 {
        api.handle(get("/v1/organization", Some(&owner)), None).await;
    }
    api.handle(get("/v1/organization", None), None).await;
    api.handle(get(&format!("{LIST}&limit=2"), Some(&owner)), None).await;
    let response = api.handle(get("/metrics", None), None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(header(&response, "content-type").unwrap().starts_with("application/openmetrics-text"));
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec())
        .unwrap();
    let has = |line: &str| text.lines().any(|l| l == line);
    assert!(
        has(r#"recruitd_http_requests_total{route="/v1/organization",status="200"} 3"#),
        "{text}"
    );
    assert!(
        has(r#"recruitd_http_requests_total{route="/v1/organization",status="401"} 1"#),
        "{text}"
    );
    assert!(
        has(
            r#"recruitd_http_request_duration_seconds_count{route="/v1/audit-logs/privacy",status="200"} 1"#
        ),
        "{text}"
    );
    assert!(has(r#"recruitd_audit_ledger_records_total{ledger="api"} 1"#), "{text}");
    assert!(has("recruitd_db_pool_max_connections 4"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("recruitd_db_pool_open_connections ")), "{text}");
}

/// Which of two credentials the caller meant is not for the server to guess: two
/// `Authorization` headers are refused, on REST and on the tool interface, even when one of
/// them is valid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_authorization_headers_are_refused() {
    let f = fixture().await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    for (method, uri) in [("GET", "/v1/organization"), ("POST", "/mcp")] {
        for second in [owner.as_str(), "rtk_not-a-real-token"] {
            let request = Request::builder()
                .method(method)
                .uri(uri)
                .header("authorization", format!("Bearer {owner}"))
                .header("authorization", format!("Bearer {second}"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(http_body_util::Full::new(Bytes::from_static(
                    br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                )))
                .unwrap();
            let (status, response, json) = f.send(request).await;
            assert_eq!(error_code(status, &response, &json), "UNAUTHENTICATED", "{method} {uri}");
            let message = json["error"]["message"].as_str().unwrap();
            assert!(message.contains("more than one Authorization header"), "{message}");
        }
    }
}

/// `limit` is plain decimal digits, leading zeros allowed, as docs/decisions.md says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_with_leading_zeros_is_the_number() {
    let f = fixture().await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    for (limit, entries) in [("0001", 1), ("007", 7), ("0000000100", 12)] {
        let (status, _, json) = f.get(&format!("{LIST}&limit={limit}"), Some(&owner)).await;
        assert_eq!(status, StatusCode::OK, "limit={limit}: {json}");
        assert_eq!(json["data"].as_array().unwrap().len(), entries, "limit={limit}");
    }
}

/// A GET with `token` as the bearer credential.
fn get_with(uri: &str, token: Option<&str>) -> Request<Empty<Bytes>> {
    let mut request = Request::get(uri);
    if let Some(t) = token {
        request = request.header("authorization", format!("Bearer {t}"));
    }
    request.body(Empty::<Bytes>::new()).unwrap()
}

/// `"name";a=1;b=2` as the name and its parameters.
fn policy_item(value: &str) -> (String, std::collections::HashMap<String, u64>) {
    let mut parts = value.split(';');
    let name = parts.next().unwrap().trim_matches('"').to_owned();
    let params = parts
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap();
            (k.to_owned(), v.parse().unwrap())
        })
        .collect();
    (name, params)
}

fn limits(
    reads: &str,
    ledger_reads: &str,
    auth_failures: &str,
) -> recruit_service::limits::RateLimitConfig {
    recruit_service::limits::RateLimitConfig {
        reads: reads.parse().unwrap(),
        ledger_reads: ledger_reads.parse().unwrap(),
        writes: ledger_reads.parse().unwrap(),
        auth_failures: auth_failures.parse().unwrap(),
    }
}

/// Each token has a quota per class of operation; every response of a limited operation says
/// where the token stands, and the one past the quota is 429 RATE_LIMITED with `Retry-After`,
/// counted in the metrics. Other tokens and other classes are not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_past_its_quota_is_told_to_wait() {
    let f = Fixture::limited(limits("3/min", "2/min", "off"), |_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    for expected in [2, 1, 0] {
        let (status, response, _) = f.get("/v1/organization", Some(&owner)).await;
        assert_eq!(status, StatusCode::OK);
        let (name, policy) = policy_item(header(&response, "ratelimit-policy").unwrap());
        assert_eq!((name.as_str(), policy["q"], policy["w"]), ("reads", 3, 60));
        let (name, now) = policy_item(header(&response, "ratelimit").unwrap());
        assert_eq!((name.as_str(), now["r"]), ("reads", expected));
        // The whole quota is back one interval (20 s) per operation used.
        assert_eq!(now["t"], 20 * (3 - expected));
    }
    // A job read is of the same class: refused, like any operation after the quota.
    let (status, response, json) =
        f.get(&format!("/v1/jobs/{}", job_id(ORG_A, 1)), Some(&owner)).await;
    assert_eq!(error_code(status, &response, &json), "RATE_LIMITED");
    let wait: u64 = header(&response, "retry-after").unwrap().parse().unwrap();
    assert!((19..=20).contains(&wait), "{wait}");
    assert_eq!(policy_item(header(&response, "ratelimit").unwrap()).1["r"], 0);
    assert!(header(&response, "www-authenticate").is_none());
    // The ledger has a quota of its own; another token has its own.
    let (status, response, _) = f.get(LIST, Some(&owner)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(policy_item(header(&response, "ratelimit").unwrap()).0, "ledger_reads");
    let other = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    assert_eq!(f.get("/v1/organization", Some(&other)).await.0, StatusCode::OK);
    // An error after admission also says where the token stands.
    let (status, response, _) = f.get("/v1/jobs/nonsense", Some(&other)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(policy_item(header(&response, "ratelimit").unwrap()).1["r"], 1);
    // Probes are not limited and carry no fields.
    let (status, response, _) = f.get("/healthz", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(header(&response, "ratelimit").is_none());

    let (_, response, _) = f.get("/metrics", None).await;
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec())
        .unwrap();
    assert!(
        text.lines().any(|l| l == r#"recruitd_rate_limited_total{policy="reads"} 1"#),
        "{text}"
    );
    assert!(
        text.lines().any(
            |l| l == r#"recruitd_http_requests_total{route="/v1/jobs/{jobId}",status="429"} 1"#
        ),
        "{text}"
    );
}

/// Tokens cannot be guessed at speed: failed authentications are counted per client address,
/// and an address past its quota is refused before its credential is even looked at, so that
/// a right guess cannot be told from a wrong one. Other addresses are not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_guessing_tokens_is_stopped_before_its_guesses_are_checked() {
    let f = Fixture::limited(limits("off", "off", "3/min"), |_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let guesser: std::net::IpAddr = "203.0.113.9".parse().unwrap();
    let wrong = format!("rtk_{}", "A".repeat(43));
    for (token, expected) in [(None, 2), (Some("nonsense"), 1), (Some(wrong.as_str()), 0)] {
        let (status, response, json) =
            f.send_from(guesser, get_with("/v1/organization", token)).await;
        assert_eq!(error_code(status, &response, &json), "UNAUTHENTICATED");
        let (name, now) = policy_item(header(&response, "ratelimit").unwrap());
        assert_eq!((name.as_str(), now["r"]), ("auth_failures", expected));
    }
    // The fourth failure is over the quota, and from now on even the right token is refused
    // from this address, on REST and on the tool interface.
    let (status, response, json) =
        f.send_from(guesser, get_with("/v1/organization", Some(&wrong))).await;
    assert_eq!(error_code(status, &response, &json), "RATE_LIMITED");
    for uri in ["/v1/organization", LIST] {
        let (status, response, json) = f.send_from(guesser, get_with(uri, Some(&owner))).await;
        assert_eq!(error_code(status, &response, &json), "RATE_LIMITED", "{uri}");
        let wait: u64 = header(&response, "retry-after").unwrap().parse().unwrap();
        assert!((1..=20).contains(&wait), "{wait}");
    }
    let mcp = Request::post("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {owner}"))
        .body(http_body_util::Full::new(Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
        )))
        .unwrap();
    let (status, response, json) = f.send_from(guesser, mcp).await;
    assert_eq!(error_code(status, &response, &json), "RATE_LIMITED");
    // Another address, and the right token from it, are not affected.
    let (status, _, _) = f.get("/v1/organization", Some(&owner)).await;
    assert_eq!(status, StatusCode::OK);
    let (_, response, _) = f.get("/metrics", None).await;
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec())
        .unwrap();
    assert!(
        text.lines().any(|l| l == r#"recruitd_rate_limited_total{policy="auth_failures"} 4"#),
        "{text}"
    );
}

/// One deadline covers authentication and the operation: a store slow enough that each
/// alone fits the deadline but not both together answers UPSTREAM_TIMEOUT when the deadline
/// passes, not after twice as long.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_deadline_covers_authentication_and_the_operation() {
    let f = Fixture::with(|http| http.request_deadline = Duration::from_millis(500)).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    // Authentication reads the credential and writes its last use (200 ms each); the read of
    // the organization takes 200 ms more.
    f.store.set(Fault::Slow(Duration::from_millis(200)));
    let started = std::time::Instant::now();
    let (status, response, json) = f.get("/v1/organization", Some(&owner)).await;
    let took = started.elapsed();
    f.store.set(Fault::None);
    assert_eq!(error_code(status, &response, &json), "UPSTREAM_TIMEOUT", "after {took:?}");
    assert!(took < Duration::from_millis(580), "answered after {took:?}");
}

/// The secret of a one-time console sign-in link is refused by every API route, any number of
/// times: it opens the console's sign-in page, once, and nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_links_secret_is_refused_by_the_api() {
    let f = fixture().await;
    let owner = recruit_ports::testkit::user_id(ORG_A, Role::Owner);
    let ttl = Duration::from_secs(900);
    let link = recruit_service::console::sign_in_link(&*f.store, owner, ttl).await.unwrap();
    for uri in ["/v1/me", LIST, "/v1/organization"] {
        let (status, response, json) = f.get(uri, Some(&link)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{uri}");
        assert_eq!(error_code(status, &response, &json), "UNAUTHENTICATED");
    }
}
