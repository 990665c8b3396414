//! The delivery of a leased stream: one batch in flight at a time, in chain order, each read
//! after the position the stream holds, checked link by link against the chain, sent, and
//! recorded as delivered only when the destination acknowledges it (a 2xx answer). A failed
//! batch is sent again, whole and with the same `webhook-id`, after a backoff with jitter that
//! honours `Retry-After`; the stream keeps its position meanwhile and is suspended only after a
//! long outage or an answer that says to stop (410). Every change names the lease's epoch: a
//! process that lost its lease stops at its next change, having moved nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::RngExt;
use recruit_domain::Timestamp;
use recruit_domain::chain::{Digest, Ledger};
use recruit_domain::retry::backoff_ceiling;
use recruit_ports::chain::ExportedEntry;
use recruit_ports::streams::{Failure, Health, Lease, StreamRecord};
use recruit_ports::{Store, StoreError};

use super::runs::{Checked, Prepared, Run, linked};
use super::send::{Attempt, acknowledged, body, send};
use super::webhook::message_id;
use crate::outbound::Fetch;

/// How a process delivers the streams it holds.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// How long a claim or a renewal holds a stream.
    pub lease: Duration,
    /// The most entries in a batch.
    pub batch_entries: usize,
    /// The most entries read, checked and recorded at once, then sent batch by batch.
    pub read_ahead: usize,
    /// The most bytes in a batch's body (one entry larger than this is sent alone).
    pub batch_bytes: usize,
    /// How often a caught-up stream looks for new entries.
    pub poll: Duration,
    /// The first retry's ceiling; each retry doubles it, up to [`Settings::backoff_max`].
    pub backoff_initial: Duration,
    /// The longest wait between attempts.
    pub backoff_max: Duration,
    /// How long a stream fails without a success before it is suspended.
    pub suspend_after: Duration,
    /// How long a batch awaits a collector's acknowledgement before it is sent again.
    pub ack_timeout: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            lease: Duration::from_secs(30),
            batch_entries: 1_000,
            read_ahead: 10_000,
            batch_bytes: 1024 * 1024,
            poll: Duration::from_secs(1),
            backoff_initial: Duration::from_secs(1),
            backoff_max: Duration::from_secs(600),
            suspend_after: Duration::from_secs(72 * 3600),
            // Splunk's advice: ask for up to about five minutes, then send again.
            ack_timeout: Duration::from_secs(300),
        }
    }
}

/// How one stream's delivery by this process goes, for its metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    /// Whether this process delivers it now (its lag is this process's to report).
    pub held: bool,
    /// Entries of the ledger not delivered yet, when last looked.
    pub lag_entries: u64,
    /// How long it has been behind: since it last had nothing to deliver (0 when caught up).
    pub lag_seconds: f64,
    /// Entries delivered (acknowledged) by this process.
    pub delivered: u64,
    /// Attempts that failed.
    pub failed: u64,
    /// Batches sent again after a failed attempt.
    pub retried: u64,
    /// Its health when last looked (`OK`, `FAILING`, `SUSPENDED`).
    pub health: &'static str,
}

/// How this process's deliveries go, by stream: updated by [`run`], read by the metrics; and
/// what they read, shared by the streams of an organization.
#[derive(Debug, Default)]
pub struct Deliveries {
    figures: std::sync::Mutex<std::collections::BTreeMap<uuid::Uuid, Figures>>,
    runs: super::runs::Runs,
    tail: super::tail::Tail,
}

impl Deliveries {
    /// Entries this process has just recorded, committed: kept a while for the deliveries of
    /// their organizations' streams that run here, which send them without reading them back.
    pub(crate) fn recorded(&self, chained: Vec<ExportedEntry>) {
        self.tail.publish(chained);
    }

    /// Every stream this process has delivered since it started, with its figures.
    pub fn figures(&self) -> Vec<(uuid::Uuid, Figures)> {
        let held = self.figures.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        held.iter().map(|(id, f)| (*id, *f)).collect()
    }

