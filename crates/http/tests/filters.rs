//! The filters of the privacy ledger's list and export through REST: each narrows both alike,
//! outside the work hours means what the monthly review counts (in the organization's time
//! zone), a cursor is bound to its filters, a CSV export holds the same entries as rows and
//! is recorded as a download with its filters, and every bad value is reported at once.

use chrono::{Datelike, Timelike};
use http_body_util::BodyExt;
use hyper::StatusCode;
use recruit_domain::model::{ActivityCategory, Role};
use recruit_domain::{Scope, Timestamp};
use recruit_ports::testkit::{ORG_B, ledger_entry};
use recruit_ports::{Import, ImportDocument, LedgerEntry, Ledgers};
use serde_json::Value;

use crate::common::Fixture;

/// November 2026 in Seoul, organization B's time zone.
const WINDOW: &str = "timestamp_gte=2026-10-31T15:00:00Z&timestamp_lt=2026-11-30T15:00:00Z";

/// Entries of organization B every five hours from 2026-11-20, two accounts taking turns,
/// every third a download.
async fn entries(f: &Fixture) -> Vec<LedgerEntry> {
    let start: Timestamp = "2026-11-20T00:00:00Z".parse().unwrap();
    let mut entries = vec![];
    for n in 0..40u128 {
        let at = start.checked_add_duration(std::time::Duration::from_secs(5 * 3600 * n as u64));
        let mut e = ledger_entry(ORG_B, 900 + n % 2, at.unwrap());
        e.entry.id = recruit_domain::PrivacyAuditLogId::from_uuid(recruit_domain::Uuid::from_u128(
            ORG_B << 64 | 0x9000 | n,
        ));
        if n % 3 == 0 {
            e.entry.activity_category = ActivityCategory::Download;
        }
        if n % 4 == 0 {
            e.entry.ip_addresses = vec!["198.51.100.4".into()];
        }
        entries.push(e);
    }
    let doc = ImportDocument { privacy_audit_logs: entries.clone(), ..Default::default() };
    f.store.import(&doc).await.unwrap();
    entries
}

async fn get(f: &Fixture, token: &str, uri: &str) -> (StatusCode, hyper::HeaderMap, Vec<u8>) {
    let (status, response, _) = f.get(uri, Some(token)).await;
    let headers = response.headers().clone();
    (status, headers, response.into_body().collect().await.unwrap().to_bytes().to_vec())
}

/// Every entry the list shows for `filters`, walking its pages three at a time.
async fn listed(f: &Fixture, token: &str, filters: &str) -> Vec<Value> {
    let mut all = vec![];
    let mut cursor = String::new();
    loop {
        let uri = format!("/v1/audit-logs/privacy?{WINDOW}&limit=3{filters}{cursor}");
        let (status, _, body) = get(f, token, &uri).await;
        assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        let page: Value = serde_json::from_slice(&body).unwrap();
        all.extend(page["data"].as_array().unwrap().iter().cloned());
        match page["pagination"]["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return all,
        }
    }
}

