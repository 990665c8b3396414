//! The input rules of the privacy audit log list as types that cannot hold invalid values
//! (spec §4.1 and §8). Each failure's text suits an API error's `details[].reason`.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use chrono::TimeDelta;

use crate::Timestamp;
use crate::id::{Id, Resource};

/// A page size: 1 to 100, 25 when not given.
///
/// ```
/// use recruit_domain::PageLimit;
///
/// assert_eq!(PageLimit::default().get(), 25);
/// assert_eq!("100".parse::<PageLimit>().unwrap().get(), 100);
/// assert_eq!("0".parse::<PageLimit>().unwrap_err().to_string(), "must be an integer from 1 to 100");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageLimit(u8);

/// Why a value is not a [`PageLimit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("must be an integer from 1 to 100")]
pub struct PageLimitError(());

impl PageLimit {
    /// The smallest page.
    pub const MIN: Self = Self(1);
    /// The largest page.
    pub const MAX: Self = Self(100);
    /// The page size when none is given.
    pub const DEFAULT: Self = Self(25);

    /// A page size, if `n` is from 1 to 100.
    pub fn new(n: u32) -> Result<Self, PageLimitError> {
        match u8::try_from(n) {
            Ok(n) if (Self::MIN.0..=Self::MAX.0).contains(&n) => Ok(Self(n)),
            _ => Err(PageLimitError(())),
        }
    }

    /// The page size.
    pub fn get(self) -> u8 {
        self.0
    }
}

impl Default for PageLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Parses a decimal integer, as a query parameter carries it: digits only (leading zeros
/// allowed), no sign, no space.
impl FromStr for PageLimit {
    type Err = PageLimitError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(PageLimitError(()));
        }
        let significant = s.trim_start_matches('0');
        if significant.len() > 3 {
            return Err(PageLimitError(()));
        }
        significant.parse::<u32>().map_err(|_| PageLimitError(())).and_then(Self::new)
    }
}

/// A time window `[gte, lt)`: `gte` strictly before `lt`, at most 366 days long.
///
/// ```
/// use recruit_domain::{TimeWindow, Timestamp};
///
/// let gte: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
/// let lt: Timestamp = "2027-01-02T00:00:00Z".parse().unwrap();
/// assert!(TimeWindow::new(gte, lt).is_ok()); // exactly 366 days
/// let lt: Timestamp = "2027-01-02T00:00:00.000001Z".parse().unwrap();
/// assert_eq!(TimeWindow::new(gte, lt).unwrap_err().to_string(), "must be at most 366 days after timestamp_gte");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeWindow {
    gte: Timestamp,
    lt: Timestamp,
}

/// Why two instants do not make a [`TimeWindow`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeWindowError {
    /// `gte` is not before `lt`.
    #[error("must be later than timestamp_gte")]
    NotAfterStart,
    /// The window is longer than [`TimeWindow::MAX_DAYS`].
    #[error("must be at most {} days after timestamp_gte", TimeWindow::MAX_DAYS)]
    TooLong,
    /// The window is longer than the ledgers' retention period, which bounds an export.
    #[error("must be at most {0} after timestamp_gte: the ledgers keep entries no longer")]
    LongerThanRetention(crate::Retention),
}

impl TimeWindow {
    /// The longest window, in days.
    pub const MAX_DAYS: i64 = 366;

    /// The window from `gte` (included) to `lt` (excluded).
    pub fn new(gte: Timestamp, lt: Timestamp) -> Result<Self, TimeWindowError> {
        if gte >= lt {
            return Err(TimeWindowError::NotAfterStart);
        }
        if lt.as_datetime() - gte.as_datetime() > TimeDelta::days(Self::MAX_DAYS) {
            return Err(TimeWindowError::TooLong);
        }
        Ok(Self { gte, lt })
    }

