//! This replica's clock, checked against the database's.
//!
//! The times a replica writes and compares come from its own clock: idempotency keys' expiry
//! and their purge, console sessions' expiry, log streams' leases, the times recorded in the
//! ledgers and signed in checkpoints. The order of a chain never does (positions come from its
//! head), but the rest holds only while the replicas' clocks agree, hence agree with the
//! database's. A replica whose clock is off the database's by more than the allowed skew (a
//! jump forward or back, a clock left unsynchronised) fails closed until it agrees again: every
//! request that needs a credential is refused with 503 `UNAVAILABLE` and `Retry-After`, nothing
//! is purged, no log stream is claimed, and readiness names the skew. The SQLite store runs on
//! the process's own clock: there is nothing to disagree with.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use recruit_domain::{ErrorCode, Timestamp};
use recruit_ports::{Store, StoreError};

use crate::ServiceError;

/// The skew allowed by default: far beyond what NTP keeps (milliseconds), far below the
/// shortest time that matters (a console session's idle minutes, a lease's tens of seconds).
pub const DEFAULT_MAX_SKEW: Duration = Duration::from_secs(2);

/// What the last check of this replica's clock found.
#[derive(Debug)]
pub struct Clock {
    max_skew: Duration,
    /// The database's clock less this one, in microseconds, at the last check.
    skew_micros: AtomicI64,
    /// Whether the last check found them within `max_skew` (true until a check says not).
    trusted: AtomicBool,
}

impl Clock {
    /// A clock allowed to be `max_skew` off the database's.
    pub fn new(max_skew: Duration) -> Self {
        Self { max_skew, skew_micros: AtomicI64::new(0), trusted: AtomicBool::new(true) }
    }

    /// Reads the database's clock between two readings of this one and keeps how far apart
    /// they are: the database's reading less the midpoint of this clock's, within half the
    /// round trip. Trusted while that is within the allowed skew (beyond the round trip's
    /// uncertainty); a store without a clock of its own always is.
    pub async fn check(&self, store: &dyn Store) -> Result<(), StoreError> {
        let (asked, sent) = (Timestamp::now(), Instant::now());
        let Some(database) = store.database_clock().await? else {
            self.skew_micros.store(0, Ordering::Relaxed);
            self.trusted.store(true, Ordering::Relaxed);
            return Ok(());
        };
        let round_trip = i64::try_from(sent.elapsed().as_micros()).unwrap_or(i64::MAX);
        let skew = database.unix_micros() - (asked.unix_micros() + round_trip / 2);
        let allowed = i64::try_from(self.max_skew.as_micros()).unwrap_or(i64::MAX);
        let trusted = skew.unsigned_abs() <= allowed.saturating_add(round_trip / 2).unsigned_abs();
        self.skew_micros.store(skew, Ordering::Relaxed);
        if self.trusted.swap(trusted, Ordering::Relaxed) != trusted {
            let seconds = skew as f64 / 1e6;
            match trusted {
                false => tracing::error!(
                    database_minus_local_seconds = seconds,
                    "this replica's clock is off the database's: it refuses requests until they agree"
                ),
                true => tracing::warn!(
                    database_minus_local_seconds = seconds,
                    "this replica's clock agrees with the database's again"
                ),
            }
        }
        Ok(())
    }

    /// Whether the last check found this clock within the allowed skew.
    pub fn trusted(&self) -> bool {
        self.trusted.load(Ordering::Relaxed)
    }

    /// The database's clock less this one at the last check, in seconds.
    pub fn skew_seconds(&self) -> f64 {
        self.skew_micros.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// Nothing while this clock is trusted; else the refusal of a request.
    pub fn admit(&self) -> Result<(), ServiceError> {
        if self.trusted() {
            return Ok(());
        }
        Err(ServiceError {
            retry_after: Some(Duration::from_secs(5)),
            ..ServiceError::new(
                ErrorCode::Unavailable,
                format!(
                    "This server's clock is {:+.1} s off its database's; it serves no request \
                     until they agree. Retry after the delay in `Retry-After`.",
                    -self.skew_seconds()
                ),
            )
        })
    }
}
