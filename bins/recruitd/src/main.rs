//! `recruitd`: the server of the recruiting API and its operator commands. Thin: it reads the
//! configuration, picks the store from the database URL, applies migrations, and wires the
//! crates together. It is the only crate that names the concrete storage adapters.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use recruit_adapters_pg::{PgConfig, PgStore};
use recruit_adapters_sqlite::{SqliteConfig, SqliteStore};
use recruit_domain::chain::Checkpoint;
use recruit_domain::{ApiTokenId, OrganizationId, Scope, Timestamp, UserId};
use recruit_http::{Api, HttpConfig};
use recruit_mcp::{Tools, ToolsConfig};
use recruit_ports::{AuditListQuery, Store};
use recruit_service::checkpoint::{CheckpointKey, VerifyingKey};
use recruit_service::cursor::CursorKey;
use recruit_service::import::{Progress, import_document, import_ndjson};
use recruit_service::limits::{Limit, RateLimitConfig};
use recruit_service::{Service, ServiceConfig};

mod logging;

/// The recruiting API server and its operator commands.
///
/// Every command first applies the database's pending migrations.
#[derive(Debug, Parser)]
#[command(name = "recruitd", version, about, long_about = None)]
struct Cli {
    /// Where the data lives: `postgres://…` or `postgresql://…` for PostgreSQL, `sqlite://PATH`
    /// or a plain path for an SQLite file (created when missing).
    #[arg(
        long,
        global = true,
        env = "RECRUITD_DATABASE_URL",
        default_value = "sqlite://recruitd.db"
    )]
    database_url: String,

    /// Connections to the database at most.
    #[arg(long, global = true, env = "RECRUITD_DB_POOL_SIZE", default_value_t = 16)]
    db_pool_size: usize,

    /// How long a request waits for a free database connection before it is refused with
    /// UNAVAILABLE (e.g. `2s`, `500ms`).
    #[arg(long, global = true, env = "RECRUITD_DB_WAIT_TIMEOUT", default_value = "2s", value_parser = humantime::parse_duration)]
    db_wait_timeout: Duration,

    /// The longest one SQL statement may run (PostgreSQL `statement_timeout`).
    #[arg(long, global = true, env = "RECRUITD_DB_STATEMENT_TIMEOUT", default_value = "5s", value_parser = humantime::parse_duration)]
    db_statement_timeout: Duration,

    /// PostgreSQL: how long `serve` and `mcp` may keep a verified token in memory, so that
    /// authentication costs no database round trip. Every change to a token or a user
    /// (revocation first of all) empties it on every replica at once, announced by the
    /// database; while that announcement cannot be heard, nothing is kept. `0s` turns it off.
    #[arg(long, global = true, env = "RECRUITD_CREDENTIAL_CACHE_MAX_AGE", default_value = "60s", value_parser = humantime::parse_duration)]
    credential_cache_max_age: Duration,

    /// Log format: `human` for people, `json` for one JSON object per line. The level comes
    /// from `RUST_LOG` (default `info`).
    #[arg(long, global = true, env = "RECRUITD_LOG_FORMAT", default_value = "human")]
    log_format: LogFormat,

    /// The Ed25519 private key (PKCS#8 PEM) the server signs checkpoints of the ledgers'
    /// chains with (`recruitd audit keygen FILE` writes one). Without it, no checkpoint is
    /// signed and `audit verify` checks none unless given `--public-key`.
    #[arg(long, global = true, env = "RECRUITD_CHECKPOINT_KEY_FILE")]
    checkpoint_key: Option<PathBuf>,

    /// How long the ledgers keep their entries, in whole years or months (`2y`, `18mo`); at
    /// least a year, the legal minimum for access records (PIPA safety-measure standard,
    /// Art. 8). An export may span the whole period.
    #[arg(long, global = true, env = "RECRUITD_LEDGER_RETENTION", default_value = "2y")]
    ledger_retention: recruit_domain::Retention,

    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LogFormat {
    Human,
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the REST API and the tool interface for agents (MCP at `/mcp`).
    Serve(ServeArgs),
    /// Serve the tool interface for agents (MCP) over standard input and output, as the holder
    /// of one token, for agent hosts that start local servers.
    Mcp(McpArgs),
    /// Import JSON documents (`.json`) and NDJSON privacy ledgers (`.ndjson`), in the order
    /// given. A document is imported whole or not at all; see docs/import-format.md.
    ///
    /// An NDJSON ledger is written in batches, each all or nothing. Running the same import
    /// again after it stopped (a crash, a kill) finishes it: entries already stored exactly as
    /// in the file are skipped and counted, and one stored with other values stops the import
    /// at its line.
    Import {
        /// The files to import.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// NDJSON ledgers: entries written per transaction.
        #[arg(long, default_value_t = DEFAULT_IMPORT_BATCH, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        batch_size: u32,
    },
    /// Create and revoke API tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Read the audit ledgers.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Keep the ledgers: retention.
    #[command(subcommand)]
    Ledger(LedgerCommand),
}

