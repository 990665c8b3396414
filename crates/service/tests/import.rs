//! Importing through the service on a real store: documents all or nothing with errors at
//! their JSON path, NDJSON ledgers in batches with progress and errors at their line.

use std::io::{BufReader, Cursor};

use recruit_adapters_sqlite::SqliteStore;
use recruit_adapters_sqlite::testkit::TestStore;
use recruit_domain::Timestamp;
use recruit_ports::{Import, Maintenance};
use recruit_service::demo::{self, DemoConfig};
use recruit_service::import::{
    ImportFailure, Progress, import_document, import_ndjson, parse_document,
};
use serde_json::{Value, json};

async fn store() -> (SqliteStore, tempfile::TempDir) {
    let TestStore { store, dir } = TestStore::fresh().await;
    (store, dir)
}

/// A store holding the demo's directory, and the demo's first `entries` ledger entries as JSON.
async fn directory_and_ledger(entries: usize) -> (SqliteStore, tempfile::TempDir, Vec<Value>) {
    let (store, dir) = store().await;
    store.import(&demo::directory(&config(0))).await.unwrap();
    let ledger = demo::ledger(&config(entries)).map(|e| serde_json::to_value(e).unwrap());
    (store, dir, ledger.collect())
}

fn config(entries: usize) -> DemoConfig {
    DemoConfig {
        ledger_entries: entries,
        ..DemoConfig::quick_start(Timestamp::parse("2026-11-21T00:00:00Z").unwrap())
    }
}

fn invalid(result: Result<impl std::fmt::Debug, ImportFailure>) -> (String, String) {
    match result {
        Err(ImportFailure::Invalid { at, reason }) => (at, reason),
        other => panic!("expected an invalid input, got {other:?}"),
    }
}

fn document() -> Value {
    serde_json::to_value(demo::directory(&config(0))).unwrap()
}

