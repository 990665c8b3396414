//! The wiring every command shares: the store the database URL names, opened with its pending
//! migrations applied; the service over it; the checkpoint key.

use std::path::Path;
use std::sync::Arc;

use recruit_adapters_pg::{PgBackend, PgConfig, PgReplica};
use recruit_adapters_sqlite::{SqliteBackend, SqliteConfig};
use recruit_ports::{Replica, Store};
use recruit_service::checkpoint::CheckpointKey;
use recruit_service::cursor::CursorKey;
use recruit_service::limits::RateLimitConfig;
use recruit_service::replica::HeavyReads;
use recruit_service::{Service, ServiceConfig};

use crate::Failure;
use crate::cli::{Cli, Command, ServiceArgs};

/// A store, where its pool's numbers come from for the metrics, and its standbys for the
/// heavy reads, if any.
pub(crate) struct Opened {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) pool_status: Box<dyn Fn() -> recruit_ports::PoolStatus + Send + Sync>,
    pub(crate) replica: Option<Arc<dyn Replica>>,
}

impl Opened {
    /// Where the heavy reads of a command run: on the standbys when configured.
    pub(crate) fn heavy_reads(&self, wait: std::time::Duration) -> HeavyReads {
        HeavyReads::new(Arc::clone(&self.store), self.replica.clone().map(|r| (r, wait)))
    }
}

/// The SQLite file the database URL names (`sqlite://PATH` or a plain path); None for
/// PostgreSQL (`postgres://…`, `postgresql://…`).
pub(crate) fn sqlite_file(url: &str) -> Option<&str> {
    let postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
    (!postgres).then(|| url.strip_prefix("sqlite://").unwrap_or(url))
}

/// Opens the store the URL names and applies its pending migrations.
pub(crate) async fn open_store(cli: &Cli) -> Result<Opened, Failure> {
    let url = cli.database_url.as_str();
    if sqlite_file(url).is_none() {
        let mut config = PgConfig::new(url);
        config.pool_size = cli.db_pool_size;
        config.wait_timeout = cli.db_wait_timeout;
        config.statement_timeout = cli.db_statement_timeout;
        // Only long-running commands serve requests; the others need no extra connection, and
        // their exports (a command's own) no limit but the operator's.
        let service = match &cli.command {
            Command::Serve(args) => Some(&args.service),
            Command::Mcp(args) => Some(&args.service),
            _ => None,
        };
        config.credential_cache = service.map(|_| cli.credential_cache_max_age);
        // The request deadline bounds an export until its first entry: its count may use all
        // of it, not only one statement's limit.
        config.export_statement_timeout =
            service.map(|s| s.request_deadline.max(cli.db_statement_timeout));
        let store = PgBackend::connect(&config)?;
        let applied = store
            .migrate()
            .await
            .map_err(|e| Failure(format!("cannot migrate the database: {e}")))?;
        tracing::info!(migrations.applied = applied, backend = "postgres", "database ready");
        let replica = match &cli.read_database_url {
            Some(read) => {
                let standbys = PgConfig { url: read.clone(), credential_cache: None, ..config };
                Some(Arc::new(PgReplica::connect(store.clone(), &standbys)?) as Arc<dyn Replica>)
            }
            None => None,
        };
        let pool = store.clone();
        Ok(Opened {
            store: Arc::new(store),
            pool_status: Box::new(move || pool.pool_status()),
            replica,
        })
    } else {
        if cli.read_database_url.is_some() {
            return Err(Failure("--read-database-url needs a PostgreSQL --database-url".into()));
        }
        let path = sqlite_file(url).unwrap_or(url);
        let mut config = SqliteConfig::new(path);
        config.pool_size = cli.db_pool_size;
        config.wait_timeout = cli.db_wait_timeout;
        let store = SqliteBackend::open(&config)
            .await
            .map_err(|e| Failure(format!("cannot open the SQLite database {path}: {e}")))?;
        let applied = store
            .migrate()
            .await
            .map_err(|e| Failure(format!("cannot migrate the database: {e}")))?;
        tracing::info!(migrations.applied = applied, backend = "sqlite", path, "database ready");
        let pool = store.clone();
        Ok(Opened {
            store: Arc::new(store),
            pool_status: Box::new(move || pool.pool_status()),
            replica: None,
        })
    }
}

