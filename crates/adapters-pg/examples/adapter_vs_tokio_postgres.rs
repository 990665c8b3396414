//! Scenario 3 of the benchmarks: the job read through this adapter (diesel-async, its pool, the
//! mapping into a `JobRecord`) against the same three queries through bare `tokio-postgres` with
//! prepared statements, pipelined the same way, decoded into owned values, at the same
//! concurrency, in one process. Prints queries (job reads) per second of each and the ratio.
//!
//! `cargo run --release -p recruit-adapters-pg --example adapter_vs_tokio_postgres -- 10 8,64`
//! (seconds per run, concurrencies). Uses `DATABASE_URL`, or a throwaway cluster.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use recruit_adapters_pg::testkit::TestDatabase;
use recruit_adapters_pg::{PgConfig, PgStore};
use recruit_domain::{OrganizationId, Uuid};
use recruit_ports::testkit::{ORG_A, job_id, world};
use recruit_ports::{Directory, Import};
use tokio_postgres::types::Type;

const JOB: &str = "SELECT j.organization_id, j.id, j.name, j.status, j.confidential, j.locations, \
    j.ats_type, j.ats_id, j.created_at, j.updated_at, j.default_task_queue_id, j.remote_ats_id, \
    j.remote_name, j.remote_status, j.locale, s.*, d.* FROM jobs j JOIN job_settings s \
    ON s.organization_id = j.organization_id AND s.job_id = j.id \
    JOIN organization_scheduling_defaults d ON d.organization_id = j.organization_id \
    WHERE j.organization_id = $1 AND j.id = $2";
const TEAM: &str = "SELECT t.role, t.user_id, u.name FROM job_hiring_team t JOIN users u \
    ON u.organization_id = t.organization_id AND u.id = t.user_id \
    WHERE t.organization_id = $1 AND t.job_id = $2 ORDER BY t.position";
const STAGES: &str = "SELECT organization_id, job_id, position, id, name FROM job_stages \
    WHERE organization_id = $1 AND job_id = $2 ORDER BY position";

/// Decodes every column of `row` into an owned value, as a hand-written mapping would.
fn decode(row: &tokio_postgres::Row) -> usize {
    let mut n = 0;
    for (i, column) in row.columns().iter().enumerate() {
        n += match *column.type_() {
            Type::UUID => usize::from(row.get::<_, Uuid>(i).as_bytes()[0]),
            Type::TEXT => row.get::<_, String>(i).len(),
            Type::BOOL => usize::from(row.get::<_, bool>(i)),
            Type::TEXT_ARRAY => row.get::<_, Vec<String>>(i).len(),
            Type::TIMESTAMPTZ => {
                usize::from(row.get::<_, chrono::DateTime<chrono::Utc>>(i).timestamp() > 0)
            }
            _ => 0,
        };
    }
    n
}

async fn adapter(url: &str, concurrency: usize, seconds: u64) -> f64 {
    let mut config = PgConfig::new(url);
    config.pool_size = concurrency;
    let store = Arc::new(PgStore::connect(&config).expect("connects"));
    let org = OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    run(concurrency, seconds, move |task| {
        let store = Arc::clone(&store);
        async move {
            let job = job_id(ORG_A, 1 + (task % 2) as u128);
            store.job(org, job).await.expect("reads").hiring_team.len()
        }
    })
    .await
}

async fn bare(url: &str, concurrency: usize, seconds: u64) -> f64 {
    let mut clients = vec![];
    for _ in 0..concurrency {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connects");
        tokio::spawn(connection);
        let job = client.prepare(JOB).await.expect("prepares");
        let team = client.prepare(TEAM).await.expect("prepares");
        let stages = client.prepare(STAGES).await.expect("prepares");
        clients.push(Arc::new((client, job, team, stages)));
    }
    let org = Uuid::from_u128(ORG_A);
    run(concurrency, seconds, move |task| {
        let client = Arc::clone(&clients[task % clients.len()]);
        async move {
            let (client, job, team, stages) = &*client;
            let id = job_id(ORG_A, 1 + (task % 2) as u128).uuid();
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&org, &id];
            let (row, members, stages) = tokio::join!(
                client.query_one(job, &params),
                client.query(team, &params),
                client.query(stages, &params)
            );
            decode(&row.expect("reads"))
                + members.expect("reads").iter().map(decode).sum::<usize>()
                + stages.expect("reads").iter().map(decode).sum::<usize>()
        }
    })
    .await
}

/// Runs `read` in a loop on `concurrency` tasks for `seconds`; returns reads per second.
async fn run<F, Fut>(concurrency: usize, seconds: u64, read: F) -> f64
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = usize> + Send,
{
    let read = Arc::new(read);
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|task| {
            let (read, count) = (Arc::clone(&read), Arc::clone(&count));
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    std::hint::black_box(read(task).await);
                    count.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("the task finishes");
    }
    count.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().map_or(10, |s| s.parse().expect("seconds"));
    let concurrencies: Vec<usize> = args
        .next()
        .unwrap_or_else(|| "8,64".to_owned())
        .split(',')
        .map(|c| c.parse().expect("a concurrency"))
        .collect();
    let db = TestDatabase::fresh().await;
    db.store().import(&world()).await.expect("the world imports");
    let mut out = std::io::stdout().lock();
    writeln!(out, "| concurrency | adapter reads/s | tokio-postgres reads/s | ratio |").ok();
    writeln!(out, "|---|---|---|---|").ok();
    for concurrency in concurrencies {
        let ours = adapter(db.url(), concurrency, seconds).await;
        let theirs = bare(db.url(), concurrency, seconds).await;
        writeln!(out, "| {concurrency} | {ours:.0} | {theirs:.0} | {:.2} |", ours / theirs).ok();
    }
}