#[test]
fn a_bad_field_of_a_document_is_named_by_its_path() {
    let mut doc = document();
    doc["jobs"][3]["hiring_team"][0]["user_id"] = json!("usr_123");
    let (at, reason) = invalid(parse_document(&doc.to_string()));
    assert_eq!(at, "jobs[3].hiring_team[0].user_id");
    assert!(reason.contains("has 7 characters"), "{reason}");

    let mut doc = document();
    doc["organizations"][1]["settings"]["interview_buffer"]["before_minutes"] = json!("five");
    let (at, _) = invalid(parse_document(&doc.to_string()));
    assert_eq!(at, "organizations[1].settings.interview_buffer.before_minutes");

    let mut doc = document();
    doc["users"][0]["role"] = json!("SUPERUSER");
    let (at, reason) = invalid(parse_document(&doc.to_string()));
    assert_eq!(at, "users[0].role");
    assert!(reason.contains("SUPERUSER"), "{reason}");

    let (at, _) = invalid(parse_document(r#"{"organisations": []}"#));
    assert_eq!(at, "organisations");
    let (at, reason) = invalid(parse_document(r#"{"users": []} {"jobs": []}"#));
    assert_eq!(at, "the document");
    assert!(reason.contains("trailing characters"), "{reason}");
}

#[test]
fn a_bad_ledger_entry_in_a_document_is_named_by_its_path() {
    let mut doc = document();
    let entry = serde_json::to_value(demo::ledger(&config(1)).next().unwrap()).unwrap();
    doc["privacy_audit_logs"] = json!([entry.clone(), entry]);
    doc["privacy_audit_logs"][1]["access_time"] = json!("yesterday");
    let (at, reason) = invalid(parse_document(&doc.to_string()));
    assert_eq!(at, "privacy_audit_logs[1].access_time");
    assert!(reason.contains("RFC 3339"), "{reason}");
    doc["privacy_audit_logs"][1]["access_time"] =
        doc["privacy_audit_logs"][0]["access_time"].clone();
    doc["privacy_audit_logs"][1]["data_subject"] =
        json!({"type": "EMPLOYEE", "user": "can_0190c7d8e4a27cc3b1f0a2d4e6f80011"});
    // Inside a tagged union the path stops at the union; the reason names the problem.
    let (at, reason) = invalid(parse_document(&doc.to_string()));
    assert_eq!(at, "privacy_audit_logs[1].data_subject");
    assert!(
        reason.contains("has the prefix `can_`, but a user ID takes `usr_` or no prefix"),
        "{reason}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_imports_whole_or_not_at_all() {
    let (store, _dir) = store().await;
    let mut doc = document();
    let first_job = doc["jobs"][0].clone();
    doc["jobs"].as_array_mut().unwrap().push(first_job);
    let (at, reason) = invalid(import_document(&store, &doc.to_string()).await);
    assert_eq!((at.as_str(), reason.as_str()), ("jobs[12].id", "duplicates jobs[0].id"));
    assert!(store.is_empty().await.unwrap());

    let summary = import_document(&store, &document().to_string()).await.unwrap();
    assert_eq!((summary.organizations, summary.jobs), (2, 12));
}

fn ndjson(entries: &[Value]) -> String {
    entries.iter().map(|e| format!("{e}\n")).collect()
}

async fn run(
    store: &SqliteStore,
    text: &str,
    batch: usize,
) -> (Result<usize, ImportFailure>, Vec<Progress>) {
    let (result, seen) = run_again(store, text, batch).await;
    (result.map(|p| p.written), seen)
}

/// [`run`], with what was written and what was found stored.
async fn run_again(
    store: &SqliteStore,
    text: &str,
    batch: usize,
) -> (Result<Progress, ImportFailure>, Vec<Progress>) {
    let mut seen = vec![];
    let result = import_ndjson(
        store,
        || Ok(BufReader::new(Cursor::new(text.to_owned()))),
        batch,
        |p| seen.push(p),
    )
    .await;
    (result, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ndjson_ledger_imports_in_batches_with_progress() {
    let (store, _dir, entries) = directory_and_ledger(2_500).await;
    let text = format!("{}\n\n", ndjson(&entries));
    let (result, progress) = run(&store, &text, 1_000).await;
    assert_eq!(result.unwrap(), 2_500);
    let written: Vec<usize> = progress.iter().map(|p| p.written).collect();
    assert_eq!(written, [0, 1_000, 2_000, 2_500]);
    assert!(progress.iter().all(|p| p.total == 2_500));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ndjson_errors_name_the_line_and_bad_input_writes_nothing() {
    let (store, _dir) = store().await;
    let directory = demo::directory(&config(0));
    store.import(&directory).await.unwrap();
    let entries: Vec<Value> =
        demo::ledger(&config(10)).map(|e| serde_json::to_value(e).unwrap()).collect();

    let mut text = ndjson(&entries);
    text.insert_str(text.len() - 1, " trailing");
    let (at, _) = invalid(run(&store, &text, 4).await.0);
    assert_eq!(at, "line 10");

    let mut bad = entries.clone();
    bad[1]["access_time"] = json!("2026-13-01T00:00:00Z");
    let (at, reason) = invalid(run(&store, &ndjson(&bad), 4).await.0);
    assert_eq!(at, "line 2: access_time");
    assert!(reason.contains("RFC 3339"), "{reason}");

    // An access is recorded when it happens, as through the API: not an hour ahead.
    let mut ahead = entries.clone();
    let hour = Timestamp::from_unix_micros(Timestamp::now().unix_micros() + 3_600_000_000);
    ahead[2]["access_time"] = json!(hour.unwrap().to_string());
    let (at, reason) = invalid(run(&store, &ndjson(&ahead), 4).await.0);
    assert_eq!(at, "line 3: access_time");
    assert!(reason.contains("in the future"), "{reason}");
    let mut doc = document();
    doc["privacy_audit_logs"] = json!([ahead[2]]);
    let (at, _) = invalid(import_document(&store, &doc.to_string()).await);
    assert_eq!(at, "privacy_audit_logs[0].access_time");

    let mut twice = entries.clone();
    twice.push(entries[3].clone());
    let (at, reason) = invalid(run(&store, &ndjson(&twice), 4).await.0);
    assert_eq!(
        (at.as_str(), reason.as_str()),
        ("line 11: id", "the entry appears twice in the file")
    );

    // None of these wrote anything: the same file, corrected, imports every entry.
    assert_eq!(run(&store, &ndjson(&entries), 4).await.0.unwrap(), 10);
}

/// The whole file is checked before anything is written, in chunks parsed side by side: the
/// problem reported is still the first in the file, wherever the chunks end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_problem_in_a_long_file_is_the_one_reported() {
    let (store, _dir, entries) = directory_and_ledger(30_000).await;
    let bad_time = |mut e: Value| {
        e["access_time"] = json!("yesterday");
        e
    };

    // A bad line early, an entry twice later: the bad line.
    let mut file = entries.clone();
    file[7_999] = bad_time(file[7_999].clone());
    file[12_000] = entries[5].clone();
    let (at, _) = invalid(run(&store, &ndjson(&file), 1_000).await.0);
    assert_eq!(at, "line 8000: access_time");

    // An entry twice, then a bad line and a blank one, far on: the entry twice.
    let mut file = entries.clone();
    file[9_000] = entries[5].clone();
    file[15_000] = bad_time(file[15_000].clone());
    let text = ndjson(&file).replacen('\n', "\n\n", 1);
    let (at, reason) = invalid(run(&store, &text, 1_000).await.0);
    assert_eq!(
        (at.as_str(), reason.as_str()),
        ("line 9002: id", "the entry appears twice in the file")
    );

    // A bad line, then bytes that are not text: the bad line; the bytes alone: a read error.
    let mut bytes = ndjson(&file[..20_000]).into_bytes();
    bytes.extend_from_slice(b"\xff\xfe\n");
    let read = |bytes: Vec<u8>| {
        let store = &store;
        async move {
            import_ndjson(store, || Ok(BufReader::new(Cursor::new(bytes.clone()))), 1_000, |_| {})
                .await
        }
    };
    let mut early = bytes.clone();
    early.splice(0..0, b"{}\n".iter().copied());
    let (at, _) = invalid(read(early).await);
    assert_eq!(at, "line 1");
    let mut clean = ndjson(&entries[..20_000]).into_bytes();
    clean.extend_from_slice(b"\xff\xfe\n");
    assert!(matches!(read(clean).await, Err(ImportFailure::Read(_))));

    // Nothing was written: the file imports whole.
    assert_eq!(run(&store, &ndjson(&entries), 10_000).await.0.unwrap(), 30_000);
}

/// Running an import again after it stopped part-way (a crash, a kill) finishes it: entries
/// stored exactly as in the file are skipped and counted, the rest written; an entry stored
/// with other values stops the import at its line, and the ledger keeps what it holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_run_again_finishes_what_a_stopped_run_left() {
    let (store, _dir, entries) = directory_and_ledger(12).await;
    // A run that stopped after its first batches.
    assert_eq!(run(&store, &ndjson(&entries[..6]), 3).await.0.unwrap(), 6);

    let (result, progress) = run_again(&store, &ndjson(&entries[..10]), 4).await;
    let done = result.unwrap();
    assert_eq!((done.written, done.already_stored, done.total), (4, 6, 10));
    let steps: Vec<(usize, usize)> =
        progress.iter().map(|p| (p.written, p.already_stored)).collect();
    assert_eq!(steps, [(0, 0), (0, 4), (2, 6), (4, 6)]);
    let done = run_again(&store, &ndjson(&entries[..10]), 4).await.0.unwrap();
    assert_eq!((done.written, done.already_stored), (0, 10));

    // Line 8 holds entry 7 with another value: the import stops there; the batch before it
    // (lines 1-4, all stored) is counted, nothing of line 8's batch is written.
    let mut changed = entries.clone();
    changed[7]["access_menu"] = json!("edited");
    let (result, progress) = run_again(&store, &ndjson(&changed), 4).await;
    let (at, reason) = invalid(result.map(|p| p.written));
    assert_eq!(
        (at.as_str(), reason.as_str()),
        ("line 8: id", "already exists with other values; the stored entry is kept")
    );
    assert_eq!(progress.last().map(|p| (p.written, p.already_stored)), Some((0, 4)));
    // The stored entry is as it was, and entries 11 and 12 were not written: the file as it
    // was imports them.
    let done = run_again(&store, &ndjson(&entries), 4).await.0.unwrap();
    assert_eq!((done.written, done.already_stored), (2, 10));

    let mut stranger = entries[9].clone();
    stranger["organization_id"] = json!("org_00000000000000000000000000000bad");
    stranger["id"] = json!("pal_00000000000000000000000000000bad");
    let (at, reason) = invalid(run(&store, &ndjson(&[stranger]), 2).await.0);
    assert_eq!((at.as_str(), reason.as_str()), ("line 1: organization_id", "no such organization"));
}

/// A reader whose every read panics, as a bug in reading would.
struct Panicking;

impl std::io::Read for Panicking {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        panic!("a bug while reading")
    }
}

#[tokio::test]
async fn a_panic_while_reading_is_an_internal_error_not_a_bad_input() {
    let (store, _dir) = store().await;
    let result = import_ndjson(&store, || Ok(BufReader::new(Panicking)), 10, |_| {}).await;
    match result {
        Err(ImportFailure::Internal(message)) => {
            assert!(message.contains("panicked"), "{message}")
        }
        other => panic!("expected an internal error, got {other:?}"),
    }
}
