//! The rules by which an organization's monthly access review flags an account: what counts as
//! unusual enough for a privacy officer to look closer. Work hours and working days are the
//! organization's settings; days off beyond them (holidays) and the thresholds are kept here.

use chrono::NaiveDate;
#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// An organization's review rules. Every threshold is a count an account must exceed in the
/// month (or, for the share, reach) to be flagged; the defaults suit an office that keeps its
/// hours, works from a few addresses and downloads personal data rarely.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct ReviewRules {
    /// Days off besides the weekdays without work hours (public holidays, company days), in
    /// the organization's time zone: every access on them is outside work hours.
    pub holidays: Vec<NaiveDate>,
    /// Accesses outside work hours flag an account when there are more than this many …
    pub outside_hours_accesses: u64,
    /// … and they are at least this share of its accesses, in percent (0 to 100).
    pub outside_hours_percent: u8,
    /// Records accessed in bulk flag an account when there are more than this many.
    pub bulk_records: u64,
    /// Downloads (and exports of the ledger) flag an account when there are more than this
    /// many.
    pub downloads: u64,
    /// Addresses not seen from the account the month before flag it when there are more than
    /// this many.
    pub new_ip_addresses: u64,
    /// Days the person who downloaded has to explain a download once asked; past them the
    /// request is listed as overdue.
    pub explanation_days: u32,
    /// A day's accesses flag an account when they are more than this many times its usual
    /// working day (its accesses per working day over the three months before) …
    pub daily_volume_factor: u32,
    /// … and more than this many.
    pub daily_volume_min: u64,
}

impl ReviewRules {
    /// The rules an organization has until it sets its own.
    pub const DEFAULT: Self = Self {
        holidays: Vec::new(),
        outside_hours_accesses: 10,
        outside_hours_percent: 10,
        bulk_records: 1_000,
        downloads: 5,
        new_ip_addresses: 0,
        explanation_days: 7,
        daily_volume_factor: 3,
        daily_volume_min: 100,
    };

    /// The largest threshold of a count.
    pub const MAX_COUNT: u64 = 1_000_000_000_000;

    /// The largest factor of the daily volume.
    pub const MAX_FACTOR: u32 = 1_000;

    /// What is wrong with the rules, if anything: a share over 100 %, a count over
    /// [`Self::MAX_COUNT`], a factor of 0 or over [`Self::MAX_FACTOR`], or no time (or more than
    /// a year) to explain a download.
    pub fn problem(&self) -> Option<&'static str> {
        if self.outside_hours_percent > 100 {
            return Some("outside_hours_percent must be 0 to 100");
        }
        let counts = [
            (self.outside_hours_accesses, "outside_hours_accesses must be 0 to 1000000000000"),
            (self.bulk_records, "bulk_records must be 0 to 1000000000000"),
            (self.downloads, "downloads must be 0 to 1000000000000"),
            (self.new_ip_addresses, "new_ip_addresses must be 0 to 1000000000000"),
            (self.daily_volume_min, "daily_volume_min must be 0 to 1000000000000"),
        ];
        if let Some((_, why)) = counts.iter().find(|(n, _)| *n > Self::MAX_COUNT) {
            return Some(why);
        }
        if !(1..=Self::MAX_FACTOR).contains(&self.daily_volume_factor) {
            return Some("daily_volume_factor must be 1 to 1000");
        }
        (!(1..=366).contains(&self.explanation_days)).then_some("explanation_days must be 1 to 366")
    }
}

impl Default for ReviewRules {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;

    #[test]
    fn rules_left_out_are_the_defaults_and_holidays_are_dates() {
        let rules: ReviewRules =
            serde_json::from_str(r#"{"holidays": ["2026-10-03", "2026-10-09"], "downloads": 2}"#)
                .unwrap();
        assert_eq!(rules.holidays[1], NaiveDate::from_ymd_opt(2026, 10, 9).unwrap());
        assert_eq!(
            rules,
            ReviewRules {
                downloads: 2,
                ..ReviewRules { holidays: rules.holidays.clone(), ..ReviewRules::DEFAULT }
            }
        );
        assert_eq!(serde_json::from_str::<ReviewRules>("{}").unwrap(), ReviewRules::DEFAULT);
        let bad: ReviewRules = serde_json::from_str(r#"{"outside_hours_percent": 101}"#).unwrap();
        assert!(bad.problem().is_some());
        assert!(serde_json::from_str::<ReviewRules>(r#"{"holidays": ["10/03"]}"#).is_err());
    }
}
