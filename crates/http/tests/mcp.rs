//! The tool interface at `POST /mcp`, without sockets: JSON-RPC as MCP clients of both protocol
//! revisions send it, through the same `Api::handle` as REST, on the test world. Every tool,
//! every error, both revisions; results compared with the REST responses for the same caller.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, StatusCode};
use recruit_domain::Scope;
use recruit_domain::model::Role;
use recruit_ports::faulty::Fault;
use recruit_ports::testkit::{ORG_A, ORG_B, job_id};
use recruit_ports::{AuditListQuery, Interface, Ledgers};
use serde_json::{Value, json};

use crate::common::Fixture;

const CURRENT: &str = "2026-07-28";
const PREVIOUS: &str = "2025-11-25";
const REVISIONS: [&str; 2] = [CURRENT, PREVIOUS];

const GTE: &str = "2026-01-01T00:00:00Z";
const LT: &str = "2026-06-01T00:00:00Z";
const LIST: &str =
    "/v1/audit-logs/privacy?timestamp_gte=2026-01-01T00:00:00Z&timestamp_lt=2026-06-01T00:00:00Z";

/// A JSON-RPC request to `/mcp` as a client of `revision` sends it: on 2026-07-28 with the
/// version and capabilities in `_meta` and the method (and tool name) in headers; on
/// 2025-11-25 with the negotiated version in a header.
fn rpc(revision: &str, method: &str, params: Value, token: Option<&str>) -> Request<Full<Bytes>> {
    let mut params = params;
    let mut request = Request::post("/mcp")
        .header("host", "127.0.0.1:8080")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("x-request-id", "mcp-test")
        .header("mcp-protocol-version", revision);
    if revision == CURRENT {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": CURRENT,
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        request = request.header("mcp-method", method);
        if let Some(name) = params["name"].as_str() {
            request = request.header("mcp-name", name);
        }
    }
    if let Some(t) = token {
        request = request.header("authorization", format!("Bearer {t}"));
    }
    // With its length declared, as HTTP clients send it.
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
    request = request.header("content-length", body.len());
    request.body(Full::new(Bytes::from(body))).unwrap()
}

/// Calls `tool` and returns the JSON-RPC result.
async fn call(f: &Fixture, revision: &str, token: &str, tool: &str, arguments: Value) -> Value {
    let params = json!({"name": tool, "arguments": arguments});
    let (status, response, body) = f.send(rpc(revision, "tools/call", params, Some(token))).await;
    assert_eq!(status, StatusCode::OK, "{tool} {arguments} on {revision}: {body}");
    assert_eq!(response.headers()["x-request-id"], "mcp-test");
    assert!(body["error"].is_null(), "{tool} on {revision}: a JSON-RPC error {body}");
    body["result"].clone()
}

/// The REST body for the same caller.
async fn rest(f: &Fixture, uri: &str, token: &str) -> Value {
    f.get(uri, Some(token)).await.2
}