    /// The window from `gte` to `lt` for an export: at most the ledgers' `retention` long,
    /// since an export may ask for anything the ledgers still keep.
    ///
    /// ```
    /// use recruit_domain::{Retention, TimeWindow, Timestamp};
    ///
    /// let gte: Timestamp = "2025-01-01T00:00:00Z".parse().unwrap();
    /// let lt: Timestamp = "2027-01-01T00:00:00Z".parse().unwrap();
    /// assert!(TimeWindow::within(gte, lt, Retention::DEFAULT).is_ok());
    /// let lt: Timestamp = "2027-01-01T00:00:01Z".parse().unwrap();
    /// assert_eq!(
    ///     TimeWindow::within(gte, lt, Retention::DEFAULT).unwrap_err().to_string(),
    ///     "must be at most 2y after timestamp_gte: the ledgers keep entries no longer",
    /// );
    /// ```
    pub fn within(
        gte: Timestamp,
        lt: Timestamp,
        retention: crate::Retention,
    ) -> Result<Self, TimeWindowError> {
        if gte >= lt {
            return Err(TimeWindowError::NotAfterStart);
        }
        if !retention.spans(gte, lt) {
            return Err(TimeWindowError::LongerThanRetention(retention));
        }
        Ok(Self { gte, lt })
    }

    /// The first instant in the window.
    pub fn gte(self) -> Timestamp {
        self.gte
    }

    /// The first instant after the window.
    pub fn lt(self) -> Timestamp {
        self.lt
    }

    /// Whether `t` is in the window.
    pub fn contains(self, t: Timestamp) -> bool {
        self.gte <= t && t < self.lt
    }
}

/// A filter by identifier: 1 to 100 values as sent, kept as a sorted set.
///
/// ```
/// use recruit_domain::{IdFilter, PrivacyAuditLogId};
///
/// let a = PrivacyAuditLogId::nil();
/// let filter = IdFilter::new(vec![a, a]).unwrap();
/// assert_eq!(filter.len(), 1);
/// assert_eq!(IdFilter::<_>::new(Vec::<PrivacyAuditLogId>::new()).unwrap_err().to_string(), "must hold at least one ID");
/// ```
pub struct IdFilter<R: Resource> {
    ids: BTreeSet<Id<R>>,
}

/// The most values an [`IdFilter`] may be given, whatever it filters.
const MAX_IDS: usize = 100;

/// Why a list of identifiers is not an [`IdFilter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdFilterError {
    /// No value was given.
    #[error("must hold at least one ID")]
    Empty,
    /// More than [`IdFilter::MAX_LEN`] values were given.
    #[error("must hold at most {MAX_IDS} IDs; {found} were given")]
    TooMany {
        /// How many values were given.
        found: usize,
    },
}

impl<R: Resource> IdFilter<R> {
    /// The most values a filter may be given.
    pub const MAX_LEN: usize = MAX_IDS;

    /// A filter of the given identifiers. The count is checked as given, duplicates included.
    pub fn new(ids: impl IntoIterator<Item = Id<R>>) -> Result<Self, IdFilterError> {
        let mut set = BTreeSet::new();
        let mut count = 0usize;
        for id in ids {
            count += 1;
            set.insert(id);
        }
        Self::check_len(count)?;
        Ok(Self { ids: set })
    }

    /// Whether `count` values, duplicates included, are as many as a filter takes: what
    /// [`IdFilter::new`] checks, for a caller that would rather know before parsing them.
    ///
    /// ```
    /// use recruit_domain::{IdFilter, IdFilterError, PrivacyAuditLogId};
    /// type Filter = IdFilter<recruit_domain::resource::PrivacyAuditLog>;
    /// assert!(Filter::check_len(100).is_ok());
    /// assert_eq!(Filter::check_len(101), Err(IdFilterError::TooMany { found: 101 }));
    /// assert_eq!(Filter::check_len(0), Err(IdFilterError::Empty));
    /// ```
    pub fn check_len(count: usize) -> Result<(), IdFilterError> {
        match count {
            0 => Err(IdFilterError::Empty),
            n if n > Self::MAX_LEN => Err(IdFilterError::TooMany { found: n }),
            _ => Ok(()),
        }
    }

