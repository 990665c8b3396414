//! The ledgers' hash chains, end to end on both stores: `recruitd audit verify` finds nothing
//! on ledgers written by the server, and names every kind of tampering done behind its back
//! with raw SQL (triggers off): a changed field, a deleted entry, a forged one, two swapped,
//! and a truncated tail; with signed checkpoints, a cut the chain's head was moved back to
//! hide, and a forged checkpoint.

use std::io::Write;
use std::process::Command;

use recruit_ports::testkit::{ORG_A, ORG_B, ledger_entry, t, world};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_recruitd");

/// How many entries the test appends to organization A's privacy ledger.
const APPENDED: i64 = 12;

/// `recruitd audit verify --json` on the database: whether it succeeded, and its reports.
fn verify(url: &str) -> (bool, Vec<Value>) {
    let out = Command::new(BIN)
        .args(["--database-url", url, "audit", "verify", "--json"])
        .output()
        .expect("runs");
    let reports = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect();
    (out.status.success(), reports)
}

fn run(url: &str, args: &[&str]) {
    let out = Command::new(BIN).args(["--database-url", url]).args(args).output().expect("runs");
    assert!(out.status.success(), "recruitd {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Imports the test world, then twelve more entries of organization A one batch at a time;
/// returns the ids of those twelve, in the order recorded.
fn write_ledgers(url: &str, dir: &std::path::Path) -> Vec<recruit_domain::Uuid> {
    let document = dir.join("world.json");
    std::fs::write(&document, serde_json::to_string(&world()).unwrap()).unwrap();
    run(url, &["import", document.to_str().unwrap()]);
    let ledger = dir.join("more.ndjson");
    let mut file = std::fs::File::create(&ledger).unwrap();
    let mut ids = vec![];
    for n in 0..APPENDED {
        let mut entry = ledger_entry(ORG_A, 1, t(1_000 + n));
        let id =
            recruit_domain::Uuid::from_u128(0xC4A1_0000_0000_0000_0000_0000_0000_0000 | n as u128);
        entry.entry.id = recruit_domain::PrivacyAuditLogId::from_uuid(id);
        ids.push(id);
        writeln!(file, "{}", serde_json::to_string(&entry).unwrap()).unwrap();
    }
    drop(file);
    run(url, &["import", "--batch-size", "5", ledger.to_str().unwrap()]);
    ids
}

/// The report of organization A's privacy chain.
fn privacy_of_a(reports: &[Value]) -> &Value {
    let org = recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A));
    reports
        .iter()
        .find(|r| r["ledger"] == "privacy" && r["organization_id"] == org.to_string())
        .expect("organization A's privacy chain is verified")
}

/// Tampers with organization A's privacy ledger, whose head is at `head`, through `sql` (raw
/// statements, triggers off), `org` being A's id and `id(n)` a fresh id as SQL literals of the
/// store; then checks that verify names each change.
fn tamper_and_verify(
    url: &str,
    head: i64,
    org: &str,
    id: impl Fn(u128) -> String,
    sql: impl Fn(&str),
) {
    let at = |k: i64| head - APPENDED + k;
    let columns = "organization_id, id, access_time, account_id, ip_addresses, subject_type, \
                   subject_user_id, subject_candidate_id, bulk_count, query_type, query_ids, \
                   query_values, query_scope, access_data, access_menu, access_menu_path, \
                   activity_category, position, prev_hash, hash";
    let forged = |id: &str, position: i64| {
        columns
            .replacen("organization_id, id,", &format!("organization_id, {id},"), 1)
            .replace(", position,", &format!(", {position},"))
    };
    let (beyond, before) = (forged(&id(1), head + 5), forged(&id(2), 0));
    sql(&format!(
        "UPDATE privacy_audit_logs SET access_menu = 'forged' \
         WHERE organization_id = {org} AND position = {modified};
         DELETE FROM privacy_audit_logs WHERE organization_id = {org} AND position = {deleted};
         INSERT INTO privacy_audit_logs ({columns}) SELECT {beyond} FROM privacy_audit_logs \
         WHERE organization_id = {org} AND position = {copied};
         INSERT INTO privacy_audit_logs ({columns}) SELECT {before} FROM privacy_audit_logs \
         WHERE organization_id = {org} AND position = {copied};
         UPDATE privacy_audit_logs SET position = -1 WHERE organization_id = {org} AND position = {first};
         UPDATE privacy_audit_logs SET position = {first} WHERE organization_id = {org} AND position = {second};
         UPDATE privacy_audit_logs SET position = {second} WHERE organization_id = {org} AND position = -1;
         DELETE FROM privacy_audit_logs WHERE organization_id = {org} AND position > {kept} AND position <= {head};",
        modified = at(3),
        deleted = at(5),
        copied = at(2),
        first = at(8),
        second = at(9),
        kept = at(10),
    ));
    let (ok, reports) = verify(url);
    assert!(!ok, "verify fails when it finds anything");
    let findings: Vec<(String, Option<i64>, Option<i64>)> = privacy_of_a(&reports)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_owned(),
                f["position"].as_i64(),
                f["expected_position"].as_i64(),
            )
        })
        .collect();
    let expected: Vec<(String, Option<i64>, Option<i64>)> = vec![
        ("INSERTED".into(), Some(0), None),
        ("MODIFIED".into(), Some(at(3)), None),
        ("DELETED".into(), Some(at(5)), None),
        ("REORDERED".into(), Some(at(8)), Some(at(9))),
        ("REORDERED".into(), Some(at(9)), Some(at(8))),
        ("TRUNCATED".into(), Some(at(11)), Some(head)),
        ("INSERTED".into(), Some(head + 5), None),
    ];
    assert_eq!(findings, expected, "{reports:#?}");
    for other in reports.iter().filter(|r| !std::ptr::eq(*r, privacy_of_a(&reports))) {
        assert_eq!(other["findings"], serde_json::json!([]), "{other}");
    }
}

