//! The delivery of log streams by this replica: it claims, every sixth of a lease, the streams
//! whose lease is free or ran out, and delivers each on a task of its own
//! (`recruit_service::log_stream::deliver`) until it loses the lease, the stream stops, or the
//! server stops (its leases are then released, so another replica takes them over at once).
//! One stream's slow destination delays no other stream and no request.

use std::sync::Arc;
use std::time::Duration;

use recruit_domain::{Timestamp, Uuid};
use recruit_ports::Store;
use recruit_service::clock::Clock;
use recruit_service::log_stream::deliver::{self, Deliveries, Settings};
use recruit_service::outbound::Fetch;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// The most streams one claim takes: the rest are claimed at the next ticks, by this replica
/// or another, so replicas started together share the streams.
const CLAIM_LIMIT: u32 = 16;

/// Delivers the streams this replica claims until `stop` says the server is stopping; then
/// waits up to `grace` for their deliveries to release their leases.
pub(crate) fn spawn(
    (store, fetch, figures): (Arc<dyn Store>, Arc<dyn Fetch>, Arc<Deliveries>),
    clock: Arc<Clock>,
    settings: Settings,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        // Each process is a holder of its own: a restarted one claims what it held once the
        // leases run out (or at once, when it released them on stopping).
        let holder = Uuid::now_v7();
        let every = settings.lease / 6;
        let mut deliveries = JoinSet::new();
        tracing::info!(%holder, "delivering log streams");
        loop {
            if *stop.borrow() || stop.has_changed().is_err() {
                break;
            }
            let now = Timestamp::now();
            let until = now.checked_add_duration(settings.lease).unwrap_or(now);
            // Leases are timed by the holders' clocks: one off the database's claims nothing.
            let claimed = match clock.trusted() {
                true => store.claim_streams(holder, now, until, CLAIM_LIMIT).await,
                false => Ok(Vec::new()),
            };
            match claimed {
                Ok(leases) => {
                    for lease in leases {
                        tracing::info!(stream = %lease.stream_id, epoch = lease.epoch, "log stream claimed");
                        let parts = (Arc::clone(&store), Arc::clone(&fetch), Arc::clone(&figures));
                        let stop = stop.clone();
                        deliveries.spawn(async move {
                            (lease, deliver::run(parts, lease, settings, stop).await)
                        });
                    }
                }
                Err(e) => tracing::warn!(error = %e, "log streams could not be claimed"),
            }
            while let Some(done) = deliveries.try_join_next() {
                ended(done);
            }
            let _ = tokio::time::timeout(every, stop.changed()).await;
        }
        let drained = async {
            while let Some(done) = deliveries.join_next().await {
                ended(done);
            }
        };
        if tokio::time::timeout(grace, drained).await.is_err() {
            tracing::warn!("log stream deliveries still running at shutdown; their leases run out");
        }
    })
}

/// Logs how a delivery ended.
fn ended(
    done: Result<
        (recruit_ports::streams::Lease, Result<deliver::Ended, recruit_ports::StoreError>),
        tokio::task::JoinError,
    >,
) {
    match done {
        Ok((lease, Ok(how))) => {
            tracing::info!(stream = %lease.stream_id, ended = ?how, "log stream delivery ended")
        }
        Ok((lease, Err(e))) => tracing::warn!(
            stream = %lease.stream_id, error = %e,
            "log stream delivery stopped by the store; claimed again once its lease runs out"
        ),
        Err(e) => tracing::error!(error = %e, "a log stream delivery failed"),
    }
}
