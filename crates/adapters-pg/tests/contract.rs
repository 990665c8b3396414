//! The contract suite of `recruit-ports` on the PostgreSQL adapter, and what this adapter
//! promises beyond it: the page query is an index scan at any depth, the ledgers refuse change,
//! migrations are idempotent, a statement past its deadline is a timeout.
//!
//! Each test gets a fresh database on a throwaway cluster (or on `DATABASE_URL`).

use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use recruit_adapters_pg::testkit::TestDatabase;
use recruit_adapters_pg::{PgBackend, PgConfig, PgStore};
use recruit_domain::{IdFilter, TimeWindow, Timestamp, Uuid};
use recruit_ports::testkit::{ORG_A, ORG_B, world};
use recruit_ports::{Import, LedgerPosition, Maintenance, PrivacyLogQuery, StoreError};

recruit_ports::store_contract_tests!(TestDatabase::fresh());

async fn raw(db: &TestDatabase) -> AsyncPgConnection {
    AsyncPgConnection::establish(db.url()).await.expect("connects")
}

#[derive(diesel::QueryableByName)]
struct Position {
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    access_time: chrono::DateTime<chrono::Utc>,
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    id: Uuid,
}

/// 100 000 ledger entries, alternating between the world's two organizations.
async fn big_ledger(db: &TestDatabase) {
    db.import(&world()).await.unwrap();
    let (a, b) = (Uuid::from_u128(ORG_A), Uuid::from_u128(ORG_B));
    raw(db)
        .await
        .batch_execute(&format!(
            "INSERT INTO privacy_audit_logs (organization_id, id, access_time, account_id, ip_addresses, \
               subject_type, subject_user_id, access_data, access_menu, access_menu_path, activity_category)
             SELECT CASE WHEN g % 2 = 0 THEN '{a}'::uuid ELSE '{b}'::uuid END, gen_random_uuid(),
                    timestamptz '2025-06-01 00:00:00+00' + (g / 3) * interval '1 minute',
                    gen_random_uuid(), '{{203.0.113.7}}', 'EMPLOYEE', gen_random_uuid(), '{{NAME}}',
                    'CANDIDATE_PROFILE', 'Candidates', 'READ'
             FROM generate_series(1, 100000) AS g;
             ANALYZE privacy_audit_logs;"
        ))
        .await
        .unwrap();
}

fn year() -> TimeWindow {
    TimeWindow::new(
        Timestamp::parse("2025-05-01T00:00:00Z").unwrap(),
        Timestamp::parse("2026-05-01T00:00:00Z").unwrap(),
    )
    .unwrap()
}