fn untouched_ledgers_verify(url: &str) -> i64 {
    let (ok, reports) = verify(url);
    assert!(ok, "{reports:#?}");
    for ledger in ["privacy", "api", "tool"] {
        assert!(reports.iter().any(|r| r["ledger"] == ledger) || ledger != "privacy");
    }
    for report in &reports {
        assert_eq!(report["findings"], serde_json::json!([]), "{report}");
        assert_eq!(report["entries"], report["head_position"], "{report}");
    }
    privacy_of_a(&reports)["head_position"].as_i64().unwrap()
}

#[test]
fn verify_names_every_kind_of_tampering_on_sqlite() {
    use diesel::Connection;
    use diesel::connection::SimpleConnection;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recruitd.db");
    let url = format!("sqlite://{}", path.display());
    write_ledgers(&url, dir.path());
    let head = untouched_ledgers_verify(&url);
    let org = format!("X'{:032x}'", ORG_A);
    let id = |n: u128| format!("X'{:032x}'", 0xF0F0_u128 + n);
    tamper_and_verify(&url, head, &org, id, |sql| {
        let mut c = diesel::SqliteConnection::establish(&path.to_string_lossy()).unwrap();
        c.batch_execute(
            "DROP TRIGGER privacy_audit_logs_no_update; DROP TRIGGER privacy_audit_logs_no_delete;",
        )
        .unwrap();
        c.batch_execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_names_every_kind_of_tampering_on_postgresql() {
    let db = recruit_adapters_pg::testkit::TestDatabase::fresh().await;
    let url = db.url().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let head = tokio::task::block_in_place(|| {
        write_ledgers(&url, dir.path());
        untouched_ledgers_verify(&url)
    });
    let org = format!("'{}'::uuid", recruit_domain::Uuid::from_u128(ORG_A));
    let id = |n: u128| format!("'{}'::uuid", recruit_domain::Uuid::from_u128(0xF0F0 + n));
    let handle = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| {
        tamper_and_verify(&url, head, &org, id, |sql| {
            handle.block_on(db.batch_execute(&format!(
                "ALTER TABLE privacy_audit_logs DISABLE TRIGGER USER; {sql}"
            )));
        });
    });
}

/// `recruitd` with `args` on the database: whether it succeeded, its output and its errors.
fn output(url: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN).args(["--database-url", url]).args(args).output().expect("runs");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8");
    (out.status.success(), text(out.stdout), text(out.stderr))
}

/// The findings of organization A's privacy chain in `audit verify --json` output.
fn findings_of_a(stdout: &str) -> Vec<(String, Option<i64>, Option<i64>)> {
    let reports: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    privacy_of_a(&reports)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_owned(),
                f["position"].as_i64(),
                f["expected_position"].as_i64(),
            )
        })
        .collect()
}

