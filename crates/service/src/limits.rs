//! Rate limits: how many operations a token may run, per class of operation, and how many
//! failed authentications a client address may cause, so that tokens cannot be guessed at
//! speed and unknown credentials cannot flood the database with look-ups.
//!
//! Each limit is a generic cell rate algorithm (GCRA, from `governor`): a quota of `q`
//! operations per window `w` allows a burst of `q` and then one operation every `w / q`.
//! Limits are kept in this process's memory: with `n` replicas behind a load balancer a client
//! may reach up to `n` times the quota (docs/operations.md).
//!
//! A failed authentication is charged to the client's address (IPv6 addresses by their /64
//! prefix, which one subscriber usually holds whole). Once an address is over its quota, every
//! request from it that needs a credential is refused with RATE_LIMITED *before* its credential
//! is looked at, until the quota allows one more attempt: a correct guess cannot be told from
//! a wrong one while the address is refused.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};
use recruit_domain::{ApiTokenId, ErrorCode};

use crate::error::ServiceError;

/// A limit as configured: a quota of operations per window, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// No limit.
    Unlimited,
    /// At most `count` operations in any `window`, all of which may come at once.
    Per {
        /// Operations allowed per window (also the largest burst).
        count: NonZeroU32,
        /// The window.
        window: Duration,
    },
}

impl Limit {
    /// `count` operations per `window`; `None` when either is zero.
    pub fn per(count: u32, window: Duration) -> Option<Self> {
        let count = NonZeroU32::new(count)?;
        (!window.is_zero()).then_some(Self::Per { count, window })
    }
}

/// The error of parsing a [`Limit`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "a rate limit is `N/s`, `N/min` or `N/h` with N from 1 to 1000000 (such as `100/s`), or \
     `off`"
)]
pub struct LimitError;

/// The largest count a limit may name.
const MAX_COUNT: u32 = 1_000_000;

impl FromStr for Limit {
    type Err = LimitError;

    /// `100/s`, `600/min`, `5000/h` (also `sec`, `second`, `m`, `minute`, `hour`), or `off`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("off") || s.eq_ignore_ascii_case("unlimited") {
            return Ok(Self::Unlimited);
        }
        let (count, unit) = s.split_once('/').ok_or(LimitError)?;
        let count: u32 = count.trim().parse().map_err(|_| LimitError)?;
        if count > MAX_COUNT {
            return Err(LimitError);
        }
        let seconds = match unit.trim().to_ascii_lowercase().as_str() {
            "s" | "sec" | "second" => 1,
            "m" | "min" | "minute" => 60,
            "h" | "hour" => 3600,
            _ => return Err(LimitError),
        };
        Self::per(count, Duration::from_secs(seconds)).ok_or(LimitError)
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unlimited => f.write_str("off"),
            Self::Per { count, window } => match window.as_secs() {
                3600 => write!(f, "{count}/h"),
                60 => write!(f, "{count}/min"),
                1 => write!(f, "{count}/s"),
                s => write!(f, "{count}/{s}s"),
            },
        }
    }
}

/// The limits of a service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimitConfig {
    /// Per token: reads of jobs and of the organization.
    pub reads: Limit,
    /// Per token: reads of the privacy audit ledger (each also writes its audit record).
    pub ledger_reads: Limit,
    /// Per token: writes (recording accesses in the privacy audit ledger).
    pub writes: Limit,
    /// Per client address: failed authentications (a missing, malformed, unknown, expired or
    /// revoked credential).
    pub auth_failures: Limit,
}

impl RateLimitConfig {
    /// The defaults: 100 reads, 20 ledger reads and 20 writes a second per token; 20 failed
    /// authentications a minute per client address.
    pub const DEFAULT: Self = Self {
        reads: Limit::Per { count: NonZeroU32::new(100).unwrap(), window: Duration::from_secs(1) },
        ledger_reads: Limit::Per {
            count: NonZeroU32::new(20).unwrap(),
            window: Duration::from_secs(1),
        },
        writes: Limit::Per { count: NonZeroU32::new(20).unwrap(), window: Duration::from_secs(1) },
        auth_failures: Limit::Per {
            count: NonZeroU32::new(20).unwrap(),
            window: Duration::from_secs(60),
        },
    };

