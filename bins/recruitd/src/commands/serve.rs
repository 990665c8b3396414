//! `recruitd serve`: the REST API, the tool interface and the console over HTTP, with the
//! server's scheduled jobs (`scheduler`), and `--demo`.

use std::sync::Arc;
use std::time::Duration;

use recruit_domain::Timestamp;
use recruit_http::{Api, HttpConfig};
use recruit_ports::Store;
use recruit_service::Service;
use recruit_service::checkpoint::CheckpointKey;

use crate::cli::ServeArgs;
use crate::output::print;
use crate::{Failure, scheduler};

/// How long the demo's console sign-in link lasts.
const LINK_TTL: Duration = Duration::from_secs(15 * 60);

/// Serves on `listener` (bound to `args.listen`) until a signal stops it.
pub(crate) async fn serve(
    store: Arc<dyn Store>,
    service: Arc<Service>,
    pool_status: Box<dyn Fn() -> recruit_ports::PoolStatus + Send + Sync>,
    dropped_log_lines: impl Fn() -> u64 + Send + Sync + 'static,
    checkpoint_key: Option<CheckpointKey>,
    retention_period: recruit_domain::Retention,
    (listener, args): (tokio::net::TcpListener, ServeArgs),
) -> Result<(), Failure> {
    let signal = shutdown_signal()?;
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let shutdown = async move {
        signal.await;
        let _ = stop.send(true);
    };
    let checkpoint_key_for_retention = checkpoint_key.clone();
    let address = listener.local_addr()?;
    let public = args.public_base_url.unwrap_or_else(|| format!("http://{address}"));
    if args.demo {
        demo(&service, &public, args.console == crate::cli::Switch::On).await?;
    }
    // The clock first: nothing is purged or claimed on a clock off the database's.
    if let Err(e) = service.check_clock().await {
        tracing::warn!(error = %e, "the clock could not be checked yet; it is every 10 s");
    }
    scheduler::spawn(scheduler::CheckClock(Arc::clone(&service)));
    scheduler::spawn(scheduler::PurgeKeys(Arc::clone(&service)));
    if let Some(key) = checkpoint_key.filter(|_| !args.checkpoint_interval.is_zero()) {
        let interval = args.checkpoint_interval;
        scheduler::spawn(scheduler::SignHeads { store: Arc::clone(&store), key, interval });
    }
    scheduler::spawn(scheduler::PrepareMonths(Arc::clone(&store)));
    scheduler::spawn(scheduler::EndStalledWrites(Arc::clone(&store)));
    // Retention on a schedule, when the server has a key to sign cuts and a place for exports.
    match (checkpoint_key_for_retention, &args.retention_export_dir) {
        (Some(key), Some(dir)) if !args.retention_interval.is_zero() => {
            scheduler::spawn(scheduler::Retention {
                store: Arc::clone(&store),
                key,
                period: retention_period,
                dir: dir.clone(),
                interval: args.retention_interval,
            });
        }
        (_, Some(_)) if !args.retention_interval.is_zero() => tracing::warn!(
            "no ledger retention on a schedule: it needs --checkpoint-key to sign its cuts"
        ),
        _ => {}
    }
    let streams = match (args.log_streams, service.outbound()) {
        (crate::cli::Switch::On, Some(fetch)) => {
            let settings = recruit_service::log_stream::deliver::Settings {
                lease: args.log_stream_lease,
                backoff_max: args.log_stream_backoff_max,
                suspend_after: args.log_stream_suspend_after,
                ack_timeout: args.log_stream_ack_timeout,
                ..Default::default()
            };
            let parts = (Arc::clone(&store), fetch, service.deliveries());
            let (clock, grace) = (service.clock(), args.shutdown_grace);
            Some(crate::streams::spawn(parts, clock, settings, stopping, grace))
        }
        _ => None,
    };
    let mut http = HttpConfig::new(public);
    http.request_deadline = args.service.request_deadline;
    http.mcp_allowed_origins = args.mcp_allowed_origins;
    http.console = args.console == crate::cli::Switch::On;
    http.shutdown_grace = args.shutdown_grace;
    http.idle_timeout = args.idle_timeout;
    http.max_connections = args.max_connections as usize;
    http.max_connections_per_address = args.max_connections_per_address.map(|n| n as usize);
    http.max_body_memory = (args.max_body_memory_mib as usize) << 20;
    http.trusted_proxies = args.trusted_proxies;
    let api = Arc::new(
        Api::new(service, http)
            .with_pool_status(pool_status)
            .with_dropped_log_lines(dropped_log_lines),
    );
    tracing::info!(listen = %address, "recruitd is serving");
    recruit_http::serve(listener, api, shutdown).await?;
    if let Some(streams) = streams {
        // The deliveries release their leases, so another replica takes the streams at once.
        let _ = streams.await;
    }
    tracing::info!("recruitd stopped");
    Ok(())
}

/// Loads the demo into an empty database and prints how to use it; on a database that holds
/// data, says so and changes nothing.
async fn demo(service: &Service, public: &str, console: bool) -> Result<(), Failure> {
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
    if console {
        let link =
            recruit_service::console::sign_in_link(service.store().as_ref(), owner.id, LINK_TTL)
                .await
                .map_err(|e| Failure(format!("the console's sign-in link: {}", e.message)))?;
        print(&format!(
            "Review console sign-in link ({}, one use, 15 minutes):\n  {}",
            owner.name,
            recruit_console::Console::link_url(public, &link)
        ));
    }
    print(&format!(
        "Member token (every scope, but not an owner; {}):\n  {member_token}\n",
        member.name
    ));
    let (_, scim_token) = recruit_service::auth::create_scim_token(
        service.store().as_ref(),
        owner.id,
        "demo SCIM".into(),
        None,
    )
    .await
    .map_err(|e| Failure(format!("the demo's SCIM token: {}", e.message)))?;
    print(&format!(
        "SCIM token (user provisioning at {public}/scim/v2, acting as {}):\n  {scim_token}\n",
        owner.name
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