/// Signs checkpoints and keeps them in a file, then cuts the last three entries of
/// organization A's privacy chain and moves its head back to match, which the chain alone
/// cannot show, through `sql` (raw statements, triggers off; `org` is A's id as a literal of
/// the store). Verify names the cut from the checkpoints kept outside, and from the stored
/// ones; a stored checkpoint whose signature was forged is named; a kept checkpoint that was
/// altered proves nothing and stops verify.
fn checkpoints_show_a_cut_the_chain_hides(
    url: &str,
    dir: &std::path::Path,
    head: i64,
    org: &str,
    sql: impl Fn(&str),
) {
    let key = dir.join("checkpoint.pem");
    let key = key.to_str().unwrap();
    let (ok, said, _) = output(url, &["audit", "keygen", key]);
    assert!(ok && said.contains("BEGIN PUBLIC KEY"), "{said}");
    let (again, _, refused) = output(url, &["audit", "keygen", key]);
    assert!(!again && refused.contains("cannot create"), "a key is never overwritten");
    let (ok, signed, errors) = output(url, &["--checkpoint-key", key, "audit", "checkpoint"]);
    assert!(ok, "{errors}");
    let kept = dir.join("kept.ndjson");
    std::fs::write(&kept, &signed).unwrap();
    let kept = kept.to_str().unwrap();
    let (_, reports) = verify(url);
    assert_eq!(signed.lines().count(), reports.len(), "one checkpoint a chain: {signed}");
    let (_, again, _) = output(url, &["--checkpoint-key", key, "audit", "checkpoint"]);
    assert_eq!(again, "", "no chain moved since");
    let with_key = ["--checkpoint-key", key, "audit", "verify", "--json"];
    let (ok, out, _) = output(url, &with_key);
    assert!(ok, "{out}");
    assert!(out.lines().all(|l| l.contains("\"checkpoints\":1")), "{out}");

    // A new key: it signs every head again; checked with it alone, the old key's checkpoints
    // prove nothing and are named; with the old public key too, both are checked.
    let rotated = dir.join("rotated.pem");
    let rotated = rotated.to_str().unwrap();
    output(url, &["audit", "keygen", rotated]);
    let (ok, resigned, _) = output(url, &["--checkpoint-key", rotated, "audit", "checkpoint"]);
    assert!(ok && resigned.lines().count() == signed.lines().count(), "{resigned}");
    let (ok, out, _) = output(url, &["--checkpoint-key", rotated, "audit", "verify", "--json"]);
    assert!(!ok);
    assert_eq!(findings_of_a(&out), vec![("BAD_CHECKPOINT".to_owned(), Some(head), None)]);
    let with_key = ["--checkpoint-key", rotated, "audit", "verify", "--json", "--public-key", key];
    let (ok, out, _) = output(url, &with_key);
    assert!(ok, "{out}");
    assert!(out.lines().all(|l| l.contains("\"checkpoints\":2")), "{out}");

    let cut = head - 3;
    sql(&format!(
        "DELETE FROM privacy_audit_logs WHERE organization_id = {org} AND position > {cut};
         UPDATE ledger_heads SET position = {cut}, hash = (SELECT hash FROM privacy_audit_logs \
         WHERE organization_id = {org} AND position = {cut}) \
         WHERE organization_id = {org} AND ledger = 'privacy';"
    ));
    let (ok, reports) = verify(url);
    assert!(ok, "the chain alone shows nothing: {reports:#?}");
    let truncated = vec![("TRUNCATED".to_owned(), Some(cut + 1), Some(head))];
    let kept_args = [
        "audit",
        "verify",
        "--json",
        "--checkpoint",
        kept,
        "--public-key",
        key,
        "--public-key",
        rotated,
    ];
    let (ok, out, _) = output(url, &kept_args);
    assert!(!ok);
    assert_eq!(findings_of_a(&out), truncated, "from the checkpoints kept outside");
    let (ok, out, _) = output(url, &with_key);
    assert!(!ok);
    assert_eq!(findings_of_a(&out), truncated, "from the stored checkpoints");

    sql(&format!(
        "UPDATE ledger_checkpoints SET signature = 'AAAA' \
         WHERE organization_id = {org} AND ledger = 'privacy';"
    ));
    let (ok, out, _) = output(url, &with_key);
    assert!(!ok);
    let forged = ("BAD_CHECKPOINT".to_owned(), Some(head), None);
    assert_eq!(findings_of_a(&out), vec![forged.clone(), forged], "both keys' checkpoints");

    let altered =
        signed.replacen(&format!("\"position\":{head}"), &format!("\"position\":{cut}"), 1);
    assert_ne!(altered, signed);
    let forged = dir.join("forged.ndjson");
    std::fs::write(&forged, altered).unwrap();
    let forged = forged.to_str().unwrap();
    let (ok, _, errors) =
        output(url, &["audit", "verify", "--checkpoint", forged, "--public-key", key]);
    assert!(!ok && errors.contains("proves nothing"), "{errors}");
}

