//! Measures NDJSON ledger import: generates a demo ledger of `--entries` entries to a file,
//! then imports it into a fresh SQLite store and a fresh PostgreSQL database (a throwaway
//! cluster, or `DATABASE_URL`), and prints entries per second.
//!
//! `cargo run --release -p recruit-service --example import_throughput -- --entries 1000000`
//! Add `--backend sqlite` or `--backend postgres` for one of them; set `RECRUITD_PG_DURABLE=1`
//! for a cluster with PostgreSQL's default durability.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::time::Instant;

use recruit_adapters_pg::testkit::TestDatabase;
use recruit_adapters_sqlite::{SqliteBackend, SqliteConfig};
use recruit_domain::Timestamp;
use recruit_ports::Store;
use recruit_service::demo::{self, DemoConfig};
use recruit_service::import::import_ndjson;

struct Args {
    entries: usize,
    batch: usize,
    backends: Vec<String>,
}

fn args() -> Args {
    let mut args = Args {
        entries: 1_000_000,
        batch: 20_000,
        backends: vec!["sqlite".into(), "postgres".into()],
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_default();
        match flag.as_str() {
            "--entries" => args.entries = value.parse().expect("--entries takes a number"),
            "--batch" => args.batch = value.parse().expect("--batch takes a number"),
            "--backend" => args.backends = vec![value],
            other => panic!(
                "unknown flag {other}; flags: --entries N, --batch N, --backend sqlite|postgres"
            ),
        }
    }
    args
}

fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").expect("stdout");
}

/// PostgreSQL's own limit for the same rows, with no client in the way, in the import's order:
/// `INSERT … SELECT` of what was imported into the ledger itself, emptied (its partitions,
/// keys, indexes, foreign key and the trigger that keeps entry ids unique: what the import
/// pays), the reference of the import's share; the server's own `COPY` of the same rows from a file into the ledger,
/// emptied again; and, for comparison with earlier figures, `INSERT … SELECT` into a plain
/// table with the same keys, indexes and foreign key. Prints each. The server writes the file
/// into the temporary directory: it must run on this machine.
///
/// The import's order is each organization's entries in the order of their chain positions,
/// the organizations interleaved: its rows go to every month's partition in turn, as the
/// file's do, and so touch every partition's indexes at once.
async fn ceiling(db: &TestDatabase, rows: usize, import_rate: f64) {
    db.batch_execute(
        "SET max_parallel_workers_per_gather = 0;
         CREATE UNLOGGED TABLE ceiling_source AS
             SELECT * FROM privacy_audit_logs ORDER BY position, organization_id;
         CREATE TABLE ceiling_target (LIKE privacy_audit_logs INCLUDING ALL);
         ALTER TABLE ceiling_target ADD FOREIGN KEY (organization_id) REFERENCES organizations (id);
         ALTER TABLE privacy_audit_logs DISABLE TRIGGER privacy_audit_logs_no_truncate;
         TRUNCATE privacy_audit_logs, privacy_audit_log_ids;
         ALTER TABLE privacy_audit_logs ENABLE TRIGGER privacy_audit_logs_no_truncate;
         CHECKPOINT;",
    )
    .await;
    let file = std::env::temp_dir().join(format!("recruitd-ceiling-{}.copy", std::process::id()));
    let file = file.display().to_string().replace('\'', "''");
    db.batch_execute(&format!("COPY ceiling_source TO '{file}' (FORMAT binary)")).await;
    let emptied = "ALTER TABLE privacy_audit_logs DISABLE TRIGGER privacy_audit_logs_no_truncate;
         TRUNCATE privacy_audit_logs, privacy_audit_log_ids;
         ALTER TABLE privacy_audit_logs ENABLE TRIGGER privacy_audit_logs_no_truncate;
         CHECKPOINT;";
    for (statement, what) in [
        (
            "INSERT INTO privacy_audit_logs SELECT * FROM ceiling_source".to_owned(),
            "INSERT … SELECT of the same rows into the ledger itself",
        ),
        (
            format!("COPY privacy_audit_logs FROM '{file}' (FORMAT binary)"),
            "COPY of the same rows from a file into the ledger itself",
        ),
        (
            "INSERT INTO ceiling_target SELECT * FROM ceiling_source".to_owned(),
            "INSERT … SELECT of the same rows into a plain table with the same keys and indexes",
        ),
    ] {
        if statement.starts_with("COPY") {
            db.batch_execute(emptied).await;
        }
        let started = Instant::now();
        db.batch_execute(&statement).await;
        let seconds = started.elapsed().as_secs_f64();
        let rate = rows as f64 / seconds;
        report(&format!(
            "postgres   {what}, no client: {seconds:.1} s  {rate:.0} rows/s; \
             the import reaches {:.2} of it",
            import_rate / rate
        ));
        db.batch_execute("CHECKPOINT").await;
    }
    db.batch_execute("DROP TABLE ceiling_target, ceiling_source;").await;
    let _ = std::fs::remove_file(&file);
}

async fn measure(
    name: &str,
    store: &dyn Store,
    config: &DemoConfig,
    path: &std::path::Path,
    batch: usize,
) -> (usize, f64) {
    store.import(&demo::directory(config)).await.expect("the directory imports");
    let started = Instant::now();
    // The first progress comes once the whole file is checked, before anything is written.
    let mut checked = None;
    let written = import_ndjson(
        store,
        || File::open(path).map(BufReader::new),
        batch,
        |_| {
            checked.get_or_insert_with(|| started.elapsed().as_secs_f64());
        },
    )
    .await
    .expect("the ledger imports")
    .written;
    let seconds = started.elapsed().as_secs_f64();
    let rate = written as f64 / seconds;
    report(&format!(
        "{name:<10} {written:>9} entries  {seconds:>7.1} s  {rate:>9.0} entries/s \
         (checked in {:.1} s, then written)",
        checked.unwrap_or_default()
    ));
    (written, rate)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = args();
    let config = DemoConfig {
        ledger_entries: args.entries,
        ..DemoConfig::quick_start(Timestamp::parse("2026-11-21T00:00:00Z").expect("a time"))
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("ledger.ndjson");
    let started = Instant::now();
    let mut out = BufWriter::new(File::create(&path).expect("the file"));
    for entry in demo::ledger(&config) {
        serde_json::to_writer(&mut out, &entry).expect("written");
        out.write_all(b"\n").expect("written");
    }
    out.flush().expect("written");
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    report(&format!(
        "generated  {:>9} entries  {:>7.1} s  ({} MiB of NDJSON)",
        args.entries,
        started.elapsed().as_secs_f64(),
        bytes / (1 << 20)
    ));
    for backend in &args.backends {
        match backend.as_str() {
            "sqlite" => {
                let store = SqliteBackend::open(&SqliteConfig::new(dir.path().join("bench.db")))
                    .await
                    .expect("opens");
                store.migrate().await.expect("migrates");
                measure("sqlite", &store, &config, &path, args.batch).await;
            }
            "postgres" => {
                let db = TestDatabase::fresh().await;
                let (rows, rate) =
                    measure("postgres", db.store(), &config, &path, args.batch).await;
                ceiling(&db, rows, rate).await;
            }
            other => panic!("unknown backend {other}"),
        }
    }
}
