//! [`Timestamp`]: an instant in UTC with microsecond precision, written as RFC 3339 with `Z`.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, NaiveDate, Timelike, Utc};

/// An instant in UTC, with microsecond precision, between the years 1 and 9999.
///
/// Input accepts RFC 3339 with any offset and normalises it to UTC; digits past the
/// microsecond are dropped. Output is RFC 3339 in UTC with a `Z`, with six fractional digits
/// when the microseconds are not zero and none otherwise.
///
/// ```
/// use recruit_domain::Timestamp;
///
/// let t: Timestamp = "2026-11-20T02:30:59.656105+01:00".parse().unwrap();
/// assert_eq!(t.to_string(), "2026-11-20T01:30:59.656105Z");
///
/// let t: Timestamp = "2026-11-20T01:30:59.000000-00:00".parse().unwrap();
/// assert_eq!(t.to_string(), "2026-11-20T01:30:59Z");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

/// Why a string or a number is not a [`Timestamp`]. The text suits an API error's `reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseTimestampError {
    /// Not an RFC 3339 date-time with an offset.
    #[error(
        "is not an RFC 3339 date-time with an offset, such as `2026-11-20T01:30:59Z` or \
         `2026-11-20T02:30:59+01:00`"
    )]
    Format,
    /// A leap second (`:60`), which is not supported.
    #[error("is a leap second, which is not supported")]
    LeapSecond,
    /// Before 0001-01-01T00:00:00Z or after 9999-12-31T23:59:59.999999Z once in UTC.
    #[error("is outside the supported range, the years 1 to 9999 in UTC")]
    OutOfRange,
}

impl Timestamp {
    /// The earliest instant: 0001-01-01T00:00:00Z.
    pub const MIN: Self = Self(match NaiveDate::from_ymd_opt(1, 1, 1) {
        Some(d) => match d.and_hms_opt(0, 0, 0) {
            Some(t) => t.and_utc(),
            None => unreachable!(),
        },
        None => unreachable!(),
    });
    /// The latest instant: 9999-12-31T23:59:59.999999Z.
    pub const MAX: Self = Self(match NaiveDate::from_ymd_opt(9999, 12, 31) {
        Some(d) => match d.and_hms_micro_opt(23, 59, 59, 999_999) {
            Some(t) => t.and_utc(),
            None => unreachable!(),
        },
        None => unreachable!(),
    });

    /// The current time, to the microsecond.
    pub fn now() -> Self {
        Self::from_datetime(Utc::now()).unwrap_or(Self::MAX)
    }

    /// Takes a `DateTime<Utc>`, dropping digits past the microsecond.
    pub fn from_datetime(t: DateTime<Utc>) -> Result<Self, ParseTimestampError> {
        let nanos = t.nanosecond();
        if nanos >= 1_000_000_000 {
            return Err(ParseTimestampError::LeapSecond);
        }
        let t = t.with_nanosecond(nanos - nanos % 1_000).ok_or(ParseTimestampError::Format)?;
        let t = Self(t);
        if t < Self::MIN || t > Self::MAX {
            return Err(ParseTimestampError::OutOfRange);
        }
        Ok(t)
    }

    /// The instant `micros` microseconds after 1970-01-01T00:00:00Z.
    pub fn from_unix_micros(micros: i64) -> Result<Self, ParseTimestampError> {
        DateTime::from_timestamp_micros(micros)
            .ok_or(ParseTimestampError::OutOfRange)
            .and_then(Self::from_datetime)
    }

    /// Microseconds since 1970-01-01T00:00:00Z.
    pub fn unix_micros(self) -> i64 {
        self.0.timestamp_micros()
    }

    /// The instant as a chrono `DateTime<Utc>`.
    pub fn as_datetime(self) -> DateTime<Utc> {
        self.0
    }

    /// Parses RFC 3339 with any offset (`Z`, `+01:00`, `-00:00`).
    pub fn parse(s: &str) -> Result<Self, ParseTimestampError> {
        let t = DateTime::parse_from_rfc3339(s).map_err(|_| ParseTimestampError::Format)?;
        Self::from_datetime(t.with_timezone(&Utc))
    }

    /// This instant plus `delta`, if the result is still in range.
    pub fn checked_add(self, delta: chrono::TimeDelta) -> Option<Self> {
        self.0.checked_add_signed(delta).and_then(|t| Self::from_datetime(t).ok())
    }

    /// This instant plus a standard `Duration`, if the result is still in range.
    pub fn checked_add_duration(self, delta: std::time::Duration) -> Option<Self> {
        chrono::TimeDelta::from_std(delta).ok().and_then(|d| self.checked_add(d))
    }