#[test]
fn checkpoints_show_a_cut_the_chain_hides_on_sqlite() {
    use diesel::Connection;
    use diesel::connection::SimpleConnection;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recruitd.db");
    let url = format!("sqlite://{}", path.display());
    write_ledgers(&url, dir.path());
    let head = untouched_ledgers_verify(&url);
    let org = format!("X'{:032x}'", ORG_A);
    checkpoints_show_a_cut_the_chain_hides(&url, dir.path(), head, &org, |sql| {
        let mut c = diesel::SqliteConnection::establish(&path.to_string_lossy()).unwrap();
        c.batch_execute(
            "DROP TRIGGER IF EXISTS privacy_audit_logs_no_delete;
             DROP TRIGGER IF EXISTS ledger_checkpoints_no_update;",
        )
        .unwrap();
        c.batch_execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn checkpoints_show_a_cut_the_chain_hides_on_postgresql() {
    let db = recruit_adapters_pg::testkit::TestDatabase::fresh().await;
    let url = db.url().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let head = tokio::task::block_in_place(|| {
        write_ledgers(&url, dir.path());
        untouched_ledgers_verify(&url)
    });
    let org = format!("'{}'::uuid", recruit_domain::Uuid::from_u128(ORG_A));
    let handle = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| {
        checkpoints_show_a_cut_the_chain_hides(&url, dir.path(), head, &org, |sql| {
            handle.block_on(db.batch_execute(&format!(
                "ALTER TABLE privacy_audit_logs DISABLE TRIGGER USER;
                 ALTER TABLE ledger_checkpoints DISABLE TRIGGER USER; {sql}"
            )));
        });
    });
}

/// Makes every stored entry look as stored before ledgers were chained: no position, no
/// hashes, no heads, and the migration's marker back.
const UNCHAIN: &str =
    "UPDATE privacy_audit_logs SET position = NULL, prev_hash = NULL, hash = NULL;
     UPDATE api_audit_log SET position = NULL, prev_hash = NULL, hash = NULL;
     UPDATE tool_audit_log SET position = NULL, prev_hash = NULL, hash = NULL;
     DELETE FROM ledger_heads;
     INSERT INTO ledger_chain_backfill VALUES (true);";

/// After [`UNCHAIN`], the next command's migration links every entry once: verify finds every
/// chain whole, each entry counted.
fn entries_are_linked_by_the_next_migration(url: &str, before: &[Value]) {
    let (ok, after) = verify(url);
    assert!(ok, "{after:#?}");
    let counts = |reports: &[Value]| {
        let mut c: Vec<(String, String, i64)> = reports
            .iter()
            .map(|r| {
                (
                    r["ledger"].as_str().unwrap().to_owned(),
                    r["organization_id"].as_str().unwrap().to_owned(),
                    r["entries"].as_i64().unwrap(),
                )
            })
            .collect();
        c.sort();
        c
    };
    assert_eq!(counts(&after), counts(before));
}

#[test]
fn entries_stored_before_chaining_are_linked_once_on_sqlite() {
    use diesel::Connection;
    use diesel::connection::SimpleConnection;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recruitd.db");
    let url = format!("sqlite://{}", path.display());
    write_ledgers(&url, dir.path());
    let (_, before) = verify(&url);
    let mut c = diesel::SqliteConnection::establish(&path.to_string_lossy()).unwrap();
    // SQLite cannot turn triggers off: they are dropped, and the one checked below put back
    // as the migrations define it.
    c.batch_execute(&format!(
        "DROP TRIGGER privacy_audit_logs_no_update; DROP TRIGGER api_audit_log_no_update;
         DROP TRIGGER tool_audit_log_no_update; {UNCHAIN}
         CREATE TRIGGER privacy_audit_logs_no_update BEFORE UPDATE ON privacy_audit_logs
         WHEN NOT (OLD.position IS NULL AND NEW.position IS NOT NULL
                   AND EXISTS (SELECT 1 FROM ledger_chain_backfill))
         BEGIN SELECT RAISE(ABORT, 'the privacy_audit_logs ledger is append-only'); END;"
    ))
    .unwrap();
    entries_are_linked_by_the_next_migration(&url, &before);
    // Once linked, the ledgers refuse updates again.
    let refused = c.batch_execute("UPDATE privacy_audit_logs SET position = NULL");
    assert!(refused.unwrap_err().to_string().contains("append-only"));
}

#[tokio::test(flavor = "multi_thread")]
async fn entries_stored_before_chaining_are_linked_once_on_postgresql() {
    let db = recruit_adapters_pg::testkit::TestDatabase::fresh().await;
    let url = db.url().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let before = tokio::task::block_in_place(|| {
        write_ledgers(&url, dir.path());
        verify(&url).1
    });
    db.batch_execute(&format!(
        "ALTER TABLE privacy_audit_logs DISABLE TRIGGER USER;
         ALTER TABLE api_audit_log DISABLE TRIGGER USER;
         ALTER TABLE tool_audit_log DISABLE TRIGGER USER;
         {UNCHAIN}
         ALTER TABLE privacy_audit_logs ENABLE TRIGGER USER;
         ALTER TABLE api_audit_log ENABLE TRIGGER USER;
         ALTER TABLE tool_audit_log ENABLE TRIGGER USER;"
    ))
    .await;
    tokio::task::block_in_place(|| entries_are_linked_by_the_next_migration(&url, &before));
}

/// `audit export` writes every entry of a ledger once, each line proving its entry: the hash
/// computed again from the line alone matches, and sorted by position each organization's
/// lines link up from the chain's start to its head. A window exports its part; an existing
/// file is never overwritten; `-` writes to standard output.
fn exports_prove_every_entry(url: &str, dir: &std::path::Path) {
    use recruit_domain::chain::{GENESIS, Ledger, canonical_json, entry_hash, hex, parse_hex};
    let (_, reports) = verify(url);
    let file = dir.join("privacy.ndjson");
    let file = file.to_str().unwrap();
    let (ok, said, errors) = output(url, &["audit", "export", "--ledger", "privacy", file]);
    assert!(ok, "{errors}");
    let lines: Vec<Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(said.contains(&format!("exported {} privacy ledger entries", lines.len())), "{said}");
    let mut by_org: std::collections::BTreeMap<String, Vec<&Value>> = Default::default();
    for line in &lines {
        assert_eq!(line["ledger"], "privacy");
        let org: recruit_domain::OrganizationId =
            line["organization_id"].as_str().unwrap().parse().unwrap();
        let prev = parse_hex(line["prev_hash"].as_str().unwrap()).unwrap();
        let position = line["position"].as_u64().unwrap();
        let canonical = canonical_json(&line["entry"]).unwrap();
        let hash = entry_hash(Ledger::Privacy, org, position, &prev, &canonical);
        assert_eq!(line["hash"], hex(&hash), "{line}");
        by_org.entry(org.to_string()).or_default().push(line);
    }
    for (org, mut chain) in by_org {
        chain.sort_by_key(|l| l["position"].as_u64());
        let mut prev = hex(&GENESIS);
        for (n, line) in chain.iter().enumerate() {
            assert_eq!(line["position"].as_u64(), Some(n as u64 + 1));
            assert_eq!(line["prev_hash"], prev.as_str(), "{org} links at {n}");
            prev = line["hash"].as_str().unwrap().to_owned();
        }
        let report = reports
            .iter()
            .find(|r| r["ledger"] == "privacy" && r["organization_id"] == org.as_str())
            .unwrap();
        assert_eq!(report["head_position"].as_u64(), Some(chain.len() as u64));
        assert_eq!(report["head_hash"], prev.as_str(), "the export reaches the head");
    }
    let (again, _, refused) = output(url, &["audit", "export", "--ledger", "privacy", file]);
    assert!(!again && refused.contains("never overwrites"), "{refused}");

    let a = recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A));
    let (from, to) = (t(1_003).to_string(), t(1_007).to_string());
    let args = [
        "audit",
        "export",
        "--ledger",
        "privacy",
        "--org",
        &a.to_string(),
        "--from",
        &from,
        "--to",
        &to,
        "-",
    ];
    let (ok, window, errors) = output(url, &args);
    assert!(ok, "{errors}");
    let times: Vec<String> = window
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["entry"]["access_time"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(times, (1_003..1_007).map(|n| t(n).to_string()).collect::<Vec<_>>());
}

#[test]
fn exports_prove_every_entry_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("recruitd.db").display());
    write_ledgers(&url, dir.path());
    exports_prove_every_entry(&url, dir.path());
}

