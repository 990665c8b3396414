//! Throwaway PostgreSQL for tests: one cluster per test process, a fresh database per test.
//!
//! When `DATABASE_URL` is set, that server is used instead (it must allow `CREATE DATABASE`).
//! Otherwise the first test starts a cluster of its own: `initdb` into a temporary directory,
//! `postgres` on a free loopback port, run as the `postgres` user when the tests run as root
//! (`initdb` refuses root). A watchdog stops the server and removes the directory as soon as
//! the test process exits, however it exits. Every test gets its own database, cloned from a
//! template migrated once per process, so tests never share mutable state.
//!
//! When neither is possible, the tests fail with a message saying how to provide PostgreSQL;
//! they are never skipped.
//!
//! The throwaway cluster trades durability for speed (`fsync`, `synchronous_commit` and
//! `full_page_writes` off). Set `RECRUITD_PG_DURABLE=1` to keep PostgreSQL's defaults, as
//! benchmarks do.

use std::net::TcpListener;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use tokio::sync::OnceCell;

use crate::{PgBackend, PgConfig, PgStore};

/// How to provide PostgreSQL when the tests cannot.
const HOW_TO_PROVIDE: &str = "PostgreSQL is needed for these tests. Either install the \
     PostgreSQL 15 server binaries (initdb, postgres; e.g. `apt-get install postgresql-15`, or \
     put their directory in RECRUITD_PG_BIN), or set DATABASE_URL to a server where this user \
     may CREATE DATABASE.";

const TEMPLATE: &str = "recruitd_template";

/// The server the tests of this process use.
#[derive(Debug)]
struct Server {
    /// A URL of the server without a database name, ending in `/`.
    base: String,
    /// The migrated database every test database is cloned from.
    template: String,
}

static SERVER: OnceCell<Server> = OnceCell::const_new();
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A fresh, migrated database of its own, and a store on it.
#[derive(Debug)]
pub struct TestDatabase {
    store: PgStore,
    url: String,
}

impl TestDatabase {
    /// A new database, cloned from the migrated template. Panics with instructions when no
    /// PostgreSQL can be had.
    pub async fn fresh() -> Self {
        let server = SERVER.get_or_init(start_server).await;
        let name = format!(
            "recruitd_test_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        admin(server, &format!("CREATE DATABASE {name} TEMPLATE {}", server.template)).await;
        let url = format!("{}{name}", server.base);
        // As servers run it: credentials cached, forgotten on every change announced.
        let mut config = config(&url);
        config.credential_cache = Some(Duration::from_secs(60));
        let store = PgBackend::connect(&config).expect("a pool");
        Self { store, url }
    }

    /// The URL of this database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The store on this database.
    pub fn store(&self) -> &PgStore {
        &self.store
    }

    /// Runs SQL statements on this database, on a connection of their own. Panics on failure.
    pub async fn batch_execute(&self, sql: &str) {
        let mut conn = AsyncPgConnection::establish(&self.url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.url));
        conn.batch_execute(sql).await.unwrap_or_else(|e| panic!("`{sql}` failed: {e}"));
    }
}

impl Deref for TestDatabase {
    type Target = PgStore;

    fn deref(&self) -> &PgStore {
        &self.store
    }
}

fn config(url: &str) -> PgConfig {
    let mut config = PgConfig::new(url);
    config.pool_size = 4;
    config.wait_timeout = Duration::from_secs(10);
    config.connect_timeout = Duration::from_secs(10);
    config.statement_timeout = Duration::from_secs(30);
    config
}

/// Runs one statement on the server's `postgres` database.
async fn admin(server: &Server, sql: &str) {
    let url = format!("{}postgres", server.base);
    let mut conn = AsyncPgConnection::establish(&url)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}\n{HOW_TO_PROVIDE}"));
    conn.batch_execute(sql).await.unwrap_or_else(|e| panic!("`{sql}` failed: {e}"));
}

