//! The monthly review of access records: what an organization's privacy officer checks each
//! month (PIPA safety-measure standard, Art. 8: access records reviewed at least monthly, the
//! reason for every download checked). Per account of the privacy ledger, for one calendar
//! month: how many accesses it recorded, how many were bulk accesses (and how many records
//! they covered), how many fell outside the organization's work hours, and every download,
//! listed one by one. Beside them, every export of the ledger itself through the API (a
//! download too), from the API audit ledger.
//!
//! The month and the work hours are read at a UTC offset the reviewer gives (the ledgers keep
//! instants; the organization's settings keep wall-clock hours without a zone). Both ledgers
//! are read as exports are, from one snapshot each and with flat memory apart from the
//! downloads listed.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use chrono::{Datelike, FixedOffset, NaiveDate, NaiveTime, TimeZone};
use recruit_domain::chain::Ledger;
use recruit_domain::model::{ActivityCategory, DataSubject, OrganizationSettings, Weekday};
use recruit_domain::{OrganizationId, PrivacyAuditLog, Timestamp};
use recruit_ports::chain::{ExportQuery, ExportedEntry};
use recruit_ports::{AuditEntry, Store, StoreError};
use serde::Serialize;

/// A calendar month, `YYYY-MM`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Month {
    first: NaiveDate,
}

/// Why a value is not a [`Month`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("must be a month as YYYY-MM, such as 2026-10")]
pub struct MonthError;

impl FromStr for Month {
    type Err = MonthError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (year, month) = s.split_once('-').ok_or(MonthError)?;
        if year.len() != 4 || month.len() != 2 {
            return Err(MonthError);
        }
        let year = year.parse().map_err(|_| MonthError)?;
        let month = month.parse().map_err(|_| MonthError)?;
        NaiveDate::from_ymd_opt(year, month, 1).map(|first| Self { first }).ok_or(MonthError)
    }
}

impl fmt::Display for Month {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.first.year(), self.first.month())
    }
}

impl Month {
    /// The month's first and the next month's first instant at `offset`.
    pub fn window(self, offset: FixedOffset) -> Option<(Timestamp, Timestamp)> {
        let next = self.first.checked_add_months(chrono::Months::new(1))?;
        let at = |day: NaiveDate| {
            let local = offset.from_local_datetime(&day.and_time(NaiveTime::MIN)).single()?;
            Timestamp::from_datetime(local.to_utc()).ok()
        };
        Some((at(self.first)?, at(next)?))
    }
}

/// A UTC offset: `+09:00`, `-05:30`, or `Z` for UTC itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcOffset(pub FixedOffset);

impl Default for UtcOffset {
    fn default() -> Self {
        Self(FixedOffset::east_opt(0).unwrap_or_else(|| unreachable!("zero is an offset")))
    }
}

impl FromStr for UtcOffset {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let offset = if s == "Z" || s == "z" { "+00:00" } else { s };
        offset
            .parse::<FixedOffset>()
            .map(Self)
            .map_err(|_| format!("`{s}` is not a UTC offset such as +09:00, -05:30 or Z"))
    }
}

impl fmt::Display for UtcOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
fn parse_offset(s: &str) -> Result<FixedOffset, String> {
    s.parse::<UtcOffset>().map(|o| o.0)
}

/// The organization's work hours, per weekday, as intervals of wall-clock time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkHours {
    days: BTreeMap<u32, Vec<(NaiveTime, NaiveTime)>>,
}

impl WorkHours {
    /// The work hours of `settings`, `HH:MM` or `HH:MM:SS` each, and a note for each entry of
    /// a day that is not a weekday (the enumeration is open), which is left out. A weekday not
    /// listed has none. An hour in another format is an error naming it: the review does not
    /// guess.
    pub fn of(settings: &OrganizationSettings) -> Result<(Self, Vec<String>), String> {
        let mut days: BTreeMap<u32, Vec<_>> = BTreeMap::new();
        let mut notes = vec![];
        for hours in &settings.work_hours {
            let Some(day) = weekday(&hours.day) else {
                notes.push(format!(
                    "the work hours of `{}` are left out: it is not a weekday",
                    hours.day.as_str()
                ));
                continue;
            };
            let time = |s: &str| {
                NaiveTime::parse_from_str(s, "%H:%M")
                    .or_else(|_| NaiveTime::parse_from_str(s, "%H:%M:%S"))
                    .map_err(|_| format!("the work hour `{s}` is not HH:MM"))
            };
            days.entry(day).or_default().push((time(&hours.start)?, time(&hours.end)?));
        }
        Ok((Self { days }, notes))
    }

