//! The monthly review's records through the REST API: decisions on a month's downloads and
//! the month's sign-off, with what the server adds to it, their idempotency, their records in
//! the chained API ledger, and a ledger altered behind the server's back.

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, StatusCode};
use recruit_domain::model::{ActivityCategory, Role};
use recruit_domain::{Scope, Timestamp};
use recruit_ports::testkit::{ORG_A, ledger_entry, user_id};
use recruit_ports::{AuditListQuery, ImportDocument, LedgerEntry, Ledgers};
use serde_json::{Value, json};

use crate::common::Fixture;

const MONTH: &str = "/v1/audit-logs/privacy/reviews/2026-10";

/// Entries of organization A in November 2026: `downloads` downloads, then a read.
async fn november(store: &dyn recruit_ports::Store, downloads: u128) -> Vec<LedgerEntry> {
    let mut entries = vec![];
    for n in 0..=downloads {
        let at: Timestamp = format!("2026-10-{:02}T10:00:00Z", 10 + n).parse().unwrap();
        let mut e = ledger_entry(ORG_A, 800 + n, at);
        e.entry.activity_category =
            if n < downloads { ActivityCategory::Download } else { ActivityCategory::Read };
        entries.push(e);
    }
    let doc = ImportDocument { privacy_audit_logs: entries.clone(), ..Default::default() };
    store.import(&doc).await.unwrap();
    entries
}

/// A PUT or POST of `body` to `uri` with `token`.
async fn write(
    api: &recruit_http::Api,
    method: &str,
    uri: &str,
    token: &str,
    body: Value,
) -> (StatusCode, hyper::HeaderMap, Value) {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = api.handle(request, None).await;
    let (status, headers) = (response.status(), response.headers().clone());
    let bytes = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
    (status, headers, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// The API ledger's entries of organization A of `operation`, oldest first.
async fn recorded(f: &Fixture, operation: &str) -> Vec<recruit_ports::AuditEntry> {
    let org = recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A));
    let query = AuditListQuery { organization_id: Some(org), limit: 1000 };
    let mut entries: Vec<_> = f
        .store
        .api_audit_entries(&query)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.operation == operation)
        .collect();
    entries.reverse();
    entries
}

