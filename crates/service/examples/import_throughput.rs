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
use recruit_adapters_sqlite::{SqliteConfig, SqliteStore};
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
        batch: 5_000,
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

async fn measure(
    name: &str,
    store: &dyn Store,
    config: &DemoConfig,
    path: &std::path::Path,
    batch: usize,
) {
    store.import(&demo::directory(config)).await.expect("the directory imports");
    let started = Instant::now();
    let written = import_ndjson(store, || File::open(path).map(BufReader::new), batch, |_| {})
        .await
        .expect("the ledger imports");
    let seconds = started.elapsed().as_secs_f64();
    report(&format!(
        "{name:<10} {written:>9} entries  {seconds:>7.1} s  {:>9.0} entries/s",
        written as f64 / seconds
    ));
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
                let store = SqliteStore::open(&SqliteConfig::new(dir.path().join("bench.db")))
                    .await
                    .expect("opens");
                store.migrate().await.expect("migrates");
                measure("sqlite", &store, &config, &path, args.batch).await;
            }
            "postgres" => {
                let db = TestDatabase::fresh().await;
                measure("postgres", db.store(), &config, &path, args.batch).await;
            }
            other => panic!("unknown backend {other}"),
        }
    }
}
