//! Data and cursors for the benchmarks of `bench/`.
//!
//! `bench_data generate DIR --organizations N --entries N [--days N] [--until T] [--part K]`
//! writes the deterministic demo data at that size, its entries in the `--days` (default 365)
//! before `--until` (default now): `DIR/directory.json` (organizations, users, jobs,
//! candidates) and `DIR/ledger.ndjson` (the privacy ledger), for `recruitd import`. Parts 1, 2,
//! … have entries of their own by the same people: imported after part 0 (the directory once),
//! they grow one ledger.
//!
//! `bench_data cursor --secret S --org ORG --gte T --lt T --at T --id PAL` prints the cursor the
//! server (configured with the cursor secret `S`) issues after entry `PAL` at time `--at`, for the
//! list of `ORG`'s ledger in the window `[--gte, --lt)`: a page at any depth without walking
//! there.
//!
//! `bench_data explain --url URL --org ORG --gte T --lt T [--at T --id PAL]` prints
//! `EXPLAIN (ANALYZE, BUFFERS)` of the PostgreSQL adapter's own page query (100 entries), from
//! the start or after that entry.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use recruit_domain::{OrganizationId, PrivacyAuditLogId, TimeWindow, Timestamp};
use recruit_ports::LedgerPosition;
use recruit_service::cursor::{self, CursorKey, Filters};
use recruit_service::demo::{self, DemoConfig};

fn flags(args: impl Iterator<Item = String>) -> Vec<(String, String)> {
    let mut out = vec![];
    let mut it = args;
    while let Some(flag) = it.next() {
        out.push((flag, it.next().unwrap_or_default()));
    }
    out
}

fn flag<'a>(flags: &'a [(String, String)], name: &str) -> &'a str {
    flag_or(flags, name).unwrap_or_else(|| panic!("{name} is required"))
}

fn flag_or<'a>(flags: &'a [(String, String)], name: &str) -> Option<&'a str> {
    flags.iter().find(|(f, _)| f == name).map(|(_, v)| v.as_str())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = std::io::stdout();
    match args.next().as_deref() {
        Some("generate") => {
            let dir = PathBuf::from(args.next().expect("generate DIR"));
            let flags = flags(args);
            let number = |name: &str| flag(&flags, name).parse::<usize>().expect("a number");
            let until = match flag_or(&flags, "--until") {
                Some(t) => Timestamp::parse(t).expect("a timestamp"),
                None => Timestamp::now(),
            };
            let config = DemoConfig {
                organizations: number("--organizations"),
                ledger_entries: number("--entries"),
                days: flag_or(&flags, "--days").map_or(365, |d| d.parse().expect("a number")),
                part: flag_or(&flags, "--part").map_or(0, |p| p.parse().expect("a number")),
                ..DemoConfig::quick_start(until)
            };
            std::fs::create_dir_all(&dir).expect("the directory");
            let directory = demo::directory(&config);
            let file = File::create(dir.join("directory.json")).expect("directory.json");
            serde_json::to_writer(BufWriter::new(file), &directory).expect("written");
            let mut ledger = BufWriter::new(File::create(dir.join("ledger.ndjson")).expect("file"));
            for entry in demo::ledger(&config) {
                serde_json::to_writer(&mut ledger, &entry).expect("written");
                ledger.write_all(b"\n").expect("written");
            }
            ledger.flush().expect("written");
        }
        Some("cursor") => {
            let flags = flags(args);
            let key =
                CursorKey::new(flag(&flags, "--secret").as_bytes()).expect("32 bytes or more");
            let time = |name: &str| Timestamp::parse(flag(&flags, name)).expect("a timestamp");
            let window = TimeWindow::new(time("--gte"), time("--lt")).expect("a window");
            let organization: OrganizationId = flag(&flags, "--org").parse().expect("an org");
            let id: PrivacyAuditLogId = flag(&flags, "--id").parse().expect("an entry id");
            let position = LedgerPosition { access_time: time("--at"), id };
            let none = recruit_service::filter::Filter::default();
            let filters = Filters { window, ids: None, fields: &none };
            let cursor = cursor::encode(&key, organization, &filters, position);
            writeln!(out.lock(), "{cursor}").expect("stdout");
        }
        Some("explain") => {
            let flags = flags(args);
            let time = |name: &str| Timestamp::parse(flag(&flags, name)).expect("a timestamp");
            let after = flags.iter().any(|(f, _)| f == "--at").then(|| LedgerPosition {
                access_time: time("--at"),
                id: flag(&flags, "--id").parse().expect("an entry id"),
            });
            let query = recruit_ports::PrivacyLogQuery {
                organization_id: flag(&flags, "--org").parse().expect("an org"),
                window: TimeWindow::new(time("--gte"), time("--lt")).expect("a window"),
                ids: None,
                after,
                filter: Default::default(),
                limit: 100,
            };
            let runtime = tokio::runtime::Runtime::new().expect("a runtime");
            let plan = runtime.block_on(async {
                let config = recruit_adapters_pg::PgConfig::new(flag(&flags, "--url"));
                let store = recruit_adapters_pg::PgBackend::connect(&config).expect("connects");
                store.explain_privacy_page(&query, true).await.expect("explains")
            });
            writeln!(out.lock(), "{plan}").expect("stdout");
        }
        _ => panic!("usage: bench_data generate DIR … | cursor … | explain …"),
    }
}
