//! The contract suite of `recruit-ports` on the SQLite adapter, and what this adapter promises
//! beyond it: idempotent migrations, append-only ledgers, WAL mode.

use diesel::connection::SimpleConnection as _;
use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use recruit_adapters_sqlite::testkit::TestStore;
use recruit_adapters_sqlite::{SqliteBackend, SqliteConfig};

/// A migrated store on a file of its own, removed with the guard.
type Fresh = TestStore;

async fn fresh() -> Fresh {
    TestStore::fresh().await
}

recruit_ports::store_contract_tests!(fresh());

/// A plain connection to the same file, for what the ports do not offer.
fn raw(fresh: &Fresh) -> SqliteConnection {
    SqliteConnection::establish(&fresh.dir.path().join("recruitd.db").to_string_lossy())
        .expect("connects")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_apply_once_and_then_do_nothing() {
    let store = fresh().await;
    assert_eq!(store.migrate().await.unwrap(), 0);
    let reopened = store.reopened().await;
    assert_eq!(reopened.migrate().await.unwrap(), 0);
}

/// Jobs stored before their settings were kept resolved (migration 000006) get them when the
/// store migrates, resolved by the domain's rule: every job reads as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_of_jobs_stored_before_are_resolved_when_the_store_migrates() {
    use recruit_ports::testkit::world;
    use recruit_ports::{Directory, Import, StoreError};
    let store = fresh().await;
    let doc = world();
    store.import(&doc).await.unwrap();
    let mut read = vec![];
    for j in &doc.jobs {
        read.push(store.job(j.organization_id, j.id).await.unwrap());
    }
    diesel::sql_query("DELETE FROM job_resolved_settings").execute(&mut raw(&store)).unwrap();
    let lost = store.job(doc.jobs[0].organization_id, doc.jobs[0].id).await;
    assert!(matches!(lost, Err(StoreError::NotFound)), "{lost:?}");
    assert_eq!(store.migrate().await.unwrap(), 0);
    for (j, before) in doc.jobs.iter().zip(read) {
        assert_eq!(store.job(j.organization_id, j.id).await.unwrap(), before);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledgers_refuse_update_and_delete() {
    use recruit_ports::testkit::{ORG_A, record, world};
    use recruit_ports::{Import, Ledgers, PrivacyLogQuery, ToolAuditEntry};
    let store = fresh().await;
    store.import(&world()).await.unwrap();
    // One read through the tool interface puts a row in each audit ledger.
    let mut read = record(ORG_A, 1);
    read.tool = Some(ToolAuditEntry {
        id: read.api.id,
        at: read.api.at,
        organization_id: read.api.organization_id,
        token_id: read.api.token_id,
        user_id: read.api.user_id,
        tool_name: "list_privacy_audit_logs".into(),
        arguments: serde_json::json!({}),
        entries_returned: 0,
        request_id: read.api.request_id.clone(),
    });
    let window = recruit_domain::TimeWindow::new(
        recruit_ports::testkit::t(0),
        recruit_ports::testkit::t(10_000),
    )
    .unwrap();
    let query = PrivacyLogQuery {
        organization_id: read.api.organization_id,
        window,
        ids: None,
        after: None,
        filter: Default::default(),
        limit: 5,
    };
    store.read_privacy_audit_logs(&query, &read).await.unwrap();
    let mut c = raw(&store);
    for sql in [
        "UPDATE privacy_audit_logs SET access_menu = 'x'",
        "DELETE FROM privacy_audit_logs",
        "UPDATE api_audit_log SET operation = 'x'",
        "DELETE FROM api_audit_log",
        "UPDATE tool_audit_log SET tool_name = 'x'",
        "DELETE FROM tool_audit_log",
    ] {
        let err = diesel::sql_query(sql).execute(&mut c).expect_err(sql).to_string();
        assert!(err.contains("append-only"), "{sql}: {err}");
    }
    let n: i64 = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
        "(SELECT count(*) FROM privacy_audit_logs)",
    ))
    .get_result(&mut c)
    .unwrap();
    assert_eq!(n, 16);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_is_in_wal_mode() {
    let store = fresh().await;
    let mut c = raw(&store);
    #[derive(QueryableByName)]
    struct Mode {
        #[diesel(sql_type = diesel::sql_types::Text)]
        journal_mode: String,
    }
    let mode: Mode = diesel::sql_query("PRAGMA journal_mode").get_result(&mut c).unwrap();
    assert_eq!(mode.journal_mode, "wal");
}

/// Opening waits for a lock another process holds, as every statement does: a server that
/// starts while `recruitd audit verify` has the file open starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_waits_for_a_lock_held_elsewhere() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("recruitd.db");
    let mut holder = SqliteConnection::establish(&path.to_string_lossy()).expect("connects");
    holder.batch_execute("BEGIN EXCLUSIVE; CREATE TABLE elsewhere (x INTEGER);").unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(400));
        holder.batch_execute("COMMIT;").unwrap();
    });
    let opened = SqliteBackend::open(&SqliteConfig::new(&path)).await;
    release.join().unwrap();
    let opened = opened.expect("opens once the lock is released");
    assert!(opened.migrate().await.unwrap() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_path_fails_when_opening() {
    let result =
        SqliteBackend::open(&SqliteConfig::new("/nonexistent-dir/for/sure/recruitd.db")).await;
    assert!(matches!(result, Err(recruit_ports::StoreError::Unavailable(_))), "{result:?}");
}

#[tokio::test]
async fn a_migration_that_fails_is_reported_as_one() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("recruitd.db");
    // A file another program made, with a table of the same name and another shape.
    let mut c = SqliteConnection::establish(&path.to_string_lossy()).expect("opens");
    diesel::sql_query("CREATE TABLE organizations (something TEXT)").execute(&mut c).unwrap();
    drop(c);
    let store = SqliteBackend::open(&SqliteConfig::new(&path)).await.expect("opens");
    let message = store.migrate().await.expect_err("the migration fails").to_string();
    assert!(message.contains("migration failed"), "{message}");
    assert!(message.contains("organizations"), "names what failed: {message}");
}