/// Checks a tool result carries `expected` as structured content and as text.
fn carries(result: &Value, expected: &Value, error: bool, what: &str) {
    assert_eq!(result["isError"], error, "{what}: {result}");
    assert_eq!(&result["structuredContent"], expected, "{what}");
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{what}: no text"));
    assert_eq!(&serde_json::from_str::<Value>(text).unwrap(), expected, "{what}: text");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_of_both_revisions_find_the_server_and_its_tools() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;

    let (status, _, body) = f.send(rpc(CURRENT, "server/discover", json!({}), Some(&owner))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["supportedVersions"], json!([PREVIOUS, CURRENT]));
    assert!(body["result"]["capabilities"]["tools"].is_object());
    assert_eq!(body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "recruitd");

    let init = json!({
        "protocolVersion": PREVIOUS,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    });
    let (status, response, body) = f.send(rpc(PREVIOUS, "initialize", init, Some(&owner))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["protocolVersion"], PREVIOUS);
    assert_eq!(body["result"]["serverInfo"]["name"], "recruitd");
    assert!(response.headers().get("mcp-session-id").is_none(), "stateless: no session");

    for revision in REVISIONS {
        let (_, _, body) = f.send(rpc(revision, "tools/list", json!({}), Some(&owner))).await;
        let tools = body["result"]["tools"].as_array().unwrap_or_else(|| panic!("{body}"));
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        // The list is the operations' declaration (tied to docs/openapi.yaml by its tests),
        // which README.md and the SDK check follow too.
        let declared = recruit_service::OperationKind::tools().filter_map(|k| k.tool_name());
        assert_eq!(names, declared.collect::<Vec<_>>());
        assert_eq!(names[..2], ["list_privacy_audit_logs", "get_job"]);
        for tool in tools {
            assert!(tool["description"].as_str().unwrap().len() > 200, "{}", tool["name"]);
            assert_eq!(tool["inputSchema"]["type"], "object");
            assert_eq!(tool["inputSchema"]["additionalProperties"], false);
            assert_eq!(tool["outputSchema"]["type"], "object");
            let writes = [
                "record_privacy_accesses",
                "update_user",
                "review_privacy_access_download",
                "sign_off_privacy_access_review",
            ]
            .contains(&tool["name"].as_str().unwrap());
            assert_eq!(tool["annotations"]["readOnlyHint"], !writes);
            assert_eq!(tool["annotations"]["destructiveHint"], tool["name"] == "update_user");
        }
        // A write's arguments: its key and its body's fields.
        let record = &tools[3]["inputSchema"];
        assert_eq!(record["required"], json!(["idempotency_key", "entries"]));
        assert_eq!(record["properties"]["entries"]["maxItems"], 1000);
        // A profile change's arguments: the user, the precondition, the patch's fields.
        let update = &tools[5]["inputSchema"];
        let mut arguments: Vec<&String> =
            update["properties"].as_object().unwrap().keys().collect();
        arguments.sort();
        assert_eq!(arguments, ["if_match", "linkedin_url", "manager", "name", "title", "user_id"]);
        assert_eq!(update["required"], json!(["user_id"]));
        // The review's records: the path's parameters and the body's members.
        let by_name = |name: &str| {
            let tool = tools.iter().find(|t| t["name"] == name);
            tool.unwrap_or_else(|| panic!("no {name}"))["inputSchema"].clone()
        };
        let decide = by_name("review_privacy_access_download");
        assert_eq!(decide["required"], json!(["month", "entry_id", "status", "reason"]));
        assert_eq!(
            decide["properties"]["status"]["enum"],
            json!(["CONFIRMED", "EXPLANATION_REQUESTED", "REJECTED"])
        );
        assert_eq!(by_name("sign_off_privacy_access_review")["required"], json!(["month"]));
        // The arguments are the REST parameters.
        let list = &tools[0]["inputSchema"];
        let mut arguments: Vec<&String> = list["properties"].as_object().unwrap().keys().collect();
        arguments.sort();
        assert_eq!(
            arguments,
            [
                "access_menu",
                "account_id",
                "activity_category",
                "cursor",
                "data_subject_id",
                "ids",
                "ip_address",
                "limit",
                "outside_work_hours",
                "timestamp_gte",
                "timestamp_lt"
            ]
        );
        assert_eq!(list["properties"]["outside_work_hours"]["type"], "boolean");
        assert_eq!(list["required"], json!(["timestamp_gte", "timestamp_lt"]));
        assert_eq!(list["properties"]["limit"]["maximum"], 100);
        assert_eq!(list["properties"]["ids"]["maxItems"], 100);
        assert_eq!(tools[1]["inputSchema"]["required"], json!(["job_id"]));
        assert_eq!(tools[2]["inputSchema"]["properties"], json!({}));
        // The output is the REST body's schema, self-contained.
        assert_eq!(tools[1]["outputSchema"]["allOf"][0]["$ref"], "#/$defs/Job");
        assert!(tools[1]["outputSchema"]["$defs"]["Job"]["required"].is_array());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_returns_the_rest_body() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let job = job_id(ORG_A, 2);
    for revision in REVISIONS {
        let result = call(&f, revision, &owner, "get_organization", json!({})).await;
        carries(&result, &rest(&f, "/v1/organization", &owner).await, false, "organization");

        let result = call(&f, revision, &owner, "get_me", json!({})).await;
        carries(&result, &rest(&f, "/v1/me", &owner).await, false, "me");

        let month = json!({"month": "2026-01"});
        let result = call(&f, revision, &owner, "get_privacy_access_review", month).await;
        let review = rest(&f, "/v1/audit-logs/privacy/reviews/2026-01", &owner).await;
        carries(&result, &review, false, "review");

        let dashed = job.uuid().hyphenated().to_string().to_uppercase();
        let result = call(&f, revision, &owner, "get_job", json!({"job_id": dashed})).await;
        carries(&result, &rest(&f, &format!("/v1/jobs/{job}"), &owner).await, false, "job");

        let arguments = json!({"timestamp_gte": GTE, "timestamp_lt": LT, "limit": 5});
        let first = call(&f, revision, &owner, "list_privacy_audit_logs", arguments).await;
        let page = rest(&f, &format!("{LIST}&limit=5"), &owner).await;
        carries(&first, &page, false, "first page");
        // The cursor of a tool page continues in REST and the other way round: one rule.
        let cursor = first["structuredContent"]["pagination"]["next_cursor"].as_str().unwrap();
        let arguments =
            json!({"timestamp_gte": GTE, "timestamp_lt": LT, "limit": 100, "cursor": cursor});
        let second = call(&f, revision, &owner, "list_privacy_audit_logs", arguments).await;
        let page = rest(&f, &format!("{LIST}&limit=100&cursor={cursor}"), &owner).await;
        carries(&second, &page, false, "second page");
        assert_eq!(second["structuredContent"]["pagination"]["next_cursor"], Value::Null);

        let ids: Vec<Value> = first["structuredContent"]["data"].as_array().unwrap()[1..3]
            .iter()
            .map(|e| e["id"].clone())
            .collect();
        let arguments =
            json!({"timestamp_gte": GTE, "timestamp_lt": LT, "ids": ids, "cursor": null});
        let result = call(&f, revision, &owner, "list_privacy_audit_logs", arguments).await;
        let joined = ids.iter().map(|v| v.as_str().unwrap()).collect::<Vec<_>>().join(",");
        carries(&result, &rest(&f, &format!("{LIST}&ids={joined}"), &owner).await, false, "ids");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_failure_is_the_rest_envelope_with_is_error() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let member = f.token(ORG_A, Role::Member, &Scope::ALL).await;
    let jobs_only = f.token(ORG_A, Role::Owner, &[Scope::JobsRead]).await;
    let b_owner = f.token(ORG_B, Role::Owner, &Scope::ALL).await;
    let window = |extra: Value| {
        let mut arguments = json!({"timestamp_gte": GTE, "timestamp_lt": LT});
        for (k, v) in extra.as_object().unwrap() {
            arguments[k] = v.clone();
        }
        arguments
    };
    // Each tool call, and the REST request that must fail the same way.
    let cases: Vec<(&str, &str, Value, String, &str)> = vec![
        (&jobs_only, "list_privacy_audit_logs", window(json!({})), LIST.into(), "INSUFFICIENT_SCOPE"),
        (&jobs_only, "get_organization", json!({}), "/v1/organization".into(), "INSUFFICIENT_SCOPE"),
        (&member, "list_privacy_audit_logs", window(json!({})), LIST.into(), "PERMISSION_DENIED"),
        (
            &b_owner,
            "get_job",
            json!({"job_id": job_id(ORG_A, 1).to_string()}),
            format!("/v1/jobs/{}", job_id(ORG_A, 1)),
            "NOT_FOUND",
        ),
        (&owner, "list_privacy_audit_logs", window(json!({"limit": 0})), format!("{LIST}&limit=0"), "VALIDATION_FAILED"),
        (
            &owner,
            "list_privacy_audit_logs",
            json!({"timestamp_gte": LT, "timestamp_lt": GTE, "limit": 101, "ids": []}),
            "/v1/audit-logs/privacy?timestamp_gte=2026-06-01T00:00:00Z&timestamp_lt=2026-01-01T00:00:00Z&limit=101&ids=".into(),
            "VALIDATION_FAILED",
        ),
        (&owner, "list_privacy_audit_logs", json!({}), "/v1/audit-logs/privacy".into(), "VALIDATION_FAILED"),
        (
            &owner,
            "list_privacy_audit_logs",
            window(json!({"cursor": "garbage"})),
            format!("{LIST}&cursor=garbage"),
            "INVALID_CURSOR",
        ),
        (&owner, "get_organization", json!({"expand": "all"}), "/v1/organization?expand=all".into(), "VALIDATION_FAILED"),
        (&owner, "get_me", json!({"x": 1}), "/v1/me?x=1".into(), "VALIDATION_FAILED"),
    ];
    for revision in REVISIONS {
        for (token, tool, arguments, uri, code) in &cases {
            let result = call(&f, revision, token, tool, arguments.clone()).await;
            let (status, _, envelope) = f.get(uri, Some(token)).await;
            assert_eq!(envelope["error"]["code"], *code, "REST {uri}: {status}");
            carries(&result, &envelope, true, &format!("{tool} {arguments} on {revision}"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_of_the_wrong_type_or_name_are_validation_failures() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let cases = [
        (
            "list_privacy_audit_logs",
            json!({"timestamp_gte": GTE, "timestamp_lt": LT, "limit": "5"}),
            "limit",
            "must be an integer",
        ),
        (
            "list_privacy_audit_logs",
            json!({"timestamp_gte": GTE, "timestamp_lt": LT, "ids": "pal_1,pal_2"}),
            "ids",
            "must be an array of strings",
        ),
        (
            "list_privacy_audit_logs",
            json!({"timestamp_gte": 20260101, "timestamp_lt": LT}),
            "timestamp_gte",
            "must be a string",
        ),
        (
            "list_privacy_audit_logs",
            json!({"timestamp_gte": GTE, "timestamp_lt": LT, "expand": true}),
            "expand",
            "is not a parameter of this operation",
        ),
        ("get_job", json!({}), "job_id", "is required"),
        ("get_job", json!({"job_id": 42}), "job_id", "must be a string"),
        ("get_job", json!({"job_id": "can_0190b3c1d2e37f4a8b9c0d1e2f3a4b5c"}), "job_id", ""),
        (
            "get_job",
            json!({"job_id": job_id(ORG_A, 1).to_string(), "id": "x"}),
            "id",
            "is not a parameter of this operation",
        ),
    ];
    for revision in REVISIONS {
        for (tool, arguments, field, reason) in &cases {
            let result = call(&f, revision, &owner, tool, arguments.clone()).await;
            let what = format!("{tool} {arguments} on {revision}: {result}");
            assert_eq!(result["isError"], true, "{what}");
            let error = &result["structuredContent"]["error"];
            assert_eq!(error["code"], "VALIDATION_FAILED", "{what}");
            let details = error["details"].as_array().unwrap();
            // One problem, one detail: a value of the wrong type is not also "required".
            let about: Vec<_> = details.iter().filter(|d| d["field"] == *field).collect();
            assert_eq!(about.len(), 1, "{what}");
            assert!(about[0]["reason"].as_str().unwrap().contains(reason), "{what}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn database_failures_are_retryable_tool_errors() {
    let f = Fixture::with(|http| http.request_deadline = Duration::from_millis(300)).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let cases = [
        (Fault::Unavailable, "UNAVAILABLE"),
        (Fault::Timeout, "UPSTREAM_TIMEOUT"),
        (Fault::Slow(Duration::from_secs(2)), "UPSTREAM_TIMEOUT"),
        (Fault::Panic, "INTERNAL"),
    ];
    for revision in REVISIONS {
        for (fault, code) in cases {
            for (tool, arguments) in [
                ("get_organization", json!({})),
                ("get_job", json!({"job_id": job_id(ORG_A, 1).to_string()})),
                ("list_privacy_audit_logs", json!({"timestamp_gte": GTE, "timestamp_lt": LT})),
            ] {
                // The caller is authenticated by the HTTP layer before the tool runs, so the
                // store fails only once the request is in the tool.
                let params = json!({"name": tool, "arguments": arguments});
                let request = rpc(revision, "tools/call", params, Some(&owner));
                f.store.set_after_authentication(fault);
                let (status, _, body) = f.send(request).await;
                f.store.set(Fault::None);
                assert_eq!(status, StatusCode::OK, "{body}");
                let result = &body["result"];
                assert_eq!(result["isError"], true, "{tool} under {fault:?}: {body}");
                assert_eq!(
                    result["structuredContent"]["error"]["code"], code,
                    "{tool} under {fault:?}"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_failures_are_json_rpc_errors() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    for revision in REVISIONS {
        let params = json!({"name": "drop_tables", "arguments": {}});
        let (_, _, body) = f.send(rpc(revision, "tools/call", params, Some(&owner))).await;
        assert_eq!(body["error"]["code"], -32602, "{revision}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("drop_tables"));
        assert!(body["result"].is_null());

        let (status, _, body) =
            f.send(rpc(revision, "no/such/method", json!({}), Some(&owner))).await;
        assert!(
            status.is_client_error() || body["error"]["code"] == -32601,
            "{revision}: {status} {body}"
        );
    }
    // Refusals of the transport: an HTTP status and a JSON-RPC error, never plain text.
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let both = "application/json, text/event-stream";
    /// What is wrong, `Content-Type`, `Accept`, other headers, the status, the JSON-RPC code.
    type Case<'a> = (&'a str, &'a str, &'a str, &'a [(&'a str, &'a str)], u16, i64);
    let cases: [Case<'_>; 6] = [
        ("malformed JSON", "application/json", both, &[], 400, -32700),
        ("not a message", "application/json", both, &[], 400, -32600),
        ("a JSON object but no JSON-RPC message", "application/json", both, &[], 400, -32600),
        ("no event streams accepted", "application/json", "application/json", &[], 406, -32600),
        ("a body of text", "text/plain", both, &[], 415, -32600),
        (
            "an unknown protocol revision",
            "application/json",
            both,
            &[("mcp-protocol-version", "1999-01-01")],
            400,
            -32600,
        ),
    ];
    for (what, content_type, accept, extra, status, code) in cases {
        let body = match what {
            "malformed JSON" => r#"{"jsonrpc": "2.0", "id": 1, "method""#,
            "not a message" => "42",
            "a JSON object but no JSON-RPC message" => r#"{"hello": "world"}"#,
            _ => list,
        };
        let mut request = Request::post("/mcp")
            .header("host", "127.0.0.1:8080")
            .header("content-type", content_type)
            .header("accept", accept)
            .header("authorization", format!("Bearer {owner}"));
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        let request = request.body(Full::new(Bytes::from(body))).unwrap();
        let (got, response, json) = f.send(request).await;
        assert_eq!(got.as_u16(), status, "{what}: {json}");
        assert_eq!(response.headers()["content-type"], "application/json", "{what}");
        assert_eq!(
            (json["jsonrpc"].as_str(), json["error"]["code"].as_i64()),
            (Some("2.0"), Some(code)),
            "{what}: {json}"
        );
        assert!(json["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{what}");
        let id = if body == list { json!(1) } else { Value::Null };
        assert_eq!(json["id"], id, "{what}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_missing_tokens_foreign_origins_large_bodies_and_other_methods() {
    let f =
        Fixture::with(|http| http.mcp_allowed_origins = vec!["https://agent.example".into()]).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    for revision in REVISIONS {
        for token in [None, Some("rtk_not-a-real-token")] {
            let (status, response, body) =
                f.send(rpc(revision, "tools/list", json!({}), token)).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED);
            assert_eq!(body["error"]["code"], "UNAUTHENTICATED");
            let error = if token.is_some() { r#"error="invalid_token", "# } else { "" };
            assert_eq!(
                response.headers()["www-authenticate"],
                format!(
                    r#"Bearer {error}resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp""#
                )
            );
        }
    }
    let (status, _, metadata) = f.get("/.well-known/oauth-protected-resource/mcp", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(metadata["resource"], "http://127.0.0.1:8080/mcp");
    assert_eq!(
        metadata["scopes_supported"],
        json!([
            "audit_logs:read",
            "jobs:read",
            "organization:read",
            "audit_logs:write",
            "users:read",
            "users:write",
            "audit_logs:review",
            "organization:admin",
            "log_streams:admin"
        ])
    );
    assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));

    let with_origin = |origin: &str| {
        let mut request = rpc(CURRENT, "tools/list", json!({}), Some(&owner));
        request.headers_mut().insert("origin", origin.parse().unwrap());
        request
    };
    let (status, _, body) = f.send(with_origin("https://evil.example")).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("PERMISSION_DENIED"))
    );
    let (status, _, body) = f.send(with_origin("https://agent.example")).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The tool interface takes writes' bodies in their envelope: past that, nothing is read.
    let mut request = rpc(CURRENT, "tools/list", json!({}), Some(&owner));
    *request.body_mut() =
        Full::new(Bytes::from(vec![b' '; recruit_service::BATCH_BODY_LIMIT + 16 * 1024 + 1]));
    let (status, _, body) = f.send(request).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("PAYLOAD_TOO_LARGE"))
    );

    let (status, response, body) = f.get("/mcp", Some(&owner)).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()["allow"], "POST");
    assert_eq!(body["error"]["code"], "NOT_IMPLEMENTED");

    // The database down: the token cannot be checked, and the client is told to retry.
    f.store.set(Fault::Unavailable);
    let (status, response, body) =
        f.send(rpc(CURRENT, "tools/list", json!({}), Some(&owner))).await;
    f.store.set(Fault::None);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("UNAVAILABLE"))
    );
    assert!(response.headers().contains_key("retry-after"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_through_tools_are_recorded_in_both_ledgers() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let member = f.token(ORG_A, Role::Member, &Scope::ALL).await;
    let arguments = json!({"timestamp_gte": GTE, "timestamp_lt": LT, "limit": 3});
    let result = call(&f, CURRENT, &owner, "list_privacy_audit_logs", arguments.clone()).await;
    assert_eq!(result["isError"], false);
    // Refused and failed reads record nothing.
    call(&f, PREVIOUS, &member, "list_privacy_audit_logs", arguments.clone()).await;
    call(&f, PREVIOUS, &owner, "list_privacy_audit_logs", json!({"limit": 3})).await;
    call(&f, PREVIOUS, &owner, "get_organization", json!({})).await;

    let query = AuditListQuery { organization_id: None, limit: 10 };
    let tools = f.store.inner().tool_audit_entries(&query).await.unwrap();
    assert_eq!(tools.len(), 1, "{tools:?}");
    let entry = &tools[0];
    assert_eq!(entry.tool_name, "list_privacy_audit_logs");
    assert_eq!(entry.arguments, arguments);
    assert_eq!((entry.entries_returned, entry.request_id.as_str()), (3, "mcp-test"));
    let api = f.store.inner().api_audit_entries(&query).await.unwrap();
    assert_eq!(api.len(), 1, "{api:?}");
    assert_eq!(api[0].interface, Interface::Tool);
    assert_eq!(api[0].tool_name.as_deref(), Some("list_privacy_audit_logs"));
    assert_eq!((api[0].token_id, api[0].user_id), (entry.token_id, entry.user_id));
    assert_eq!(api[0].client_ip.as_deref(), Some("127.0.0.1"));

    let (_, response, _) = f.get("/metrics", None).await;
    let text = String::from_utf8(
        http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes().to_vec(),
    )
    .unwrap();
    for ledger in ["api", "tool"] {
        let line = format!(r#"recruitd_audit_ledger_records_total{{ledger="{ledger}"}} 1"#);
        assert!(text.lines().any(|l| l == line), "{line} in {text}");
    }
}

/// The tools count against the same quotas as REST: a call past the token's quota is a tool
/// error carrying the RATE_LIMITED envelope, for the ledger as for the other reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_past_the_tokens_quota_returns_rate_limited() {
    let limits = recruit_service::limits::RateLimitConfig {
        reads: "1/min".parse().unwrap(),
        ledger_reads: "1/min".parse().unwrap(),
        writes: "1/min".parse().unwrap(),
        auth_failures: "off".parse().unwrap(),
    };
    let f = Fixture::limited(limits, |_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    // One REST read uses the read quota; the tool is refused.
    assert_eq!(f.get("/v1/organization", Some(&owner)).await.0, StatusCode::OK);
    let result = call(&f, CURRENT, &owner, "get_organization", json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["structuredContent"]["error"]["code"], "RATE_LIMITED", "{result}");
    // The ledger's quota is its own: one call, then refused, with nothing recorded for it.
    let arguments = json!({"timestamp_gte": GTE, "timestamp_lt": LT});
    let result = call(&f, PREVIOUS, &owner, "list_privacy_audit_logs", arguments.clone()).await;
    assert_eq!(result["isError"], false, "{result}");
    let result = call(&f, PREVIOUS, &owner, "list_privacy_audit_logs", arguments).await;
    assert_eq!(result["structuredContent"]["error"]["code"], "RATE_LIMITED", "{result}");
    let query = AuditListQuery { organization_id: None, limit: 10 };
    assert_eq!(f.store.inner().tool_audit_entries(&query).await.unwrap().len(), 1);
}

/// Recording accesses through the tool: the key is an argument; the same call again is the
/// first result, not a second batch; other entries with the key, or none, are the REST errors;
/// the tool ledger keeps a summary of the arguments, not the entries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_write_tool_takes_its_key_as_an_argument_and_replays() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let entry = json!({
        "access_time": recruit_domain::Timestamp::now().to_string(),
        "account_id": "0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e",
        "ip_addresses": ["198.51.100.4"],
        "data_subject": {"type": "CANDIDATE", "candidate": "can_0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e"},
        "access_data": ["EMAIL_ADDRESS"],
        "access_menu": "Candidates",
        "access_menu_path": "/candidates/7",
        "activity_category": "READ"
    });
    let arguments = json!({"idempotency_key": "tool-1", "entries": [entry.clone()]});
    let first = call(&f, CURRENT, &owner, "record_privacy_accesses", arguments.clone()).await;
    assert_eq!(first["isError"], false, "{first}");
    let recorded = first["structuredContent"]["entries"].as_array().unwrap().clone();
    assert_eq!(recorded.len(), 1);
    let again = call(&f, PREVIOUS, &owner, "record_privacy_accesses", arguments).await;
    carries(&again, &first["structuredContent"], false, "the same call again");

    let mut other = entry.clone();
    other["access_menu"] = json!("Elsewhere");
    let reused = json!({"idempotency_key": "tool-1", "entries": [other]});
    let result = call(&f, CURRENT, &owner, "record_privacy_accesses", reused).await;
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["error"]["code"], "IDEMPOTENCY_KEY_REUSED");
    let keyless = json!({"entries": [entry]});
    let result = call(&f, CURRENT, &owner, "record_privacy_accesses", keyless).await;
    assert_eq!(result["structuredContent"]["error"]["code"], "IDEMPOTENCY_KEY_REQUIRED");

    let query = AuditListQuery { organization_id: None, limit: 10 };
    let tools = f.store.inner().tool_audit_entries(&query).await.unwrap();
    assert_eq!(tools.len(), 1, "one write recorded: {tools:?}");
    assert_eq!(tools[0].arguments, json!({"idempotency_key": "tool-1", "entries": 1}));
    assert_eq!(tools[0].entries_returned, 1);
}

/// A tool's arguments take its operation's body limit, as REST does: a batch of 1 000 entries
/// (the most the API takes, several hundred KiB) is recorded whole through the tool, and a
/// read's arguments past the limit of bodies without a batch are PAYLOAD_TOO_LARGE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_takes_its_operations_body_limit_and_a_batch_of_1000_entries() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let entries: Vec<Value> = (0..1000)
        .map(|i| {
            let mut entry = recruit_ports::testkit::access_entry("Candidates");
            entry["access_menu_path"] = json!(format!("/candidates/{i}/profile/contact-details"));
            entry
        })
        .collect();
    let arguments = json!({"idempotency_key": "thousand", "entries": entries});
    let size = arguments.to_string().len();
    assert!(size > 4 * recruit_service::BODY_LIMIT, "the batch is {size} bytes");
    let result = call(&f, CURRENT, &owner, "record_privacy_accesses", arguments).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["entries"].as_array().unwrap().len(), 1000);

    let big = "x".repeat(recruit_service::BODY_LIMIT);
    let result = call(&f, CURRENT, &owner, "get_job", json!({"job_id": big})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["structuredContent"]["error"]["code"], "PAYLOAD_TOO_LARGE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_profile_tools_read_and_change_with_the_rules_of_rest() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let b_owner = f.token(ORG_B, Role::Owner, &Scope::ALL).await;
    let member = recruit_ports::testkit::user_id(ORG_A, Role::Member).to_string();
    let read = call(&f, CURRENT, &owner, "get_user", json!({"user_id": member})).await;
    assert_eq!(read["isError"], false, "{read}");
    let (status, response, rest) = f.get(&format!("/v1/users/{member}"), Some(&owner)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["structuredContent"], rest, "the REST body, field for field");
    assert_eq!(response.headers()["etag"], rest["etag"].as_str().unwrap());
    let etag = rest["etag"].clone();

    let stale = json!({"user_id": member, "if_match": "\"0\"", "title": "T"});
    let result = call(&f, CURRENT, &owner, "update_user", stale).await;
    assert_eq!(result["structuredContent"]["error"]["code"], "CONFLICT", "{result}");
    let change = json!({"user_id": member, "if_match": etag, "title": null, "name": "Renamed"});
    let changed = call(&f, PREVIOUS, &owner, "update_user", change).await;
    assert_eq!(changed["isError"], false, "{changed}");
    assert_eq!(changed["structuredContent"]["title"], Value::Null);
    assert_eq!(changed["structuredContent"]["name"], "Renamed");
    assert_ne!(changed["structuredContent"]["etag"], etag);
    let unknown = json!({"user_id": member, "email": "x@example.com"});
    let result = call(&f, CURRENT, &owner, "update_user", unknown).await;
    assert_eq!(result["structuredContent"]["error"]["details"][0]["field"], "email");

    let b_member = recruit_ports::testkit::user_id(ORG_B, Role::Member).to_string();
    let synced = json!({"user_id": b_member, "title": "Same"});
    let result = call(&f, CURRENT, &b_owner, "update_user", synced).await;
    assert_eq!(result["structuredContent"]["error"]["code"], "CANNOT_UPDATE_SYNC_MANAGED_FIELDS");
    assert_eq!(
        result["structuredContent"]["error"]["details"],
        json!([{"field": "title", "source": "DIRECTORY"}])
    );

    // Each read and change through the tools is in the privacy ledger, named by its tool.
    let now = recruit_domain::Timestamp::now().unix_micros();
    let window = recruit_domain::TimeWindow::new(
        recruit_domain::Timestamp::from_unix_micros(now - 3_600_000_000).unwrap(),
        recruit_domain::Timestamp::from_unix_micros(now + 3_600_000_000).unwrap(),
    );
    let query = recruit_ports::PrivacyLogQuery {
        organization_id: recruit_domain::OrganizationId::from_uuid(
            recruit_domain::Uuid::from_u128(ORG_A),
        ),
        window: window.unwrap(),
        ids: None,
        after: None,
        filter: Default::default(),
        limit: 100,
    };
    let page = f
        .store
        .inner()
        .read_privacy_audit_logs(&query, &recruit_ports::testkit::record(ORG_A, 99))
        .await
        .unwrap();
    let paths: Vec<&str> = page
        .entries
        .iter()
        .filter(|e| e.access_menu == "API")
        .map(|e| e.access_menu_path.as_str())
        .collect();
    assert_eq!(paths, ["update_user", "getUser", "get_user"], "newest first");
}
