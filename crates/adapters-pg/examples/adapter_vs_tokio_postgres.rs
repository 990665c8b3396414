//! Scenario 3 of the benchmarks: the job read through this adapter (diesel-async, its pool, the
//! mapping into a `JobRecord`) against the same statement through bare `tokio-postgres`,
//! prepared, every column decoded into an owned value (the hiring team's and the stages'
//! record arrays too, as a hand-written server must), at the same concurrency, in one process.
//! Prints queries (job reads) per second of each and the ratio.
//!
//! `cargo run --release -p recruit-adapters-pg --example adapter_vs_tokio_postgres -- 10 8,64`
//! (seconds per run, concurrencies). Uses `DATABASE_URL`, or a throwaway cluster.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use recruit_adapters_pg::testkit::TestDatabase;
use recruit_adapters_pg::{PgBackend, PgConfig};
use recruit_domain::{OrganizationId, Uuid};
use recruit_ports::testkit::{ORG_A, job_id, world};
use recruit_ports::{Directory, Import};
use tokio_postgres::types::Type;

/// The adapter's job read, as one statement: the job and its resolved settings joined, its
/// hiring team and its stages as arrays of records in the same row.
const JOB: &str = "SELECT jobs.organization_id, jobs.id, jobs.name, jobs.status, jobs.confidential, \
    jobs.locations, jobs.ats_type, jobs.ats_id, jobs.created_at, jobs.updated_at, \
    jobs.default_task_queue_id, jobs.remote_ats_id, jobs.remote_name, jobs.remote_status, \
    jobs.locale, s.*, \
    ARRAY(SELECT ROW(t.role, t.user_id, u.name) FROM job_hiring_team t \
        JOIN users u ON u.organization_id = t.organization_id AND u.id = t.user_id \
        WHERE t.organization_id = jobs.organization_id AND t.job_id = jobs.id \
        ORDER BY t.position), \
    ARRAY(SELECT ROW(st.position, st.id, st.name) FROM job_stages st \
        WHERE st.organization_id = jobs.organization_id AND st.job_id = jobs.id \
        ORDER BY st.position) \
    FROM jobs JOIN job_resolved_settings s \
    ON s.organization_id = jobs.organization_id AND s.job_id = jobs.id \
    WHERE jobs.organization_id = $1 AND jobs.id = $2";

/// A field of a record, decoded into an owned value.
enum Field {
    Text(String),
    Uuid(Uuid),
    Int(i32),
}

impl Field {
    /// Something of the value, so that decoding it cannot be optimised away.
    fn weight(&self) -> usize {
        match self {
            Self::Text(s) => s.len(),
            Self::Uuid(u) => usize::from(u.as_bytes()[0]),
            Self::Int(i) => usize::from(*i > 0),
        }
    }
}

/// An array of records (binary format) decoded into owned values.
struct Records(Vec<Vec<Field>>);

impl<'a> tokio_postgres::types::FromSql<'a> for Records {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        fn take<'b>(raw: &mut &'b [u8], n: usize) -> Result<&'b [u8], &'static str> {
            let (head, rest) = raw.split_at_checked(n).ok_or("short")?;
            *raw = rest;
            Ok(head)
        }
        fn int(raw: &mut &[u8]) -> Result<i32, &'static str> {
            Ok(i32::from_be_bytes(take(raw, 4)?.try_into().map_err(|_| "short")?))
        }
        let mut raw = raw;
        let dimensions = int(&mut raw)?;
        take(&mut raw, 8)?; // null flag, element type
        let mut count = 0;
        for _ in 0..dimensions {
            count = int(&mut raw)?;
            int(&mut raw)?; // lower bound
        }
        let mut records = Vec::with_capacity(usize::try_from(count)?);
        for _ in 0..count {
            let length = int(&mut raw)?;
            let mut record = take(&mut raw, usize::try_from(length)?)?;
            let fields = int(&mut record)?;
            let mut decoded = Vec::with_capacity(usize::try_from(fields)?);
            for _ in 0..fields {
                let oid = u32::try_from(int(&mut record)?)?;
                let length = int(&mut record)?;
                let value = take(&mut record, usize::try_from(length)?)?;
                decoded.push(match oid {
                    23 => Field::Int(i32::from_be_bytes(value.try_into()?)),
                    2950 => Field::Uuid(Uuid::from_slice(value)?),
                    _ => Field::Text(std::str::from_utf8(value)?.to_owned()),
                });
            }
            records.push(decoded);
        }
        Ok(Self(records))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::RECORD_ARRAY
    }
}

/// Decodes every column of `row` into an owned value, as a hand-written mapping would.
fn decode(row: &tokio_postgres::Row) -> usize {
    let mut n = 0;
    for (i, column) in row.columns().iter().enumerate() {
        n += match *column.type_() {
            Type::UUID => usize::from(row.get::<_, Uuid>(i).as_bytes()[0]),
            Type::TEXT => row.get::<_, Option<String>>(i).map_or(0, |s| s.len()),
            Type::BOOL => usize::from(row.get::<_, bool>(i)),
            Type::TEXT_ARRAY => row.get::<_, Vec<String>>(i).len(),
            Type::TIMESTAMPTZ => {
                usize::from(row.get::<_, chrono::DateTime<chrono::Utc>>(i).timestamp() > 0)
            }
            Type::RECORD_ARRAY => {
                row.get::<_, Records>(i).0.iter().flatten().map(Field::weight).sum()
            }
            ref other => panic!("a column of type {other} is not decoded"),
        };
    }
    n
}

async fn adapter(url: &str, concurrency: usize, seconds: u64) -> f64 {
    let mut config = PgConfig::new(url);
    config.pool_size = concurrency;
    let store = Arc::new(PgBackend::connect(&config).expect("connects"));
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
        clients.push(Arc::new((client, job)));
    }
    let org = Uuid::from_u128(ORG_A);
    run(concurrency, seconds, move |task| {
        let client = Arc::clone(&clients[task % clients.len()]);
        async move {
            let (client, job) = &*client;
            let id = job_id(ORG_A, 1 + (task % 2) as u128).uuid();
            decode(&client.query_one(job, &[&org, &id]).await.expect("reads"))
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
