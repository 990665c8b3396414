//! Verified credentials kept in memory, so that authenticating a request costs no database
//! round trip, and dropped as soon as any token or user changes, on every replica.
//!
//! The database announces changes: triggers on `api_tokens` and `users` send a notification on
//! the [`CHANNEL`] channel when a column a credential is made of changes (not when only
//! `last_used_at` does). Each store keeps one extra connection that listens on it, and every
//! notification empties the cache. While that connection is not listening (before it is up,
//! after it drops, while it reconnects) the cache is off: nothing is served from it, nothing is
//! put in it, and it is emptied, since notifications may have been missed meanwhile.
//!
//! A listening connection can stall without breaking (a half-open TCP connection, a backend
//! that stopped answering): then it delivers nothing and looks alive. So the cache serves only
//! while listening is proven live. Every [`HEARTBEAT`] the store sends a notification of its
//! own on the listening connection (on a channel of that connection's own, which nothing else
//! listens to) and notes when it sent it; PostgreSQL delivers
//! notifications in the order their transactions committed, so once a heartbeat sent at `S`
//! comes back, every change committed before `S` has been handled. The cache answers only while
//! the latest heartbeat back was sent less than [`STALE_AFTER`] ago: a change committed that
//! long before a lookup is always seen, whatever the connection does. A heartbeat that does not
//! come back within [`GIVE_UP_AFTER`] ends the connection, and listening starts again.
//!
//! A lookup that started before a change may finish after the notification of the change was
//! handled; its result is then not kept: every put carries the epoch it started in, and each
//! notification moves the epoch on. Entries also expire after `max_age`, for changes made with
//! triggers switched off.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use recruit_ports::{SecretHash, TokenHolder};
use tokio::task::AbortHandle;

/// The notification channel the schema's triggers send on.
pub(crate) const CHANNEL: &str = "recruitd_credentials";

/// The most credentials kept; past it, new ones are looked up every time until entries expire.
const CAPACITY: usize = 10_000;

/// How long to wait before listening again after the listening connection failed.
const RETRY: Duration = Duration::from_secs(1);

/// How often the store sends itself a heartbeat on the listening connection.
pub(crate) const HEARTBEAT: Duration = Duration::from_millis(200);

/// The cache answers only while the latest heartbeat back was sent less than this long ago:
/// the longest a committed change can go unseen.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(1);

/// A heartbeat not back after this long ends the listening connection.
const GIVE_UP_AFTER: Duration = Duration::from_secs(10);

/// The start of the channel each listening connection sends its heartbeats on; the rest is
/// its own, so that other replicas and listeners of [`CHANNEL`] never see them.
const HEARTBEAT_CHANNEL_PREFIX: &str = "recruitd_heartbeat_";

/// What a lookup in the cache found.
pub(crate) enum Lookup {
    /// A credential verified less than `max_age` ago and unchanged since.
    Hit(Box<TokenHolder>),
    /// Nothing usable: look it up, then [`CredentialCache::put`] it with this epoch.
    Miss(u64),
    /// The cache is off: look it up and keep nothing.
    Off,
}

#[derive(Debug, Default)]
struct State {
    /// Whether the listening connection is up and listening.
    live: bool,
    /// When the latest heartbeat that came back was sent: every change committed before then
    /// has been handled.
    fresh_as_of: Option<Instant>,
    /// Moves on at every change announced and every change of `live`.
    epoch: u64,
    entries: HashMap<SecretHash, (TokenHolder, Instant)>,
}

impl State {
    /// Drops every entry, and every lookup still under way.
    fn forget(&mut self) {
        self.epoch += 1;
        self.entries.clear();
    }
}

/// The cache of one store, shared by its clones.
#[derive(Debug)]
pub(crate) struct CredentialCache {
    max_age: Duration,
    state: Mutex<State>,
    listener: Mutex<Option<AbortHandle>>,
}

impl Drop for CredentialCache {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.get_mut().unwrap_or_else(PoisonError::into_inner) {
            listener.abort();
        }
    }
}

impl CredentialCache {
    /// A cache whose entries live at most `max_age`, listening for changes on a connection of
    /// its own opened with `config`. Needs a Tokio runtime; without one the cache stays off.
    pub(crate) fn start(mut config: tokio_postgres::Config, max_age: Duration) -> Arc<Self> {
        let cache = Arc::new(Self {
            max_age,
            state: Mutex::new(State::default()),
            listener: Mutex::new(None),
        });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let name =
                format!("{} (credential changes)", config.get_application_name().unwrap_or(""));
            config.application_name(name);
            let task = runtime.spawn(listen(Arc::downgrade(&cache), config));
            *cache.listener.lock().unwrap_or_else(PoisonError::into_inner) =
                Some(task.abort_handle());
        }
        cache
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn get(&self, hash: &SecretHash) -> Lookup {
        let state = self.state();
        let fresh = state.fresh_as_of.is_some_and(|at| at.elapsed() < STALE_AFTER);
        if !state.live || !fresh {
            return Lookup::Off;
        }
        match state.entries.get(hash) {
            Some((credential, at)) if at.elapsed() < self.max_age => {
                Lookup::Hit(Box::new(credential.clone()))
            }
            _ => Lookup::Miss(state.epoch),
        }
    }

