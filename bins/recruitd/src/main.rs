//! `recruitd`: the server of the recruiting API and its operator commands. Thin: it reads the
//! configuration, picks the store from the database URL, applies migrations, and wires the
//! crates together. It is the only crate that names the concrete storage adapters.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

use crate::cli::{AuditCommand, Cli, Command, ConsoleCommand, LedgerCommand, LogStreamArgs};

/// mimalloc: per-thread free lists make a request's small allocations cheaper than glibc's
/// (`docs/performance.md`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use crate::commands::{audit, backup, import, ledger, log_stream, mcp, serve, token};
use crate::wiring::{Opened, checkpoint_key, open_store, service};

mod cli;
mod commands;
mod logging;
mod mail;
mod outbound;
mod output;
mod scheduler;
mod streams;
mod syslog_tls;
mod wiring;

/// A failure of a command: its message for the operator.
pub(crate) struct Failure(pub(crate) String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Self(e.to_string())
    }
}

/// `mi_option_purge_delay` of mimalloc 3's `mi_option_e` (`mimalloc.h`), which the bindings do
/// not name.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long a server's mimalloc keeps memory freed before giving it back to the system, unless
/// `MIMALLOC_PURGE_DELAY` says otherwise: 10 ms, not mimalloc 3's second. A review or an export
/// frees tens of MiB at once, and the next, on another worker thread, would take as much again
/// meanwhile (D57). A command that ends keeps the second: giving pages back and taking them
/// again cost `audit verify` a sixth of its time.
const PURGE_DELAY_MS: std::ffi::c_long = 10;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let serves = matches!(cli.command, Command::Serve(_) | Command::Mcp(_));
    if serves && std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: `mi_option_set` stores one option of the allocator; any value is valid, and
        // no other thread exists yet.
        #[expect(unsafe_code, reason = "the one call into the allocator's C API (D57)")]
        unsafe {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS);
        }
    }
    let logging = logging::init(cli.log_format);
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if !serves && std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        // A command that ends is one task on this thread driving its connections: with one
        // worker beside it, their I/O wakes one thread, not either of two (D58).
        runtime.worker_threads(1);
    }
    let runtime = match runtime.enable_all().build() {
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

/// Runs the command; `dropped_log_lines` counts the log lines lost so far, for the metrics.
async fn run(
    cli: Cli,
    dropped_log_lines: impl Fn() -> u64 + Send + Sync + 'static,
) -> Result<(), Failure> {
    // A new key needs no database, nor does checking what a stream's receiver holds.
    if let Command::Audit(AuditCommand::Keygen { file }) = &cli.command {
        return audit::keygen(file);
    }
    if let Command::Audit(AuditCommand::Verify {
        stream: Some(stream),
        checkpoint,
        public_key,
        from_position,
        json,
        ..
    }) = &cli.command
    {
        let keys = public_keys(public_key, cli.checkpoint_key.as_deref())?;
        let checkpoint = checkpoint.as_deref();
        return audit::audit_verify_stream(stream, checkpoint, &keys, *from_position, *json);
    }
    // Copies of an SQLite database: the one they copy is neither migrated nor kept open.
    match &cli.command {
        Command::Backup { path } => return backup::backup(&cli.database_url, path).await,
        Command::Restore { backup: from, replace } => {
            return backup::restore(&cli.database_url, from, *replace).await;
        }
        _ => {}
    }
    let opened = open_store(&cli).await?;
    let heavy = opened.heavy_reads(cli.read_replica_wait);
    let replica = opened.replica.map(|r| (r, cli.read_replica_wait));
    let Opened { store, pool_status, .. } = opened;
    match cli.command {
        Command::Serve(args) => {
            let args = *args;
            let key = match (checkpoint_key(cli.checkpoint_key.as_deref())?, args.demo) {
                (None, true) => Some(wiring::demo_checkpoint_key(&cli.database_url)?),
                (key, _) => key,
            };
            // Bound first, so that links in e-mail name the port the server got.
            let listener = tokio::net::TcpListener::bind(args.listen)
                .await
                .map_err(|e| Failure(format!("cannot listen on {}: {e}", args.listen)))?;
            let address = listener.local_addr()?;
            let base_url =
                args.public_base_url.clone().unwrap_or_else(|| format!("http://{address}"));
            let mail = mail::config(args.smtp_url.as_deref(), &args.smtp_from, &base_url)?;
            let service = service(
                Arc::clone(&store),
                replica,
                &args.service,
                (key.clone(), mail),
                cli.ledger_retention,
                outbound(&cli.outbound_allow)?,
            )
            .await?;
            let retention = cli.ledger_retention;
            let serving = (listener, args);
            serve::serve(store, service, pool_status, dropped_log_lines, key, retention, serving)
                .await
        }
        Command::Mcp(args) => {
            let key = checkpoint_key(cli.checkpoint_key.as_deref())?;
            let keys = (key, None);
            let service = service(
                store,
                replica,
                &args.service,
                keys,
                cli.ledger_retention,
                outbound(&cli.outbound_allow)?,
            )
            .await?;
            mcp::mcp(service, args).await
        }
        Command::Import { files, batch_size } => {
            import::import(store.as_ref(), &files, batch_size as usize).await
        }
        Command::Token(command) => token::token(store, command).await,
        Command::Console(ConsoleCommand::Link { user, ttl, public_base_url }) => {
            let link = recruit_service::console::sign_in_link(store.as_ref(), user, ttl)
                .await
                .map_err(|e| Failure(e.message))?;
            crate::output::print(&recruit_console::Console::link_url(&public_base_url, &link));
            Ok(())
        }
        Command::Console(ConsoleCommand::SsoSet {
            org,
            issuer,
            client_id,
            client_secret_file,
            user_claim,
            owner_groups,
            tokens_and_links,
        }) => {
            let secret = std::fs::read_to_string(&client_secret_file)
                .map_err(|e| Failure(format!("{}: {e}", client_secret_file.display())))?;
            let settings = recruit_ports::SsoSettings {
                issuer,
                client_id,
                client_secret: secret.trim().to_owned(),
                user_claim,
                owner_groups,
                tokens_and_links: tokens_and_links == cli::Switch::On,
            };
            let providers: Arc<dyn recruit_service::outbound::Fetch> =
                outbound(&cli.outbound_allow)?;
            let sso = Some(settings);
            recruit_service::sso::configure(store.as_ref(), Some(providers), org, sso, None)
                .await
                .map_err(|e| Failure(crate::output::problem(&e)))?;
            crate::output::print(&format!("Single sign-on set for {org}."));
            Ok(())
        }
        Command::Console(ConsoleCommand::SsoShow { org }) => {
            let record = store.organization(org).await?;
            let shown = record.sso.as_ref().map(recruit_ports::SsoSettings::shown);
            crate::output::print(&serde_json::to_string_pretty(&shown)?);
            Ok(())
        }
        Command::Console(ConsoleCommand::SsoClear { org }) => {
            recruit_service::sso::configure(store.as_ref(), None, org, None, None)
                .await
                .map_err(|e| Failure(crate::output::problem(&e)))?;
            crate::output::print(&format!("Single sign-on removed for {org}."));
            Ok(())
        }
        Command::Ledger(LedgerCommand::Retention { export_dir, dry_run, json }) => {
            let key = checkpoint_key(cli.checkpoint_key.as_deref())?;
            let period = cli.ledger_retention;
            ledger::retention(store.as_ref(), period, key.as_ref(), export_dir, dry_run, json).await
        }
        Command::Audit(AuditCommand::List { ledger, org, limit, json }) => {
            audit::audit_list(store.as_ref(), ledger, org, limit, json).await
        }
        Command::Audit(AuditCommand::Verify {
            ledger, org, checkpoint, public_key, json, ..
        }) => {
            let keys = public_keys(&public_key, cli.checkpoint_key.as_deref())?;
            audit::audit_verify(&heavy, ledger, org, checkpoint.as_deref(), &keys, json).await
        }
        Command::Audit(AuditCommand::Checkpoint { org }) => {
            let key = checkpoint_key(cli.checkpoint_key.as_deref())?.ok_or_else(|| {
                Failure("audit checkpoint needs the signing key: --checkpoint-key FILE".into())
            })?;
            audit::audit_checkpoint(store.as_ref(), &key, org).await
        }
        Command::Audit(AuditCommand::Keygen { .. })
        | Command::Backup { .. }
        | Command::Restore { .. } => unreachable!("handled before the store"),
        Command::Audit(AuditCommand::Review { month, org, json }) => {
            audit::audit_review(store.as_ref(), &heavy, month, org, json).await
        }
        Command::LogStream(args) => {
            let LogStreamArgs { command, service: args } = *args;
            let keys = (None, None);
            let outbound = outbound(&cli.outbound_allow)?;
            let retention = cli.ledger_retention;
            let service = service(store, replica, &args, keys, retention, outbound).await?;
            log_stream::log_stream(&service, command).await
        }
        Command::Audit(AuditCommand::Export { ledger, org, from, to, file }) => {
            let query = recruit_ports::chain::ExportQuery {
                ledger: ledger.into(),
                organization: org,
                from,
                to,
                ids: None,
                recorded_before: None,
                after_position: None,
                filter: Default::default(),
            };
            audit::audit_export(&heavy, &query, &file).await
        }
    }
}

/// The public keys checkpoints may be signed with: those of `files`, and the public half of
/// the signing key at `signing` when given.
fn public_keys(
    files: &[std::path::PathBuf],
    signing: Option<&std::path::Path>,
) -> Result<Vec<recruit_service::checkpoint::VerifyingKey>, Failure> {
    let mut keys = files
        .iter()
        .map(|path| recruit_service::checkpoint::load_public(path))
        .collect::<Result<Vec<_>, _>>()?;
    keys.extend(checkpoint_key(signing)?.map(|k| k.public()));
    Ok(keys)
}

/// The server's own HTTP client, reaching what `--outbound-allow` allows besides the Internet.
fn outbound(allow: &[ipnet::IpNet]) -> Result<Arc<outbound::Outbound>, Failure> {
    let destinations = recruit_service::outbound::Destinations::new(allow.to_vec());
    outbound::Outbound::new(destinations).map(Arc::new).map_err(Failure)
}