    /// Whether `at`, read at `offset`, is within the work hours: those of its weekday, or the
    /// end of the previous day's hours when they run past midnight (22:00 to 06:00).
    pub fn contain(&self, at: Timestamp, offset: FixedOffset) -> bool {
        let local = at.as_datetime().with_timezone(&offset);
        let (day, time) = (local.weekday().num_days_from_monday(), local.time());
        let today = |&(start, end): &(NaiveTime, NaiveTime)| {
            if start < end { start <= time && time < end } else { time >= start }
        };
        let overnight = |&(start, end): &(NaiveTime, NaiveTime)| end <= start && time < end;
        let yesterday = (day + 6) % 7;
        self.days.get(&day).is_some_and(|hours| hours.iter().any(today))
            || self.days.get(&yesterday).is_some_and(|hours| hours.iter().any(overnight))
    }
}

/// Monday 0 to Sunday 6.
fn weekday(day: &Weekday) -> Option<u32> {
    let days = [
        Weekday::Monday,
        Weekday::Tuesday,
        Weekday::Wednesday,
        Weekday::Thursday,
        Weekday::Friday,
        Weekday::Saturday,
        Weekday::Sunday,
    ];
    days.iter().position(|d| d == day).and_then(|i| u32::try_from(i).ok())
}

/// A download recorded in the privacy ledger.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DownloadSeen {
    /// The entry's id.
    pub id: String,
    /// When.
    pub access_time: Timestamp,
    /// Whose data: the data subject as the API shows it.
    pub data_subject: serde_json::Value,
    /// Which data.
    pub access_data: Vec<String>,
    /// Where in the product.
    pub access_menu_path: String,
    /// From where.
    pub ip_addresses: Vec<String>,
}

/// An export of the privacy ledger through the API, from the API audit ledger.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LedgerExportSeen {
    /// When.
    pub at: Timestamp,
    /// The request's id.
    pub request_id: String,
    /// The client's address.
    pub client_ip: Option<String>,
    /// The window and ids asked for.
    pub filters: serde_json::Value,
    /// How many entries it held.
    pub entries: u32,
}

/// One account's month.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AccountReview {
    /// The account (`account_id` in the privacy ledger; the user, for the API's own reads).
    pub account_id: String,
    /// Accesses recorded.
    pub accesses: u64,
    /// Bulk accesses: a BULK_ activity or a bulk data subject.
    pub bulk_accesses: u64,
    /// Records the bulk accesses covered, where they said.
    pub bulk_records: u64,
    /// Accesses outside the work hours; `None` when the work hours could not be read.
    pub outside_work_hours: Option<u64>,
    /// Every download, each needing its reason checked.
    pub downloads: Vec<DownloadSeen>,
    /// Every export of the privacy ledger through the API by this account (its user).
    pub ledger_exports: Vec<LedgerExportSeen>,
}

/// The review of one organization's month.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Review {
    /// The organization.
    pub organization_id: OrganizationId,
    /// The month, `YYYY-MM`.
    pub month: String,
    /// The UTC offset the month and the work hours were read at.
    pub utc_offset: String,
    /// The first instant reviewed.
    pub from: Timestamp,
    /// The first instant after the month.
    pub to: Timestamp,
    /// Why accesses outside the work hours are not counted, when they are not.
    pub work_hours_unknown: Option<String>,
    /// What of the work hours was left out.
    pub work_hours_notes: Vec<String>,
    /// Accesses recorded in the month.
    pub accesses: u64,
    /// Per account, by account id.
    pub accounts: Vec<AccountReview>,
    /// The offset, to show times in the text for people.
    #[serde(skip)]
    offset: FixedOffset,
}

impl Review {
    /// `t` at the review's offset, as RFC 3339.
    fn local(&self, t: Timestamp) -> String {
        t.as_datetime()
            .with_timezone(&self.offset)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    }
}

/// Why a review stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The month cannot be placed at the offset.
    #[error("the month {0} is out of range")]
    Month(Month),
    /// An entry could not be read back.
    #[error("an entry of the {0} ledger cannot be read: {1}")]
    Entry(Ledger, String),
}