#[tokio::test(flavor = "multi_thread")]
async fn exports_prove_every_entry_on_postgresql() {
    let db = recruit_adapters_pg::testkit::TestDatabase::fresh().await;
    let url = db.url().to_owned();
    let dir = tempfile::tempdir().unwrap();
    tokio::task::block_in_place(|| {
        write_ledgers(&url, dir.path());
        exports_prove_every_entry(&url, dir.path());
    });
}

/// `audit review --month` reads the month in the organization's time zone (organization B's is
/// Asia/Seoul, A's UTC): per account the accesses, bulk accesses and the records they covered,
/// accesses outside the work hours (both work Mondays 09:00 to 17:00), downloads, distinct
/// people and new addresses, flagged; the days by category and the weekday-hour matrix; and
/// every download listed.
#[test]
fn the_monthly_review_reads_the_month_in_the_organizations_time_zone() {
    use recruit_domain::model::{ActivityCategory, BulkQuery, DataSubject};
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("recruitd.db").display());
    let document = dir.path().join("world.json");
    std::fs::write(&document, serde_json::to_string(&world()).unwrap()).unwrap();
    run(&url, &["import", document.to_str().unwrap()]);
    let at = |s: &str| s.parse::<recruit_domain::Timestamp>().unwrap();
    let account =
        |n: u128| recruit_domain::AccountId::from_uuid(recruit_domain::Uuid::from_u128(n));
    let entry = |org: u128, n: u128, who: u128, when: &str, category: &str, ip: &str| {
        let mut e = ledger_entry(org, 1, at(when));
        e.entry.id = recruit_domain::PrivacyAuditLogId::from_uuid(recruit_domain::Uuid::from_u128(
            0xDE00 | n,
        ));
        e.entry.account_id = account(who);
        e.entry.activity_category = ActivityCategory::from(category);
        e.entry.ip_addresses = vec![ip.into()];
        e
    };
    let mut bulk = entry(ORG_B, 3, 0xA1, "2026-10-05T11:00:00Z", "BULK_READ", "10.0.0.1");
    bulk.entry.data_subject = DataSubject::Bulk {
        bulk_count: Some(50),
        query: BulkQuery::EmployeeSearch { values: vec!["kim".into()] },
    };
    let mut entries = vec![
        // 10:00 on a Monday in Seoul: within the work hours.
        entry(ORG_B, 1, 0xA1, "2026-10-05T01:00:00Z", "READ", "10.0.0.1"),
        // 03:00 on a Saturday, from an address the account used in September too.
        entry(ORG_B, 2, 0xA1, "2026-10-09T18:00:00Z", "DOWNLOAD", "10.0.0.2"),
        // 20:00 on a Monday.
        bulk,
        // 01:00 on the first of October in Seoul, still September in UTC.
        entry(ORG_B, 4, 0xB2, "2026-09-30T16:00:00Z", "READ", "10.0.0.3"),
        // September in Seoul.
        entry(ORG_B, 5, 0xA1, "2026-09-20T05:00:00Z", "READ", "10.0.0.2"),
    ];
    // The same moments in organization A, which reviews in UTC.
    let utc: Vec<_> = entries
        .iter()
        .zip(0x10..)
        .map(|(e, n)| {
            let mut e = e.clone();
            e.organization_id =
                recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A));
            e.entry.id = recruit_domain::PrivacyAuditLogId::from_uuid(
                recruit_domain::Uuid::from_u128(0xDE00 | n),
            );
            e
        })
        .collect();
    entries.extend(utc);
    let ledger = dir.path().join("october.ndjson");
    let lines: Vec<String> = entries.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
    std::fs::write(&ledger, lines.join("\n") + "\n").unwrap();
    run(&url, &["import", ledger.to_str().unwrap()]);

    let org = |n| recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(n));
    let review = |o: u128| {
        let org = org(o).to_string();
        let args = ["audit", "review", "--month", "2026-10", "--org", &org, "--json"];
        let (ok, stdout, stderr) = output(&url, &args);
        assert!(ok, "{stderr}");
        serde_json::from_str::<Value>(stdout.trim()).unwrap()
    };
    let seoul = review(ORG_B);
    assert_eq!(seoul["time_zone"], "Asia/Seoul");
    assert_eq!(seoul["accesses"], 4, "{seoul}");
    assert_eq!(seoul["from"], "2026-09-30T15:00:00Z");
    assert!(seoul["work_hours_notes"][0].as_str().unwrap().contains("HOLIDAY"));
    let of = |review: &Value, who: u128| {
        let id = account(who).to_string();
        review["accounts"].as_array().unwrap().iter().find(|a| a["account_id"] == id).cloned()
    };
    let a1 = of(&seoul, 0xA1).unwrap();
    assert_eq!(
        (&a1["accesses"], &a1["bulk_accesses"], &a1["bulk_records"], &a1["outside_work_hours"]),
        (&3.into(), &1.into(), &50.into(), &2.into()),
        "{a1}"
    );
    assert_eq!(a1["downloads"], 1);
    assert_eq!(a1["new_ip_addresses"], serde_json::json!(["10.0.0.1"]), "10.0.0.2 is September's");
    // Flagged by organization B's rules, as stored: two accesses outside work hours, 50
    // records in bulk and one download are within them; a new address is not.
    assert_eq!(seoul["rules"]["downloads"], 2);
    assert_eq!(seoul["rules"]["holidays"], serde_json::json!(["2026-10-03"]));
    assert_eq!(a1["flags"], serde_json::json!(["NEW_IP_ADDRESSES"]));
    assert_eq!(
        a1["flag_details"],
        serde_json::json!([{"flag": "NEW_IP_ADDRESSES", "value": 1, "threshold": 0}])
    );
    let downloads = seoul["downloads"].as_array().unwrap();
    assert_eq!(downloads.len(), 1);
    assert_eq!(downloads[0]["access_time"], "2026-10-09T18:00:00Z");
    assert_eq!(downloads[0]["account_id"], account(0xA1).to_string());
    let b2 = of(&seoul, 0xB2).unwrap();
    assert_eq!((&b2["accesses"], &b2["outside_work_hours"]), (&1.into(), &1.into()));
    assert_eq!(b2["distinct_data_subjects"], 1);
    // Days and hours are Seoul's: the first of October holds B2's read at 01:00 (a Thursday),
    // the fifth A1's two of a Monday, at 10:00 and 20:00.
    let days = seoul["days"].as_array().unwrap();
    assert_eq!(days.len(), 31);
    assert_eq!((&days[0]["date"], &days[0]["accesses"]), (&"2026-10-01".into(), &1.into()));
    assert_eq!(days[4]["categories"], serde_json::json!({"BULK_READ": 1, "READ": 1}));
    assert_eq!(seoul["weekday_hours"][3][1], 1, "Thursday 01:00");
    assert_eq!(seoul["weekday_hours"][0][10], 1, "Monday 10:00");
    assert_eq!(seoul["weekday_hours"][0][20], 1, "Monday 20:00");

    // In UTC, the entry of the first of October in Seoul is September's.
    let utc = review(ORG_A);
    assert_eq!(utc["time_zone"], "UTC");
    assert_eq!(utc["accesses"], 3);
    assert!(of(&utc, 0xB2).is_none());
    // The text for people lists the download in the organization's time.
    let (ok, text, _) =
        output(&url, &["audit", "review", "--month", "2026-10", "--org", &org(ORG_B).to_string()]);
    assert!(ok && text.contains("Downloads, in Asia/Seoul: check the reason for each."), "{text}");
    assert!(text.contains("2026-10-10T03:00:00+09:00"), "{text}");
    let (ok, _, stderr) = output(&url, &["audit", "review", "--month", "2026-13"]);
    assert!(!ok && stderr.contains("YYYY-MM"), "{stderr}");
}