async fn start_server() -> Server {
    let (base, own) = match std::env::var("DATABASE_URL") {
        Ok(url) if !url.is_empty() => (base_of(&url), false),
        _ => (tokio::task::spawn_blocking(start_cluster).await.expect("the cluster starts"), true),
    };
    // On a shared server the template's name carries the process id, so that concurrent test
    // processes do not clone each other's template while it is being migrated.
    let template =
        if own { TEMPLATE.to_owned() } else { format!("{TEMPLATE}_{}", std::process::id()) };
    let server = Server { base, template };
    admin(&server, &format!("DROP DATABASE IF EXISTS {}", server.template)).await;
    admin(&server, &format!("CREATE DATABASE {}", server.template)).await;
    let store = PgBackend::connect(&config(&format!("{}{}", server.base, server.template)))
        .expect("a pool");
    store.migrate().await.expect("the template migrates");
    // Close every connection to the template: PostgreSQL clones only an idle database.
    store.pool.close();
    drop(store);
    server
}

/// The URL without its database name: `postgres://user@host:port/`.
fn base_of(url: &str) -> String {
    let (head, _) = url.split_once('?').unwrap_or((url, ""));
    let scheme_end = head.find("://").map(|i| i + 3).unwrap_or(0);
    match head[scheme_end..].find('/') {
        Some(slash) => head[..scheme_end + slash + 1].to_owned(),
        None => format!("{head}/"),
    }
}