    /// The distinct identifiers, in ascending order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Id<R>> + '_ {
        self.ids.iter().copied()
    }

    /// The number of distinct identifiers.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Always false: a filter holds at least one identifier.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether `id` is in the filter.
    pub fn contains(&self, id: Id<R>) -> bool {
        self.ids.contains(&id)
    }
}

// Written by hand so that `R` need not be `Clone`, `Eq` or `Debug` itself.
impl<R: Resource> Clone for IdFilter<R> {
    fn clone(&self) -> Self {
        Self { ids: self.ids.clone() }
    }
}
impl<R: Resource> PartialEq for IdFilter<R> {
    fn eq(&self, other: &Self) -> bool {
        self.ids == other.ids
    }
}
impl<R: Resource> Eq for IdFilter<R> {}
impl<R: Resource> std::hash::Hash for IdFilter<R> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.ids.hash(state);
    }
}
impl<R: Resource> fmt::Debug for IdFilter<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(&self.ids).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_a_plain_decimal_from_1_to_100() {
        for (input, expected) in [
            ("1", Some(1)),
            ("25", Some(25)),
            ("100", Some(100)),
            ("007", Some(7)),
            ("0001", Some(1)),
            ("000000000000000000000100", Some(100)),
            ("0", None),
            ("000", None),
            ("0000101", None),
            ("101", None),
            ("256", None),
            ("-1", None),
            ("+5", None),
            (" 5", None),
            ("5.0", None),
            ("1e2", None),
            ("", None),
            ("99999999999999999999", None),
        ] {
            assert_eq!(input.parse::<PageLimit>().ok().map(PageLimit::get), expected, "{input:?}");
        }
        assert_eq!(PageLimit::new(u32::MAX), Err(PageLimitError(())));
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn a_window_is_non_empty_and_at_most_366_days() {
        let t = at("2026-01-01T00:00:00Z");
        assert_eq!(TimeWindow::new(t, t), Err(TimeWindowError::NotAfterStart));
        assert_eq!(
            TimeWindow::new(at("2026-01-01T00:00:00.000001Z"), t),
            Err(TimeWindowError::NotAfterStart)
        );
        assert!(TimeWindow::new(t, at("2026-01-01T00:00:00.000001Z")).is_ok());
        assert!(TimeWindow::new(t, at("2027-01-02T00:00:00Z")).is_ok());
        assert_eq!(
            TimeWindow::new(t, at("2027-01-02T00:00:00.000001Z")),
            Err(TimeWindowError::TooLong)
        );
        let w = TimeWindow::new(t, at("2026-02-01T00:00:00Z")).unwrap();
        assert!(w.contains(t));
        assert!(!w.contains(at("2026-02-01T00:00:00Z")));
    }

    #[test]
    fn an_id_filter_counts_what_was_sent_and_keeps_a_sorted_set() {
        use crate::PrivacyAuditLogId as P;
        let ids: Vec<P> = (0..101u128).map(|n| P::from_uuid(uuid::Uuid::from_u128(n))).collect();
        assert_eq!(IdFilter::new(ids.clone()), Err(IdFilterError::TooMany { found: 101 }));
        assert_eq!(
            IdFilter::new(ids.clone()).unwrap_err().to_string(),
            "must hold at most 100 IDs; 101 were given"
        );
        let f = IdFilter::new(ids[..100].iter().rev().copied()).unwrap();
        assert_eq!(f.iter().collect::<Vec<_>>(), ids[..100]);
        // Duplicates count against the limit as sent.
        assert!(IdFilter::new(std::iter::repeat_n(ids[0], 101)).is_err());
        assert_eq!(IdFilter::new(std::iter::repeat_n(ids[0], 100)).unwrap().len(), 1);
    }
}
