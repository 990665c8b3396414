//! When to try a request again and how long to wait first: only for answers that say the
//! request did not take effect or may be repeated safely, waiting what the server asked for
//! first, within bounds on attempts and total time.

use std::time::{Duration, SystemTime};

use rand::RngExt;
use recruit_domain::retry::backoff_ceiling;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;

/// How failed requests are retried: connection failures, 429, 502, 503 and 504 only, at
/// most `max_attempts` times in all and not past `max_elapsed` since the first attempt.
///
/// The wait before each retry is, in this order of preference: the server's `Retry-After`
/// (seconds or an HTTP date); the `t` (seconds until the quota is whole again) of its
/// `RateLimit` field; else full-jitter exponential backoff, a random duration between zero
/// and `initial_backoff × 2^(retry − 1)`, capped at `max_backoff`. A wait that would end past
/// `max_elapsed` is not waited: the error is returned instead.
///
/// ```
/// use std::time::Duration;
/// use recruit_client::RetryPolicy;
///
/// let patient = RetryPolicy { max_attempts: 10, max_elapsed: Duration::from_secs(300), ..RetryPolicy::default() };
/// assert!(patient.max_backoff <= Duration::from_secs(30));
/// let never = RetryPolicy::none();
/// assert_eq!(never.max_attempts, 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1: no retry).
    pub max_attempts: u32,
    /// The longest time from the first attempt to the start of the last.
    pub max_elapsed: Duration,
    /// The ceiling of the first backoff.
    pub initial_backoff: Duration,
    /// The largest backoff.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    /// 5 attempts within 60 s; backoff from up to 250 ms, doubling, at most 10 s.
    fn default() -> Self {
        Self {
            max_attempts: 5,
            max_elapsed: Duration::from_secs(60),
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// No retry: every request is attempted once.
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// The full-jitter backoff before retry number `retry` (1 for the first retry).
    pub(crate) fn backoff(&self, retry: u32) -> Duration {
        let ceiling = backoff_ceiling(self.initial_backoff, self.max_backoff, retry);
        ceiling.mul_f64(rand::rng().random_range(0.0..=1.0))
    }

    /// The wait before retry number `retry` after an answer with `headers`: what the server
    /// asked for, else the backoff.
    pub(crate) fn wait(&self, retry: u32, headers: Option<&HeaderMap>) -> Duration {
        headers
            .and_then(|h| retry_after(h, SystemTime::now()).or_else(|| rate_limit_reset(h)))
            .unwrap_or_else(|| self.backoff(retry))
    }
}

/// Whether an answer with `status` may be retried: the request was refused before it took
/// effect (429, 503), or a gateway could not get an answer (502, 504).
pub(crate) fn retryable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 502 | 503 | 504)
}

/// The wait `Retry-After` asks for: a number of seconds, or an HTTP date (in the past: none).
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    recruit_domain::retry::retry_after(
        headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?,
        now,
    )
}

/// The `t` parameter of the `RateLimit` field (draft-ietf-httpapi-ratelimit-headers): the
/// seconds until the quota is whole again, when none remains (`r=0`).
pub(crate) fn rate_limit_reset(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get("ratelimit")?.to_str().ok()?;
    let param = |name: &str| {
        value.split(';').skip(1).find_map(|p| p.trim().strip_prefix(name)?.strip_prefix('='))
    };
    if param("r").is_some_and(|r| r.trim() != "0") {
        return None;
    }
    param("t")?.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        h
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date_comes_first() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_420);
        // RFC 9110's example date, 2015-10-21T07:28:00Z, is 60 s after `now`.
        let date = headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]);
        assert_eq!(retry_after(&date, now), Some(Duration::from_secs(60)));
        let past = now + Duration::from_secs(3600);
        assert_eq!(retry_after(&date, past), Some(Duration::ZERO));
        let both = headers(&[("retry-after", "7"), ("ratelimit", "\"reads\";r=0;t=30")]);
        assert_eq!(RetryPolicy::default().wait(1, Some(&both)), Duration::from_secs(7));
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
    }

    #[test]
    fn the_rate_limit_reset_counts_when_nothing_remains() {
        let empty = headers(&[("ratelimit", "\"ledger_reads\";r=0;t=30")]);
        assert_eq!(rate_limit_reset(&empty), Some(Duration::from_secs(30)));
        assert_eq!(RetryPolicy::default().wait(1, Some(&empty)), Duration::from_secs(30));
        let left = headers(&[("ratelimit", "\"reads\";r=4;t=30")]);
        assert_eq!(rate_limit_reset(&left), None);
    }

    #[test]
    fn backoff_is_full_jitter_under_a_doubling_capped_ceiling() {
        let policy = RetryPolicy {
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(350),
            ..RetryPolicy::default()
        };
        for (retry, ceiling) in [(1, 100), (2, 200), (3, 350), (10, 350), (40, 350)] {
            let waits: Vec<Duration> = (0..200).map(|_| policy.backoff(retry)).collect();
            assert!(waits.iter().all(|w| *w <= Duration::from_millis(ceiling)), "{retry}");
            let spread = waits.iter().max().unwrap().saturating_sub(*waits.iter().min().unwrap());
            assert!(spread > Duration::from_millis(ceiling / 2), "jittered: {spread:?}");
        }
        assert!(!retryable(StatusCode::INTERNAL_SERVER_ERROR));
        assert!(!retryable(StatusCode::CONFLICT));
        assert!([429, 502, 503, 504].iter().all(|s| retryable(StatusCode::from_u16(*s).unwrap())));
    }
}