/// Whether `at` is within organization B's work hours, Monday 09:00 to 17:00 in Seoul.
fn at_work(at: &str) -> bool {
    let local =
        at.parse::<Timestamp>().unwrap().as_datetime().with_timezone(&chrono_tz::Asia::Seoul);
    local.weekday() == chrono::Weekday::Mon && (9..17).contains(&local.hour())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_narrow_the_list_and_the_export_alike_and_bind_the_cursor() {
    let unlimited = recruit_service::limits::RateLimitConfig::UNLIMITED;
    let f = Fixture::limited(unlimited, |_| {}).await;
    let owner = f.token(ORG_B, Role::Owner, &Scope::ALL).await;
    let written = entries(&f).await;
    let everything = listed(&f, &owner, "").await;
    assert!(everything.len() >= written.len());

    // Outside the work hours is what the review counts, in Seoul.
    let outside = listed(&f, &owner, "&outside_work_hours=true").await;
    let within = listed(&f, &owner, "&outside_work_hours=false").await;
    assert_eq!(outside.len() + within.len(), everything.len());
    assert!(!within.is_empty() && !outside.is_empty());
    assert!(within.iter().all(|e| at_work(e["access_time"].as_str().unwrap())));
    assert!(outside.iter().all(|e| !at_work(e["access_time"].as_str().unwrap())));
    let (status, _, body) = get(&f, &owner, "/v1/audit-logs/privacy/reviews/2026-11").await;
    assert_eq!(status, StatusCode::OK);
    let review: Value = serde_json::from_slice(&body).unwrap();
    let counted: u64 = review["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["outside_work_hours"].as_u64().unwrap())
        .sum();
    assert_eq!(outside.len() as u64, counted, "the review counts what the filter lists");

    // Each filter alone, and together.
    let account = written[1].entry.account_id.to_string();
    let by_account = listed(&f, &owner, &format!("&account_id={account}")).await;
    assert_eq!(by_account.len(), 20);
    assert!(by_account.iter().all(|e| e["account_id"] == account.as_str()));
    let downloads = listed(&f, &owner, "&activity_category=DOWNLOAD").await;
    assert!(downloads.iter().all(|e| e["activity_category"] == "DOWNLOAD"));
    assert_eq!(downloads.len(), 14);
    let address = listed(&f, &owner, "&ip_address=198.51.100.4").await;
    assert_eq!(address.len(), 10);
    let both = format!("&account_id={account}&activity_category=DOWNLOAD&outside_work_hours=true");
    let narrowed = listed(&f, &owner, &both).await;
    let expected = downloads
        .iter()
        .filter(|e| e["account_id"] == account.as_str())
        .filter(|e| !at_work(e["access_time"].as_str().unwrap()))
        .count();
    assert_eq!(narrowed.len(), expected);

    // A cursor is bound to its filters.
    let first = format!("/v1/audit-logs/privacy?{WINDOW}&limit=1&activity_category=DOWNLOAD");
    let (_, _, body) = get(&f, &owner, &first).await;
    let cursor = serde_json::from_slice::<Value>(&body).unwrap()["pagination"]["next_cursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = format!("/v1/audit-logs/privacy?{WINDOW}&activity_category=READ&cursor={cursor}");
    let (status, _, body) = get(&f, &owner, &other).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap()["error"]["code"], "INVALID_CURSOR");

    // The export in CSV: the same entries, a row each under the header, recorded as a
    // download with its filters.
    let uri = format!("/v1/audit-logs/privacy/export?{WINDOW}&account_id={account}&format=csv");
    let (status, headers, body) = get(&f, &owner, &uri).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/csv"));
    // Named for the organization, the window and the filters; readable by spreadsheets.
    let disposition = headers["content-disposition"].to_str().unwrap();
    assert!(
        disposition.contains("filename*=UTF-8''privacy-audit-logs_Organization-B_"),
        "{disposition}"
    );
    assert!(disposition.ends_with(&format!("_account-id-{account}.csv")), "{disposition}");
    assert!(body.starts_with("\u{feff}".as_bytes()), "a UTF-8 byte-order mark first");
    let mut rows = csv::Reader::from_reader(&body[3..]);
    let header: Vec<String> = rows.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(header, recruit_service::export::CSV_COLUMNS);
    let ids: Vec<String> = rows.records().map(|r| r.unwrap()[2].to_owned()).collect();
    let mut expected: Vec<String> =
        by_account.iter().map(|e| e["id"].as_str().unwrap().to_owned()).collect();
    expected.reverse();
    assert_eq!(ids, expected, "oldest first");
    let org = recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_B));
    let query = recruit_ports::AuditListQuery { organization_id: Some(org), limit: 1000 };
    let exports: Vec<_> = f
        .store
        .api_audit_entries(&query)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.operation == "exportPrivacyAuditLogs")
        .collect();
    assert_eq!(exports.len(), 1);
    assert_eq!(exports[0].filters["activity_category"], "DOWNLOAD");
    assert_eq!(exports[0].filters["format"], "csv");
    assert_eq!(exports[0].filters["filters"]["account_id"], account.as_str());
    assert_eq!(u64::from(exports[0].entries_returned), 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_filter_is_reported_at_once() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_B, Role::Owner, &Scope::ALL).await;
    let uri = format!(
        "/v1/audit-logs/privacy/export?{WINDOW}&account_id=acc_1&activity_category=&\
         data_subject_id=job_0123456789abcdef0123456789abcdef&ip_address=10.0.0.256&\
         outside_work_hours=1&format=xlsx"
    );
    let (status, _, body) = get(&f, &owner, &uri).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let error: Value = serde_json::from_slice(&body).unwrap();
    let fields: Vec<&str> = error["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "account_id",
            "activity_category",
            "data_subject_id",
            "ip_address",
            "outside_work_hours",
            "format"
        ]
    );
}

/// A cell a spreadsheet would run as a formula is written as text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_csv_export_never_hands_a_spreadsheet_a_formula() {
    let f = Fixture::with(|_| {}).await;
    let owner = f.token(ORG_B, Role::Owner, &Scope::ALL).await;
    let mut e = ledger_entry(ORG_B, 999, "2026-11-10T10:00:00Z".parse().unwrap());
    e.entry.access_menu = "=HYPERLINK(\"http://evil.example\",\"x\")".into();
    e.entry.access_menu_path = "@SUM(1+1)".into();
    let doc = ImportDocument { privacy_audit_logs: vec![e], ..Default::default() };
    f.store.import(&doc).await.unwrap();
    let uri = format!("/v1/audit-logs/privacy/export?{WINDOW}&format=csv");
    let (status, _, body) = get(&f, &owner, &uri).await;
    assert_eq!(status, StatusCode::OK);
    let mut rows = csv::Reader::from_reader(&body[..]);
    let row = rows.records().next().unwrap().unwrap();
    assert_eq!(&row[11], "'=HYPERLINK(\"http://evil.example\",\"x\")");
    assert_eq!(&row[12], "'@SUM(1+1)");
}
