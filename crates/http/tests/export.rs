//! Exporting the privacy ledger through REST (`GET /v1/audit-logs/privacy/export`) on a real
//! SQLite store: NDJSON lines that prove themselves, the record committed before the first
//! byte, the window up to the retention period, authorization, and the cap on exports
//! streaming at once.

use http_body_util::BodyExt;
use hyper::StatusCode;
use recruit_domain::chain::{Ledger, canonical_json, entry_hash, parse_hex};
use recruit_domain::model::Role;
use recruit_domain::{OrganizationId, Scope, Uuid};
use recruit_ports::Ledgers;
use recruit_ports::testkit::{ORG_A, t};
use serde_json::Value;

use crate::common::Fixture;

const PATH: &str = "/v1/audit-logs/privacy/export";

fn request(query: &str, token: &str) -> hyper::Request<http_body_util::Empty<bytes::Bytes>> {
    hyper::Request::get(format!("{PATH}?{query}"))
        .header("authorization", format!("Bearer {token}"))
        .body(http_body_util::Empty::new())
        .unwrap()
}

/// A window holding every entry of the test world.
fn world_window() -> String {
    format!("timestamp_gte={}&timestamp_lt={}", t(0), t(86_400))
}

/// The exports recorded in the API audit ledger.
async fn exports_recorded(f: &Fixture) -> Vec<recruit_ports::AuditEntry> {
    let all = recruit_ports::AuditListQuery { organization_id: None, limit: 100 };
    let entries = f.store.api_audit_entries(&all).await.unwrap();
    entries.into_iter().filter(|e| e.operation == "exportPrivacyAuditLogs").collect()
}

/// Every line of an export names its organization and carries its position and hashes: the
/// hash recomputes from the line alone and the lines link up; the lines are the window's
/// entries, the ones the list shows. The export is recorded, with its count, before the body
/// is read at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_streams_lines_that_prove_themselves_recorded_before_the_first_byte() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let response = f.api.handle(request(&world_window(), &owner), None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "application/x-ndjson");
    assert_eq!(headers["cache-control"], "no-store");
    assert!(headers["content-disposition"].to_str().unwrap().starts_with("attachment;"));
    let count: u64 = headers["recruitd-export-count"].to_str().unwrap().parse().unwrap();
    assert!(count > 0);

    // Not a byte read yet, and the download is in the ledger with its filters and count.
    let recorded = exports_recorded(&f).await;
    assert_eq!(recorded.len(), 1);
    assert_eq!(u64::from(recorded[0].entries_returned), count);
    assert_eq!(recorded[0].filters["activity_category"], "DOWNLOAD");
    assert_eq!(recorded[0].filters["timestamp_gte"], t(0).to_string());

    let body = response.into_body().collect().await.unwrap().to_bytes();
    let text = std::str::from_utf8(&body).unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len() as u64, count);
    let org = OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let mut previous: Option<(u64, String)> = None;
    for line in &lines {
        assert_eq!(line["ledger"], "privacy");
        assert_eq!(line["organization_id"], org.to_string());
        let position = line["position"].as_u64().unwrap();
        let prev = line["prev_hash"].as_str().unwrap();
        let hash = entry_hash(
            Ledger::Privacy,
            org,
            position,
            &parse_hex(prev).unwrap(),
            &canonical_json(&line["entry"]).unwrap(),
        );
        assert_eq!(line["hash"], recruit_domain::chain::hex(&hash), "{line}");
        if let Some((p, h)) = &previous
            && *p + 1 == position
        {
            assert_eq!(prev, h, "consecutive positions link up");
        }
        previous = Some((position, line["hash"].as_str().unwrap().to_owned()));
    }
    // The same entries as the list of the window.
    let list = format!("/v1/audit-logs/privacy?{}&limit=100", world_window());
    let (status, _, page) = f.get(&list, Some(&owner)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let mut listed: Vec<&str> =
        page["data"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    let mut exported: Vec<&str> =
        lines.iter().map(|l| l["entry"]["id"].as_str().unwrap()).collect();
    listed.sort_unstable();
    exported.sort_unstable();
    assert_eq!(exported, listed);

    // `ids` narrows it, in the list's syntax.
    let query = format!("{}&ids={},{}", world_window(), listed[0], listed[1]);
    let response = f.api.handle(request(&query, &owner), None).await;
    assert_eq!(response.headers()["recruitd-export-count"], "2");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body.iter().filter(|b| **b == b'\n').count(), 2);
}

/// The window may span the retention period (two years by default), longer than the list's
/// 366 days, and no longer; every problem of the query is reported at once, after
/// authorization.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_may_span_the_retention_period_and_problems_come_after_authorization() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let two_years = "timestamp_gte=2024-06-01T00:00:00Z&timestamp_lt=2026-06-01T00:00:00Z";
    let (status, _, body) = f.get(&format!("{PATH}?{two_years}"), Some(&owner)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let longer = "timestamp_gte=2024-06-01T00:00:00Z&timestamp_lt=2026-06-01T00:00:00.000001Z";
    let (status, _, body) = f.get(&format!("{PATH}?{longer}"), Some(&owner)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["details"][0]["field"], "timestamp_lt");
    assert!(body["error"]["details"][0]["reason"].as_str().unwrap().contains("2y"), "{body}");

    let (status, _, body) = f.get(&format!("{PATH}?limit=5&ids=nope"), Some(&owner)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let fields: Vec<&str> = body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    for field in ["limit", "ids"] {
        assert!(fields.contains(&field), "{field} in {body}");
    }

    // Authorization first, as for the list: a member, a token without the scope, no token.
    let member = f.token(ORG_A, Role::Member, &Scope::ALL).await;
    let (status, _, body) = f.get(&format!("{PATH}?limit=5"), Some(&member)).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (StatusCode::FORBIDDEN, &"PERMISSION_DENIED".into())
    );
    let unscoped = f.token(ORG_A, Role::Owner, &[Scope::JobsRead]).await;
    let (status, _, body) = f.get(&format!("{PATH}?{two_years}"), Some(&unscoped)).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (StatusCode::FORBIDDEN, &"INSUFFICIENT_SCOPE".into())
    );
    let (status, _, _) = f.get(&format!("{PATH}?{two_years}"), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(exports_recorded(&f).await.len() == 1, "only the export that streamed is recorded");
}