    /// No limit at all.
    pub const UNLIMITED: Self = Self {
        reads: Limit::Unlimited,
        ledger_reads: Limit::Unlimited,
        writes: Limit::Unlimited,
        auth_failures: Limit::Unlimited,
    };
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The classes of operations a token's quotas are counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperationClass {
    /// Reads of jobs and of the organization.
    Read,
    /// Reads of the privacy audit ledger.
    LedgerRead,
    /// Writes: recording accesses.
    Write,
}

/// Where a client stands with one limit: what a response tells it in the `RateLimit-Policy`
/// and `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimitStatus {
    /// The policy's name: `reads`, `ledger_reads` or `auth_failures`.
    pub policy: &'static str,
    /// Operations allowed per window.
    pub quota: u32,
    /// The window.
    pub window: Duration,
    /// Operations still allowed now, without waiting.
    pub remaining: u32,
    /// How long until the whole quota is available again, if nothing more is asked.
    pub reset: Duration,
}

type Keyed<K> = RateLimiter<K, DashMapStateStore<K>, DefaultClock, StateInformationMiddleware>;

/// One limit over keys of type `K`.
struct Limiter<K: Hash + Eq + Clone> {
    policy: &'static str,
    count: NonZeroU32,
    window: Duration,
    limiter: Keyed<K>,
    /// Checks so far; every [`SWEEP_EVERY`]th forgets keys whose quota is whole again.
    checks: AtomicU64,
}

/// How many checks pass between two sweeps of forgotten keys, so that memory stays bounded by
/// the keys seen within about one window.
const SWEEP_EVERY: u64 = 4096;

impl<K: Hash + Eq + Clone> Limiter<K> {
    fn new(policy: &'static str, limit: Limit) -> Option<Self> {
        let Limit::Per { count, window } = limit else { return None };
        let interval = (window / count.get()).max(Duration::from_nanos(1));
        let quota = Quota::with_period(interval)?.allow_burst(count);
        Some(Self {
            policy,
            count,
            window,
            limiter: RateLimiter::dashmap(quota).with_middleware::<StateInformationMiddleware>(),
            checks: AtomicU64::new(0),
        })
    }

    fn interval(&self) -> Duration {
        self.window / self.count.get()
    }

    fn status(&self, remaining: u32) -> RateLimitStatus {
        RateLimitStatus {
            policy: self.policy,
            quota: self.count.get(),
            window: self.window,
            remaining,
            reset: self.interval() * (self.count.get() - remaining),
        }
    }

    /// Charges one operation to `key`: its status when allowed, or how long to wait.
    fn check(&self, key: &K) -> Result<RateLimitStatus, (RateLimitStatus, Duration)> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        match self.limiter.check_key(key) {
            Ok(snapshot) => Ok(self.status(snapshot.remaining_burst_capacity())),
            Err(refused) => {
                let wait = refused.wait_time_from(self.limiter.clock().now());
                let mut status = self.status(0);
                status.reset = wait + self.interval() * (self.count.get() - 1);
                Err((status, wait))
            }
        }
    }
}

/// A client address as its failures are counted: IPv4 addresses whole, IPv6 by /64 prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum AddressKey {
    V4(u32),
    V6(u64),
}

impl From<IpAddr> for AddressKey {
    fn from(ip: IpAddr) -> Self {
        match ip.to_canonical() {
            IpAddr::V4(v4) => Self::V4(u32::from(v4)),
            IpAddr::V6(v6) => Self::V6((u128::from(v6) >> 64) as u64),
        }
    }
}

/// The limits of a service and their state.
pub(crate) struct RateLimits {
    reads: Option<Limiter<ApiTokenId>>,
    ledger_reads: Option<Limiter<ApiTokenId>>,
    writes: Option<Limiter<ApiTokenId>>,
    auth_failures: Option<Limiter<AddressKey>>,
    /// Sign-in links e-mailed, per e-mail address (lower case): at most
    /// [`MAILED_LINKS_PER_HOUR`] an hour, so that nobody floods an owner's mailbox.
    mailed_links: Option<Limiter<String>>,
    /// Addresses over their quota of failures, and until when.
    refused_addresses: Mutex<HashMap<AddressKey, Instant>>,
    /// How many addresses `refused_addresses` holds: when none, requests skip its lock.
    refused_count: AtomicUsize,
    /// Operations refused so far, per policy.
    refusals: [AtomicU64; POLICIES.len()],
}

/// The most sign-in links e-mailed to one address in an hour.
pub const MAILED_LINKS_PER_HOUR: u32 = 3;

