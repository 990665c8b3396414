//! A calendar month, `YYYY-MM`: what a review, a decision and a sign-off are about. Which
//! instants it holds depends on a time zone, which the service brings.

use std::fmt;
use std::str::FromStr;

use chrono::{Datelike, NaiveDate};

/// A calendar month of years 0 to 9999 (the proleptic Gregorian calendar), written `YYYY-MM`
/// (`2026-10`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Month {
    first: NaiveDate,
}

/// Why a value is not a [`Month`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("must be a month as YYYY-MM, such as 2026-10")]
pub struct MonthError;

impl Month {
    /// The month `month` (1 to 12) of `year` (0 to 9999).
    pub fn new(year: i32, month: u32) -> Result<Self, MonthError> {
        if !(0..=9999).contains(&year) {
            return Err(MonthError);
        }
        NaiveDate::from_ymd_opt(year, month, 1).map(|first| Self { first }).ok_or(MonthError)
    }

    /// The month `day` falls in.
    pub fn of(day: NaiveDate) -> Result<Self, MonthError> {
        Self::new(day.year(), day.month())
    }

    /// The year.
    pub fn year(self) -> i32 {
        self.first.year()
    }

    /// The month of the year, 1 to 12.
    pub fn month(self) -> u32 {
        self.first.month()
    }

    /// The month's first day.
    pub fn first_day(self) -> NaiveDate {
        self.first
    }

    /// The month before; none before January of the year 0.
    pub fn previous(self) -> Option<Self> {
        let day = self.first.checked_sub_months(chrono::Months::new(1))?;
        Self::of(day).ok()
    }

    /// The month after; none after December 9999.
    pub fn next(self) -> Option<Self> {
        let day = self.first.checked_add_months(chrono::Months::new(1))?;
        Self::of(day).ok()
    }
}

impl FromStr for Month {
    type Err = MonthError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (year, month) = s.split_once('-').ok_or(MonthError)?;
        let digits = |t: &str, n: usize| t.len() == n && t.bytes().all(|b| b.is_ascii_digit());
        if !digits(year, 4) || !digits(month, 2) {
            return Err(MonthError);
        }
        Self::new(year.parse().map_err(|_| MonthError)?, month.parse().map_err(|_| MonthError)?)
    }
}

impl fmt::Display for Month {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year(), self.month())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Month {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Month {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_parse_print_and_step() {
        let october: Month = "2026-10".parse().unwrap();
        assert_eq!(october.to_string(), "2026-10");
        assert_eq!(october.next().unwrap().to_string(), "2026-11");
        assert_eq!("2026-12".parse::<Month>().unwrap().next().unwrap().to_string(), "2027-01");
        assert_eq!("2027-01".parse::<Month>().unwrap().previous().unwrap().to_string(), "2026-12");
        assert_eq!("0001-01".parse::<Month>().unwrap().previous().unwrap().to_string(), "0000-12");
        assert_eq!("0000-01".parse::<Month>().unwrap().previous(), None);
        assert_eq!("9999-12".parse::<Month>().unwrap().next(), None);
        assert!(october < october.next().unwrap());
        for bad in ["", "2026", "2026-1", "2026-13", "2026-00", "+026-01", "2026-+1", "-001-01"] {
            assert_eq!(bad.parse::<Month>(), Err(MonthError), "{bad:?}");
        }
    }
}