/// Retention on a ledger whose first five entries of organization A were recorded three years
/// ago (`age` moves them back with raw SQL): the dry run names that prefix and changes
/// nothing; without the signing key nothing happens; with it, the five are exported (the file
/// proves each), a signed cut is stored, they are removed, and verify finds the rest whole.
/// An entry removed behind retention's back is still found; a second run removes nothing.
fn retention_removes_a_proven_prefix(
    url: &str,
    dir: &std::path::Path,
    age: impl Fn(&str),
    tamper: impl Fn(&str),
) {
    use recruit_domain::chain::{Ledger, canonical_json, entry_hash, parse_hex};
    let org = recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A));
    let key = dir.join("key.pem");
    let key = key.to_str().unwrap();
    run(url, &["audit", "keygen", key]);
    age("position <= 5");
    let (ok, plan, stderr) = output(url, &["ledger", "retention", "--dry-run", "--json"]);
    assert!(ok, "{stderr}");
    let plan: Value = serde_json::from_str(&plan).unwrap();
    assert_eq!(plan["cuts"].as_array().unwrap().len(), 1, "{plan}");
    assert_eq!(plan["cuts"][0]["organization_id"], org.to_string());
    assert_eq!((&plan["cuts"][0]["position"], &plan["cuts"][0]["entries"]), (&5.into(), &5.into()));
    let exports = dir.join("exports");
    std::fs::create_dir(&exports).unwrap();
    let exports_arg = exports.to_str().unwrap();
    let (ok, _, stderr) = output(url, &["ledger", "retention", "--export-dir", exports_arg]);
    assert!(!ok && stderr.contains("--checkpoint-key"), "{stderr}");
    assert_eq!(std::fs::read_dir(&exports).unwrap().count(), 0);

    let args =
        ["--checkpoint-key", key, "ledger", "retention", "--export-dir", exports_arg, "--json"];
    let (ok, applied, stderr) = output(url, &args);
    assert!(ok, "{stderr}");
    let applied: Value = serde_json::from_str(&applied).unwrap();
    assert_eq!(applied["removed"], 5, "{applied}");
    let file = applied["exports"][0][1].as_str().unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "an export of personal data is its owner's only");
    let lines: Vec<Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut positions: Vec<u64> = lines.iter().map(|l| l["position"].as_u64().unwrap()).collect();
    positions.sort_unstable();
    assert_eq!(positions, [1, 2, 3, 4, 5]);
    for l in &lines {
        let hash = entry_hash(
            Ledger::Privacy,
            org,
            l["position"].as_u64().unwrap(),
            &parse_hex(l["prev_hash"].as_str().unwrap()).unwrap(),
            &canonical_json(&l["entry"]).unwrap(),
        );
        assert_eq!(l["hash"], recruit_domain::chain::hex(&hash));
    }
    let fifth = lines.iter().find(|l| l["position"] == 5).unwrap();
    assert_eq!(applied["cuts"][0]["hash"], fifth["hash"], "the cut holds the last hash removed");

    let verify = |key: Option<&str>| {
        let mut args = vec![];
        if let Some(key) = key {
            args.extend(["--checkpoint-key", key]);
        }
        args.extend(["audit", "verify", "--json"]);
        let (ok, out, _) = output(url, &args);
        let reports: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        (ok, reports)
    };
    for key in [Some(key), None] {
        let (ok, reports) = verify(key);
        assert!(ok, "{reports:?}");
        let a = privacy_of_a(&reports);
        assert_eq!(
            (&a["cuts"], &a["entries"]),
            (&1.into(), &(world_entries_of_a() + APPENDED - 5).into())
        );
    }
    let (ok, plan, _) = output(url, &["ledger", "retention", "--dry-run", "--json"]);
    assert!(ok);
    assert_eq!(serde_json::from_str::<Value>(&plan).unwrap()["cuts"], serde_json::json!([]));

    // Removed behind retention's back: found.
    tamper("position = 6");
    let (ok, reports) = verify(Some(key));
    assert!(!ok);
    let findings: Vec<(String, Option<i64>)> = privacy_of_a(&reports)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap().to_owned(), f["position"].as_i64()))
        .collect();
    assert_eq!(findings, [("DELETED".to_owned(), Some(6))]);

    // A chain that does not verify is not cut: retention refuses and removes nothing.
    age("position <= 8");
    let args = ["--checkpoint-key", key, "ledger", "retention", "--export-dir", exports_arg];
    let (ok, _, stderr) = output(url, &args);
    assert!(!ok && stderr.contains("does not verify"), "{stderr}");
    let (_, reports) = verify(Some(key));
    let left = world_entries_of_a() + APPENDED - 6;
    assert_eq!(privacy_of_a(&reports)["entries"], left, "nothing removed");
}