/// Finds a PostgreSQL server binary.
fn binary(name: &str) -> PathBuf {
    let mut candidates = vec![];
    if let Ok(dir) = std::env::var("RECRUITD_PG_BIN") {
        candidates.push(PathBuf::from(dir).join(name));
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join(name)));
    }
    if let Ok(versions) = std::fs::read_dir("/usr/lib/postgresql") {
        candidates.extend(versions.flatten().map(|v| v.path().join("bin").join(name)));
    }
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` not found. {HOW_TO_PROVIDE}"))
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false)
}

/// A command run as the `postgres` user when this process is root.
fn as_server_user(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A new cluster's directory (owned by the server's user) with an initialised data directory
/// in it: `(dir, dir/data)`.
fn init_cluster(prefix: &str) -> (PathBuf, PathBuf) {
    let initdb = binary("initdb");
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{}", std::process::id(), free_port()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    if is_root() {
        let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir).status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "cannot hand {} to the postgres user. {HOW_TO_PROVIDE}",
            dir.display()
        );
    }
    let data = dir.join("data");
    let out = as_server_user(&initdb)
        .arg("-D")
        .arg(&data)
        .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run initdb: {e}. {HOW_TO_PROVIDE}"));
    assert!(
        out.status.success(),
        "initdb failed: {}\n{HOW_TO_PROVIDE}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, data)
}

/// Starts this process's own cluster and returns its base URL.
#[expect(
    clippy::zombie_processes,
    reason = "the watchdog outlives the tests by design: it stops the server once they are gone"
)]
fn start_cluster() -> String {
    let postgres = binary("postgres");
    let (dir, data) = init_cluster("recruitd-pg");

    let port = free_port();
    let durable = std::env::var("RECRUITD_PG_DURABLE").is_ok_and(|v| v == "1");
    let speed =
        if durable { "" } else { "-c fsync=off -c synchronous_commit=off -c full_page_writes=off" };
    // The watchdog: runs postgres, and when this test process is gone, stops it and removes
    // the directory. It polls /proc because a signal to a root process may not be permitted.
    let script = format!(
        r#"{postgres} -D {data} -p {port} -k {dir} -c listen_addresses=127.0.0.1 {speed} \
             -c max_connections=200 -c shared_buffers=128MB >{dir}/server.log 2>&1 &
           pg=$!
           while [ -d /proc/{parent} ] && kill -0 $pg 2>/dev/null; do sleep 1; done
           kill -INT $pg 2>/dev/null; wait $pg; rm -rf {dir}"#,
        postgres = postgres.display(),
        data = data.display(),
        dir = dir.display(),
        parent = std::process::id(),
    );
    let sh = Path::new("/bin/sh");
    as_server_user(sh).args(["-c", &script]).spawn().expect("the watchdog starts");

    let base = format!("postgres://postgres@127.0.0.1:{port}/");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    loop {
        let ready =
            runtime.block_on(AsyncPgConnection::establish(&format!("{base}postgres"))).is_ok();
        if ready {
            break;
        }
        if std::time::Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
            panic!("PostgreSQL did not start within 60 s:\n{log}\n{HOW_TO_PROVIDE}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    base
}

/// A cluster of its own that a test may stop and start again, for what happens to a running
/// server when its database goes away. Stopped and removed when dropped, or by a watchdog if
/// the test process ends without dropping it.
#[derive(Debug)]
pub struct DedicatedCluster {
    dir: PathBuf,
    data: PathBuf,
    port: u16,
    pg_ctl: PathBuf,
}

impl DedicatedCluster {
    /// Initialises and starts a new cluster on a free port. Panics with instructions when the
    /// PostgreSQL server binaries are not available.
    pub fn start() -> Self {
        let pg_ctl = binary("pg_ctl");
        let port = free_port();
        let (dir, data) = init_cluster("recruitd-pgd");
        let cluster = Self { dir, data, port, pg_ctl };
        cluster.start_again();
        cluster.watched();
        cluster
    }

    /// A hot standby of this cluster, streaming its write-ahead log (`pg_basebackup -R`), on a
    /// port of its own; stopped and removed as the cluster is.
    pub fn standby(&self) -> Self {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("recruitd-pgs-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        if is_root() {
            let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir).status();
            assert!(status.is_ok_and(|s| s.success()), "cannot hand {} over", dir.display());
        }
        let data = dir.join("data");
        let out = as_server_user(&binary("pg_basebackup"))
            .arg("-D")
            .arg(&data)
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres"])
            .args(["-R", "-X", "stream", "-c", "fast"])
            .output()
            .expect("pg_basebackup runs");
        assert!(
            out.status.success(),
            "pg_basebackup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let standby = Self { dir, data, port, pg_ctl: self.pg_ctl.clone() };
        standby.start_again();
        standby.watched();
        standby
    }

    /// Starts the watchdog that stops and removes this cluster if the test process ends
    /// without dropping it.
    #[expect(
        clippy::zombie_processes,
        reason = "the watchdog outlives the tests by design: it removes the cluster once they are gone"
    )]
    fn watched(&self) {
        let script = format!(
            "while [ -d /proc/{parent} ]; do sleep 1; done; {pg_ctl} -D {data} -m immediate stop >/dev/null 2>&1; rm -rf {dir}",
            parent = std::process::id(),
            pg_ctl = self.pg_ctl.display(),
            data = self.data.display(),
            dir = self.dir.display(),
        );
        as_server_user(Path::new("/bin/sh"))
            .args(["-c", &script])
            .spawn()
            .expect("the watchdog starts");
    }

    /// Its data directory (owned by the `postgres` user when the tests run as root).
    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// The directory of its Unix socket.
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server at once (`immediate`: no checkpoint, as a crash), waiting until it is
    /// down.
    pub fn crash(&self) {
        self.stopped("immediate");
    }

    /// The URL of database `name` on this cluster.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates an empty database on this cluster.
    pub fn create_database(&self, name: &str) {
        self.execute("postgres", &format!("CREATE DATABASE {name}"));
    }

    /// Runs SQL statements in database `name` of this cluster. Panics on failure.
    pub fn execute(&self, name: &str, sql: &str) {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        runtime.block_on(async {
            let mut conn = AsyncPgConnection::establish(&self.url(name)).await.expect("connects");
            conn.batch_execute(sql).await.unwrap_or_else(|e| panic!("`{sql}` failed: {e}"));
        });
    }

    /// Stops the server (fast shutdown: connections are cut) and waits until it is down.
    pub fn stop(&self) {
        self.stopped("fast");
    }

    /// `pg_ctl stop` in shutdown `mode`, waiting until the server is down.
    fn stopped(&self, mode: &str) {
        let out = as_server_user(&self.pg_ctl)
            .arg("-D")
            .arg(&self.data)
            .args(["-m", mode, "-w", "stop"])
            .output();
        assert!(out.is_ok_and(|o| o.status.success()), "pg_ctl stop -m {mode} failed");
    }

    /// Starts the server again and waits until it accepts connections.
    pub fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("server.log");
        let out = as_server_user(&self.pg_ctl)
            .arg("-D")
            .arg(&self.data)
            .args(["-o", &options, "-l"])
            .arg(&log)
            .args(["-w", "start"])
            .output()
            .expect("pg_ctl runs");
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }
}

impl Drop for DedicatedCluster {
    fn drop(&mut self) {
        let _ = as_server_user(&self.pg_ctl)
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