#[derive(Debug, Subcommand)]
enum LedgerCommand {
    /// Remove what the ledgers recorded before the retention period (`--ledger-retention`),
    /// a whole month at a time: first export it to `--export-dir` (one NDJSON file a ledger,
    /// with the chain fields that prove it), then sign and store a cut of each chain at the
    /// last entry removed (`--checkpoint-key`), so that `audit verify` proves what remains,
    /// then remove it. With `--dry-run`, say what would go and change nothing.
    Retention {
        /// Where the exports of what is removed are written (a directory). Required unless
        /// `--dry-run`.
        #[arg(long, env = "RECRUITD_RETENTION_EXPORT_DIR", required_unless_present = "dry_run")]
        export_dir: Option<PathBuf>,
        /// Say what would be removed; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// One JSON object: the boundary, each chain's cut and what was done.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// The address to listen on.
    #[arg(long, env = "RECRUITD_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The URL clients reach this server at; error `docs_url`s point under it. Defaults to
    /// `http://` and the listen address.
    #[arg(long, env = "RECRUITD_PUBLIC_BASE_URL")]
    public_base_url: Option<String>,
    #[command(flatten)]
    service: ServiceArgs,
    /// Origins (`https://host[:port]`, comma-separated) whose web pages may call the tool
    /// interface; a request to `/mcp` carrying any other `Origin` is refused. Clients that send
    /// no `Origin` (agents, command-line tools) are not affected.
    #[arg(long, env = "RECRUITD_MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    mcp_allowed_origins: Vec<String>,
    /// How long in-flight requests may finish after SIGTERM or SIGINT.
    #[arg(long, env = "RECRUITD_SHUTDOWN_GRACE", default_value = "10s", value_parser = humantime::parse_duration)]
    shutdown_grace: Duration,
    /// How long a client connection may stay open doing nothing: one that never sends a
    /// request, or sits between keep-alive requests. Then the server closes it.
    #[arg(long, env = "RECRUITD_IDLE_TIMEOUT", default_value = "30s", value_parser = humantime::parse_duration)]
    idle_timeout: Duration,
    /// The most client connections open at once; further ones are closed on arrival. Lowered
    /// at start (with a warning) when the limit of open files (`ulimit -n`) leaves less room.
    #[arg(long, env = "RECRUITD_MAX_CONNECTIONS", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: u32,
    /// The most connections one client address may have open at once, so that one client's
    /// idle sockets cannot hold every slot; further ones of that address are closed on
    /// arrival. Default: a quarter of --max-connections. Trusted proxies are exempt.
    #[arg(long, env = "RECRUITD_MAX_CONNECTIONS_PER_ADDRESS", value_parser = clap::value_parser!(u32).range(1..))]
    max_connections_per_address: Option<u32>,
    /// Load balancers and reverse proxies in front of the server, as addresses or CIDR blocks
    /// (comma-separated, such as `10.0.0.0/8,2001:db8::/32`). A request arriving from one of
    /// them is taken to come from the client address it forwarded in `X-Forwarded-For`: that
    /// is the address the audit ledgers record and failed authentications are counted against.
    /// Without it the TCP peer is the client, and `X-Forwarded-For` is ignored.
    #[arg(long, env = "RECRUITD_TRUSTED_PROXIES", value_delimiter = ',', value_parser = proxy_block)]
    trusted_proxies: Vec<ipnet::IpNet>,
    /// On an empty database, load deterministic demo data (two organizations, users of every
    /// role, jobs, candidates, 40 000 privacy ledger entries over the last year), create an
    /// owner and a member token, and print them with ready-to-paste curl commands. On a
    /// database that holds data, change nothing.
    #[arg(long, env = "RECRUITD_DEMO")]
    demo: bool,

    /// With `--checkpoint-key`, how often the server signs the head of every chain that moved
    /// since its last checkpoint (e.g. `1h`, `15m`); `0s` turns the schedule off.
    #[arg(long, env = "RECRUITD_CHECKPOINT_INTERVAL", default_value = "1h", value_parser = humantime::parse_duration)]
    checkpoint_interval: Duration,

    /// With `--checkpoint-key` and `--retention-export-dir`, how often the server runs
    /// `recruitd ledger retention` itself (the first time a minute after it starts, or sooner
    /// with a shorter interval); `0s` turns the schedule off.
    #[arg(long, env = "RECRUITD_RETENTION_INTERVAL", default_value = "24h", value_parser = humantime::parse_duration)]
    retention_interval: Duration,

    /// Where the server's retention runs export what they remove; without it the server runs
    /// no retention.
    #[arg(long, env = "RECRUITD_RETENTION_EXPORT_DIR")]
    retention_export_dir: Option<PathBuf>,
}

/// What the operations need, however they are served.
#[derive(Debug, clap::Args)]
struct ServiceArgs {
    /// The web app's base URL; `app_url`s of jobs and organizations are built from it.
    #[arg(long, env = "RECRUITD_APP_BASE_URL", default_value = "https://app.recruitd.example")]
    app_base_url: String,
    /// The secret cursors are signed with (at least 32 bytes); every replica needs the same.
    /// Without it, one is generated once and kept in the database.
    #[arg(long, env = "RECRUITD_CURSOR_SECRET", hide_env_values = true)]
    cursor_secret: Option<String>,
    /// The longest a request may take before it is answered with UPSTREAM_TIMEOUT.
    #[arg(long, env = "RECRUITD_REQUEST_DEADLINE", default_value = "10s", value_parser = humantime::parse_duration)]
    request_deadline: Duration,
    /// Per token: reads of jobs and of the organization allowed, as `N/s`, `N/min` or `N/h`
    /// (all of them at once at most, then evenly), or `off`. Past it: 429 RATE_LIMITED.
    #[arg(long, env = "RECRUITD_RATE_LIMIT_READS", default_value_t = RateLimitConfig::DEFAULT.reads)]
    rate_limit_reads: Limit,
    /// Per token: reads of the privacy audit ledger allowed (`N/s`, `N/min`, `N/h` or `off`).
    #[arg(long, env = "RECRUITD_RATE_LIMIT_LEDGER_READS", default_value_t = RateLimitConfig::DEFAULT.ledger_reads)]
    rate_limit_ledger_reads: Limit,
    /// Per token: writes allowed, each recording up to 1 000 accesses (`N/s`, `N/min`, `N/h` or
    /// `off`).
    #[arg(long, env = "RECRUITD_RATE_LIMIT_WRITES", default_value_t = RateLimitConfig::DEFAULT.writes)]
    rate_limit_writes: Limit,
    /// Per client address (IPv6: per /64): failed authentications allowed (`N/s`, `N/min`,
    /// `N/h` or `off`). Past it every request from the address that needs a credential is
    /// refused with 429 until the quota allows another attempt.
    #[arg(long, env = "RECRUITD_RATE_LIMIT_AUTH_FAILURES", default_value_t = RateLimitConfig::DEFAULT.auth_failures)]
    rate_limit_auth_failures: Limit,
    /// The most exports of the privacy ledger streaming at once, each holding a database
    /// connection while it streams; further ones get 429 RATE_LIMITED until one ends.
    #[arg(long, env = "RECRUITD_MAX_EXPORTS", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    max_exports: u32,
    /// The most batches of recorded accesses read and written at once. Each holds its entries
    /// in memory (a few MB for 1 000) while it is written; the batches of one organization
    /// take turns at its ledger's head anyway. Further batches wait their turn.
    #[arg(long, env = "RECRUITD_MAX_BATCH_WRITES", default_value_t = recruit_service::BatchWrites::DEFAULT.at_once as u32, value_parser = clap::value_parser!(u32).range(1..=256))]
    max_batch_writes: u32,
    /// How long a batch of recorded accesses waits for its turn to be written before it is
    /// refused with 503 UNAVAILABLE and `Retry-After`, nothing written (e.g. `5s`).
    #[arg(long, env = "RECRUITD_BATCH_WRITE_WAIT", default_value = "5s", value_parser = humantime::parse_duration)]
    batch_write_wait: Duration,
}

#[derive(Debug, clap::Args)]
struct McpArgs {
    /// A file holding the API token (`rtk_…`) the tools act as; surrounding white space is
    /// ignored. A file rather than an argument keeps the secret out of process listings.
    #[arg(long, env = "RECRUITD_MCP_TOKEN_FILE")]
    token_file: PathBuf,
    /// The URL the REST server is reached at, for the `docs_url` of errors; without it errors
    /// carry no link.
    #[arg(long, env = "RECRUITD_PUBLIC_BASE_URL")]
    public_base_url: Option<String>,
    #[command(flatten)]
    service: ServiceArgs,
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Create a token acting as a user; prints its secret once.
    Create {
        /// The user the token acts as (its organization is the user's).
        #[arg(long)]
        user: UserId,
        /// Comma-separated scopes: audit_logs:read, jobs:read, organization:read, audit_logs:write,
        /// users:read, users:write.
        #[arg(long, value_delimiter = ',', required = true)]
        scopes: Vec<Scope>,
        /// A name for people.
        #[arg(long, default_value = "")]
        name: String,
        /// Lifetime, such as `30d` or `12h`; without it the token does not expire.
        #[arg(long, value_parser = humantime::parse_duration)]
        expires_in: Option<Duration>,
        /// Print one JSON object: {id, token, organization_id, user_id, scopes, expires_at}.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token: it stops working at once.
    Revoke {
        /// The token's id (`tok_…`).
        id: ApiTokenId,
    },
    /// List tokens, newest first: id, organization, user, name, scopes, and when each was
    /// created, expires, was revoked and last used. Never their secrets.
    List {
        /// Only this organization's tokens.
        #[arg(long)]
        org: Option<OrganizationId>,
        /// One JSON object per line (NDJSON).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// List audit ledger entries, newest first.
    List {
        /// Which ledger: `api` (every read of the privacy ledger) or `tool` (reads through the
        /// tool interface).
        #[arg(long, value_enum)]
        ledger: Ledger,
        /// Only this organization's entries.
        #[arg(long)]
        org: Option<OrganizationId>,
        /// At most this many entries.
        #[arg(long, default_value_t = 100)]
        limit: u32,
        /// One JSON object per line (NDJSON).
        #[arg(long)]
        json: bool,
    },
    /// Recompute the hash chain of every ledger (or one) of every organization (or one) and
    /// report every entry modified, deleted, inserted or reordered, and any truncated tail, by
    /// position and id. Exits non-zero when anything is found.
    Verify {
        /// Only this ledger: `privacy`, `api` or `tool`.
        #[arg(long, value_enum)]
        ledger: Option<ChainedLedger>,
        /// Only this organization's chains.
        #[arg(long)]
        org: Option<OrganizationId>,
        /// Checkpoints kept outside the database (as `audit checkpoint --json` prints them or
        /// the API returns one): each is checked with the public key, then the chain against
        /// it, so that a chain rewritten or cut since shows even with its head moved too.
        #[arg(long)]
        checkpoint: Option<PathBuf>,
        /// A public key (PEM) checkpoints may be signed with, besides the public half of
        /// `--checkpoint-key`; repeat it for the keys a rotation replaced. With any key, every
        /// stored checkpoint is checked too.
        #[arg(long)]
        public_key: Vec<PathBuf>,
        /// One JSON object per chain and line (NDJSON), with its findings.
        #[arg(long)]
        json: bool,
    },
    /// Sign the head of every chain (or every chain of one organization) that moved since its
    /// last checkpoint, with `--checkpoint-key`, store the checkpoints and print them: keep
    /// them outside the database. The server does this on its own every
    /// `--checkpoint-interval`.
    Checkpoint {
        /// Only this organization's chains.
        #[arg(long)]
        org: Option<OrganizationId>,
    },
    /// Export a ledger (of every organization, or one), or the part of it recorded in a time
    /// window, to FILE as NDJSON: one entry a line with its organization, position and chain
    /// hashes, so that whoever receives it can check every entry. Read from one snapshot,
    /// with flat memory; written to FILE.partial and renamed once complete; an existing FILE
    /// is never overwritten. `-` writes to standard output.
    Export {
        /// Which ledger: `privacy`, `api` or `tool`.
        #[arg(long, value_enum)]
        ledger: ChainedLedger,
        /// Only this organization's entries.
        #[arg(long)]
        org: Option<OrganizationId>,
        /// The first instant exported (RFC 3339), by the entries' time (`access_time`, or
        /// `at` in the audit ledgers).
        #[arg(long, value_parser = parse_time)]
        from: Option<Timestamp>,
        /// The first instant not exported (RFC 3339).
        #[arg(long, value_parser = parse_time)]
        to: Option<Timestamp>,
        /// Where to write the export.
        file: PathBuf,
    },
    /// Summarise one month of an organization's privacy ledger for its monthly review: per
    /// account, the accesses, the bulk accesses, the accesses outside the organization's work
    /// hours, and every download listed (each needs its reason checked), with the exports of
    /// the ledger through the API.
    Review {
        /// The month, `YYYY-MM`.
        #[arg(long)]
        month: recruit_service::review::Month,
        /// Only this organization; without it, every organization with a privacy ledger.
        #[arg(long)]
        org: Option<OrganizationId>,
        /// The UTC offset the month and the work hours are read at (`+09:00`, `Z`): the
        /// organization's own. The ledger keeps instants, the work hours wall-clock times.
        #[arg(long, default_value = "Z")]
        utc_offset: recruit_service::review::UtcOffset,
        /// One JSON object per organization and line (NDJSON).
        #[arg(long)]
        json: bool,
    },
    /// Write a new Ed25519 private key for signing checkpoints to FILE (readable by its owner
    /// only; an existing file is never overwritten) and print its public key.
    Keygen {
        /// Where to write the key (PKCS#8 PEM).
        file: PathBuf,
    },
}

/// A ledger with a hash chain.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum ChainedLedger {
    Privacy,
    Api,
    Tool,
}

impl From<ChainedLedger> for recruit_domain::chain::Ledger {
    fn from(l: ChainedLedger) -> Self {
        match l {
            ChainedLedger::Privacy => Self::Privacy,
            ChainedLedger::Api => Self::Api,
            ChainedLedger::Tool => Self::Tool,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Ledger {
    Api,
    Tool,
}

/// How often a serving replica purges expired idempotency keys.
const KEY_PURGE_INTERVAL: Duration = Duration::from_secs(600);

/// A failure of a command: its message for the operator.
struct Failure(String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Self(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let logging = logging::init(cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    let dropped = logging.dropped_lines();
    let outcome = runtime.block_on(run(cli, move || dropped.get()));
    // Requests still running past the grace period are abandoned, not waited for.
    runtime.shutdown_timeout(Duration::from_secs(1));
    logging.finish();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => fail(&message),
    }
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "recruitd: {message}");
    ExitCode::FAILURE
}

fn print(line: &str) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// A store, and where its pool's numbers come from for the metrics.
struct Opened {
    store: Arc<dyn Store>,
    pool_status: Box<dyn Fn() -> recruit_ports::PoolStatus + Send + Sync>,
}

/// Opens the store the URL names and applies its pending migrations.
async fn open_store(cli: &Cli) -> Result<Opened, Failure> {
    let url = cli.database_url.as_str();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let mut config = PgConfig::new(url);
        config.pool_size = cli.db_pool_size;
        config.wait_timeout = cli.db_wait_timeout;
        config.statement_timeout = cli.db_statement_timeout;
        // Only long-running commands serve requests; the others need no extra connection.
        if matches!(cli.command, Command::Serve(_) | Command::Mcp(_)) {
            config.credential_cache = Some(cli.credential_cache_max_age);
        }
        let store = PgStore::connect(&config)?;
        let applied = store
            .migrate()
            .await
            .map_err(|e| Failure(format!("cannot migrate the database: {e}")))?;
        tracing::info!(migrations.applied = applied, backend = "postgres", "database ready");
        let pool = store.clone();
        Ok(Opened { store: Arc::new(store), pool_status: Box::new(move || pool.pool_status()) })
    } else {
        let path = url.strip_prefix("sqlite://").unwrap_or(url);
        let mut config = SqliteConfig::new(path);
        config.pool_size = cli.db_pool_size;
        config.wait_timeout = cli.db_wait_timeout;
        let store = SqliteStore::open(&config)
            .await
            .map_err(|e| Failure(format!("cannot open the SQLite database {path}: {e}")))?;
        let applied = store
            .migrate()
            .await
            .map_err(|e| Failure(format!("cannot migrate the database: {e}")))?;
        tracing::info!(migrations.applied = applied, backend = "sqlite", path, "database ready");
        let pool = store.clone();
        Ok(Opened { store: Arc::new(store), pool_status: Box::new(move || pool.pool_status()) })
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

/// Runs the command; `dropped_log_lines` counts the log lines lost so far, for the metrics.
async fn run(
    cli: Cli,
    dropped_log_lines: impl Fn() -> u64 + Send + Sync + 'static,
) -> Result<(), Failure> {
    // A new key needs no database.
    if let Command::Audit(AuditCommand::Keygen { file }) = &cli.command {
        return keygen(file);
    }
    let Opened { store, pool_status } = open_store(&cli).await?;
    match cli.command {
        Command::Serve(args) => {
            let key = checkpoint_key(cli.checkpoint_key.as_deref())?;
            let service =
                service(Arc::clone(&store), &args.service, key.clone(), cli.ledger_retention)
                    .await?;
            let retention = cli.ledger_retention;
            serve(store, service, pool_status, dropped_log_lines, key, retention, args).await
        }
        Command::Mcp(args) => {
            let key = checkpoint_key(cli.checkpoint_key.as_deref())?;
            let service = service(store, &args.service, key, cli.ledger_retention).await?;
            mcp(service, args).await
        }
        Command::Import { files, batch_size } => {
            import(store.as_ref(), &files, batch_size as usize).await
        }
        Command::Token(command) => token(store, command).await,
        Command::Ledger(LedgerCommand::Retention { export_dir, dry_run, json }) => {
            let key = checkpoint_key(cli.checkpoint_key.as_deref())?;
            retention(store.as_ref(), cli.ledger_retention, key.as_ref(), export_dir, dry_run, json)
                .await
        }
        Command::Audit(AuditCommand::List { ledger, org, limit, json }) => {
            audit_list(store.as_ref(), ledger, org, limit, json).await
        }
        Command::Audit(AuditCommand::Verify { ledger, org, checkpoint, public_key, json }) => {
            let mut keys = public_key
                .iter()
                .map(|path| recruit_service::checkpoint::load_public(path))
                .collect::<Result<Vec<_>, _>>()?;
            keys.extend(checkpoint_key(cli.checkpoint_key.as_deref())?.map(|k| k.public()));
            audit_verify(store.as_ref(), ledger, org, checkpoint.as_deref(), &keys, json).await
        }
        Command::Audit(AuditCommand::Checkpoint { org }) => {
            let key = checkpoint_key(cli.checkpoint_key.as_deref())?.ok_or_else(|| {
                Failure("audit checkpoint needs the signing key: --checkpoint-key FILE".into())
            })?;
            for c in recruit_service::checkpoint::sign_heads(store.as_ref(), &key, org).await? {
                print(&serde_json::to_string(&c).unwrap_or_default());
            }
            Ok(())
        }
        Command::Audit(AuditCommand::Keygen { .. }) => unreachable!("handled before the store"),
        Command::Audit(AuditCommand::Review { month, org, utc_offset, json }) => {
            let orgs = match org {
                Some(org) => vec![org],
                None => {
                    let mut orgs: Vec<_> = store
                        .chain_heads(None)
                        .await?
                        .into_iter()
                        .filter(|h| h.ledger == "privacy")
                        .map(|h| h.organization_id)
                        .collect();
                    orgs.sort_unstable();
                    orgs.dedup();
                    orgs.into_iter().map(OrganizationId::from_uuid).collect()
                }
            };
            for org in orgs {
                let review =
                    recruit_service::review::review(store.as_ref(), org, month, utc_offset)
                        .await
                        .map_err(|e| Failure(format!("cannot review {org}: {e}")))?;
                if json {
                    print(&serde_json::to_string(&review).unwrap_or_default());
                } else {
                    print(&review.to_string());
                }
            }
            Ok(())
        }
        Command::Audit(AuditCommand::Export { ledger, org, from, to, file }) => {
            let query = recruit_ports::chain::ExportQuery {
                ledger: ledger.into(),
                organization: org,
                from,
                to,
                ids: None,
                recorded_before: None,
            };
            audit_export(store.as_ref(), &query, &file).await
        }
    }
}

async fn serve(
    store: Arc<dyn Store>,
    service: Arc<Service>,
    pool_status: Box<dyn Fn() -> recruit_ports::PoolStatus + Send + Sync>,
    dropped_log_lines: impl Fn() -> u64 + Send + Sync + 'static,
    checkpoint_key: Option<CheckpointKey>,
    retention_period: recruit_domain::Retention,
    args: ServeArgs,
) -> Result<(), Failure> {
    let shutdown = shutdown_signal()?;
    let checkpoint_key_for_retention = checkpoint_key.clone();
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| Failure(format!("cannot listen on {}: {e}", args.listen)))?;
    let address = listener.local_addr()?;
    let public = args.public_base_url.unwrap_or_else(|| format!("http://{address}"));
    if args.demo {
        demo(&service, &public).await?;
    }
    // Idempotency keys past their 24 hours are purged every ten minutes.
    let purging = Arc::clone(&service);
    tokio::spawn(async move {
        let mut every = tokio::time::interval(KEY_PURGE_INTERVAL);
        loop {
            every.tick().await;
            match purging.purge_expired_keys().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(keys = n, "expired idempotency keys purged"),
                Err(e) => tracing::warn!(error = %e, "expired idempotency keys not purged"),
            }
        }
    });
    // The heads of the chains that moved are signed on a schedule, the first time at start.
    if let Some(key) = checkpoint_key.filter(|_| !args.checkpoint_interval.is_zero()) {
        let store = Arc::clone(&store);
        let interval = args.checkpoint_interval;
        tokio::spawn(async move {
            let mut every = tokio::time::interval(interval);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                match recruit_service::checkpoint::sign_heads(store.as_ref(), &key, None).await {
                    Ok(signed) if signed.is_empty() => {}
                    Ok(signed) => {
                        tracing::info!(checkpoints = signed.len(), "chains' heads signed")
                    }
                    Err(e) => tracing::warn!(error = %e, "chains' heads not signed"),
                }
            }
        });
    }
    // The months to come are prepared daily (PostgreSQL's ledger partitions); the migration
    // at start did it once already.
    let preparing = Arc::clone(&store);
    tokio::spawn(async move {
        let day = Duration::from_secs(24 * 3600);
        let mut every = tokio::time::interval_at(tokio::time::Instant::now() + day, day);
        loop {
            every.tick().await;
            if let Err(e) = preparing.prepare().await {
                tracing::warn!(error = %e, "the ledgers' months to come are not prepared; retried in a day");
            }
        }
    });
    // Retention on a schedule, when the server has a key to sign cuts and a place for exports.
    match (&checkpoint_key_for_retention, &args.retention_export_dir) {
        (Some(key), Some(dir)) if !args.retention_interval.is_zero() => {
            let (store, key, dir) = (Arc::clone(&store), key.clone(), dir.clone());
            let (interval, period) = (args.retention_interval, retention_period);
            tokio::spawn(async move {
                // The first run soon after start, so that a server restarted more often than
                // the interval still runs it.
                let first = tokio::time::Instant::now() + interval.min(Duration::from_secs(60));
                let mut every = tokio::time::interval_at(first, interval);
                every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    every.tick().await;
                    let now = Timestamp::now();
                    let run =
                        recruit_service::retention::run(store.as_ref(), &key, period, &dir, now);
                    match run.await {
                        Ok(applied) if applied.removed == 0 => {}
                        Ok(applied) => tracing::info!(
                            removed = applied.removed,
                            recorded_before = %applied.before,
                            "ledger retention: entries exported and removed"
                        ),
                        Err(e) => tracing::error!(error = %e, "ledger retention did not run"),
                    }
                }
            });
        }
        (_, Some(_)) if !args.retention_interval.is_zero() => tracing::warn!(
            "no ledger retention on a schedule: it needs --checkpoint-key to sign its cuts"
        ),
        _ => {}
    }
    let mut http = HttpConfig::new(public);
    http.request_deadline = args.service.request_deadline;
    http.mcp_allowed_origins = args.mcp_allowed_origins;
    http.shutdown_grace = args.shutdown_grace;
    http.idle_timeout = args.idle_timeout;
    http.max_connections = args.max_connections as usize;
    http.max_connections_per_address = args.max_connections_per_address.map(|n| n as usize);
    http.trusted_proxies = args.trusted_proxies;
    let api = Arc::new(
        Api::new(service, http)
            .with_pool_status(pool_status)
            .with_dropped_log_lines(dropped_log_lines),
    );
    tracing::info!(listen = %address, "recruitd is serving");
    recruit_http::serve(listener, api, shutdown).await?;
    tracing::info!("recruitd stopped");
    Ok(())
}

/// A trusted proxy: a CIDR block, or one address.
fn proxy_block(value: &str) -> Result<ipnet::IpNet, String> {
    let value = value.trim();
    value
        .parse::<ipnet::IpNet>()
        .or_else(|_| value.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| {
            format!("`{value}` is neither an IP address nor a CIDR block such as 10.0.0.0/8")
        })
}

/// The service over `store`, configured.
async fn service(
    store: Arc<dyn Store>,
    args: &ServiceArgs,
    checkpoint_key: Option<CheckpointKey>,
    ledger_retention: recruit_domain::Retention,
) -> Result<Arc<Service>, Failure> {
    let key = cursor_key(store.as_ref(), args.cursor_secret.as_deref()).await?;
    let mut config = ServiceConfig::new(args.app_base_url.clone(), key);
    config.checkpoint_key = checkpoint_key;
    config.ledger_retention = ledger_retention;
    config.max_exports = args.max_exports as usize;
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
    Ok(Arc::new(Service::new(store, config)))
}

/// Serves the tool interface over stdio until the client closes it. Standard output carries
/// the protocol only; logs go to standard error.
async fn mcp(service: Arc<Service>, args: McpArgs) -> Result<(), Failure> {
    let token = std::fs::read_to_string(&args.token_file).map_err(|e| {
        Failure(format!("cannot read the token file {}: {e}", args.token_file.display()))
    })?;
    let config = ToolsConfig {
        public_base_url: args.public_base_url.unwrap_or_default(),
        deadline: args.service.request_deadline,
    };
    Tools::serve_stdio(service, config, token.trim()).await.map_err(|e| {
        Failure(match e.code {
            recruit_domain::ErrorCode::Unauthenticated => format!(
                "the token in {} is not valid: it is unknown, expired or revoked",
                args.token_file.display()
            ),
            _ => e.cause.map(String::from).unwrap_or(e.message),
        })
    })
}

/// Loads the demo into an empty database and prints how to use it; on a database that holds
/// data, says so and changes nothing.
async fn demo(service: &Service, public: &str) -> Result<(), Failure> {
    use recruit_service::demo::{self, DemoConfig};
    let started = std::time::Instant::now();
    let config = DemoConfig::quick_start(Timestamp::now());
    let bar = indicatif::ProgressBar::new(config.ledger_entries as u64).with_style(
        indicatif::ProgressStyle::with_template(
            "Loading the demo ledger {bar:40} {pos}/{len} entries",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let progress = |written: usize| bar.set_position(written as u64);
    let loaded = demo::load(service.store().as_ref(), &config, progress)
        .await
        .map_err(|e| Failure(format!("loading the demo failed: {e}")))?;
    bar.finish_and_clear();
    let Some(loaded) = loaded else {
        print("Demo mode: the database already holds data, so nothing was loaded or changed.");
        print(
            "Create a token for one of its users with `recruitd token create --user usr_… --scopes …`.",
        );
        return Ok(());
    };
    let (directory, org) = (&loaded.directory, &loaded.directory.organizations[0]);
    let (owner, owner_token) = (&loaded.owner.user, &loaded.owner.secret);
    let (member, member_token) = (&loaded.member.user, &loaded.member.secret);
    let job = loaded.confidential_job;
    // The last 30 days, a window the ledger list accepts.
    let to = Timestamp::now();
    let from = Timestamp::from_unix_micros(to.unix_micros() - 30 * 86_400_000_000).unwrap_or(to);
    print(&format!(
        "\nDemo loaded in {:.1} s: {} ({}) and one more organization, {} users, {} jobs, {} privacy ledger entries.\n",
        started.elapsed().as_secs_f64(),
        org.name,
        org.id,
        directory.users.len(),
        directory.jobs.len(),
        loaded.ledger_entries
    ));
    print(&format!("Listening on {public}\n"));
    print(&format!("Owner token (every scope; {}):\n  {owner_token}", owner.name));
    print(&format!(
        "Member token (every scope, but not an owner; {}):\n  {member_token}\n",
        member.name
    ));
    print("Try:");
    print(&format!("  curl -H 'Authorization: Bearer {owner_token}' {public}/v1/organization"));
    print(&format!(
        "  curl -H 'Authorization: Bearer {owner_token}' {public}/v1/users/{}",
        member.id
    ));
    if let Some(job) = job {
        print(&format!("  curl -H 'Authorization: Bearer {owner_token}' {public}/v1/jobs/{job}"));
    }
    print(&format!(
        "  curl -H 'Authorization: Bearer {owner_token}' '{public}/v1/audit-logs/privacy?timestamp_gte={from}&timestamp_lt={to}&limit=5'"
    ));
    print(
        "\nThe member token gets PERMISSION_DENIED on the ledger and on the confidential job above.",
    );
    Ok(())
}

/// A future that completes on SIGINT (Ctrl-C) or SIGTERM. The handlers are installed now, not
/// when the future is first polled, so a signal that arrives while the server is still starting
/// is not lost (nor fatal).
#[cfg(unix)]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// Entries an NDJSON import writes per transaction: large enough that a batch's fixed costs (a
/// transaction, a connection for COPY) vanish, small enough to keep three batches in memory
/// (parsed, queued, written) at a few tens of MiB.
const DEFAULT_IMPORT_BATCH: u32 = 20_000;

/// How many entries apart the import's progress is logged at `info`.
const IMPORT_PROGRESS_EVERY: usize = 50_000;

async fn import(store: &dyn Store, files: &[PathBuf], batch_size: usize) -> Result<(), Failure> {
    for file in files {
        let name = file.display().to_string();
        let is_ndjson = file.extension().is_some_and(|e| e == "ndjson");
        if is_ndjson {
            let mut last = 0;
            let done = import_ndjson(
                store,
                || std::fs::File::open(file).map(std::io::BufReader::new),
                batch_size,
                |progress: Progress| {
                    let Progress { written, already_stored, total } = progress;
                    if progress.done() == total || progress.done() >= last + IMPORT_PROGRESS_EVERY {
                        last = progress.done();
                        tracing::info!(file = %name, written, already_stored, total, "importing");
                    } else {
                        tracing::debug!(file = %name, written, already_stored, total, "importing");
                    }
                },
            )
            .await
            .map_err(|e| Failure(format!("{name}: {e}")))?;
            let already = match done.already_stored {
                0 => String::new(),
                n => format!(" ({n} were already there, from an earlier run, and were skipped)"),
            };
            print(&format!("{name}: imported {} privacy audit log entries{already}", done.written));
        } else {
            let text =
                std::fs::read_to_string(file).map_err(|e| Failure(format!("{name}: {e}")))?;
            let s =
                import_document(store, &text).await.map_err(|e| Failure(format!("{name}: {e}")))?;
            print(&format!(
                "{name}: imported {} organizations, {} users, {} task queues, {} candidates, {} jobs, \
                 {} privacy audit log entries",
                s.organizations, s.users, s.task_queues, s.candidates, s.jobs, s.privacy_audit_logs
            ));
        }
    }
    Ok(())
}

async fn token(store: Arc<dyn Store>, command: TokenCommand) -> Result<(), Failure> {
    match command {
        TokenCommand::Create { user, scopes, name, expires_in, json } => {
            let found = store.find_user(user).await.map_err(|e| match e {
                recruit_ports::StoreError::NotFound => Failure(format!("no user {user}")),
                e => Failure(e.to_string()),
            })?;
            let expires_at = match expires_in {
                None => None,
                Some(d) => Some(
                    Timestamp::now()
                        .checked_add_duration(d)
                        .ok_or_else(|| Failure("--expires-in is too long".into()))?,
                ),
            };
            let tokens: &dyn recruit_ports::Tokens = &*store;
            let (token, secret) = recruit_service::auth::create_token(
                tokens,
                found.organization_id,
                user,
                name,
                scopes,
                expires_at,
            )
            .await?;
            if json {
                let scopes: Vec<&str> = token.scopes.iter().map(|s| s.as_str()).collect();
                print(
                    &serde_json::json!({
                        "id": token.id,
                        "token": secret,
                        "organization_id": token.organization_id,
                        "user_id": token.user_id,
                        "scopes": scopes,
                        "expires_at": token.expires_at,
                    })
                    .to_string(),
                );
            } else {
                print(&format!(
                    "Created token {} for user {} ({}).",
                    token.id,
                    found.name,
                    found.role.as_str()
                ));
                print("Its secret is shown once; store it now:");
                print(&format!("  {secret}"));
            }
            Ok(())
        }
        TokenCommand::List { org, json } => {
            let time = |t: Option<Timestamp>| t.map_or_else(|| "-".to_owned(), |t| t.to_string());
            for token in store.tokens(org).await? {
                let scopes: Vec<&str> = token.scopes.iter().map(|s| s.as_str()).collect();
                if json {
                    print(
                        &serde_json::json!({
                            "id": token.id,
                            "organization_id": token.organization_id,
                            "user_id": token.user_id,
                            "name": token.name,
                            "scopes": scopes,
                            "created_at": token.created_at,
                            "expires_at": token.expires_at,
                            "revoked_at": token.revoked_at,
                            "last_used_at": token.last_used_at,
                        })
                        .to_string(),
                    );
                } else {
                    print(&format!(
                        "{}  {}  user {}  {:?}  {}  created {}  expires {}  revoked {}  last used {}",
                        token.id,
                        token.organization_id,
                        token.user_id,
                        token.name,
                        scopes.join(","),
                        token.created_at,
                        time(token.expires_at),
                        time(token.revoked_at),
                        time(token.last_used_at),
                    ));
                }
            }
            Ok(())
        }
        TokenCommand::Revoke { id } => {
            let token = store.revoke_token(id, Timestamp::now()).await.map_err(|e| match e {
                recruit_ports::StoreError::NotFound => Failure(format!("no token {id}")),
                e => Failure(e.to_string()),
            })?;
            let at = token.revoked_at.map(|t| t.to_string()).unwrap_or_default();
            print(&format!("Token {id} is revoked (since {at})."));
            Ok(())
        }
    }
}

async fn audit_list(
    store: &dyn Store,
    ledger: Ledger,
    org: Option<OrganizationId>,
    limit: u32,
    json: bool,
) -> Result<(), Failure> {
    let query = AuditListQuery { organization_id: org, limit };
    let lines: Vec<(String, String)> = match ledger {
        Ledger::Api => store
            .api_audit_entries(&query)
            .await?
            .iter()
            .map(|e| {
                let human = format!(
                    "{}  {}  {}  user {}  {} entries  via {}{}  request {}",
                    e.at,
                    e.organization_id,
                    e.operation,
                    e.user_id,
                    e.entries_returned,
                    e.interface.as_str(),
                    e.tool_name.as_deref().map(|t| format!(" ({t})")).unwrap_or_default(),
                    e.request_id
                );
                (serde_json::to_string(e).unwrap_or_default(), human)
            })
            .collect(),
        Ledger::Tool => store
            .tool_audit_entries(&query)
            .await?
            .iter()
            .map(|e| {
                let human = format!(
                    "{}  {}  {}  user {}  {} entries  request {}",
                    e.at,
                    e.organization_id,
                    e.tool_name,
                    e.user_id,
                    e.entries_returned,
                    e.request_id
                );
                (serde_json::to_string(e).unwrap_or_default(), human)
            })
            .collect(),
    };
    for (as_json, human) in lines {
        print(if json { &as_json } else { &human });
    }
    Ok(())
}

/// An RFC 3339 instant.
fn parse_time(text: &str) -> Result<Timestamp, String> {
    Timestamp::parse(text).map_err(|e| e.to_string())
}

/// Writes an export to `file` (`-`: standard output): to `file.partial`, renamed once
/// complete and on disk, so that a file of that name is always a whole export.
async fn audit_export(
    store: &dyn Store,
    query: &recruit_ports::chain::ExportQuery,
    file: &Path,
) -> Result<(), Failure> {
    if file == Path::new("-") {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        recruit_service::export::write(store, query, &mut out).await?;
        return Ok(());
    }
    let written = recruit_service::export::write_file(store, query, file).await?;
    print(&format!("exported {written} {} ledger entries to {}", query.ledger, file.display()));
    Ok(())
}

/// `recruitd ledger retention`: the plan, then unless `dry_run` the run.
async fn retention(
    store: &dyn Store,
    period: recruit_domain::Retention,
    key: Option<&CheckpointKey>,
    export_dir: Option<PathBuf>,
    dry_run: bool,
    json: bool,
) -> Result<(), Failure> {
    use recruit_service::retention;
    let now = Timestamp::now();
    let plan = retention::plan(store, period, now).await?;
    if dry_run {
        if json {
            print(&serde_json::to_string(&plan).unwrap_or_default());
        } else {
            print(&format!(
                "retention {period}: {} entries recorded before {} would be exported and removed",
                plan.entries(),
                plan.before
            ));
            for c in &plan.cuts {
                print(&format!(
                    "  {} {}: {} entries, up to position {}",
                    c.organization_id, c.ledger, c.entries, c.position
                ));
            }
        }
        return Ok(());
    }
    let key = key.ok_or_else(|| {
        Failure(
            "ledger retention needs the signing key (--checkpoint-key FILE): the cut it records \
             must be signed for audit verify to prove the chains that remain"
                .into(),
        )
    })?;
    let dir =
        export_dir.ok_or_else(|| Failure("ledger retention needs --export-dir DIR".into()))?;
    let applied = retention::apply(store, key, &plan, &dir, now)
        .await
        .map_err(|e| Failure(format!("ledger retention stopped: {e}")))?;
    if json {
        print(&serde_json::to_string(&applied).unwrap_or_default());
    } else {
        print(&format!(
            "retention {period}: removed {} entries recorded before {}",
            applied.removed, applied.before
        ));
        for (ledger, file, n) in &applied.exports {
            print(&format!("  exported {n} {ledger} ledger entries to {}", file.display()));
        }
        for c in &applied.cuts {
            print(&format!(
                "  cut {} {} at position {} (signed by {})",
                c.organization_id, c.ledger, c.position, c.key_id
            ));
        }
    }
    Ok(())
}

/// The checkpoint key at `path`, if one is configured.
fn checkpoint_key(path: Option<&Path>) -> Result<Option<CheckpointKey>, Failure> {
    Ok(path.map(CheckpointKey::load).transpose()?)
}

/// Writes a new checkpoint key to `file`, readable by its owner only, never over a file.
fn keygen(file: &Path) -> Result<(), Failure> {
    use std::os::unix::fs::OpenOptionsExt;
    let key = CheckpointKey::generate();
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
        .map_err(|e| Failure(format!("cannot create {}: {e}", file.display())))?;
    out.write_all(key.to_pem().as_bytes())
        .and_then(|()| out.sync_all())
        .map_err(|e| Failure(format!("cannot write {}: {e}", file.display())))?;
    print(&format!("wrote a new checkpoint key to {} (key id {})", file.display(), key.key_id()));
    print("its public key, for whoever verifies checkpoints:");
    print(recruit_service::checkpoint::public_pem(&key.public()).trim_end());
    Ok(())
}

/// The checkpoints of a file: one JSON object, or one per line.
fn read_checkpoints(path: &Path) -> Result<Vec<Checkpoint>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?;
    if let Ok(one) = serde_json::from_str::<Checkpoint>(&text) {
        return Ok(vec![one]);
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l).map_err(|e| {
                Failure(format!("{} line {}: not a checkpoint: {e}", path.display(), n + 1))
            })
        })
        .collect()
}

async fn audit_verify(
    store: &dyn Store,
    ledger: Option<ChainedLedger>,
    org: Option<OrganizationId>,
    checkpoint: Option<&Path>,
    keys: &[VerifyingKey],
    json: bool,
) -> Result<(), Failure> {
    use recruit_domain::chain::Ledger;
    use recruit_service::verify::{Anchors, FindingKind};
    let ledgers = ledger.map_or(Ledger::ALL.to_vec(), |l| vec![l.into()]);
    let kept = match checkpoint {
        None => vec![],
        Some(path) => {
            if keys.is_empty() {
                return Err(Failure(
                    "verify --checkpoint needs the public key: --public-key FILE or \
                     --checkpoint-key FILE"
                        .into(),
                ));
            }
            let kept = read_checkpoints(path)?;
            for c in &kept {
                let key = recruit_service::verify::signer(keys, &c.key_id).ok_or_else(|| {
                    Failure(format!(
                        "{}: the checkpoint of {} {} at position {} is signed by key {}, which \
                         is none of the public keys given (--public-key, --checkpoint-key)",
                        path.display(),
                        c.ledger,
                        c.organization_id,
                        c.position,
                        c.key_id
                    ))
                })?;
                c.verify(key).map_err(|e| {
                    Failure(format!(
                        "{}: the checkpoint of {} {} at position {} proves nothing: {e}",
                        path.display(),
                        c.ledger,
                        c.organization_id,
                        c.position
                    ))
                })?;
            }
            kept
        }
    };
    let anchors = Anchors { keys, kept: &kept };
    let reports = recruit_service::verify::verify(store, &ledgers, org, anchors).await?;
    let mut found = 0;
    for report in &reports {
        found += report.findings.len();
        if json {
            print(&serde_json::to_string(report).unwrap_or_default());
            continue;
        }
        let state = if report.is_intact() { "intact" } else { "TAMPERED" };
        let checked = match report.checkpoints {
            0 => String::new(),
            1 => ", 1 checkpoint".to_owned(),
            n => format!(", {n} checkpoints"),
        };
        // Without a key a cut is taken as stored: say so, since it excuses missing entries.
        let cuts = match (report.cuts, keys.is_empty()) {
            (0, _) => String::new(),
            (n, false) => format!(", begins after the last of {n} retention cuts"),
            (n, true) => format!(
                ", begins after the last of {n} retention cuts (not checked: give \
                 --public-key or --checkpoint-key)"
            ),
        };
        print(&format!(
            "{}  {}  {} entries, head at {} ({}){checked}{cuts}: {state}",
            report.ledger,
            report.organization_id,
            report.entries,
            report.head_position,
            report.head_hash
        ));
        for f in &report.findings {
            let at = f.position.map_or("no position".to_owned(), |p| format!("position {p}"));
            let id = f.id.as_ref().map(|id| format!(" id {id}")).unwrap_or_default();
            let expected = match (f.kind, f.expected_position) {
                (FindingKind::Reordered, Some(p)) => format!(" (recorded at position {p})"),
                (FindingKind::Truncated, Some(p)) => format!(" to {p}"),
                _ => String::new(),
            };
            let kind = serde_json::to_value(f.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            print(&format!("  {kind} {at}{expected}{id}"));
        }
    }
    if found > 0 {
        return Err(Failure(format!("{found} findings in the ledgers' chains")));
    }
    if !json {
        print(&format!("{} chains verified, nothing found.", reports.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusted_proxies_are_addresses_or_blocks() {
        let parse = |args: &[&str]| {
            let mut argv = vec!["recruitd", "serve"];
            argv.extend_from_slice(args);
            match Cli::try_parse_from(argv).map(|c| c.command) {
                Ok(Command::Serve(serve)) => Ok(serve.trusted_proxies),
                Ok(_) => unreachable!("serve parses as serve"),
                Err(e) => Err(e.to_string()),
            }
        };
        let blocks = parse(&["--trusted-proxies", "10.0.0.0/8, 192.0.2.1,2001:db8::/32"]).unwrap();
        let shown: Vec<String> = blocks.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["10.0.0.0/8", "192.0.2.1/32", "2001:db8::/32"]);
        assert_eq!(parse(&[]).unwrap(), vec![]);
        let error = parse(&["--trusted-proxies", "10.0.0.0/33"]).unwrap_err();
        assert!(error.contains("neither an IP address nor a CIDR block"), "{error}");
        let error = parse(&["--rate-limit-reads", "fast"]).unwrap_err();
        assert!(error.contains("`N/s`, `N/min` or `N/h`"), "{error}");
    }
}