/// Reads of the privacy ledger are recorded in groups, as on PostgreSQL: while one group waits
/// for the database's write lock, the reads made meanwhile form the next, which commits as one.
/// When that shared commit fails (a deferred foreign key, checked only at `COMMIT`), every read
/// of the group gets the error, none returns entries, and none of their records is stored; the
/// read before them, and the one after, are unaffected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_group_commit_fails_every_read_of_the_group_and_records_none() {
    use std::time::Duration;

    use recruit_domain::{TimeWindow, Uuid};
    use recruit_ports::testkit::{ORG_A, record, t, world};
    use recruit_ports::{Import, Ledgers, PrivacyLogQuery};

    let store = fresh().await;
    store.import(&world()).await.unwrap();
    raw(&store)
        .batch_execute(
            "CREATE TABLE refusal_targets (x TEXT PRIMARY KEY);
             CREATE TABLE refusals (x TEXT REFERENCES refusal_targets (x)
                 DEFERRABLE INITIALLY DEFERRED);
             CREATE TRIGGER refuse_group AFTER INSERT ON api_audit_log
             WHEN NEW.request_id = 'req-13'
             BEGIN INSERT INTO refusals VALUES ('injected failure of the shared commit'); END;",
        )
        .unwrap();
    let query = PrivacyLogQuery {
        organization_id: recruit_domain::Id::from_uuid(Uuid::from_u128(ORG_A)),
        window: TimeWindow::new(t(0), t(100_000)).unwrap(),
        ids: None,
        after: None,
        filter: Default::default(),
        limit: 5,
    };
    let read = |n: u128| {
        let (store, query) = (store.store.clone(), query.clone());
        tokio::spawn(async move { store.read_privacy_audit_logs(&query, &record(ORG_A, n)).await })
    };
    // Another connection holds the database's write lock: the first read's group waits on it.
    let mut holder = raw(&store);
    holder.batch_execute("BEGIN IMMEDIATE").unwrap();
    let first = read(1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let group: Vec<_> = (10..20).map(read).collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    holder.batch_execute("COMMIT").unwrap();

    let first = first.await.unwrap().expect("the read before the group is recorded");
    assert_eq!(first.entries.len(), 5);
    for read in group {
        read.await.unwrap().expect_err("every read of the failed group fails");
    }
    let after = read(2).await.unwrap().expect("the read after the group is recorded");
    assert_eq!(after.entries.len(), 5);

    #[derive(QueryableByName)]
    struct RequestId {
        #[diesel(sql_type = diesel::sql_types::Text)]
        request_id: String,
    }
    let stored: Vec<String> =
        diesel::sql_query("SELECT request_id FROM api_audit_log ORDER BY position")
            .load::<RequestId>(&mut raw(&store))
            .unwrap()
            .into_iter()
            .map(|r| r.request_id)
            .collect();
    assert_eq!(stored, ["req-1", "req-2"], "only the reads outside the group are recorded");
}
