//! The command line: `recruitd`'s global options, its commands and their arguments (clap), with
//! the parsers and defaults of their values.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use recruit_domain::{ApiTokenId, OrganizationId, Scope, Timestamp, UserId};
use recruit_service::limits::{Limit, RateLimitConfig};

mod log_stream;
pub(crate) use log_stream::{Acting, LogStreamArgs, LogStreamCommand};

/// The recruiting API server and its operator commands.
///
/// Every command first applies the database's pending migrations.
#[derive(Debug, Parser)]
#[command(name = "recruitd", version, about, long_about = None)]
pub(crate) struct Cli {
    /// Where the data lives: `postgres://…` or `postgresql://…` for PostgreSQL, `sqlite://PATH`
    /// or a plain path for an SQLite file (created when missing).
    #[arg(
        long,
        global = true,
        env = "RECRUITD_DATABASE_URL",
        default_value = "sqlite://recruitd.db"
    )]
    pub(crate) database_url: String,

    /// PostgreSQL standbys for the heavy reads: exports, `audit verify`, the monthly review
    /// and the console's figures (e.g. a balancer's read-only port). Each such read first
    /// waits for its standby to replay everything the primary had committed when it began,
    /// so it sees the caller's own writes; after `--read-replica-wait` it runs on the primary.
    #[arg(long, global = true, env = "RECRUITD_READ_DATABASE_URL")]
    pub(crate) read_database_url: Option<String>,

    /// How long a heavy read waits for its standby to catch up with the primary before it runs
    /// on the primary instead (counted in `recruitd_heavy_reads_total{on="fallback"}`).
    #[arg(long, global = true, env = "RECRUITD_READ_REPLICA_WAIT", default_value = "2s", value_parser = humantime::parse_duration)]
    pub(crate) read_replica_wait: Duration,

    /// Address blocks the server's own requests (to identity providers, log destinations) may reach although they
    /// are loopback, private, link-local or reserved, e.g. an internal provider's
    /// `10.20.0.0/16`; comma-separated addresses or CIDR blocks. Everything else outside the
    /// Internet is refused, and cloud metadata addresses always are.
    #[arg(long, global = true, env = "RECRUITD_OUTBOUND_ALLOW", value_delimiter = ',', value_parser = address_block)]
    pub(crate) outbound_allow: Vec<ipnet::IpNet>,

    /// Connections to the database at most.
    #[arg(long, global = true, env = "RECRUITD_DB_POOL_SIZE", default_value_t = 16)]
    pub(crate) db_pool_size: usize,

    /// How long a request waits for a free database connection before it is refused with
    /// UNAVAILABLE (e.g. `2s`, `500ms`).
    #[arg(long, global = true, env = "RECRUITD_DB_WAIT_TIMEOUT", default_value = "2s", value_parser = humantime::parse_duration)]
    pub(crate) db_wait_timeout: Duration,

    /// The longest one SQL statement may run (PostgreSQL `statement_timeout`).
    #[arg(long, global = true, env = "RECRUITD_DB_STATEMENT_TIMEOUT", default_value = "5s", value_parser = humantime::parse_duration)]
    pub(crate) db_statement_timeout: Duration,

    /// PostgreSQL: how long `serve` and `mcp` may keep a verified token in memory, so that
    /// authentication costs no database round trip. Every change to a token or a user
    /// (revocation first of all) empties it on every replica at once, announced by the
    /// database; while that announcement cannot be heard, nothing is kept. `0s` turns it off.
    #[arg(long, global = true, env = "RECRUITD_CREDENTIAL_CACHE_MAX_AGE", default_value = "60s", value_parser = humantime::parse_duration)]
    pub(crate) credential_cache_max_age: Duration,

    /// Log format: `human` for people, `json` for one JSON object per line. The level comes
    /// from `RUST_LOG` (default `info`).
    #[arg(long, global = true, env = "RECRUITD_LOG_FORMAT", default_value = "human")]
    pub(crate) log_format: LogFormat,

    /// The Ed25519 private key (PKCS#8 PEM) the server signs checkpoints of the ledgers'
    /// chains with (`recruitd audit keygen FILE` writes one). Without it, no checkpoint is
    /// signed and `audit verify` checks none unless given `--public-key`.
    #[arg(long, global = true, env = "RECRUITD_CHECKPOINT_KEY_FILE")]
    pub(crate) checkpoint_key: Option<PathBuf>,

    /// How long the ledgers keep their entries, in whole years or months (`2y`, `18mo`); at
    /// least a year, the legal minimum for access records (PIPA safety-measure standard,
    /// Art. 8). An export may span the whole period.
    #[arg(long, global = true, env = "RECRUITD_LEDGER_RETENTION", default_value = "2y")]
    pub(crate) ledger_retention: recruit_domain::Retention,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum LogFormat {
    Human,
    Json,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the REST API and the tool interface for agents (MCP at `/mcp`).
    Serve(Box<ServeArgs>),
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
    /// The review console at `/console`.
    #[command(subcommand)]
    Console(ConsoleCommand),
    /// Log streams: an organization's privacy ledger delivered to its SIEM. Each command acts
    /// as one of the organization's owners (`--user`), under the rules of `/v1/log-streams`,
    /// and each change is recorded on the API ledger as theirs.
    LogStream(Box<LogStreamArgs>),
    /// SQLite: write a consistent copy of the database to PATH while the server runs: one
    /// read transaction, so it holds every write committed before it began and none after.
    /// Checked and synced before it is renamed into place; PATH must not exist. PostgreSQL is
    /// backed up with pgBackRest (docs/operations.md).
    Backup {
        /// Where the copy goes.
        path: PathBuf,
    },
    /// SQLite: put a copy made by `backup` in the database's place. The copy is checked before
    /// anything is touched; a database that a server (or any command) still has open is
    /// refused, so stop the server first. Then prove it with `audit verify --checkpoint`
    /// against checkpoints kept outside.
    Restore {
        /// The copy to put back.
        backup: PathBuf,
        /// Replace the database when it exists.
        #[arg(long)]
        replace: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConsoleCommand {
    /// Print a one-time sign-in link to the review console for an owner: it lasts `--ttl`,
    /// and its first use spends it.
    Link {
        /// The owner who signs in.
        #[arg(long)]
        user: UserId,
        /// How long the link may be used.
        #[arg(long, default_value = "15m", value_parser = humantime::parse_duration)]
        ttl: Duration,
        /// The URL browsers reach the server at, as the server's `--public-base-url`.
        #[arg(long, env = "RECRUITD_PUBLIC_BASE_URL", default_value = "http://127.0.0.1:8080")]
        public_base_url: String,
    },
    /// Set an organization's single sign-on through its OpenID Connect provider: the provider
    /// must answer its discovery at `--issuer`. Register the redirect URI
    /// `<public base URL>/console/sso/callback` with the provider.
    SsoSet {
        /// The organization.
        #[arg(long)]
        org: recruit_domain::OrganizationId,
        /// The provider's issuer URL, exactly as its discovery document names it.
        #[arg(long)]
        issuer: String,
        /// recruitd's client id at the provider.
        #[arg(long)]
        client_id: String,
        /// A file holding recruitd's client secret (kept write-only: never printed).
        #[arg(long)]
        client_secret_file: PathBuf,
        /// The ID token's claim that names the user: their e-mail address in recruitd.
        #[arg(long, default_value = recruit_domain::model::DEFAULT_USER_CLAIM)]
        user_claim: String,
        /// A provider group whose members may sign in (repeat for several); none: any owner.
        #[arg(long = "owner-group")]
        owner_groups: Vec<String>,
        /// Whether API tokens and one-time links still open the console (break glass).
        #[arg(long, value_enum, default_value_t = Switch::On)]
        tokens_and_links: Switch,
    },
    /// Print an organization's single sign-on, without its client secret.
    SsoShow {
        /// The organization.
        #[arg(long)]
        org: recruit_domain::OrganizationId,
    },
    /// Remove an organization's single sign-on: tokens and links open the console again.
    SsoClear {
        /// The organization.
        #[arg(long)]
        org: recruit_domain::OrganizationId,
    },
}

/// On or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

#[derive(Debug, Subcommand)]
pub(crate) enum LedgerCommand {
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
pub(crate) struct ServeArgs {
    /// The address to listen on.
    #[arg(long, env = "RECRUITD_LISTEN", default_value = "127.0.0.1:8080")]
    pub(crate) listen: SocketAddr,
    /// The URL clients reach this server at; error `docs_url`s point under it. Defaults to
    /// `http://` and the listen address.
    #[arg(long, env = "RECRUITD_PUBLIC_BASE_URL")]
    pub(crate) public_base_url: Option<String>,
    #[command(flatten)]
    pub(crate) service: ServiceArgs,
    /// Origins (`https://host[:port]`, comma-separated) whose web pages may call the tool
    /// interface; a request to `/mcp` carrying any other `Origin` is refused. Clients that send
    /// no `Origin` (agents, command-line tools) are not affected.
    #[arg(long, env = "RECRUITD_MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub(crate) mcp_allowed_origins: Vec<String>,
    /// The mail server the server's e-mail goes through: requests for explanations of
    /// downloads, and sign-in links owners ask for. `smtp://host:25` (plain),
    /// `smtp://host:587?tls=required` (STARTTLS), `smtps://user:password@host:465` (TLS).
    /// Without it, no e-mail is sent.
    #[arg(long, env = "RECRUITD_SMTP_URL", hide_env_values = true)]
    pub(crate) smtp_url: Option<String>,
    /// The sender of the server's e-mail, such as `Privacy review <privacy@example.com>`.
    #[arg(
        long,
        env = "RECRUITD_SMTP_FROM",
        requires = "smtp_url",
        default_value = "recruitd <recruitd@localhost>"
    )]
    pub(crate) smtp_from: String,
    /// Whether the review console is served at `/console`.
    #[arg(long, env = "RECRUITD_CONSOLE", value_enum, default_value = "on")]
    pub(crate) console: Switch,
    /// Whether this server delivers the organizations' log streams. Any number of replicas may:
    /// each stream is delivered by one at a time, under a lease.
    #[arg(long, env = "RECRUITD_LOG_STREAMS", value_enum, default_value = "on")]
    pub(crate) log_streams: Switch,
    /// How long a replica holds a log stream without renewing its lease: the longest a stream
    /// waits for another replica when its holder dies without stopping. Claims run every sixth
    /// of it.
    #[arg(long, env = "RECRUITD_LOG_STREAM_LEASE", default_value = "30s", value_parser = lease)]
    pub(crate) log_stream_lease: Duration,
    /// How long between attempts of a failing log stream's batch at most (the backoff's
    /// ceiling; a destination's `Retry-After` is honoured up to it).
    #[arg(long, env = "RECRUITD_LOG_STREAM_BACKOFF_MAX", default_value = "10m", value_parser = humantime::parse_duration)]
    pub(crate) log_stream_backoff_max: Duration,
    /// How long a log stream fails without a success before it is suspended (until an owner
    /// resumes it; it keeps its position).
    #[arg(long, env = "RECRUITD_LOG_STREAM_SUSPEND_AFTER", default_value = "72h", value_parser = humantime::parse_duration)]
    pub(crate) log_stream_suspend_after: Duration,
    /// How long a batch awaits a Splunk collector's indexer acknowledgement before it is sent
    /// again (Splunk advises about five minutes).
    #[arg(long, env = "RECRUITD_LOG_STREAM_ACK_TIMEOUT", default_value = "5m", value_parser = humantime::parse_duration)]
    pub(crate) log_stream_ack_timeout: Duration,
    /// How long in-flight requests may finish after SIGTERM or SIGINT.
    #[arg(long, env = "RECRUITD_SHUTDOWN_GRACE", default_value = "10s", value_parser = humantime::parse_duration)]
    pub(crate) shutdown_grace: Duration,
    /// How long a client connection may stay open doing nothing: one that never sends a
    /// request, or sits between keep-alive requests. Then the server closes it.
    #[arg(long, env = "RECRUITD_IDLE_TIMEOUT", default_value = "30s", value_parser = humantime::parse_duration)]
    pub(crate) idle_timeout: Duration,
    /// The most client connections open at once; further ones are closed on arrival. Lowered
    /// at start (with a warning) when the limit of open files (`ulimit -n`) leaves less room.
    #[arg(long, env = "RECRUITD_MAX_CONNECTIONS", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_connections: u32,
    /// The most connections one client address may have open at once, so that one client's
    /// idle sockets cannot hold every slot; further ones of that address are closed on
    /// arrival. Default: a quarter of --max-connections. Trusted proxies are exempt.
    #[arg(long, env = "RECRUITD_MAX_CONNECTIONS_PER_ADDRESS", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_connections_per_address: Option<u32>,
    /// The most MiB of request bodies held at once: a body reserves its declared length (its
    /// limit when it declares none) before it is read, until its request is answered, and
    /// waits for room within the request deadline (503 UNAVAILABLE and `Retry-After` if none
    /// frees, nothing read). Bounds the memory of many large batches arriving at once; at least
    /// 3, the largest body.
    #[arg(long, env = "RECRUITD_MAX_BODY_MEMORY_MIB", default_value_t = (recruit_http::HttpConfig::new("").max_body_memory >> 20) as u32, value_parser = clap::value_parser!(u32).range(3..=4096))]
    pub(crate) max_body_memory_mib: u32,
    /// Load balancers and reverse proxies in front of the server, as addresses or CIDR blocks
    /// (comma-separated, such as `10.0.0.0/8,2001:db8::/32`). A request arriving from one of
    /// them is taken to come from the client address it forwarded in `X-Forwarded-For`: that
    /// is the address the audit ledgers record and failed authentications are counted against.
    /// Without it the TCP peer is the client, and `X-Forwarded-For` is ignored.
    #[arg(long, env = "RECRUITD_TRUSTED_PROXIES", value_delimiter = ',', value_parser = address_block)]
    pub(crate) trusted_proxies: Vec<ipnet::IpNet>,
    /// On an empty database, load deterministic demo data (two organizations, users of every
    /// role, jobs, candidates, 40 000 privacy ledger entries over the last year), create an
    /// owner and a member token, and print them with ready-to-paste curl commands. On a
    /// database that holds data, change nothing.
    #[arg(long, env = "RECRUITD_DEMO")]
    pub(crate) demo: bool,

    /// With `--checkpoint-key`, how often the server signs the head of every chain that moved
    /// since its last checkpoint (e.g. `1h`, `15m`); `0s` turns the schedule off.
    #[arg(long, env = "RECRUITD_CHECKPOINT_INTERVAL", default_value = "1h", value_parser = humantime::parse_duration)]
    pub(crate) checkpoint_interval: Duration,

    /// With `--checkpoint-key` and `--retention-export-dir`, how often the server runs
    /// `recruitd ledger retention` itself (the first time a minute after it starts, or sooner
    /// with a shorter interval); `0s` turns the schedule off.
    #[arg(long, env = "RECRUITD_RETENTION_INTERVAL", default_value = "24h", value_parser = humantime::parse_duration)]
    pub(crate) retention_interval: Duration,

    /// Where the server's retention runs export what they remove; without it the server runs
    /// no retention.
    #[arg(long, env = "RECRUITD_RETENTION_EXPORT_DIR")]
    pub(crate) retention_export_dir: Option<PathBuf>,
}

/// What the operations need, however they are served.
#[derive(Debug, clap::Args)]
pub(crate) struct ServiceArgs {
    /// The web app's base URL; `app_url`s of jobs and organizations are built from it.
    #[arg(long, env = "RECRUITD_APP_BASE_URL", default_value = "https://app.recruitd.example")]
    pub(crate) app_base_url: String,
    /// The secret cursors are signed with (at least 32 bytes); every replica needs the same.
    /// Without it, one is generated once and kept in the database.
    #[arg(long, env = "RECRUITD_CURSOR_SECRET", hide_env_values = true)]
    pub(crate) cursor_secret: Option<String>,
    /// The longest a request may take before it is answered with UPSTREAM_TIMEOUT.
    #[arg(long, env = "RECRUITD_REQUEST_DEADLINE", default_value = "10s", value_parser = humantime::parse_duration)]
    pub(crate) request_deadline: Duration,
    /// Per token: reads of jobs and of the organization allowed, as `N/s`, `N/min` or `N/h`
    /// (all of them at once at most, then evenly), or `off`. Past it: 429 RATE_LIMITED.
    #[arg(long, env = "RECRUITD_RATE_LIMIT_READS", default_value_t = RateLimitConfig::DEFAULT.reads)]
    pub(crate) rate_limit_reads: Limit,
    /// Per token: reads of the privacy audit ledger allowed (`N/s`, `N/min`, `N/h` or `off`).
    #[arg(long, env = "RECRUITD_RATE_LIMIT_LEDGER_READS", default_value_t = RateLimitConfig::DEFAULT.ledger_reads)]
    pub(crate) rate_limit_ledger_reads: Limit,
    /// Per token: writes allowed, each recording up to 1 000 accesses (`N/s`, `N/min`, `N/h` or
    /// `off`).
    #[arg(long, env = "RECRUITD_RATE_LIMIT_WRITES", default_value_t = RateLimitConfig::DEFAULT.writes)]
    pub(crate) rate_limit_writes: Limit,
    /// Per client address (IPv6: per /64): failed authentications allowed (`N/s`, `N/min`,
    /// `N/h` or `off`). Past it every request from the address that needs a credential is
    /// refused with 429 until the quota allows another attempt.
    #[arg(long, env = "RECRUITD_RATE_LIMIT_AUTH_FAILURES", default_value_t = RateLimitConfig::DEFAULT.auth_failures)]
    pub(crate) rate_limit_auth_failures: Limit,
    /// The most exports of the privacy ledger streaming, and monthly reviews running, at once,
    /// each holding a database connection; further ones get 429 RATE_LIMITED until one ends.
    #[arg(long, env = "RECRUITD_MAX_EXPORTS", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) max_exports: u32,
    /// How far this replica's clock may be off the database's (PostgreSQL), checked at start
    /// and every 10 s. Past it the replica refuses every request that needs a credential with
    /// 503 UNAVAILABLE, purges nothing, claims no log stream and is not ready, until the
    /// clocks agree again. Keep clocks synchronised (NTP): see docs/operations.md.
    #[arg(long, env = "RECRUITD_MAX_CLOCK_SKEW", default_value = "2s", value_parser = humantime::parse_duration)]
    pub(crate) max_clock_skew: Duration,
    /// The most batches of recorded accesses read and written at once. Each holds its entries
    /// in memory (a few MB for 1 000) while it is written; the batches of one organization
    /// take turns at its ledger's head anyway. Further batches wait their turn.
    #[arg(long, env = "RECRUITD_MAX_BATCH_WRITES", default_value_t = recruit_service::BatchWrites::DEFAULT.at_once as u32, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub(crate) max_batch_writes: u32,
    /// How long a batch of recorded accesses waits for its turn to be written before it is
    /// refused with 503 UNAVAILABLE and `Retry-After`, nothing written (e.g. `5s`).
    #[arg(long, env = "RECRUITD_BATCH_WRITE_WAIT", default_value = "5s", value_parser = humantime::parse_duration)]
    pub(crate) batch_write_wait: Duration,
    /// How long a review console session lasts without use.
    #[arg(long, env = "RECRUITD_CONSOLE_IDLE_TIMEOUT", default_value = "30m", value_parser = humantime::parse_duration)]
    pub(crate) console_idle_timeout: Duration,
    /// How long a review console session lasts at most, however it is used.
    #[arg(long, env = "RECRUITD_CONSOLE_SESSION_MAX", default_value = "8h", value_parser = humantime::parse_duration)]
    pub(crate) console_session_max: Duration,
}

#[derive(Debug, clap::Args)]
pub(crate) struct McpArgs {
    /// A file holding the API token (`rtk_…`) the tools act as; surrounding white space is
    /// ignored. A file rather than an argument keeps the secret out of process listings.
    #[arg(long, env = "RECRUITD_MCP_TOKEN_FILE")]
    pub(crate) token_file: PathBuf,
    /// The URL the REST server is reached at, for the `docs_url` of errors; without it errors
    /// carry no link.
    #[arg(long, env = "RECRUITD_PUBLIC_BASE_URL")]
    pub(crate) public_base_url: Option<String>,
    #[command(flatten)]
    pub(crate) service: ServiceArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TokenCommand {
    /// Create a token acting as a user; prints its secret once.
    Create {
        /// The user the token acts as (its organization is the user's).
        #[arg(long)]
        user: UserId,
        /// Comma-separated scopes: audit_logs:read, jobs:read, organization:read,
        /// organization:admin, log_streams:admin, audit_logs:write, users:read, users:write,
        /// audit_logs:review.
        #[arg(
            long,
            value_delimiter = ',',
            required_unless_present = "scim",
            conflicts_with = "scim"
        )]
        scopes: Vec<Scope>,
        /// A SCIM token (`rsc_…`) for the organization's identity provider instead: it
        /// provisions users at `/scim/v2` and nothing else; `--user` must be an owner.
        #[arg(long)]
        scim: bool,
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
pub(crate) enum AuditCommand {
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
        /// Check what a receiver of a log stream stored instead of the database: FILE holds
        /// its export lines as delivered (NDJSON, or JSON arrays of them), in any order, with
        /// duplicates; `-` reads standard input. Reports, per chain, the positions missing,
        /// the duplicates and every line that does not prove itself, against `--checkpoint`
        /// when given (checked with `--public-key`). Needs no database.
        #[arg(long, value_name = "FILE")]
        stream: Option<PathBuf>,
        /// With `--stream`: the position the stream started after (`after_position`), so
        /// that entries never received before the first line count as missing.
        #[arg(long, requires = "stream")]
        from_position: Option<u64>,
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
    /// Summarise one month of an organization's privacy ledger for its monthly review, in
    /// the organization's time zone: per account, the accesses, the bulk accesses, the
    /// accesses outside the work hours, downloads, distinct data subjects and new addresses,
    /// flagged; and every download listed (each needs its reason checked), with the exports
    /// of the ledger through the API.
    Review {
        /// The month, `YYYY-MM`.
        #[arg(long)]
        month: recruit_service::review::Month,
        /// The organization; needed when the store holds more than one.
        #[arg(long)]
        org: Option<OrganizationId>,
        /// The review as JSON, the body `GET /v1/audit-logs/privacy/reviews/{month}` returns.
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
pub(crate) enum ChainedLedger {
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
pub(crate) enum Ledger {
    Api,
    Tool,
}

/// Entries an NDJSON import writes per transaction: large enough that a batch's fixed costs (a
/// transaction, a connection for COPY) vanish, small enough to keep three batches in memory
/// (parsed, queued, written) at a few tens of MiB.
const DEFAULT_IMPORT_BATCH: u32 = 20_000;

/// A CIDR block, or one address.
fn address_block(value: &str) -> Result<ipnet::IpNet, String> {
    let value = value.trim();
    value
        .parse::<ipnet::IpNet>()
        .or_else(|_| value.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| {
            format!("`{value}` is neither an IP address nor a CIDR block such as 10.0.0.0/8")
        })
}

/// A log stream's lease: 3 seconds to an hour.
fn lease(value: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(value).map_err(|e| e.to_string())?;
    if d < Duration::from_secs(3) || d > Duration::from_secs(3600) {
        return Err("a lease lasts 3s to 1h".into());
    }
    Ok(d)
}

/// An RFC 3339 instant.
fn parse_time(text: &str) -> Result<Timestamp, String> {
    Timestamp::parse(text).map_err(|e| e.to_string())
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