    /// Writes the RFC 3339 form into `buf` and returns it, without allocating.
    pub fn encode(self, buf: &mut [u8; Self::MAX_LEN]) -> &str {
        /// Writes `value` as `out.len()` decimal digits, zero-padded.
        fn digits(out: &mut [u8], mut value: u32) {
            for d in out.iter_mut().rev() {
                *d = b'0' + u8::try_from(value % 10).unwrap_or_default();
                value /= 10;
            }
        }
        let t = self.0;
        // The year is between 1 and 9999 by the type's invariant.
        digits(&mut buf[0..4], t.year().unsigned_abs());
        buf[4] = b'-';
        digits(&mut buf[5..7], t.month());
        buf[7] = b'-';
        digits(&mut buf[8..10], t.day());
        buf[10] = b'T';
        digits(&mut buf[11..13], t.hour());
        buf[13] = b':';
        digits(&mut buf[14..16], t.minute());
        buf[16] = b':';
        digits(&mut buf[17..19], t.second());
        let micros = t.nanosecond() / 1_000;
        let end = if micros == 0 {
            19
        } else {
            buf[19] = b'.';
            digits(&mut buf[20..26], micros);
            26
        };
        buf[end] = b'Z';
        std::str::from_utf8(&buf[..=end]).unwrap_or_else(|_| unreachable!("written in ASCII"))
    }

    /// The longest encoded form: `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    pub const MAX_LEN: usize = 27;
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.encode(&mut [0; Self::MAX_LEN]))
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

impl FromStr for Timestamp {
    type Err = ParseTimestampError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<DateTime<Utc>> for Timestamp {
    type Error = ParseTimestampError;

    fn try_from(t: DateTime<Utc>) -> Result<Self, Self::Error> {
        Self::from_datetime(t)
    }
}

impl From<Timestamp> for DateTime<Utc> {
    fn from(t: Timestamp) -> Self {
        t.0
    }
}

#[cfg(feature = "serde")]
mod serde_impls {
    use std::fmt;

    use serde::de::{self, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Timestamp;

    impl Serialize for Timestamp {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_str(self.encode(&mut [0; Timestamp::MAX_LEN]))
        }
    }

    struct TimestampVisitor;

    impl Visitor<'_> for TimestampVisitor {
        type Value = Timestamp;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an RFC 3339 date-time with an offset")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
            Timestamp::parse(v).map_err(|e| E::custom(format_args!("date-time {e}")))
        }
    }

    impl<'de> Deserialize<'de> for Timestamp {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_str(TimestampVisitor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Result<&str, ParseTimestampError>) {
        let got = Timestamp::parse(input).map(|t| t.to_string());
        assert_eq!(got.as_deref().map_err(|e| *e), expected, "input {input:?}");
    }

    #[test]
    fn input_is_normalised_to_utc_with_microsecond_precision() {
        check("2026-11-20T01:30:59Z", Ok("2026-11-20T01:30:59Z"));
        check("2026-11-20T01:30:59.656105Z", Ok("2026-11-20T01:30:59.656105Z"));
        check("2026-11-20T01:30:59.5Z", Ok("2026-11-20T01:30:59.500000Z"));
        check("2026-11-20T01:30:59.123456789Z", Ok("2026-11-20T01:30:59.123456Z"));
        check("2026-11-20T01:30:59.000000999Z", Ok("2026-11-20T01:30:59Z"));
        check("2026-11-20T02:30:59+01:00", Ok("2026-11-20T01:30:59Z"));
        check("2026-11-19T20:00:59-05:30", Ok("2026-11-20T01:30:59Z"));
        check("2026-11-20t01:30:59z", Ok("2026-11-20T01:30:59Z"));
        check("0001-01-01T00:00:00Z", Ok("0001-01-01T00:00:00Z"));
        check("9999-12-31T23:59:59.999999Z", Ok("9999-12-31T23:59:59.999999Z"));
    }

    #[test]
    fn what_is_not_rfc_3339_in_range_is_refused() {
        check("2026-11-20T01:30:59", Err(ParseTimestampError::Format));
        check("2026-11-20", Err(ParseTimestampError::Format));
        check("1763602259", Err(ParseTimestampError::Format));
        check("2026-13-20T01:30:59Z", Err(ParseTimestampError::Format));
        check("", Err(ParseTimestampError::Format));
        check("2016-12-31T23:59:60Z", Err(ParseTimestampError::LeapSecond));
        check("0001-01-01T00:00:00+00:01", Err(ParseTimestampError::OutOfRange));
        check("9999-12-31T23:59:59-00:01", Err(ParseTimestampError::OutOfRange));
    }

    #[test]
    fn unix_micros_round_trip() {
        let t = Timestamp::parse("2026-11-20T01:30:59.656105Z").unwrap();
        assert_eq!(Timestamp::from_unix_micros(t.unix_micros()), Ok(t));
        assert_eq!(Timestamp::from_unix_micros(i64::MAX), Err(ParseTimestampError::OutOfRange));
    }
}