/// How many entries of organization A the test world holds.
fn world_entries_of_a() -> i64 {
    let org = recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(ORG_A));
    world().privacy_audit_logs.iter().filter(|e| e.organization_id == org).count() as i64
}

#[test]
fn retention_removes_a_proven_prefix_on_sqlite() {
    use diesel::Connection;
    use diesel::connection::SimpleConnection;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recruitd.db");
    let url = format!("sqlite://{}", path.display());
    write_ledgers(&url, dir.path());
    let org = format!("X'{:032x}'", ORG_A);
    let sql = |sql: String| {
        let mut c = diesel::SqliteConnection::establish(&path.to_string_lossy()).unwrap();
        c.batch_execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    };
    retention_removes_a_proven_prefix(
        &url,
        dir.path(),
        |rows| {
            sql(format!(
                "DROP TRIGGER IF EXISTS privacy_audit_logs_no_update;
                 UPDATE privacy_audit_logs SET recorded_at = recorded_at - 94608000000000
                 WHERE organization_id = {org} AND {rows};"
            ))
        },
        |rows| {
            sql(format!(
                "DROP TRIGGER IF EXISTS privacy_audit_logs_no_delete;
                 DELETE FROM privacy_audit_logs WHERE organization_id = {org} AND {rows};"
            ))
        },
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn retention_removes_a_proven_prefix_on_postgresql() {
    let db = recruit_adapters_pg::testkit::TestDatabase::fresh().await;
    let url = db.url().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let org = format!("'{}'::uuid", recruit_domain::Uuid::from_u128(ORG_A));
    let handle = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| {
        write_ledgers(&url, dir.path());
        let sql = |sql: String| {
            handle.block_on(db.batch_execute(&format!(
                "ALTER TABLE privacy_audit_logs DISABLE TRIGGER USER; {sql}
                 ALTER TABLE privacy_audit_logs ENABLE TRIGGER USER;"
            )))
        };
        // The aged entries move into a month of their own, which retention drops whole.
        let month = "'privacy_audit_logs_' || \
                     to_char((now() - interval '3 years') AT TIME ZONE 'UTC', 'YYYY_MM')";
        retention_removes_a_proven_prefix(
            &url,
            dir.path(),
            |rows| {
                sql(format!(
                    "SELECT recruitd_ledger_partitions('privacy_audit_logs',
                         now() - interval '3 years', now() - interval '3 years');
                     DO $$ BEGIN IF to_regclass({month}) IS NULL THEN
                         RAISE EXCEPTION 'no partition for three years ago'; END IF; END $$;
                     UPDATE privacy_audit_logs SET recorded_at = recorded_at - interval '3 years'
                     WHERE organization_id = {org} AND {rows};"
                ))
            },
            |rows| {
                // Called once retention has run: the month it removed is gone whole.
                sql(format!(
                    "DO $$ BEGIN IF to_regclass({month}) IS NOT NULL THEN
                         RAISE EXCEPTION 'the month retention removed is still a partition';
                     END IF; END $$;
                     DELETE FROM privacy_audit_logs WHERE organization_id = {org} AND {rows};"
                ))
            },
        );
    });
}