/// Reviews `organization`'s `month`, read at `offset`.
pub async fn review(
    store: &dyn Store,
    organization: OrganizationId,
    month: Month,
    offset: UtcOffset,
) -> Result<Review, ReviewError> {
    let offset = offset.0;
    let (from, to) = month.window(offset).ok_or(ReviewError::Month(month))?;
    let record = store.organization(organization).await?;
    let (hours, notes) = match WorkHours::of(&record.settings) {
        Ok((hours, notes)) => (Ok(hours), notes),
        Err(e) => (Err(e), vec![]),
    };
    let mut accounts: BTreeMap<String, AccountReview> = BTreeMap::new();
    let counted = hours.is_ok();
    let mut total = 0;
    let query = |ledger| ExportQuery {
        ledger,
        organization: Some(organization),
        from: Some(from),
        to: Some(to),
        ids: None,
        recorded_before: None,
    };
    each(store, &query(Ledger::Privacy), |exported| {
        let entry: PrivacyAuditLog = serde_json::from_slice(&exported.entry.canonical)
            .map_err(|e| ReviewError::Entry(Ledger::Privacy, e.to_string()))?;
        total += 1;
        let seen = seen(&mut accounts, entry.account_id.to_string(), counted);
        seen.accesses += 1;
        let bulk_subject = match &entry.data_subject {
            DataSubject::Bulk { bulk_count, .. } => Some(bulk_count.unwrap_or(0)),
            _ => None,
        };
        if entry.activity_category.as_str().starts_with("BULK_") || bulk_subject.is_some() {
            seen.bulk_accesses += 1;
            seen.bulk_records += bulk_subject.unwrap_or(0);
        }
        if let (Ok(hours), Some(outside)) = (&hours, &mut seen.outside_work_hours)
            && !hours.contain(entry.access_time, offset)
        {
            *outside += 1;
        }
        if entry.activity_category == ActivityCategory::Download {
            seen.downloads.push(DownloadSeen {
                id: entry.id.to_string(),
                access_time: entry.access_time,
                data_subject: serde_json::to_value(&entry.data_subject).unwrap_or_default(),
                access_data: entry.access_data.iter().map(|d| d.as_str().to_owned()).collect(),
                access_menu_path: entry.access_menu_path.clone(),
                ip_addresses: entry.ip_addresses.clone(),
            });
        }
        Ok(())
    })
    .await?;
    each(store, &query(Ledger::Api), |exported| {
        let entry: AuditEntry = serde_json::from_slice(&exported.entry.canonical)
            .map_err(|e| ReviewError::Entry(Ledger::Api, e.to_string()))?;
        if entry.operation != crate::OperationKind::ExportPrivacyAuditLogs.operation_id() {
            return Ok(());
        }
        let account = recruit_domain::AccountId::from_uuid(entry.user_id.uuid()).to_string();
        let seen = seen(&mut accounts, account, counted);
        seen.ledger_exports.push(LedgerExportSeen {
            at: entry.at,
            request_id: entry.request_id,
            client_ip: entry.client_ip,
            filters: entry.filters,
            entries: entry.entries_returned,
        });
        Ok(())
    })
    .await?;
    Ok(Review {
        organization_id: organization,
        month: month.to_string(),
        utc_offset: offset.to_string(),
        from,
        to,
        work_hours_unknown: hours.err(),
        work_hours_notes: notes,
        accesses: total,
        accounts: accounts.into_values().collect(),
        offset,
    })
}

/// The review of the account `id`, started when it is first seen (`counted`: whether accesses
/// outside the work hours are counted).
fn seen(
    accounts: &mut BTreeMap<String, AccountReview>,
    id: String,
    counted: bool,
) -> &mut AccountReview {
    accounts.entry(id.clone()).or_insert_with(|| AccountReview {
        account_id: id,
        outside_work_hours: counted.then_some(0),
        ..AccountReview::default()
    })
}

/// Calls `f` with every entry of the export `query` names.
async fn each(
    store: &dyn Store,
    query: &ExportQuery,
    mut f: impl FnMut(ExportedEntry) -> Result<(), ReviewError>,
) -> Result<(), ReviewError> {
    let mut export = store.export(query, None).await?;
    while let Some(entry) = std::future::poll_fn(|cx| export.entries.as_mut().poll_next(cx)).await {
        f(entry?)?;
    }
    Ok(())
}

