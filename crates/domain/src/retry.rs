//! How long to wait before sending a request again, as HTTP says: what a `Retry-After` field
//! asks for, and the ceiling of full-jitter exponential backoff. Shared by whoever retries (the
//! client crate, the server's deliveries), so that both read a server's answer alike.

use std::time::{Duration, SystemTime};

/// The wait a `Retry-After` value asks for: a number of seconds, or an HTTP date (one in the
/// past asks for none). Anything else asks for nothing.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use recruit_domain::retry::retry_after;
///
/// assert_eq!(retry_after("120", SystemTime::now()), Some(Duration::from_secs(120)));
/// assert_eq!(retry_after("soon", SystemTime::now()), None);
/// ```
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let at = SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_secs(u64::try_from(at.timestamp()).ok()?))?;
    Some(at.duration_since(now).unwrap_or_default())
}

/// The ceiling of the full-jitter backoff before retry number `retry` (1 for the first):
/// `initial × 2^(retry − 1)`, at most `max`. The wait is a random share of it.
pub fn backoff_ceiling(initial: Duration, max: Duration, retry: u32) -> Duration {
    initial.saturating_mul(2u32.saturating_pow(retry.saturating_sub(1))).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_420);
        assert_eq!(retry_after(" 30 ", now), Some(Duration::from_secs(30)));
        assert_eq!(
            retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::from_secs(60))
        );
        let later = now + Duration::from_secs(3600);
        assert_eq!(retry_after("Wed, 21 Oct 2015 07:28:00 GMT", later), Some(Duration::ZERO));
        assert_eq!(retry_after("-1", now), None);
    }

    #[test]
    fn the_ceiling_doubles_from_the_first_and_stops_at_the_largest() {
        let (initial, max) = (Duration::from_millis(100), Duration::from_millis(350));
        let ceilings: Vec<u128> =
            (1..=5).map(|r| backoff_ceiling(initial, max, r).as_millis()).collect();
        assert_eq!(ceilings, [100, 200, 350, 350, 350]);
        let far = backoff_ceiling(initial, Duration::MAX, 200);
        assert!(far >= backoff_ceiling(initial, Duration::MAX, 30), "saturates, never overflows");
    }
}