/// The cursor key: from configuration, else generated once and kept in the database.
async fn cursor_key(store: &dyn Store, configured: Option<&str>) -> Result<CursorKey, Failure> {
    let secret = match configured {
        Some(s) => s.as_bytes().to_vec(),
        None => {
            let (proposed, _) = recruit_service::auth::generate_secret();
            store.server_secret("cursor", proposed.as_bytes()).await?
        }
    };
    CursorKey::new(&secret)
        .ok_or_else(|| Failure("the cursor secret must be at least 32 bytes long".into()))
}

/// The service over `store`, its heavy reads on `replica`'s standbys when given, configured,
/// with its checkpoint key and e-mail if any, reaching identity providers through `outbound`.
pub(crate) async fn service(
    store: Arc<dyn Store>,
    replica: Option<(Arc<dyn Replica>, std::time::Duration)>,
    args: &ServiceArgs,
    (checkpoint_key, mail): (Option<CheckpointKey>, Option<recruit_service::mail::MailConfig>),
    ledger_retention: recruit_domain::Retention,
    outbound: Arc<crate::outbound::Outbound>,
) -> Result<Arc<Service>, Failure> {
    let key = cursor_key(store.as_ref(), args.cursor_secret.as_deref()).await?;
    let mut config = ServiceConfig::new(args.app_base_url.clone(), key);
    config.checkpoint_key = checkpoint_key;
    config.mail = mail;
    config.outbound = Some(recruit_service::outbound::Fetcher(outbound));
    config.ledger_retention = ledger_retention;
    config.max_exports = args.max_exports as usize;
    config.max_clock_skew = args.max_clock_skew;
    config.console_sessions = recruit_service::console::SessionLimits {
        idle: args.console_idle_timeout,
        longest: args.console_session_max,
    };
    config.batch_writes = recruit_service::BatchWrites {
        at_once: args.max_batch_writes as usize,
        wait: args.batch_write_wait,
    };
    config.rate_limits = RateLimitConfig {
        reads: args.rate_limit_reads,
        ledger_reads: args.rate_limit_ledger_reads,
        writes: args.rate_limit_writes,
        auth_failures: args.rate_limit_auth_failures,
    };
    let service = Service::new(store, config);
    Ok(Arc::new(match replica {
        Some((replica, wait)) => service.with_replica(replica, wait),
        None => service,
    }))
}

/// The checkpoint key at `path`, if one is configured.
pub(crate) fn checkpoint_key(path: Option<&Path>) -> Result<Option<CheckpointKey>, Failure> {
    Ok(path.map(CheckpointKey::load).transpose()?)
}

/// The demo's checkpoint key, kept beside its database so that the quick start signs
/// checkpoints without a step of its own: `FILE.checkpoint-key.pem` beside a SQLite file,
/// `recruitd-demo.checkpoint-key.pem` in the working directory for a server's database.
/// Made (mode 0600) on first use, read after.
pub(crate) fn demo_checkpoint_key(database_url: &str) -> Result<CheckpointKey, Failure> {
    let path = match database_url.strip_prefix("sqlite://") {
        Some(file) => std::path::PathBuf::from(format!("{file}.checkpoint-key.pem")),
        None => std::path::PathBuf::from("recruitd-demo.checkpoint-key.pem"),
    };
    if path.exists() {
        return Ok(CheckpointKey::load(&path)?);
    }
    let key = CheckpointKey::generate();
    write_new_key(&path, &key)?;
    tracing::info!(path = %path.display(), key_id = %key.key_id(), "the demo signs checkpoints");
    Ok(key)
}

/// Writes `key` as PKCS#8 PEM to a new file at `path`, readable by its owner only, and syncs it.
pub(crate) fn write_new_key(path: &Path, key: &CheckpointKey) -> Result<(), Failure> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Failure(format!("cannot create {}: {e}", path.display())))?;
    file.write_all(key.to_pem().as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Failure(format!("cannot write {}: {e}", path.display())))
}