impl fmt::Display for Review {
    /// The review as text for people: a line per account, then every download to check.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Access review of {} for {} (UTC{}, {} to {}): {} accesses",
            self.organization_id, self.month, self.utc_offset, self.from, self.to, self.accesses
        )?;
        if let Some(why) = &self.work_hours_unknown {
            writeln!(f, "Accesses outside work hours are not counted: {why}.")?;
        }
        for note in &self.work_hours_notes {
            writeln!(f, "Note: {note}.")?;
        }
        writeln!(
            f,
            "\n{:<40} {:>10} {:>8} {:>12} {:>14} {:>10}",
            "account", "accesses", "bulk", "bulk records", "outside hours", "downloads"
        )?;
        for a in &self.accounts {
            let outside = a.outside_work_hours.map_or_else(|| "-".to_owned(), |n| n.to_string());
            writeln!(
                f,
                "{:<40} {:>10} {:>8} {:>12} {:>14} {:>10}",
                a.account_id,
                a.accesses,
                a.bulk_accesses,
                a.bulk_records,
                outside,
                a.downloads.len() + a.ledger_exports.len()
            )?;
        }
        let downloads: Vec<_> =
            self.accounts.iter().flat_map(|a| a.downloads.iter().map(move |d| (a, d))).collect();
        let exports: Vec<_> = self
            .accounts
            .iter()
            .flat_map(|a| a.ledger_exports.iter().map(move |e| (a, e)))
            .collect();
        if downloads.is_empty() && exports.is_empty() {
            return writeln!(f, "\nNo downloads this month.");
        }
        writeln!(f, "\nDownloads, at UTC{}: check the reason for each.", self.utc_offset)?;
        for (a, d) in downloads {
            writeln!(
                f,
                "  {}  {}  {}  {}  {}  from {}",
                self.local(d.access_time),
                a.account_id,
                d.id,
                d.data_subject,
                d.access_menu_path,
                d.ip_addresses.join(", ")
            )?;
        }
        for (a, e) in exports {
            writeln!(
                f,
                "  {}  {}  export of the privacy ledger through the API: {} entries, {}, request \
                 {}, from {}",
                self.local(e.at),
                a.account_id,
                e.entries,
                e.filters,
                e.request_id,
                e.client_ip.as_deref().unwrap_or("-")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recruit_domain::model::WorkHours as Hours;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn a_month_is_its_calendar_month_at_the_offset() {
        let month: Month = "2026-10".parse().unwrap();
        assert_eq!(month.to_string(), "2026-10");
        let seoul = parse_offset("+09:00").unwrap();
        assert_eq!(
            month.window(seoul),
            Some((t("2026-09-30T15:00:00Z"), t("2026-10-31T15:00:00Z")))
        );
        let december: Month = "2026-12".parse().unwrap();
        assert_eq!(
            december.window(parse_offset("Z").unwrap()),
            Some((t("2026-12-01T00:00:00Z"), t("2027-01-01T00:00:00Z")))
        );
        for bad in ["2026-13", "2026-1", "26-10", "2026/10", "", "2026-00"] {
            assert_eq!(bad.parse::<Month>(), Err(MonthError), "{bad:?}");
        }
        assert!(parse_offset("Asia/Seoul").is_err());
    }

    #[test]
    fn work_hours_are_read_per_weekday_at_the_offset() {
        let settings = |hours: Vec<Hours>| {
            let mut s = recruit_ports::testkit::world().organizations[0].settings.clone();
            s.work_hours = hours;
            s
        };
        let day = |d: Weekday, start: &str, end: &str| Hours {
            day: d,
            start: start.into(),
            end: end.into(),
        };
        let (hours, notes) = WorkHours::of(&settings(vec![
            day(Weekday::Monday, "09:00", "18:00"),
            day(Weekday::Tuesday, "22:00", "06:00:00"),
            day(Weekday::from("HOLIDAY"), "10:00", "12:00"),
        ]))
        .unwrap();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("HOLIDAY"));
        let seoul = parse_offset("+09:00").unwrap();
        // 2026-11-23 is a Monday.
        assert!(hours.contain(t("2026-11-23T00:00:00Z"), seoul), "09:00 Monday in Seoul");
        assert!(!hours.contain(t("2026-11-23T09:00:00Z"), seoul), "18:00 is the end");
        assert!(!hours.contain(t("2026-11-23T00:00:00Z"), FixedOffset::east_opt(0).unwrap()));
        assert!(hours.contain(t("2026-11-24T14:00:00Z"), seoul), "23:00 Tuesday, overnight");
        assert!(
            hours.contain(t("2026-11-24T17:00:00Z"), seoul),
            "02:00 Wednesday, Tuesday's night"
        );
        assert!(
            !hours.contain(t("2026-11-23T18:00:00Z"), seoul),
            "03:00 Tuesday: Monday has no night"
        );
        assert!(!hours.contain(t("2026-11-25T00:00:00Z"), seoul), "09:00 Wednesday has none");
        let unreadable = WorkHours::of(&settings(vec![day(Weekday::Friday, "9am", "5pm")]));
        assert!(unreadable.unwrap_err().contains("9am"));
    }
}
