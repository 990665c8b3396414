//! How long the ledgers keep their entries, in whole calendar months: the retention period
//! an operator sets and the longest window an export may ask for.
//!
//! Access records are kept for at least a year by law (Korea's PIPA safety-measure standard,
//! Art. 8: one year, two where 50 000 or more people's data is processed), so a retention
//! shorter than 12 months cannot be built.

use std::fmt;
use std::str::FromStr;

use crate::Timestamp;

/// A retention period: 12 months or more, whole months, 24 when not set.
///
/// ```
/// use recruit_domain::Retention;
///
/// assert_eq!(Retention::default().months(), 24);
/// assert_eq!("2y".parse::<Retention>().unwrap(), Retention::default());
/// assert_eq!("18months".parse::<Retention>().unwrap().months(), 18);
/// assert!("11mo".parse::<Retention>().unwrap_err().to_string().contains("at least 1 year"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Retention(u16);

/// Why a value is not a [`Retention`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RetentionError {
    /// Shorter than the legal minimum.
    #[error(
        "{0} months is shorter than the legal minimum: access records must be kept at least \
         1 year (12 months; PIPA safety-measure standard, Art. 8), 2 years where 50 000 or \
         more people's data is processed"
    )]
    TooShort(u32),
    /// Not a number of years or months.
    #[error("must be a whole number of years or months, such as 2y, 2years, 18mo or 18months")]
    Malformed,
    /// Longer than anyone keeps access records.
    #[error("must be at most {} years", Retention::MAX.0 / 12)]
    TooLong,
}

impl Retention {
    /// The shortest period the law allows: one year.
    pub const MIN: Self = Self(12);
    /// Two years: what the law asks of most organizations, and the default.
    pub const DEFAULT: Self = Self(24);
    /// The longest period accepted: a hundred years.
    pub const MAX: Self = Self(1200);

    /// A retention of `months` months.
    pub fn from_months(months: u32) -> Result<Self, RetentionError> {
        if months < u32::from(Self::MIN.0) {
            return Err(RetentionError::TooShort(months));
        }
        match u16::try_from(months) {
            Ok(m) if m <= Self::MAX.0 => Ok(Self(m)),
            _ => Err(RetentionError::TooLong),
        }
    }

    /// The period in months.
    pub fn months(self) -> u32 {
        u32::from(self.0)
    }

    /// The earliest instant kept at `now`: `now` less the period, in calendar months (the
    /// same day of the month, or the month's last day where it has no such day).
    pub fn horizon(self, now: Timestamp) -> Timestamp {
        now.as_datetime()
            .checked_sub_months(chrono::Months::new(self.months()))
            .and_then(|before| Timestamp::from_datetime(before).ok())
            .unwrap_or(Timestamp::MIN)
    }

    /// Whether the window from `gte` to `lt` spans at most the period.
    pub fn spans(self, gte: Timestamp, lt: Timestamp) -> bool {
        gte.as_datetime()
            .checked_add_months(chrono::Months::new(self.months()))
            .is_none_or(|end| lt.as_datetime() <= end)
    }
}

impl Default for Retention {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// `Ny`, `Nyear(s)`, `Nmo` or `Nmonth(s)`.
impl FromStr for Retention {
    type Err = RetentionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let (number, unit) = s.split_at(digits);
        let per = match unit.trim_start() {
            "y" | "year" | "years" => 12,
            "mo" | "month" | "months" => 1,
            _ => return Err(RetentionError::Malformed),
        };
        let n: u32 = number.parse().map_err(|_| RetentionError::Malformed)?;
        n.checked_mul(per).map_or(Err(RetentionError::TooLong), Self::from_months)
    }
}

/// Whole years as `Ny`, other periods as `Nmo`, which [`Retention::from_str`] reads back.
impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_multiple_of(12) {
            write!(f, "{}y", self.0 / 12)
        } else {
            write!(f, "{}mo", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn periods_read_and_print_back() {
        for (text, months) in [("1y", 12), ("2 years", 24), ("13mo", 13), ("36months", 36)] {
            let r: Retention = text.parse().unwrap();
            assert_eq!(r.months(), months, "{text}");
            assert_eq!(r.to_string().parse::<Retention>().unwrap(), r);
        }
        for bad in ["", "y", "2", "2d", "-1y", "1.5y", "2 y s"] {
            assert_eq!(bad.parse::<Retention>(), Err(RetentionError::Malformed), "{bad:?}");
        }
        assert_eq!("11months".parse::<Retention>(), Err(RetentionError::TooShort(11)));
        assert_eq!("0y".parse::<Retention>(), Err(RetentionError::TooShort(0)));
        assert_eq!("101y".parse::<Retention>(), Err(RetentionError::TooLong));
        assert_eq!("99999999999y".parse::<Retention>(), Err(RetentionError::Malformed));
        assert_eq!("4000000000y".parse::<Retention>(), Err(RetentionError::TooLong));
    }

    #[test]
    fn the_horizon_and_the_span_count_calendar_months() {
        let two = Retention::DEFAULT;
        assert_eq!(two.horizon(t("2026-11-24T10:00:00Z")), t("2024-11-24T10:00:00Z"));
        // A day the month before does not have: its last day.
        let r = Retention::from_months(13).unwrap();
        assert_eq!(r.horizon(t("2026-03-31T00:00:00Z")), t("2025-02-28T00:00:00Z"));
        assert!(two.spans(t("2024-02-29T00:00:00Z"), t("2026-02-28T00:00:00Z")));
        assert!(!two.spans(t("2024-02-28T00:00:00Z"), t("2026-02-28T00:00:00.000001Z")));
        assert!(two.spans(t("2024-11-24T00:00:00Z"), t("2026-11-24T00:00:00Z")));
    }
}