/// A month is reviewed as PIPA asks: each download's reason confirmed or an explanation asked
/// for, decisions kept in order with their records, the same decision again writing nothing;
/// the sign-off refused without a note while a download is not confirmed, then recorded with
/// the reviewer, the figures, the chain's verification and the latest checkpoint, shown in
/// the month's review and in the API ledger, replayed for the same request and CONFLICT for
/// any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_month_is_reviewed_download_by_download_and_signed_off_once() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &[Scope::AuditLogsReview, Scope::AuditLogsRead]).await;
    let entries = november(&*f.store, 2).await;
    let (first, second, read) = (&entries[0].entry, &entries[1].entry, &entries[2].entry);
    let decide = |id: &recruit_domain::PrivacyAuditLogId| format!("{MONTH}/downloads/{id}");

    let (status, _, review) = f.get(MONTH, Some(&owner)).await;
    assert_eq!(status, StatusCode::OK, "{review}");
    let statuses: Vec<&Value> =
        review["downloads"].as_array().unwrap().iter().map(|d| &d["status"]).collect();
    assert_eq!(statuses, [&json!("PENDING"), &json!("PENDING")]);
    assert_eq!(
        (&review["downloads"][0]["review"], &review["sign_off"]),
        (&Value::Null, &Value::Null)
    );

    let sign = format!("{MONTH}/sign-off");
    let (status, _, refused) = write(&f.api, "POST", &sign, &owner, json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["error"]["details"][0]["field"], "note");
    let reason = refused["error"]["details"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("2 of the month's downloads are not confirmed"), "{reason}");

    let ask = json!({"status": "EXPLANATION_REQUESTED", "reason": "  Why all candidates?  "});
    let (status, _, asked) = write(&f.api, "PUT", &decide(&first.id), &owner, ask.clone()).await;
    assert_eq!(status, StatusCode::OK, "{asked}");
    assert_eq!(asked["status"], "EXPLANATION_REQUESTED");
    assert_eq!(asked["reason"], "Why all candidates?", "kept trimmed");
    assert_eq!(asked["reviewed_by"], user_id(ORG_A, Role::Owner).to_string());
    assert_eq!(asked["entry_id"], first.id.to_string());
    let notice = asked["notice"].as_str().unwrap_or_default();
    assert!(notice.starts_with("No e-mail server is configured"), "{notice}");
    let (status, _, again) = write(&f.api, "PUT", &decide(&first.id), &owner, ask).await;
    let mut kept = asked.clone();
    kept.as_object_mut().unwrap().remove("notice");
    assert_eq!((status, &again), (StatusCode::OK, &kept), "the same decision is the one kept");
    let confirm = json!({"status": "CONFIRMED", "reason": "A hiring committee packet."});
    for id in [&first.id, &second.id] {
        let (status, _, body) = write(&f.api, "PUT", &decide(id), &owner, confirm.clone()).await;
        assert_eq!((status, &body["status"]), (StatusCode::OK, &json!("CONFIRMED")), "{body}");
    }
    let decisions = recorded(&f, "reviewPrivacyAccessDownload").await;
    assert_eq!(decisions.len(), 3, "the repeated decision wrote nothing");
    assert_eq!(decisions[0].filters["status"], "EXPLANATION_REQUESTED");
    assert_eq!(decisions[1].filters["entry_id"], first.id.to_string());

    // Not a download, not in the month, not a download id, not a status.
    for (uri, body, expected) in [
        (decide(&read.id), confirm.clone(), StatusCode::NOT_FOUND),
        (
            format!("/v1/audit-logs/privacy/reviews/2026-09/downloads/{}", first.id),
            confirm.clone(),
            StatusCode::NOT_FOUND,
        ),
        (
            format!("{MONTH}/downloads/job_{}", "0".repeat(32)),
            confirm.clone(),
            StatusCode::BAD_REQUEST,
        ),
        (
            decide(&first.id),
            json!({"status": "PENDING", "reason": "x", "extra": 1}),
            StatusCode::BAD_REQUEST,
        ),
        (decide(&first.id), json!({"status": "CONFIRMED", "reason": " "}), StatusCode::BAD_REQUEST),
    ] {
        let (status, _, body) = write(&f.api, "PUT", &uri, &owner, body).await;
        assert_eq!(status, expected, "{uri}: {body}");
    }
    let (_, _, invalid) = write(
        &f.api,
        "PUT",
        &decide(&first.id),
        &owner,
        json!({"status": "PENDING", "reason": "x", "extra": 1}),
    )
    .await;
    let fields: Vec<&Value> =
        invalid["error"]["details"].as_array().unwrap().iter().map(|d| &d["field"]).collect();
    assert_eq!(fields, [&json!("extra"), &json!("status")], "every problem at once: {invalid}");

    let (status, headers, signed) = write(&f.api, "POST", &sign, &owner, json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{signed}");
    assert!(!headers.contains_key("idempotent-replayed"));
    assert_eq!(signed["signed_by"], user_id(ORG_A, Role::Owner).to_string());
    assert_eq!(signed["note"], Value::Null);
    let figures = &signed["figures"];
    assert_eq!(
        (&figures["downloads"], &figures["confirmed"], &figures["pending"], &figures["accesses"]),
        (&json!(2), &json!(2), &json!(0), &json!(3)),
        "{figures}"
    );
    let verification = &signed["verification"];
    assert_eq!(verification["intact"], true, "{verification}");
    let heads = f.store.chain_heads(Some(entries[0].organization_id)).await.unwrap();
    let privacy = heads.iter().find(|h| h.ledger == "privacy").unwrap();
    assert_eq!(verification["head_position"], privacy.position);
    assert!(verification["month_from_position"].as_i64().unwrap() <= privacy.position - 2);
    let checkpoint = &signed["checkpoint"];
    assert_eq!(
        (&checkpoint["position"], &checkpoint["ledger"]),
        (&json!(privacy.position), &json!("privacy"))
    );
    assert_eq!(checkpoint["head_hash"], verification["head_hash"]);

    let (_, _, review) = f.get(MONTH, Some(&owner)).await;
    assert_eq!(review["sign_off"], signed, "the month's review shows the sign-off as recorded");
    // People by name: the organization, the reviewer as recorded at sign-off, and everyone the
    // review names who is a user (the test ledger's accounts are not).
    let owner_id = user_id(ORG_A, Role::Owner).to_string();
    assert_eq!(review["organization_name"], "Organization A");
    assert_eq!(
        signed["reviewer"],
        json!({"id": owner_id, "name": "OWNER of A",
        "email": signed["reviewer"]["email"], "role": "OWNER"})
    );
    assert!(signed["reviewer"]["email"].as_str().is_some_and(|e| e.contains('@')));
    assert_eq!(review["people"], json!([signed["reviewer"]]), "the decider and signer, once");
    assert_eq!(review["downloads"][0]["review"]["reason"], "A hiring committee packet.");
    let sign_offs = recorded(&f, "signOffPrivacyAccessReview").await;
    assert_eq!(sign_offs.len(), 1);
    assert_eq!(sign_offs[0].filters, signed, "the API ledger's chain holds the sign-off whole");

    let (status, headers, replayed) =
        write(&f.api, "POST", &sign, &owner, json!({"note": null})).await;
    assert_eq!((status, &replayed), (StatusCode::CREATED, &signed));
    assert_eq!(headers["idempotent-replayed"], "true");
    let (status, _, conflict) =
        write(&f.api, "POST", &sign, &owner, json!({"note": "later"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{conflict}");
    assert!(conflict["error"]["message"].as_str().unwrap().contains("signed off once"));
    let other = f.token(ORG_A, Role::Owner, &[Scope::AuditLogsReview]).await;
    let (status, _, _) = write(&f.api, "POST", &sign, &other, json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "the same reviewer's sign-off, through another token");
    assert_eq!(recorded(&f, "signOffPrivacyAccessReview").await.len(), 1, "signed off once");

    // A decision after the sign-off is a record of its own; the sign-off stands.
    let asked = json!({"status": "EXPLANATION_REQUESTED", "reason": "The auditor asked."});
    let (status, _, _) = write(&f.api, "PUT", &decide(&second.id), &owner, asked).await;
    assert_eq!(status, StatusCode::OK);
    let (_, _, review) = f.get(MONTH, Some(&owner)).await;
    assert_eq!(review["downloads"][1]["status"], "EXPLANATION_REQUESTED");
    assert_eq!(review["sign_off"], signed);
}

/// A ledger changed behind the server's back: the sign-off's verification finds it, names
/// where, and the month is signed off only with a note saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_month_of_an_altered_ledger_is_signed_off_only_with_a_note_and_says_so() {
    use diesel::Connection as _;
    use diesel::connection::SimpleConnection as _;
    let key = recruit_service::checkpoint::CheckpointKey::generate();
    let world =
        crate::common::world_service(recruit_service::limits::RateLimitConfig::DEFAULT, Some(key))
            .await;
    let api = recruit_http::Api::new(
        world.service.clone(),
        recruit_http::HttpConfig::new("http://127.0.0.1:8080"),
    );
    let org = recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A));
    let scopes = vec![Scope::AuditLogsReview];
    let user = user_id(ORG_A, Role::Owner);
    let (_, owner) = world.service.create_token(org, user, "t".into(), scopes, None).await.unwrap();
    let entries = november(&*world.store, 0).await;
    let path = world.dir.path().join("recruitd.db");
    let mut c = diesel::SqliteConnection::establish(&path.to_string_lossy()).unwrap();
    c.batch_execute(&format!(
        "DROP TRIGGER privacy_audit_logs_no_update; \
         UPDATE privacy_audit_logs SET access_menu = 'forged' WHERE id = X'{:032x}';",
        entries[0].entry.id.uuid().as_u128()
    ))
    .unwrap();
    let sign = format!("{MONTH}/sign-off");
    let (status, _, refused) = write(&api, "POST", &sign, &owner, json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    let reason = refused["error"]["details"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("the chain's verification found a problem"), "{reason}");
    let note = "The forged entry was reported to the security team (ticket 42).";
    let (status, _, signed) = write(&api, "POST", &sign, &owner, json!({"note": note})).await;
    assert_eq!(status, StatusCode::CREATED, "{signed}");
    let verification = &signed["verification"];
    assert_eq!(
        (&verification["intact"], &verification["findings_total"]),
        (&json!(false), &json!(1))
    );
    let finding = &verification["findings"][0];
    assert_eq!(
        (&finding["kind"], &finding["id"]),
        (&json!("MODIFIED"), &json!(entries[0].entry.id.to_string()))
    );
    assert_eq!(signed["note"], note);
}

/// The review console is served under `/console` with its security headers, and not at all
/// when turned off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_is_served_under_console_unless_turned_off() {
    let f = Fixture::with(|_| {}).await;
    let (status, response, _) = f.get("/console/sign-in", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/html; charset=utf-8");
    assert!(response.headers()["content-security-policy"].to_str().unwrap().contains("'none'"));
    assert!(response.headers().contains_key("x-request-id"));
    let (status, response, _) = f.get("/console/assets/console.css", None).await;
    assert_eq!(
        (status, &response.headers()["content-type"]),
        (StatusCode::OK, &"text/css; charset=utf-8".parse::<hyper::header::HeaderValue>().unwrap())
    );
    let off = Fixture::with(|http| http.console = false).await;
    let (status, _, body) = off.get("/console/sign-in", None).await;
    assert_eq!((status, &body["error"]["code"]), (StatusCode::NOT_FOUND, &json!("NOT_FOUND")));
}

/// Every month the document's pattern admits is reviewed, down to the year 0000 (nothing in
/// it) and up to 9999; a month the pattern refuses is VALIDATION_FAILED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_month_of_the_pattern_is_reviewed() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &[Scope::AuditLogsRead]).await;
    for month in ["0000-01", "0001-01", "9999-12"] {
        let (status, _, review) =
            f.get(&format!("/v1/audit-logs/privacy/reviews/{month}"), Some(&owner)).await;
        assert_eq!(status, StatusCode::OK, "{month}: {review}");
        assert_eq!(review["month"], month);
    }
    let (status, _, _) = f.get("/v1/audit-logs/privacy/reviews/2026-13", Some(&owner)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

/// The rules are set through the API: the review then flags by them, and the change is in
/// the chained API ledger with the rules it set; a member may not change them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_flags_by_the_rules_the_api_sets_and_the_change_is_recorded() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &[Scope::AuditLogsReview, Scope::AuditLogsRead]).await;
    let member = f.token(ORG_A, Role::Member, &[Scope::AuditLogsReview]).await;
    november(&*f.store, 2).await;
    let rules = "/v1/audit-logs/privacy/review-rules";
    let flagged = async || {
        let (status, _, review) = f.get(MONTH, Some(&owner)).await;
        assert_eq!(status, StatusCode::OK, "{review}");
        let accounts = review["accounts"].as_array().unwrap().clone();
        accounts
            .iter()
            .filter(|a| a["flags"].as_array().is_some_and(|f| f.contains(&json!("DOWNLOADS"))))
            .count()
    };
    assert_eq!(flagged().await, 0, "two downloads of different accounts: none over 5");

    let (status, _, refused) = write(&f.api, "PUT", rules, &member, json!({"downloads": 0})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    let (status, _, set) = write(&f.api, "PUT", rules, &owner, json!({"downloads": 0})).await;
    assert_eq!(status, StatusCode::OK, "{set}");
    assert_eq!((set["downloads"].clone(), set["bulk_records"].clone()), (json!(0), json!(1000)));
    let (_, _, read) = f.get(rules, Some(&owner)).await;
    assert_eq!(read, set);
    assert_eq!(flagged().await, 2, "each download is now over the rule");
    let changes = recorded(&f, "setPrivacyReviewRules").await;
    assert_eq!(changes.len(), 1, "the member's refusal wrote nothing");
    assert_eq!(changes[0].filters["downloads"], 0, "the rules set are on the record");
}