/// The page query's plan on the partitioned ledger: in each monthly partition it touches, one
/// range scan of the page index (named after the partition), merged in order, never a sort
/// of the window; and no partition recorded before the window can begin.
fn assert_index_scan_without_sort(plan: &str, what: &str) {
    let scans: Vec<&str> = plan.lines().filter(|l| l.contains("Index Scan")).collect();
    assert!(!scans.is_empty(), "{what}: no index scan:\n{plan}");
    for scan in &scans {
        assert!(
            scan.contains("organization_id_access_time_id_idx")
                || scan.contains("privacy_audit_logs_page"),
            "{what}: not the page index: {scan}\n{plan}"
        );
    }
    // A node that sorts (`Sort`, `Incremental Sort`), not a Merge Append's `Sort Key`.
    let sorts = plan
        .lines()
        .map(|l| l.trim_start().trim_start_matches("->  "))
        .filter(|l| l.starts_with("Sort  (") || l.starts_with("Incremental Sort"));
    assert_eq!(sorts.count(), 0, "{what}: the plan sorts:\n{plan}");
    assert!(!plan.contains("Seq Scan"), "{what}: the plan scans the table:\n{plan}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_query_is_an_index_scan_without_sort_at_the_first_page_and_deep() {
    let db = TestDatabase::fresh().await;
    big_ledger(&db).await;
    let org = recruit_domain::OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let first = PrivacyLogQuery {
        organization_id: org,
        window: year(),
        ids: None,
        after: None,
        filter: Default::default(),
        limit: 100,
    };
    let plan = db.explain_privacy_page(&first, true).await.unwrap();
    assert_index_scan_without_sort(&plan, "first page");
    // Months recorded before the window starts are not read at all.
    let old = "SELECT recruitd_ledger_partitions('privacy_audit_logs', \
               now() - interval '30 months', now() - interval '26 months')";
    raw(&db).await.batch_execute(old).await.unwrap();
    let plan = db.explain_privacy_page(&first, true).await.unwrap();
    let month = |ago: i64| {
        let t = chrono::Utc::now() - chrono::TimeDelta::days(ago * 30);
        format!("privacy_audit_logs_{}", t.format("%Y_%m"))
    };
    assert!(!plan.contains(&month(28)), "a partition before the window is read:\n{plan}");
    assert_index_scan_without_sort(&plan, "first page, with old months");

    // A position 40 000 entries deep, half the organization's ledger.
    let deep: Position = diesel::sql_query(format!(
        "SELECT access_time, id FROM privacy_audit_logs WHERE organization_id = '{}'
         ORDER BY access_time DESC, id DESC OFFSET 40000 LIMIT 1",
        org.uuid()
    ))
    .get_result(&mut raw(&db).await)
    .await
    .unwrap();
    let after = LedgerPosition {
        access_time: Timestamp::from_datetime(deep.access_time).unwrap(),
        id: recruit_domain::PrivacyAuditLogId::from_uuid(deep.id),
    };
    let deep_query = PrivacyLogQuery { after: Some(after), ..first.clone() };
    let plan = db.explain_privacy_page(&deep_query, true).await.unwrap();
    assert_index_scan_without_sort(&plan, "deep page");
    // The deep page reads one page and one more row, not the 40 000 before it.
    assert!(plan.contains("rows=101 "), "the deep page should read 101 rows:\n{plan}");

    // Outside work hours over the year: a span every night and weekend, hundreds of them,
    // tested as one value per row while the page index is read in order.
    let night = |day: i64| {
        let start = year().gte().unix_micros() + day * 86_400_000_000;
        let at = |hour: i64| Timestamp::from_unix_micros(start + hour * 3_600_000_000).unwrap();
        (at(9), at(24))
    };
    let spans: Vec<_> = (0..365).map(night).collect();
    let outside = PrivacyLogQuery {
        filter: recruit_ports::EntryFilter { spans: Some(spans), ..Default::default() },
        ..first.clone()
    };
    let plan = db.explain_privacy_page(&outside, true).await.unwrap();
    assert_index_scan_without_sort(&plan, "outside work hours");
    assert!(!plan.contains("BitmapOr"), "a scan for each span:\n{plan}");
    assert!(plan.contains("InitPlan 1"), "the spans not made once:\n{plan}");
    assert!(plan.contains("rows=101 "), "the page should read 101 rows:\n{plan}");

    // By address: one every entry has is read by the page index in order, as the first page;
    // one that thirty have, or none, by the addresses' index, without reading the window.
    raw(&db)
        .await
        .batch_execute(&format!(
            "INSERT INTO privacy_audit_logs (organization_id, id, access_time, account_id, \
               ip_addresses, subject_type, subject_user_id, access_data, access_menu, \
               access_menu_path, activity_category)
             SELECT '{}'::uuid, gen_random_uuid(), timestamptz '2025-07-01 00:00:00+00' + g * \
                    interval '1 day', gen_random_uuid(), '{{198.51.100.99}}', 'EMPLOYEE', \
                    gen_random_uuid(), '{{NAME}}', 'CANDIDATE_PROFILE', 'Candidates', 'READ'
             FROM generate_series(1, 30) AS g;
             ANALYZE privacy_audit_logs;",
            org.uuid()
        ))
        .await
        .unwrap();
    let from = |address: &str| PrivacyLogQuery {
        filter: recruit_ports::EntryFilter {
            ip_address: Some(address.into()),
            ..Default::default()
        },
        ..first.clone()
    };
    let plan = db.explain_privacy_page(&from("203.0.113.7"), true).await.unwrap();
    assert_index_scan_without_sort(&plan, "a common address");
    assert!(plan.contains("rows=101 "), "the page should read 101 rows:\n{plan}");
    for (address, found) in [("198.51.100.99", 30), ("192.0.2.1", 0)] {
        let plan = db.explain_privacy_page(&from(address), true).await.unwrap();
        assert!(
            plan.contains("privacy_audit_logs_addresses") || plan.contains("ip_addresses_idx"),
            "{address}: not the addresses' index:\n{plan}"
        );
        assert!(
            plan.lines().filter(|l| l.contains("Seq Scan")).all(|l| l.contains(" rows=0 loops=")),
            "{address}: the window is scanned:\n{plan}"
        );
        let top = plan.lines().next().unwrap_or_default();
        assert!(top.contains(&format!("rows={found} loops=1")), "{address}: {found}:\n{plan}");
    }

    let filter = IdFilter::new(
        (1..=50).map(|n| recruit_domain::PrivacyAuditLogId::from_uuid(Uuid::from_u128(n))),
    )
    .unwrap();
    let filtered = PrivacyLogQuery { ids: Some(filter), ..first };
    let plan = db.explain_privacy_page(&filtered, true).await.unwrap();
    // A partition with entries is read by its index; an empty one may be "scanned".
    let scanned = plan.lines().filter(|l| l.contains("Seq Scan"));
    assert!(
        scanned.clone().all(|l| l.contains(" rows=0 loops=")),
        "the id filter scans a partition with entries:\n{plan}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledgers_refuse_update_delete_and_truncate() {
    let db = TestDatabase::fresh().await;
    db.import(&world()).await.unwrap();
    let mut c = raw(&db).await;
    for table in ["privacy_audit_logs", "api_audit_log", "tool_audit_log"] {
        for sql in [
            format!("UPDATE {table} SET id = id"),
            format!("DELETE FROM {table}"),
            format!("TRUNCATE {table}"),
        ] {
            // An empty table has no row for a row trigger to fire on, so each statement is
            // checked on the privacy ledger by its effect and on all by TRUNCATE's trigger.
            let result = c.batch_execute(&sql).await;
            if table == "privacy_audit_logs" || sql.starts_with("TRUNCATE") {
                let err = result.expect_err(&sql).to_string();
                assert!(err.contains("append-only"), "{sql}: {err}");
            }
        }
    }
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let count: Count = diesel::sql_query("SELECT count(*) AS n FROM privacy_audit_logs")
        .get_result(&mut c)
        .await
        .unwrap();
    assert_eq!(count.n, 16);
}

/// Jobs stored before their settings were kept resolved (migration 000008) get them when the
/// store migrates, resolved by the domain's rule: every job reads as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_of_jobs_stored_before_are_resolved_when_the_store_migrates() {
    use recruit_ports::Directory;
    let db = TestDatabase::fresh().await;
    let doc = world();
    db.import(&doc).await.unwrap();
    let mut read = vec![];
    for j in &doc.jobs {
        read.push(db.job(j.organization_id, j.id).await.unwrap());
    }
    raw(&db).await.batch_execute("DELETE FROM job_resolved_settings").await.unwrap();
    let lost = db.job(doc.jobs[0].organization_id, doc.jobs[0].id).await;
    assert!(matches!(lost, Err(StoreError::NotFound)), "{lost:?}");
    assert_eq!(db.migrate().await.unwrap(), 0);
    for (j, before) in doc.jobs.iter().zip(read) {
        assert_eq!(db.job(j.organization_id, j.id).await.unwrap(), before);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_are_idempotent() {
    let db = TestDatabase::fresh().await;
    assert_eq!(db.migrate().await.unwrap(), 0);
    db.ping().await.unwrap();
}

/// A store on a port where nothing listens.
fn unreachable() -> PgStore {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = PgConfig::new(format!("postgres://postgres@127.0.0.1:{port}/nothing"));
    config.connect_timeout = Duration::from_secs(2);
    PgBackend::connect(&config).unwrap()
}

/// A database holding the world, and a store on it whose statements may run 50 ms.
async fn with_short_deadline() -> (TestDatabase, PgStore) {
    let db = TestDatabase::fresh().await;
    db.import(&world()).await.unwrap();
    let mut config = PgConfig::new(db.url());
    config.statement_timeout = Duration::from_millis(50);
    let store = PgBackend::connect(&config).unwrap();
    (db, store)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_past_its_deadline_is_a_timeout() {
    let (db, store) = with_short_deadline().await;
    // Hold a lock the read needs, so its statement waits past the deadline.
    let mut blocker = raw(&db).await;
    blocker
        .batch_execute("BEGIN; LOCK TABLE api_audit_log IN ACCESS EXCLUSIVE MODE;")
        .await
        .unwrap();
    let org = recruit_domain::OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let query = PrivacyLogQuery {
        organization_id: org,
        window: year(),
        ids: None,
        after: None,
        filter: Default::default(),
        limit: 5,
    };
    use recruit_ports::Ledgers;
    let result =
        store.read_privacy_audit_logs(&query, &recruit_ports::testkit::record(ORG_A, 1)).await;
    assert!(matches!(result, Err(StoreError::Timeout)), "{result:?}");
    blocker.batch_execute("ROLLBACK").await.unwrap();
}

/// An export of ORG_A's privacy ledger on `store`, its count and its entries read through;
/// while the count runs, a lock on the ledger is held for `held`.
async fn export_while_locked(
    db: &TestDatabase,
    store: &PgStore,
    held: Duration,
) -> Result<(u64, usize), StoreError> {
    use futures_util::StreamExt;
    use recruit_ports::Ledgers;
    let mut blocker = raw(db).await;
    blocker
        .batch_execute("BEGIN; LOCK TABLE privacy_audit_logs IN ACCESS EXCLUSIVE MODE;")
        .await
        .unwrap();
    let release = tokio::spawn(async move {
        tokio::time::sleep(held).await;
        blocker.batch_execute("ROLLBACK").await.unwrap();
    });
    let query = recruit_ports::testkit::privacy_export(ORG_A);
    let export = store.export(&query).await;
    release.await.unwrap();
    let export = export?;
    let entries: Vec<_> = export.entries.collect().await;
    assert!(entries.iter().all(Result::is_ok), "{entries:?}");
    Ok((export.count, entries.len()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_counts_under_its_own_limit_not_a_statements() {
    // Statements of 50 ms; the count waits 600 ms for the ledger, within the export's limit.
    let (db, store) = with_short_deadline().await;
    let (count, read) = export_while_locked(&db, &store, Duration::from_millis(600)).await.unwrap();
    let stored = world()
        .privacy_audit_logs
        .iter()
        .filter(|e| e.organization_id.uuid() == Uuid::from_u128(ORG_A))
        .count();
    assert_eq!((count, read), (stored as u64, stored));

    // Past the export's own limit, it is a timeout.
    let mut config = PgConfig::new(db.url());
    config.export_statement_timeout = Some(Duration::from_millis(200));
    let limited = PgBackend::connect(&config).unwrap();
    let result = export_while_locked(&db, &limited, Duration::from_millis(1500)).await;
    assert!(matches!(result, Err(StoreError::Timeout)), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_unavailable_not_a_hang() {
    let store = unreachable();
    let started = std::time::Instant::now();
    let result = store.ping().await;
    assert!(matches!(result, Err(StoreError::Unavailable(_))), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_batch_for_an_unreachable_server_is_unavailable() {
    let store = unreachable();
    let batch = recruit_ports::ImportDocument {
        privacy_audit_logs: world().privacy_audit_logs,
        ..Default::default()
    };
    let result = store.import(&batch).await;
    assert!(
        matches!(result, Err(recruit_ports::ImportError::Store(StoreError::Unavailable(_)))),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_batch_past_the_statement_deadline_is_a_timeout_and_writes_nothing() {
    let (db, store) = with_short_deadline().await;
    // Hold a lock COPY needs, so it waits past the deadline.
    let mut blocker = raw(&db).await;
    blocker
        .batch_execute("BEGIN; LOCK TABLE privacy_audit_logs IN ACCESS EXCLUSIVE MODE;")
        .await
        .unwrap();
    let entries = (100_u8..110)
        .map(|n| {
            recruit_ports::testkit::ledger_entry(
                ORG_A,
                n.into(),
                recruit_ports::testkit::t(n.into()),
            )
        })
        .collect();
    let batch = recruit_ports::ImportDocument { privacy_audit_logs: entries, ..Default::default() };
    let result = store.import(&batch).await;
    assert!(
        matches!(result, Err(recruit_ports::ImportError::Store(StoreError::Timeout))),
        "{result:?}"
    );
    blocker.batch_execute("ROLLBACK").await.unwrap();
    // Nothing was written: the same batch goes in now.
    assert_eq!(db.import(&batch).await.unwrap().privacy_audit_logs, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_pool_is_unavailable_after_the_wait_timeout() {
    use recruit_ports::{Directory, Ledgers};
    let db = TestDatabase::fresh().await;
    db.import(&world()).await.unwrap();
    let mut config = PgConfig::new(db.url());
    config.pool_size = 1;
    config.wait_timeout = Duration::from_millis(200);
    let store = PgBackend::connect(&config).unwrap();
    // The only connection waits for a lock held here, so the next caller finds none free.
    let mut blocker = raw(&db).await;
    blocker
        .batch_execute("BEGIN; LOCK TABLE privacy_audit_logs IN ACCESS EXCLUSIVE MODE;")
        .await
        .unwrap();
    let org = recruit_domain::OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let query = PrivacyLogQuery {
        organization_id: org,
        window: year(),
        ids: None,
        after: None,
        filter: Default::default(),
        limit: 5,
    };
    let holder = {
        let store = store.clone();
        tokio::spawn(async move {
            store.read_privacy_audit_logs(&query, &recruit_ports::testkit::record(ORG_A, 1)).await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    let result = store.organizations().await;
    assert!(matches!(result, Err(StoreError::Unavailable(_))), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    blocker.batch_execute("ROLLBACK").await.unwrap();
    // Once the lock is gone the held read completes and the store recovers by itself.
    assert_eq!(holder.await.unwrap().unwrap().entries.len(), 5);
    assert!(store.organizations().await.is_ok());
}

/// Reads of the privacy ledger are recorded in groups: while one group waits, the reads made
/// meanwhile form the next, which commits as one. When that shared commit fails, every read of
/// the group gets the error, none returns entries, and none of their records is stored; the
/// reads before and after them are unaffected.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_group_commit_fails_every_read_of_the_group_and_records_none() {
    use recruit_ports::Ledgers;
    use recruit_ports::testkit::record;
    let db = TestDatabase::fresh().await;
    db.import(&world()).await.unwrap();
    // The shared commit fails when the group holds the record of request `req-13`.
    db.batch_execute(
        "CREATE FUNCTION refuse_group() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'injected failure of the shared commit'; END; $$;
         CREATE CONSTRAINT TRIGGER refuse_group AFTER INSERT ON api_audit_log
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.request_id = 'req-13')
         EXECUTE FUNCTION refuse_group();",
    )
    .await;
    let query = PrivacyLogQuery {
        organization_id: recruit_domain::Id::from_uuid(Uuid::from_u128(ORG_A)),
        window: TimeWindow::new(recruit_ports::testkit::t(0), recruit_ports::testkit::t(100_000))
            .unwrap(),
        ids: None,
        after: None,
        filter: Default::default(),
        limit: 5,
    };
    let store = db.store().clone();
    // Another session holds the head of the organization's API ledger chain: the first read's
    // group waits on it.
    let mut holder = raw(&db).await;
    holder.batch_execute("BEGIN").await.unwrap();
    holder
        .batch_execute(&format!(
            "INSERT INTO ledger_heads VALUES ('{}', 'api', 0, '\\x{}') ON CONFLICT DO NOTHING;
             SELECT 1 FROM ledger_heads WHERE organization_id = '{0}' AND ledger = 'api' FOR UPDATE",
            Uuid::from_u128(ORG_A),
            "00".repeat(32)
        ))
        .await
        .unwrap();
    let first = {
        let (store, query) = (store.clone(), query.clone());
        tokio::spawn(async move { store.read_privacy_audit_logs(&query, &record(ORG_A, 1)).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let group: Vec<_> = (10..20)
        .map(|n| {
            let (store, query) = (store.clone(), query.clone());
            tokio::spawn(
                async move { store.read_privacy_audit_logs(&query, &record(ORG_A, n)).await },
            )
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    holder.batch_execute("COMMIT").await.unwrap();

    let first = first.await.unwrap().expect("the read before the group is recorded");
    assert_eq!(first.entries.len(), 5);
    for read in group {
        let err = read.await.unwrap().expect_err("every read of the failed group fails");
        assert!(err.to_string().contains("injected failure"), "{err}");
    }
    // The recorder goes on after a failed group, on a connection of its own again.
    let after = store.read_privacy_audit_logs(&query, &record(ORG_A, 30)).await;
    assert_eq!(after.expect("the read after the group is recorded").entries.len(), 5);
    let stored: Vec<String> =
        diesel::sql_query("SELECT request_id FROM api_audit_log ORDER BY position")
            .load::<RequestId>(&mut raw(&db).await)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.request_id)
            .collect();
    assert_eq!(stored, ["req-1", "req-30"], "only the reads before and after are recorded");
}

#[derive(diesel::QueryableByName)]
struct RequestId {
    #[diesel(sql_type = diesel::sql_types::Text)]
    request_id: String,
}

/// A batch whose connection dies between taking its idempotency key and its commit (here:
/// terminated while it waits for the organization's chain head, which another session holds)
/// leaves nothing: the same write with the same key is granted and written at once, with no
/// claim to wait out.
#[tokio::test(flavor = "multi_thread")]
async fn a_write_whose_connection_dies_before_its_commit_leaves_its_key_free() {
    use recruit_ports::{Claim, Ledgers};
    let db = TestDatabase::fresh().await;
    db.import(&world()).await.unwrap();
    let store = db.store().clone();
    let write = one_entry_write("cut", 70);
    let claim = write.claim.clone();
    let mut holder = raw(&db).await;
    holder
        .batch_execute(&format!(
            "BEGIN; SELECT 1 FROM ledger_heads WHERE organization_id = '{}' AND ledger = 'privacy' \
             FOR UPDATE",
            Uuid::from_u128(ORG_A)
        ))
        .await
        .unwrap();
    let cut = {
        let (store, write) = (store.clone(), write.clone());
        tokio::spawn(async move { store.record_privacy_accesses(&write).await })
    };
    // The write waits on the chain head, its key taken; its connection is then cut.
    #[derive(diesel::QueryableByName)]
    struct Terminated {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut terminated = 0;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let killed: Terminated = diesel::sql_query(
            // With a timeout, termination waits for the backend to exit, so that its
            // transaction's advisory lock on the key is gone before the retry below.
            "SELECT count(pg_terminate_backend(pid, 10000)) AS n FROM pg_stat_activity \
             WHERE wait_event_type = 'Lock' AND datname = current_database() \
             AND pid <> pg_backend_pid()",
        )
        .get_result(&mut raw(&db).await)
        .await
        .unwrap();
        terminated = killed.n;
        if terminated > 0 {
            break;
        }
    }
    assert_eq!(terminated, 1, "the write never waited on the chain head");
    let result = cut.await.unwrap();
    assert!(result.is_err(), "{result:?}");
    holder.batch_execute("ROLLBACK").await.unwrap();

    assert_eq!(store.idempotency_key(&claim).await.unwrap(), Claim::Granted);
    assert_eq!(store.record_privacy_accesses(&write).await.unwrap().claim, Claim::Granted);
    assert!(matches!(store.idempotency_key(&claim).await.unwrap(), Claim::Completed(_)));
}

/// The job and organization reads' connections, each keeping its statements prepared, are
/// ended by the server between reads (a restart, an administrator): a read then finds its
/// connection gone and is `Unavailable` at worst, and the next one reads again on a new
/// connection, which prepares the statements anew.
#[tokio::test(flavor = "multi_thread")]
async fn reads_on_connections_the_server_ended_recover_at_the_next_read() {
    use recruit_ports::Directory;
    let db = TestDatabase::fresh().await;
    db.import(&world()).await.unwrap();
    let mut config = PgConfig::new(db.url());
    config.application_name = "direct-reads".into();
    let store = PgBackend::connect(&config).unwrap();
    let org = recruit_domain::OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let expected = store.organization(org).await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Terminated {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    for round in 0..3 {
        let killed: Terminated = diesel::sql_query(
            "SELECT count(pg_terminate_backend(pid, 10000)) AS n FROM pg_stat_activity \
             WHERE application_name = 'direct-reads'",
        )
        .get_result(&mut raw(&db).await)
        .await
        .unwrap();
        assert!(killed.n >= 1, "round {round}: no connection to end");
        match store.organization(org).await {
            Ok(read) => assert_eq!(read, expected),
            Err(e) => assert!(matches!(e, StoreError::Unavailable(_)), "round {round}: {e:?}"),
        }
        assert_eq!(store.organization(org).await.unwrap(), expected, "round {round}");
    }
}

/// A write on a connection to a database that takes no writes (a primary demoted under the
/// pool's connections) is `Unavailable`, for the client to retry once the primary moved, not
/// an error of the server: both for a batch of accesses and for the record of a read.
#[tokio::test(flavor = "multi_thread")]
async fn a_write_on_a_standby_is_unavailable_not_an_error() {
    use recruit_ports::Ledgers;
    use recruit_ports::testkit::record;
    let db = TestDatabase::fresh().await;
    db.import(&world()).await.unwrap();
    // New sessions start read-only, as they would on a standby.
    raw(&db)
        .await
        .batch_execute(
            "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET \
             default_transaction_read_only = on', current_database()); END $$",
        )
        .await
        .unwrap();
    let store = PgBackend::connect(&PgConfig::new(db.url())).unwrap();
    let write = one_entry_write("standby", 80);
    let written = store.record_privacy_accesses(&write).await;
    assert!(matches!(written, Err(StoreError::Unavailable(_))), "{written:?}");
    let recorded = store.record_read(&record(ORG_A, 2), 0).await;
    assert!(matches!(recorded, Err(StoreError::Unavailable(_))), "{recorded:?}");
}

/// A write of one entry (`n` of the world's organization A) with the idempotency key `key`.
fn one_entry_write(key: &str, n: u128) -> recruit_ports::AccessesWrite {
    use recruit_ports::testkit::{ledger_entry, record, t};
    let now = Timestamp::now();
    let claim = recruit_ports::KeyClaim {
        organization_id: recruit_domain::Id::from_uuid(Uuid::from_u128(ORG_A)),
        key: key.into(),
        fingerprint: [7; 32],
        now,
        expires_at: now.checked_add_duration(Duration::from_secs(86_400)).unwrap(),
    };
    let mut audit = record(ORG_A, n);
    audit.api.operation = "recordPrivacyAccesses".into();
    recruit_ports::AccessesWrite {
        entries: vec![ledger_entry(ORG_A, n, t(90))],
        record: audit,
        claim,
        response: recruit_ports::StoredResponse { status: 201, body: b"{}".to_vec() },
    }
}

/// The review's facts on `config`'s store for October 2025 in UTC, by quarter hours.
fn october(organization: u128) -> recruit_ports::review::ReviewQuery {
    let at = |s: &str| s.parse::<Timestamp>().unwrap();
    recruit_ports::review::ReviewQuery {
        organization: recruit_domain::OrganizationId::from_uuid(Uuid::from_u128(organization)),
        month: "2025-10".into(),
        from: at("2025-10-01T00:00:00Z"),
        to: at("2025-11-01T00:00:00Z"),
        previous_from: at("2025-09-01T00:00:00Z"),
        slot_micros: 900_000_000,
        download: "DOWNLOAD",
        ledger_export: "exportPrivacyAuditLogs",
    }
}

/// A review reads its counts and its lists on two connections when the pool has one to spare:
/// both read one snapshot, so while downloads are being recorded, every review lists exactly
/// the downloads it counts. With no connection to spare, the same facts come from one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviews_counts_and_lists_are_of_one_snapshot_while_entries_are_written() {
    use recruit_ports::Ledgers;
    let db = TestDatabase::fresh().await;
    db.import(&world()).await.unwrap();
    let org = Uuid::from_u128(ORG_A);
    let insert = |n: usize| {
        format!(
            "INSERT INTO privacy_audit_logs (organization_id, id, access_time, account_id, \
               ip_addresses, subject_type, subject_user_id, access_data, access_menu, \
               access_menu_path, activity_category)
             SELECT '{org}', gen_random_uuid(),
                    timestamptz '2025-10-01 00:00:00+00' + (random() * 30) * interval '1 day',
                    gen_random_uuid(), ARRAY['203.0.113.' || (g % 200)], 'EMPLOYEE',
                    gen_random_uuid(), '{{NAME}}', 'CANDIDATE_PROFILE', 'Candidates', 'DOWNLOAD'
             FROM generate_series(1, {n}) AS g"
        )
    };
    raw(&db).await.batch_execute(&insert(2_000)).await.unwrap();
    let store = PgBackend::connect(&PgConfig::new(db.url())).unwrap();
    let query = october(ORG_A);
    let counted = |facts: &recruit_ports::review::ReviewFacts| -> u64 {
        facts.slots.iter().filter(|s| s.category == "DOWNLOAD").map(|s| s.entries).sum()
    };
    // Quiet: one connection gives what two give.
    let mut single = PgConfig::new(db.url());
    single.pool_size = 1;
    let single = PgBackend::connect(&single).unwrap();
    let (mut one, mut two) =
        (single.review_facts(&query).await.unwrap(), store.review_facts(&query).await.unwrap());
    for facts in [&mut one, &mut two] {
        facts.new_addresses.sort();
        facts.slots.sort_by_key(|s| (s.account, s.slot));
    }
    assert_eq!(one, two);
    assert_eq!(counted(&two), 2_000);
    assert_eq!(two.downloads.len(), 2_000);
    // Busy: downloads committed one after the other while reviews are read.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, mut conn, statement) = (stop.clone(), raw(&db).await, insert(1));
        tokio::spawn(async move {
            let mut written = 0;
            while !std::sync::atomic::AtomicBool::load(&stop, std::sync::atomic::Ordering::Relaxed)
            {
                conn.batch_execute(&statement).await.unwrap();
                written += 1;
            }
            written
        })
    };
    let mut reviews = 0;
    let started = std::time::Instant::now();
    while reviews < 20 || started.elapsed() < Duration::from_secs(2) {
        let facts = store.review_facts(&query).await.unwrap();
        assert_eq!(
            counted(&facts),
            facts.downloads.len() as u64,
            "review {reviews}: the downloads counted and those listed are of two snapshots"
        );
        reviews += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written = writer.await.unwrap();
    assert!(written > reviews, "the writer kept up: {written} writes, {reviews} reviews");
}