    /// Keeps `credential`, looked up after [`CredentialCache::get`] returned `Miss(epoch)`,
    /// unless something changed since.
    pub(crate) fn put(&self, hash: SecretHash, credential: &TokenHolder, epoch: u64) {
        let mut state = self.state();
        if !state.live || state.epoch != epoch {
            return;
        }
        if state.entries.len() >= CAPACITY {
            let max_age = self.max_age;
            state.entries.retain(|_, (_, at)| at.elapsed() < max_age);
            if state.entries.len() >= CAPACITY {
                return;
            }
        }
        state.entries.insert(hash, (credential.clone(), Instant::now()));
    }

    /// Forgets every credential: something changed.
    pub(crate) fn clear(&self) {
        self.state().forget();
    }

    fn set_live(&self, live: bool) {
        let mut state = self.state();
        state.live = live;
        state.fresh_as_of = None;
        state.forget();
    }

    /// A heartbeat sent at `sent` came back.
    fn heard(&self, sent: Instant) {
        let mut state = self.state();
        if state.fresh_as_of.is_none_or(|at| at < sent) {
            state.fresh_as_of = Some(sent);
        }
    }
}

/// Listens for changes for as long as the cache exists, reconnecting after failures.
/// Says so once when listening stops, not at every failed attempt to listen again.
async fn listen(cache: Weak<CredentialCache>, config: tokio_postgres::Config) {
    let mut warned = false;
    loop {
        let mut went_live = false;
        let outcome = listen_once(&cache, &config, &mut went_live).await;
        let Some(live) = cache.upgrade() else { return };
        live.set_live(false);
        drop(live);
        if went_live {
            warned = false;
        }
        let error = match outcome {
            Ok(()) => "the connection closed".to_owned(),
            Err(e) => e.to_string(),
        };
        if warned {
            tracing::debug!(error, "still not listening for credential changes");
        } else {
            warned = true;
            tracing::warn!(
                error,
                "not listening for credential changes; every request looks its token up until it is back"
            );
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// What the listening connection delivers.
enum Heard {
    /// A change was announced.
    Change,
    /// The heartbeat with this number came back.
    Heartbeat(u64),
}

/// One listening connection, from connecting until it breaks or stops answering.
async fn listen_once(
    cache: &Weak<CredentialCache>,
    config: &tokio_postgres::Config,
    went_live: &mut bool,
) -> Result<(), tokio_postgres::Error> {
    let mut config = config.clone();
    // A peer that vanished without closing is noticed by the kernel too, not only by the
    // heartbeat.
    config
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(5))
        .keepalives_interval(Duration::from_secs(1))
        .keepalives_retries(3)
        .tcp_user_timeout(GIVE_UP_AFTER);
    let (client, mut connection) = config.connect(tokio_postgres::NoTls).await?;
    let heartbeats =
        format!("{HEARTBEAT_CHANNEL_PREFIX}{}", recruit_domain::Uuid::now_v7().simple());
    let own = heartbeats.clone();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    // The connection delivers notifications only while it is polled; this task polls it.
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(tokio_postgres::AsyncMessage::Notification(n))) => {
                    let heard = match n.payload().parse() {
                        Ok(number) if n.channel() == own => Heard::Heartbeat(number),
                        _ => Heard::Change,
                    };
                    if tx.send(heard).is_err() {
                        return Ok(());
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            }
        }
    });
    let listening = client.batch_execute(&format!("LISTEN {CHANNEL}; LISTEN {heartbeats}")).await;
    if let Err(e) = listening {
        driver.abort();
        return Err(e);
    }
    match cache.upgrade() {
        Some(cache) => {
            cache.set_live(true);
            *went_live = true;
        }
        None => {
            driver.abort();
            return Ok(());
        }
    }
    // Heartbeats go out on the listening connection itself: if it stalls, they stop coming
    // back. Each is numbered; the time it was sent is kept until it returns.
    let sent: Arc<Mutex<std::collections::VecDeque<(u64, Instant)>>> = Arc::default();
    let stop_driver = driver.abort_handle();
    let beating = {
        let sent = Arc::clone(&sent);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(HEARTBEAT);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            for number in 0u64.. {
                ticks.tick().await;
                sent.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push_back((number, Instant::now()));
                let notify = format!("NOTIFY {heartbeats}, '{number}'");
                if client.batch_execute(&notify).await.is_err() {
                    return;
                }
            }
        })
    };
    let outcome = loop {
        let oldest = sent.lock().unwrap_or_else(PoisonError::into_inner).front().map(|(_, at)| *at);
        let give_up =
            oldest.map_or_else(|| Instant::now() + GIVE_UP_AFTER, |at| at + GIVE_UP_AFTER);
        let heard = tokio::select! {
            heard = rx.recv() => heard,
            () = tokio::time::sleep_until(give_up.into()) => {
                tracing::warn!(
                    after_s = GIVE_UP_AFTER.as_secs(),
                    "the connection listening for credential changes stopped answering; reconnecting"
                );
                break Ok(());
            }
        };
        let Some(cache) = cache.upgrade() else { break Ok(()) };
        match heard {
            Some(Heard::Change) => cache.clear(),
            Some(Heard::Heartbeat(number)) => {
                let mut pending = sent.lock().unwrap_or_else(PoisonError::into_inner);
                let mut back = None;
                while let Some(&(n, at)) = pending.front() {
                    if n > number {
                        break;
                    }
                    pending.pop_front();
                    if n == number {
                        back = Some(at);
                    }
                }
                drop(pending);
                if let Some(at) = back {
                    cache.heard(at);
                }
            }
            // The connection ended; say why.
            None => {
                break match driver.await {
                    Ok(result) => result,
                    Err(_) => Ok(()),
                };
            }
        }
    };
    beating.abort();
    stop_driver.abort();
    outcome
}