/// The server runs retention on its schedule when it has a key and an export directory: the
/// aged prefix is exported and removed, and verify proves what remains.
#[test]
fn the_server_runs_retention_on_its_schedule() {
    use diesel::Connection;
    use diesel::connection::SimpleConnection;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recruitd.db");
    let url = format!("sqlite://{}", path.display());
    write_ledgers(&url, dir.path());
    let key = dir.path().join("key.pem");
    let key = key.to_str().unwrap();
    run(&url, &["audit", "keygen", key]);
    let mut c = diesel::SqliteConnection::establish(&path.to_string_lossy()).unwrap();
    c.batch_execute(&format!(
        "DROP TRIGGER privacy_audit_logs_no_update;
         UPDATE privacy_audit_logs SET recorded_at = recorded_at - 94608000000000
         WHERE organization_id = X'{ORG_A:032x}' AND position <= 3;"
    ))
    .unwrap();
    drop(c);
    let exports = dir.path().join("exports");
    std::fs::create_dir(&exports).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(BIN)
        .args(["--database-url", &url, "--checkpoint-key", key, "serve", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["--retention-interval", "200ms", "--retention-export-dir"])
        .arg(&exports)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let report = loop {
        let (_, out, _) = output(&url, &["--checkpoint-key", key, "audit", "verify", "--json"]);
        let reports: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let a = privacy_of_a(&reports);
        if a["cuts"] == 1 && a["entries"] == world_entries_of_a() + APPENDED - 3 {
            break a.clone();
        }
        if let Some(status) = server.try_wait().unwrap() {
            panic!("the server exited before retention ran: {status}");
        }
        assert!(std::time::Instant::now() < deadline, "no retention within 30 s");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(report["findings"], serde_json::json!([]), "{report}");
    let files: Vec<_> = std::fs::read_dir(&exports).unwrap().collect();
    assert_eq!(files.len(), 1, "one export, of the privacy ledger");
}