    /// How many of the streams this process delivers now are of each health: what the
    /// readiness probe shows, never a reason to fail it.
    pub fn health(&self) -> std::collections::BTreeMap<&'static str, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for (_, figures) in self.figures() {
            if figures.held && !figures.health.is_empty() {
                *counts.entry(figures.health).or_insert(0) += 1;
            }
        }
        counts
    }

    fn update(&self, stream: uuid::Uuid, change: impl FnOnce(&mut Figures)) {
        let mut held = self.figures.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        change(held.entry(stream).or_default());
    }
}

/// Why a delivery ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// The lease was lost (run out and claimed by another, or the stream removed).
    LeaseLost,
    /// The stream was paused or suspended; its lease is released.
    Stopped,
    /// The process is stopping; the lease is released.
    Shutdown,
}

/// A batch sent and awaiting the collector's acknowledgement, as the stream keeps it (so that
/// a restart or another process goes on asking rather than sending it again at once).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Awaited {
    /// The id the collector gave it.
    ack_id: u64,
    /// The position of its last entry.
    to: u64,
    /// That entry's hash, hex.
    hash: String,
    /// How many entries it holds.
    count: usize,
    /// When it was sent.
    sent_at: Timestamp,
}

/// Delivers the stream `lease` holds until the lease is lost, the stream is paused or
/// suspended, or `stop` says the process is stopping (the lease is then released, so that
/// another process takes the stream over at once). A database that cannot be reached (down,
/// failing over) is waited out with the lease kept: delivery goes on once it answers and the
/// lease is renewed, or ends if another process took the stream meanwhile.
pub async fn run(
    (store, fetch, figures): (Arc<dyn Store>, Arc<dyn Fetch>, Arc<Deliveries>),
    lease: Lease,
    settings: Settings,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Result<Ended, StoreError> {
    let id = lease.stream_id;
    figures.update(id, |f| f.held = true);
    let _watching = figures.tail.watch(lease.organization_id, id);
    let mut pause = settings.backoff_initial;
    let ended = loop {
        let parts = (Arc::clone(&store), Arc::clone(&fetch));
        match delivered(parts, &figures, lease, settings, stop.clone()).await {
            Err(e @ (StoreError::Unavailable(_) | StoreError::Timeout)) => {
                tracing::warn!(stream = %id, error = %e, "log stream delivery waits for the database");
                let waited = loop {
                    sleep(pause, &mut stop).await;
                    pause = (pause * 2).min(settings.lease / 3);
                    if *stop.borrow() || stop.has_changed().is_err() {
                        break Some(Ended::Shutdown);
                    }
                    match store.renew_lease(&lease, after(settings.lease)).await {
                        Ok(true) => break None,
                        Ok(false) => break Some(Ended::LeaseLost),
                        Err(_) => {}
                    }
                };
                match waited {
                    Some(ended) => break Ok(ended),
                    None => pause = settings.backoff_initial,
                }
            }
            ended => break ended,
        }
    };
    figures.update(id, |f| f.held = false);
    ended
}

async fn delivered(
    (store, fetch): (Arc<dyn Store>, Arc<dyn Fetch>),
    figures: &Deliveries,
    lease: Lease,
    settings: Settings,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Result<Ended, StoreError> {
    let mut caught_up = Instant::now();
    let mut ahead: Option<Arc<Run>> = None;
    // The last position whose read this delivery recorded.
    let mut recorded = 0;
    let mut held_until = Instant::now() + settings.lease;
    let mut renewed = Instant::now();
    let mut batch_entries = settings.batch_entries;
    let mut fresh: Option<StreamRecord> = None;
    loop {
        // Stopping, or the process dropped what tells it so.
        if *stop.borrow() || stop.has_changed().is_err() {
            store.release_lease(&lease, Timestamp::now()).await?;
            return Ok(Ended::Shutdown);
        }
        // Renewed a third of the way through; a renewal counts from when it was asked, so
        // the process stops sending before another may claim the stream.
        if renewed.elapsed() >= settings.lease / 3 {
            let asked = Instant::now();
            if !store.renew_lease(&lease, after(settings.lease)).await? {
                return Ok(Ended::LeaseLost);
            }
            (renewed, held_until) = (asked, asked + settings.lease);
        }
        // As the last batch's settling left it, else read.
        let stream = match fresh.take() {
            Some(stream) => stream,
            None => match store.stream(lease.organization_id, lease.stream_id).await {
                Ok(stream) => stream,
                // Removed since it was claimed: its lease went with it.
                Err(StoreError::NotFound) => return Ok(Ended::LeaseLost),
                Err(e) => return Err(e),
            },
        };
        figures.update(stream.id, |f| f.health = stream.delivery.health.as_str());
        if stream.paused || stream.delivery.health == Health::Suspended {
            store.release_lease(&lease, Timestamp::now()).await?;
            return Ok(Ended::Stopped);
        }
        let wait = match stream.delivery.next_attempt_at {
            Some(next) if next > Timestamp::now() => until(next),
            _ => Duration::ZERO,
        };
        if !wait.is_zero() {
            sleep(wait.min(settings.lease / 3), &mut stop).await;
            continue;
        }
        if let Some(awaited) = stream.delivery.pending.as_ref() {
            let Ok(awaited) = serde_json::from_value::<Awaited>(awaited.clone()) else {
                store.set_pending(&lease, None).await?;
                continue;
            };
            let acknowledged = acknowledged(fetch.as_ref(), &stream, awaited.ack_id).await;
            let waited = until_now(awaited.sent_at);
            let outcome = match acknowledged {
                true => Attempt::Delivered,
                false if waited >= settings.ack_timeout => {
                    store.set_pending(&lease, None).await?;
                    let message = format!(
                        "the collector did not acknowledge ackId {} within {} s: sent again",
                        awaited.ack_id,
                        settings.ack_timeout.as_secs()
                    );
                    Attempt::Retry { status: None, message, after: Some(Duration::ZERO) }
                }
                false => {
                    sleep(settings.poll.max(waited / 10).min(MAX_ACK_POLL), &mut stop).await;
                    continue;
                }
            };
            let hash = recruit_domain::chain::parse_hex(&awaited.hash).unwrap_or_default();
            let batch =
                Sent { from: stream.delivery.position, to: awaited.to, hash, count: awaited.count };
            let id = message_id(stream.id, batch.from + 1, batch.to);
            match settle(store.as_ref(), &lease, &stream, &settings, &id, outcome, &batch).await? {
                Settled::Advanced(now) => fresh = Some(*now),
                Settled::Moved(true) | Settled::Shrink => {}
                Settled::Moved(false) => return Ok(Ended::LeaseLost),
            }
            continue;
        }
        let (org, position, hash) =
            (lease.organization_id, stream.delivery.position, stream.delivery.hash);
        // What was read ahead, from the position the stream stands at: this delivery's run
        // while it continues that position (another process may have moved it), else the one
        // another stream of the organization read, else a new one.
        if ahead.as_ref().is_none_or(|run| run.after(position, &hash).is_none()) {
            let slot = figures.runs.of(org);
            let mut slot = slot.lock().await;
            let shared = slot.upgrade().filter(|run| run.after(position, &hash).is_some());
            let run = match shared {
                Some(run) => run,
                None => {
                    // What this process just recorded, linked already; else read back.
                    let at = (position, &hash);
                    let (read, checked) =
                        match figures.tail.after(org, stream.id, at, settings.read_ahead) {
                            Some(kept) => (kept, Checked::Links),
                            None => {
                                // A whole read-ahead: with other replicas' entries
                                // between this one's, reading only up to what is kept
                                // would send batches of a few entries.
                                let n = settings.read_ahead;
                                let ledger = Ledger::Privacy;
                                let read = store.chain_after(ledger, org, position, n).await?;
                                (read.into_iter().map(Prepared::new).collect(), Checked::Hashes)
                            }
                        };
                    if read.is_empty() {
                        drop(slot);
                        caught_up = Instant::now();
                        figures.update(stream.id, |f| (f.lag_entries, f.lag_seconds) = (0, 0.0));
                        // Until the chain has gone a few batches further (as far as what is
                        // recorded here shows), or the poll's interval: a run's read is
                        // recorded once, in the organization's chain that recording writes.
                        let want =
                            (CAUGHT_UP_BATCHES * settings.batch_entries).min(settings.read_ahead);
                        tokio::select! {
                            () = figures.tail.wait(org, position, want, settings.poll) => {}
                            () = sleep(settings.poll, &mut stop) => {}
                        }
                        continue;
                    }
                    let entries = read.iter().map(|p| &p.exported);
                    let linked = match linked(&stream, entries, checked) {
                        Ok(linked) => linked,
                        Err(why) => {
                            // A gap (entries removed before they were delivered) or an entry
                            // that does not prove itself: never skipped, never sent; an owner
                            // must look.
                            drop(slot);
                            let health = Health::Suspended;
                            let failure = failure(&stream, health, None, why, Duration::ZERO);
                            failed(store.as_ref(), &lease, &stream, &failure).await?;
                            continue;
                        }
                    };
                    let run = Run::new(position, hash, read.into_iter().take(linked).collect());
                    let run = Arc::new(run);
                    *slot = Arc::downgrade(&run);
                    run
                }
            };
            drop(slot);
            let heads = store.chain_heads(Some(org)).await?;
            let ledger = Ledger::Privacy.as_str();
            let head = heads.iter().find(|h| h.ledger == ledger).map_or(0, |h| h.position);
            let lag = u64::try_from(head).unwrap_or_default().saturating_sub(position);
            let behind = caught_up.elapsed().as_secs_f64();
            figures.update(stream.id, |f| (f.lag_entries, f.lag_seconds) = (lag, behind));
            ahead = Some(run);
        }
        let Some(run) = ahead.clone() else { continue };
        let Some(next) = run.after(position, &hash) else { continue };
        // Delivering reads the ledger: what this delivery sends is recorded before any of it
        // is, as every read is before it returns (again, should its holder stop first).
        if run.last() > recorded.max(position) {
            let (first, last) = (recorded.max(position) + 1, run.last());
            let filters = serde_json::json!({
                "stream_id": recruit_domain::LogStreamId::from_uuid(stream.id),
                "first_position": first,
                "last_position": last,
            });
            let id = format!("lsr_{}_{first}_{last}", stream.id.simple());
            let count = usize::try_from(last + 1 - first).unwrap_or(usize::MAX);
            store.record_read(&record(&stream, DELIVERED, &id, filters), count).await?;
            recorded = last;
        }
        let batch = &next[..next.len().min(batch_entries)];
        let (body, count) = body(&stream, batch, settings.batch_bytes);
        let last_sent = &batch[count - 1].exported;
        if Instant::now() >= held_until {
            continue; // Renew before sending.
        }
        let to = at(last_sent);
        let id = message_id(stream.id, position + 1, to);
        if stream.delivery.attempts > 0 {
            figures.update(stream.id, |f| f.retried += 1);
        }
        let outcome = send(fetch.as_ref(), &stream, &id, body).await;
        match outcome {
            Attempt::Delivered => figures.update(stream.id, |f| f.delivered += count as u64),
            Attempt::Pending(_) => {}
            _ => figures.update(stream.id, |f| f.failed += 1),
        }
        let batch = Sent { from: position, to, hash: digest(&last_sent.entry.hash), count };
        let settled = settle(store.as_ref(), &lease, &stream, &settings, &id, outcome, &batch);
        match settled.await? {
            Settled::Advanced(now) => {
                batch_entries = settings.batch_entries;
                fresh = Some(*now);
            }
            Settled::Moved(true) => batch_entries = settings.batch_entries,
            Settled::Moved(false) => return Ok(Ended::LeaseLost),
            Settled::Shrink => batch_entries = (count / 2).max(1),
        }
    }
}

/// How many batches' worth a caught-up delivery waits for (or the poll's interval) before it
/// reads on: each read is a ledger entry, written under the organization's chain as every
/// recording is, so a delivery under heavy recording reads a few batches at once.
const CAUGHT_UP_BATCHES: usize = 4;

/// The longest wait between two questions about an acknowledgement.
const MAX_ACK_POLL: Duration = Duration::from_secs(10);

/// A batch sent: after which position, up to which, the last entry's hash, how many entries.
struct Sent {
    from: u64,
    to: u64,
    hash: Digest,
    count: usize,
}

/// What settling a batch did.
enum Settled {
    /// The batch is delivered: the stream as it now stands.
    Advanced(Box<StreamRecord>),
    /// The stream's delivery changed (false: the lease is lost).
    Moved(bool),
    /// The batch is to be sent again, smaller.
    Shrink,
}

/// Records what `outcome` means for `batch` of `stream`: delivered (its health recorded when it
/// changes), awaiting its acknowledgement, or a failure with its next attempt.
async fn settle(
    store: &dyn Store,
    lease: &Lease,
    stream: &StreamRecord,
    settings: &Settings,
    id: &str,
    outcome: Attempt,
    batch: &Sent,
) -> Result<Settled, StoreError> {
    let moved = match outcome {
        Attempt::Delivered => {
            if stream.delivery.health != Health::Ok {
                let filters = serde_json::json!({
                    "stream_id": recruit_domain::LogStreamId::from_uuid(stream.id),
                    "health": Health::Ok.as_str(),
                });
                store.record_read(&record(stream, CHANGED, id, filters), 0).await?;
            }
            let now = Timestamp::now();
            let advanced = store.advance_stream(lease, batch.from, batch.to, batch.hash, now);
            return Ok(match advanced.await? {
                Some(stream) => Settled::Advanced(Box::new(stream)),
                None => Settled::Moved(false),
            });
        }
        Attempt::Pending(ack_id) => {
            let awaited = Awaited {
                ack_id,
                to: batch.to,
                hash: recruit_domain::chain::hex(&batch.hash),
                count: batch.count,
                sent_at: Timestamp::now(),
            };
            let awaited = serde_json::to_value(awaited).unwrap_or_default();
            store.set_pending(lease, Some(&awaited)).await?
        }
        Attempt::Shrink if batch.count > 1 => return Ok(Settled::Shrink),
        Attempt::Shrink => {
            let why = "the destination refuses a batch of one entry as too large (413)";
            let f = failure(stream, Health::Suspended, Some(413), why.into(), Duration::ZERO);
            failed(store, lease, stream, &f).await?
        }
        Attempt::Stop { status, message } => {
            let f = failure(stream, Health::Suspended, status, message, Duration::ZERO);
            failed(store, lease, stream, &f).await?
        }
        Attempt::Retry { status, message, after } => {
            let attempt = stream.delivery.attempts + 1;
            let ceiling = backoff_ceiling(settings.backoff_initial, settings.backoff_max, attempt);
            let jittered = ceiling.mul_f64(rand::rng().random_range(0.0..=1.0));
            let wait = after.map_or(jittered, |a| a.min(settings.backoff_max));
            let since = stream.delivery.failing_since.unwrap_or_else(Timestamp::now);
            let health = if until_now(since) >= settings.suspend_after {
                Health::Suspended
            } else {
                Health::Failing
            };
            let f = failure(stream, health, status, message, wait);
            failed(store, lease, stream, &f).await?
        }
    };
    Ok(Settled::Moved(moved))
}

/// The chain position of an entry read.
fn at(entry: &ExportedEntry) -> u64 {
    u64::try_from(entry.entry.position.unwrap_or_default()).unwrap_or_default()
}

/// The operation the API ledger records a delivered batch's read under.
pub const DELIVERED: &str = "deliverLogStream";

/// The operation the API ledger records a change of a stream's health under.
pub const CHANGED: &str = "changeLogStreamHealth";

/// What the audit ledgers record of `operation` on `stream` (the batch or attempt `id`): done
/// by the server for the stream's maker (no token: the stream is its grant).
fn record(
    stream: &StreamRecord,
    operation: &str,
    id: &str,
    filters: serde_json::Value,
) -> recruit_ports::ReadRecord {
    let actor = (stream.organization_id, recruit_domain::ApiTokenId::nil(), stream.created_by);
    let context = crate::operation::RequestContext::rest(id, None);
    crate::service::record_of(actor, &context, operation, filters, None)
}

/// Records `failure` of the stream `lease` holds, its change of health on the API ledger
/// first; false when the lease is lost.
async fn failed(
    store: &dyn Store,
    lease: &Lease,
    stream: &StreamRecord,
    failure: &Failure,
) -> Result<bool, StoreError> {
    if failure.health != stream.delivery.health {
        let filters = serde_json::json!({
            "stream_id": recruit_domain::LogStreamId::from_uuid(stream.id),
            "health": failure.health.as_str(),
            "error": failure.error,
        });
        let id = format!("lsh_{}_{}", stream.id.simple(), stream.delivery.position);
        store.record_read(&record(stream, CHANGED, &id, filters), 0).await?;
    }
    store.stream_failed(lease, failure).await
}

/// The failure of an attempt of `stream`: its health from now, what the destination said,
/// and the next attempt after `wait`.
fn failure(
    stream: &StreamRecord,
    health: Health,
    status: Option<u16>,
    message: String,
    wait: Duration,
) -> Failure {
    let at = Timestamp::now();
    tracing::warn!(stream = %stream.id, ?health, ?status, %message, "a log stream's delivery failed");
    Failure {
        health,
        error: serde_json::json!({"at": at, "status": status, "message": message}),
        next_attempt_at: at.checked_add_duration(wait).unwrap_or(at),
        at,
    }
}

pub(super) fn digest(bytes: &Option<Vec<u8>>) -> Digest {
    bytes.as_deref().and_then(|b| <Digest>::try_from(b).ok()).unwrap_or_default()
}

/// The time `d` from now.
fn after(d: Duration) -> Timestamp {
    let now = Timestamp::now();
    now.checked_add_duration(d).unwrap_or(now)
}

/// How long until `t`.
fn until(t: Timestamp) -> Duration {
    let micros = t.unix_micros() - Timestamp::now().unix_micros();
    Duration::from_micros(u64::try_from(micros).unwrap_or_default())
}

/// How long since `t`.
fn until_now(t: Timestamp) -> Duration {
    let micros = Timestamp::now().unix_micros() - t.unix_micros();
    Duration::from_micros(u64::try_from(micros).unwrap_or_default())
}

/// Sleeps `d`, or less when the process is stopping.
async fn sleep(d: Duration, stop: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = tokio::time::timeout(d, stop.changed()).await;
}

#[cfg(test)]
mod tests {
    use super::super::send::classify;
    use super::super::webhook::SigningSecret;
    use super::*;
    use crate::outbound::http;
    use recruit_domain::chain::entry_hash;
    use recruit_domain::{OrganizationId, UserId, Uuid};
    use recruit_ports::chain::ChainEntry;
    use recruit_ports::streams::Delivery;

    fn org() -> OrganizationId {
        OrganizationId::from_uuid(Uuid::from_u128(0xA))
    }

    /// A chain of `n` entries from its start.
    fn chain(n: u64) -> Vec<ExportedEntry> {
        let mut prev = recruit_domain::chain::GENESIS;
        (1..=n)
            .map(|p| {
                let canonical = format!("{{\"n\":{p}}}").into_bytes();
                let hash = entry_hash(Ledger::Privacy, org(), p, &prev, &canonical);
                let entry = ExportedEntry {
                    organization_id: org(),
                    time: Timestamp::MIN,
                    entry: ChainEntry {
                        id: Uuid::from_u128(u128::from(p)),
                        position: Some(i64::try_from(p).unwrap()),
                        prev_hash: Some(prev.to_vec()),
                        hash: Some(hash.to_vec()),
                        canonical,
                    },
                };
                prev = hash;
                entry
            })
            .collect()
    }

    fn stream(after: &[ExportedEntry], format: &str) -> StreamRecord {
        let (position, hash) = after.last().map_or((0, recruit_domain::chain::GENESIS), |e| {
            (e.entry.position.unwrap() as u64, digest(&e.entry.hash))
        });
        StreamRecord {
            organization_id: org(),
            id: Uuid::from_u128(0x57),
            name: "SIEM".into(),
            ledger: "privacy".into(),
            destination: serde_json::json!({"type": "https", "url": "https://a.example/in", "format": format}),
            secrets: serde_json::json!({"signing": SigningSecret::generate().reveal()}),
            paused: false,
            created_by: UserId::from_uuid(Uuid::from_u128(1)),
            created_at: Timestamp::MIN,
            updated_at: Timestamp::MIN,
            delivery: Delivery::starting(position, hash),
        }
    }

    #[test]
    fn a_batch_continues_the_chain_from_the_streams_position_or_stops_before_a_break() {
        let entries = chain(6);
        let n = linked(&stream(&entries[..2], "NDJSON"), &entries[2..], Checked::Hashes).unwrap();
        assert_eq!(n, 4);
        // A gap: entries 3 and 4 removed before they were delivered.
        let why =
            linked(&stream(&entries[..2], "NDJSON"), &entries[4..], Checked::Hashes).unwrap_err();
        assert!(why.contains("after position 2 up to 4"), "{why}");
        // An altered entry stops the batch before it, and is refused when it comes first.
        let mut altered = entries.clone();
        altered[3].entry.canonical = b"{\"n\":0}".to_vec();
        let n = linked(&stream(&entries[..2], "NDJSON"), &altered[2..], Checked::Hashes).unwrap();
        assert_eq!(n, 1);
        let why =
            linked(&stream(&entries[..3], "NDJSON"), &altered[3..], Checked::Hashes).unwrap_err();
        assert!(why.contains("position 4 was altered"), "{why}");
        // An entry that does not link to the one the stream delivered last.
        let other = stream(&chain(2)[..1], "NDJSON");
        let mut forked = entries[1..3].to_vec();
        forked[0].entry.prev_hash = Some(vec![9; 32]);
        let why = linked(&other, &forked, Checked::Hashes).unwrap_err();
        assert!(why.contains("does not link"), "{why}");
    }

    #[test]
    fn a_run_serves_the_streams_that_stand_in_it_on_its_chain() {
        let entries = chain(6);
        let hash = |i: usize| digest(&entries[i].entry.hash);
        let run = Run::new(2, hash(1), entries[2..].iter().cloned().map(Prepared::new).collect());
        assert_eq!(run.last(), 6);
        let after = |position, hash| run.after(position, &hash).map(|e| e.len());
        assert_eq!(after(2, hash(1)), Some(4), "from its start");
        assert_eq!(after(4, hash(3)), Some(2), "from within");
        assert_eq!(after(6, hash(5)), None, "nothing after its end");
        assert_eq!(after(1, hash(0)), None, "nothing before its start");
        assert_eq!(after(4, hash(2)), None, "a stream on another chain");
        assert_eq!(after(2, [9; 32]), None);
        let first = &run.after(2, &hash(1)).unwrap()[0];
        assert_eq!(first.line(), crate::export::line(Ledger::Privacy, &entries[2]));
    }

    #[test]
    fn a_body_is_export_lines_or_their_array_within_its_size_but_never_empty() {
        let entries = chain(3);
        let s = stream(&[], "NDJSON");
        let entries: Vec<_> = entries.into_iter().map(Prepared::new).collect();
        let line = |i: usize| crate::export::line(Ledger::Privacy, &entries[i].exported);
        let (body, n) = body(&s, &entries, 1 << 20);
        assert_eq!(n, 3);
        let lines: Vec<_> = body.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], &line(0)[..lines[0].len()]);
        let (array, n) = super::body(&stream(&[], "JSON_ARRAY"), &entries, 1 << 20);
        let parsed: Vec<serde_json::Value> = serde_json::from_slice(&array).unwrap();
        assert_eq!((n, parsed.len()), (3, 3));
        assert_eq!(parsed[2]["position"], 3);
        let one = line(0).len();
        let (small, n) = super::body(&s, &entries, one + 1);
        assert_eq!((n, small.len()), (1, one));
        let (tiny, n) = super::body(&s, &entries, 1);
        assert_eq!((n, tiny.len()), (1, one), "one entry larger than the limit goes alone");
    }

    #[test]
    fn an_answer_is_delivered_only_on_2xx() {
        let answer = |status: u16, retry: Option<&str>| {
            let mut a = http::Response::builder().status(status);
            if let Some(r) = retry {
                a = a.header("retry-after", r);
            }
            classify(&a.body(b"busy".to_vec()).unwrap())
        };
        assert_eq!(answer(200, None), Attempt::Delivered);
        assert_eq!(answer(204, None), Attempt::Delivered);
        assert!(matches!(answer(410, None), Attempt::Stop { status: Some(410), .. }));
        assert_eq!(answer(413, None), Attempt::Shrink);
        for status in [301, 302, 307, 400, 401, 403, 404, 429, 500, 502, 503, 504] {
            assert!(matches!(answer(status, None), Attempt::Retry { after: None, .. }), "{status}");
        }
        let waited = answer(503, Some("7"));
        assert!(
            matches!(waited, Attempt::Retry { after: Some(d), .. } if d == Duration::from_secs(7))
        );
    }
}