/// At most two exports stream at once (the default): a third is RATE_LIMITED with a
/// `Retry-After` and leaves no record; once one ends, another may start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_streaming_at_once_are_capped_and_a_finished_one_frees_its_slot() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let first = f.api.handle(request(&world_window(), &owner), None).await;
    let second = f.api.handle(request(&world_window(), &owner), None).await;
    assert_eq!((first.status(), second.status()), (StatusCode::OK, StatusCode::OK));
    let (status, third, body) = f.get(&format!("{PATH}?{}", world_window()), Some(&owner)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "RATE_LIMITED");
    assert!(third.headers().contains_key("retry-after"));
    assert_eq!(exports_recorded(&f).await.len(), 2);

    first.into_body().collect().await.unwrap();
    let (status, _, _) = f.get(&format!("{PATH}?{}", world_window()), Some(&owner)).await;
    assert_eq!(status, StatusCode::OK, "a slot is free once an export is read to its end");
    drop(second);
    let (status, _, _) = f.get(&format!("{PATH}?{}", world_window()), Some(&owner)).await;
    assert_eq!(status, StatusCode::OK, "and once one is dropped unread");
}

/// A monthly review takes a slot of the heavy reads as an export does: with every slot held
/// by an export, it is RATE_LIMITED with a `Retry-After`; once one ends, it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_waits_for_a_slot_the_exports_hold() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let review = "/v1/audit-logs/privacy/reviews/2026-01";
    let (status, _, body) = f.get(review, Some(&owner)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let first = f.api.handle(request(&world_window(), &owner), None).await;
    let second = f.api.handle(request(&world_window(), &owner), None).await;
    assert_eq!((first.status(), second.status()), (StatusCode::OK, StatusCode::OK));
    let (status, response, body) = f.get(review, Some(&owner)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "RATE_LIMITED");
    assert!(response.headers().contains_key("retry-after"));
    drop(first);
    let (status, _, body) = f.get(review, Some(&owner)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["accesses"], 12, "the world's twelve entries of organization A: {body}");
}

/// An export the store cannot start is answered with the error envelope: nothing of the
/// ledger is sent, nothing recorded, and its slot is free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_the_store_cannot_start_sends_the_envelope_and_nothing_else() {
    use recruit_ports::faulty::Fault;
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let uri = format!("{PATH}?{}", world_window());
    for _ in 0..3 {
        f.store.set_after_authentication(Fault::Unavailable);
        let (status, response, body) = f.get(&uri, Some(&owner)).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(body["error"]["code"], "UNAVAILABLE");
    }
    f.store.set(Fault::None);
    assert!(exports_recorded(&f).await.is_empty());
    let (status, _, _) = f.get(&uri, Some(&owner)).await;
    assert_eq!(status, StatusCode::OK);
}

/// After a position with no window the chain alone selects: an entry recorded late (stamped
/// long before the others) is exported in its place, the positions run on without a gap, and
/// the file says it holds every day. A window, or one bound of it, leaves it out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_position_the_chain_alone_selects() {
    use recruit_ports::{Import, ImportDocument};
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    let late = recruit_ports::testkit::ledger_entry(ORG_A, 9_000, t(-400 * 86_400));
    let doc = ImportDocument { privacy_audit_logs: vec![late.clone()], ..Default::default() };
    f.store.import(&doc).await.unwrap();

    let response = f.api.handle(request("after_position=0", &owner), None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let disposition = response.headers()["content-disposition"].to_str().unwrap().to_owned();
    assert!(disposition.contains("_all_all_after-position-0.ndjson"), "{disposition}");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let lines: Vec<Value> = std::str::from_utf8(&body)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let positions: Vec<u64> = lines.iter().map(|l| l["position"].as_u64().unwrap()).collect();
    assert_eq!(positions, (1..=lines.len() as u64).collect::<Vec<_>>(), "no gap");
    let last = lines.last().unwrap();
    assert_eq!(last["entry"]["id"], late.entry.id.to_string(), "the late entry, last recorded");

    let windowed = format!("{}&after_position=0", world_window());
    let response = f.api.handle(request(&windowed, &owner), None).await;
    let count: usize =
        response.headers()["recruitd-export-count"].to_str().unwrap().parse().unwrap();
    assert_eq!(count, lines.len() - 1, "a window leaves it out");
    drop(response); // An export holds one of the two slots until its body is dropped.

    // A bound alone is a window open on the other side; the work hours are laid over as far
    // as entries lie.
    let since = format!("timestamp_gte={}", t(0));
    let response = f.api.handle(request(&since, &owner), None).await;
    let count = response.headers()["recruitd-export-count"].to_str().unwrap();
    assert_eq!(count.parse::<usize>().unwrap(), lines.len() - 1, "the late entry is before it");
    drop(response);
    let all = f.api.handle(request("outside_work_hours=false", &owner), None).await;
    assert_eq!(all.status(), StatusCode::OK);
}