/// The names of the policies, as responses and metrics give them.
pub const POLICIES: [&str; 4] = ["reads", "ledger_reads", "writes", "auth_failures"];

/// The index of the per-address policy of failed authentications in [`POLICIES`].
const AUTH_FAILURES: usize = 3;

impl fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimits").finish_non_exhaustive()
    }
}

impl RateLimits {
    pub(crate) fn new(config: RateLimitConfig) -> Self {
        Self {
            reads: Limiter::new(POLICIES[0], config.reads),
            ledger_reads: Limiter::new(POLICIES[1], config.ledger_reads),
            writes: Limiter::new(POLICIES[2], config.writes),
            auth_failures: Limiter::new(POLICIES[AUTH_FAILURES], config.auth_failures),
            mailed_links: Limiter::new(
                "mailed_links",
                Limit::per(MAILED_LINKS_PER_HOUR, Duration::from_secs(3600))
                    .unwrap_or(Limit::Unlimited),
            ),
            refused_addresses: Mutex::new(HashMap::new()),
            refused_count: AtomicUsize::new(0),
            refusals: Default::default(),
        }
    }

    /// Operations refused so far, per policy name.
    pub(crate) fn refusals(&self) -> [(&'static str, u64); POLICIES.len()] {
        std::array::from_fn(|i| (POLICIES[i], self.refusals[i].load(Ordering::Relaxed)))
    }

    fn refuse(&self, index: usize, status: RateLimitStatus, wait: Duration) -> ServiceError {
        self.refusals[index].fetch_add(1, Ordering::Relaxed);
        let message = if index == AUTH_FAILURES {
            "Too many failed authentications from this address. Wait as long as `Retry-After` \
             says before trying again."
                .to_owned()
        } else {
            format!(
                "This token has used its quota of {} operations ({} per {} s). Wait as long as \
                 `Retry-After` says and retry with backoff.",
                status.policy.replace('_', " "),
                status.quota,
                status.window.as_secs()
            )
        };
        ServiceError {
            retry_after: Some(wait),
            rate_limit: Some(Box::new(status)),
            ..ServiceError::new(ErrorCode::RateLimited, message)
        }
    }

    /// Charges one operation of `class` to `token`: where the token stands after it, or
    /// RATE_LIMITED.
    pub(crate) fn admit(
        &self,
        token: ApiTokenId,
        class: OperationClass,
    ) -> Result<Option<RateLimitStatus>, ServiceError> {
        let (index, limiter) = match class {
            OperationClass::Read => (0, &self.reads),
            OperationClass::LedgerRead => (1, &self.ledger_reads),
            OperationClass::Write => (2, &self.writes),
        };
        let Some(limiter) = limiter else { return Ok(None) };
        limiter.check(&token).map(Some).map_err(|(status, wait)| self.refuse(index, status, wait))
    }

    /// Refuses a request from `ip` while the address is over its quota of failed
    /// authentications, before its credential is looked at.
    pub(crate) fn before_authentication(&self, ip: Option<IpAddr>) -> Result<(), ServiceError> {
        let (Some(ip), Some(limiter)) = (ip, &self.auth_failures) else { return Ok(()) };
        if self.refused_count.load(Ordering::Acquire) == 0 {
            return Ok(());
        }
        let key = AddressKey::from(ip);
        let until = {
            let mut refused =
                self.refused_addresses.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match refused.get(&key) {
                Some(until) if *until > Instant::now() => Some(*until),
                Some(_) => {
                    refused.remove(&key);
                    self.refused_count.store(refused.len(), Ordering::Release);
                    None
                }
                None => None,
            }
        };
        match until {
            None => Ok(()),
            Some(until) => {
                let wait = until.saturating_duration_since(Instant::now());
                let mut status = limiter.status(0);
                status.reset = wait + limiter.interval() * (limiter.count.get() - 1);
                Err(self.refuse(AUTH_FAILURES, status, wait))
            }
        }
    }

    /// Whether a sign-in link may be e-mailed to `address` now (charging it), or the address
    /// had its [`MAILED_LINKS_PER_HOUR`].
    pub(crate) fn mail_link_to(&self, address: &str) -> bool {
        self.mailed_links.as_ref().is_none_or(|l| l.check(&address.to_ascii_lowercase()).is_ok())
    }

    /// Charges a failed authentication to `ip`: where the address stands after it, or
    /// RATE_LIMITED when it has now used its quota (and is refused until it may try again).
    pub(crate) fn failed_authentication(
        &self,
        ip: Option<IpAddr>,
    ) -> Result<Option<RateLimitStatus>, ServiceError> {
        let (Some(ip), Some(limiter)) = (ip, &self.auth_failures) else { return Ok(None) };
        let key = AddressKey::from(ip);
        match limiter.check(&key) {
            Ok(status) => Ok(Some(status)),
            Err((status, wait)) => {
                let now = Instant::now();
                let mut refused = self
                    .refused_addresses
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if refused.len() >= 4096 {
                    refused.retain(|_, until| *until > now);
                }
                refused.insert(key, now + wait);
                self.refused_count.store(refused.len(), Ordering::Release);
                drop(refused);
                Err(self.refuse(AUTH_FAILURES, status, wait))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_read_and_written_alike() {
        for (text, shown) in [
            ("100/s", "100/s"),
            ("600/min", "600/min"),
            ("5000/h", "5000/h"),
            (" 7 / second ", "7/s"),
            ("20/m", "20/min"),
            ("off", "off"),
            ("Unlimited", "off"),
        ] {
            let limit: Limit = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(limit.to_string(), shown);
            assert_eq!(shown.parse::<Limit>(), Ok(limit));
        }
        for bad in ["", "100", "0/s", "-1/s", "1000001/s", "10/d", "ten/s", "10/"] {
            assert_eq!(bad.parse::<Limit>(), Err(LimitError), "{bad}");
        }
    }

    #[test]
    fn a_token_gets_its_burst_then_waits_one_interval() {
        let limits = RateLimits::new(RateLimitConfig {
            reads: Limit::per(3, Duration::from_secs(60)).unwrap(),
            ..RateLimitConfig::UNLIMITED
        });
        let token = ApiTokenId::new_v7();
        let remaining: Vec<u32> = (0..3)
            .map(|_| limits.admit(token, OperationClass::Read).unwrap().unwrap().remaining)
            .collect();
        assert_eq!(remaining, [2, 1, 0]);
        let refused = limits.admit(token, OperationClass::Read).unwrap_err();
        assert_eq!(refused.code, ErrorCode::RateLimited);
        let wait = refused.retry_after.unwrap();
        assert!(wait > Duration::from_secs(19) && wait <= Duration::from_secs(20), "{wait:?}");
        let status = refused.rate_limit.unwrap();
        assert_eq!((status.policy, status.quota, status.remaining), ("reads", 3, 0));
        assert_eq!(limits.refusals()[0], ("reads", 1));
        // Another token, and another class of the same token, are not affected.
        assert!(limits.admit(ApiTokenId::new_v7(), OperationClass::Read).is_ok());
        assert_eq!(limits.admit(token, OperationClass::LedgerRead), Ok(None));
    }

    #[test]
    fn an_address_over_its_failures_is_refused_before_its_credential_is_looked_at() {
        let limits = RateLimits::new(RateLimitConfig {
            auth_failures: Limit::per(2, Duration::from_secs(60)).unwrap(),
            ..RateLimitConfig::UNLIMITED
        });
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        assert!(limits.before_authentication(Some(ip)).is_ok());
        assert_eq!(limits.failed_authentication(Some(ip)).unwrap().unwrap().remaining, 1);
        assert_eq!(limits.failed_authentication(Some(ip)).unwrap().unwrap().remaining, 0);
        let refused = limits.failed_authentication(Some(ip)).unwrap_err();
        assert_eq!(refused.code, ErrorCode::RateLimited);
        let refused = limits.before_authentication(Some(ip)).unwrap_err();
        assert_eq!(refused.code, ErrorCode::RateLimited);
        assert!(refused.retry_after.unwrap() > Duration::from_secs(25));
        assert_eq!(limits.refusals()[3], ("auth_failures", 2));
        // Other addresses, and requests of unknown origin, are not affected.
        assert!(limits.before_authentication(Some("192.0.2.8".parse().unwrap())).is_ok());
        assert!(limits.before_authentication(None).is_ok());
    }

    #[test]
    fn ipv6_addresses_are_counted_by_their_64_bit_prefix() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(AddressKey::from(a), AddressKey::from(b));
        assert_ne!(AddressKey::from(a), AddressKey::from(c));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(
            AddressKey::from(mapped),
            AddressKey::from("192.0.2.7".parse::<IpAddr>().unwrap())
        );
        assert_ne!(AddressKey::from(mapped), AddressKey::from(a));
    }
}
