//! Where the heavy reads run ([`HeavyReads`]): exports, the chains' verification and the
//! monthly review read a month or more of a ledger, so with standbys configured they run on
//! one, after it has replayed everything the primary had committed when the read began (the
//! caller reads its own writes). A standby that has not caught up within the wait, or cannot
//! be reached, sends the read to the primary, and a count says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use recruit_ports::{Replica, Store, StoreError};

use crate::review::ReviewError;

/// The heavy reads' stores: the primary, and the standbys when there are.
pub struct HeavyReads {
    primary: Arc<dyn Store>,
    replica: Option<(Arc<dyn Replica>, Duration)>,
    on_standby: AtomicU64,
    fallbacks: AtomicU64,
}

impl std::fmt::Debug for HeavyReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeavyReads")
            .field("standbys", &self.replica.as_ref().map(|(_, wait)| wait))
            .finish_non_exhaustive()
    }
}

/// An error a read may end in; one that says the database was unavailable sends a read that
/// ran on a standby to the primary.
pub trait ReadError {
    /// Whether the store was unavailable.
    fn unavailable(&self) -> bool;
}

impl ReadError for StoreError {
    fn unavailable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}

impl ReadError for ReviewError {
    fn unavailable(&self) -> bool {
        matches!(self, Self::Store(e) if e.unavailable())
    }
}

impl HeavyReads {
    /// Heavy reads on `primary`, or on `replica`'s standbys when given, each waiting at most
    /// `wait` for its standby to catch up.
    pub fn new(primary: Arc<dyn Store>, replica: Option<(Arc<dyn Replica>, Duration)>) -> Self {
        Self { primary, replica, on_standby: AtomicU64::new(0), fallbacks: AtomicU64::new(0) }
    }

    /// Runs `read` (named `what` in the log) on a standby caught up with the primary. When
    /// none is configured, it runs on the primary; when the standby is unavailable or has not
    /// caught up in time, it runs again on the primary, and the fallback is counted.
    pub async fn run<T, E, F>(
        &self,
        what: &'static str,
        read: impl Fn(Arc<dyn Store>) -> F,
    ) -> Result<T, E>
    where
        E: ReadError + std::fmt::Display,
        F: std::future::Future<Output = Result<T, E>>,
    {
        let Some((replica, wait)) = &self.replica else {
            return read(Arc::clone(&self.primary)).await;
        };
        let why = match replica.caught_up(Instant::now() + *wait).await {
            Ok(standby) => match read(standby).await {
                Err(e) if e.unavailable() => e.to_string(),
                done => {
                    self.on_standby.fetch_add(1, Ordering::Relaxed);
                    return done;
                }
            },
            Err(e) => e.to_string(),
        };
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(read = what, reason = %why, "a heavy read runs on the primary");
        read(Arc::clone(&self.primary)).await
    }

    /// Heavy reads so far that ran on a standby (`standby`) and that fell back to the primary
    /// (`fallback`), for metrics; both 0 without standbys.
    pub fn counts(&self) -> [(&'static str, u64); 2] {
        [
            ("standby", self.on_standby.load(Ordering::Relaxed)),
            ("fallback", self.fallbacks.load(Ordering::Relaxed)),
        ]
    }
}
