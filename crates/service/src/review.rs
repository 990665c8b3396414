//! The monthly review of access records: what an organization's privacy officer checks each
//! month (PIPA safety-measure standard, Art. 8: access records reviewed at least monthly, the
//! reason for every download checked). For one calendar month of one organization, per
//! account: its accesses, bulk accesses and the records they covered, accesses outside the
//! work hours, downloads, exports of the ledger through the API, distinct data subjects, and
//! addresses not seen from it the month before, with flags on what calls for a closer look;
//! per day, the accesses by activity category; per weekday and hour, the accesses; and every
//! download and export listed one by one.
//!
//! The month, the days, the hours and the work hours are read in the organization's time zone
//! (the ledgers keep instants; the settings keep wall-clock hours). The store aggregates the
//! month by slots of time no boundary falls within ([`recruit_ports::review`]), so the
//! review's cost grows with the accounts and slots, not with the entries, and every rule that
//! reads them is here.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use chrono::{Datelike, NaiveDate, TimeZone, Timelike};
use chrono_tz::Tz;
use recruit_domain::model::ActivityCategory;
use recruit_domain::review::{DownloadReview, DownloadStatus};
use recruit_domain::{AccountId, OrganizationId, Timestamp, UserId, Uuid};
use recruit_ports::review::{ReviewFacts, ReviewQuery};
use recruit_ports::{Store, StoreError};

use crate::work_hours::WorkCalendar;

pub use recruit_domain::{Month, MonthError};

/// Which instants a month holds in a time zone.
pub trait MonthWindow {
    /// The month's first instant and the next month's first instant in `zone`.
    fn window(self, zone: Tz) -> Option<(Timestamp, Timestamp)>;
}

impl MonthWindow for Month {
    fn window(self, zone: Tz) -> Option<(Timestamp, Timestamp)> {
        let first = self.first_day();
        let next = first.checked_add_months(chrono::Months::new(1))?;
        Some((first_instant(zone, first)?, first_instant(zone, next)?))
    }
}

/// The month `t` falls in, in `zone`.
pub fn month_at(t: Timestamp, zone: Tz) -> Option<Month> {
    Month::of(t.as_datetime().with_timezone(&zone).date_naive()).ok()
}

/// The first instant of `day` in `zone`: its midnight, or where a clock change skips
/// midnight, the first time the day has; held to the instants a timestamp has (years 1 to
/// 9999), so that the first and last months are reviewed as far as they go.
fn first_instant(zone: Tz, day: NaiveDate) -> Option<Timestamp> {
    let local = (0..=2)
        .filter_map(|h| day.and_hms_opt(h, 0, 0))
        .find_map(|t| zone.from_local_datetime(&t).earliest())?
        .to_utc();
    Some(Timestamp::from_datetime(local).unwrap_or(if local < Timestamp::MIN.as_datetime() {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    }))
}

pub use recruit_domain::model::ReviewRules;
pub use recruit_domain::review::{
    AccountReview, DayReview, DownloadSeen, Flag, FlagDetail, LedgerExportSeen, Person, Review,
};

/// The review as text for people: a line per account, then every download to check, with
/// times in the review's time zone.
#[derive(Debug)]
pub struct ReviewText<'a>(pub &'a Review);

impl ReviewText<'_> {
    /// The name of the person behind an account, `-` when it is no user of the organization.
    fn name(&self, account_id: &str) -> &str {
        self.0.account_person(account_id).map_or("-", |p| p.name.as_str())
    }

    /// `t` in the review's time zone, as RFC 3339.
    fn local(&self, t: Timestamp) -> String {
        let zone: Tz = self.0.time_zone.parse().unwrap_or(Tz::UTC);
        t.as_datetime().with_timezone(&zone).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    }
}

/// Why a review stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The month cannot be placed in the time zone.
    #[error("the month {0} is out of range")]
    Month(Month),
}

/// Reviews `organization`'s `month`, in the organization's time zone.
pub async fn review(
    store: &dyn Store,
    organization: OrganizationId,
    month: Month,
) -> Result<Review, ReviewError> {
    reviewed(store, organization, month).await.map(|(review, _)| review)
}

/// Reviews `organization`'s `month`, in the organization's time zone; with the review, the
/// lowest chain position of the month's entries, where a sign-off's verification begins.
pub(crate) async fn reviewed(
    store: &dyn Store,
    organization: OrganizationId,
    month: Month,
) -> Result<(Review, Option<i64>), ReviewError> {
    let record = store.organization(organization).await?;
    let zone = record.time_zone;
    let out_of_range = || ReviewError::Month(month);
    let (from, to) = month.window(zone).ok_or_else(out_of_range)?;
    let previous_from = month.previous().and_then(|m| m.window(zone)).map_or(from, |(p, _)| p);
    let (hours, notes) = match WorkCalendar::of(&record.settings, &record.review_rules.holidays) {
        Ok((hours, notes)) => (Ok(hours), notes),
        Err(e) => (Err(e), vec![]),
    };
    let slot_seconds = crate::work_hours::slot_seconds(zone, hours.as_ref().ok(), from, to);
    let query = ReviewQuery {
        organization,
        month: month.to_string(),
        from,
        to,
        previous_from,
        slot_micros: slot_seconds * 1_000_000,
        download: ActivityCategory::Download.as_str(),
        ledger_export: crate::OperationKind::ExportPrivacyAuditLogs.operation_id(),
    };
    let facts = store.review_facts(&query).await?;
    let first = facts.first_position;
    let usual = usual_days(store, organization, month, zone, hours.as_ref().ok()).await?;
    let mut review = summarise(organization, month, zone, (from, to), hours, notes, &query, facts);
    review.organization_name = record.name;
    for a in &mut review.accounts {
        let uuid = AccountId::parse(&a.account_id).map(|id| id.uuid());
        a.usual_day = Some(uuid.ok().and_then(|u| usual.get(&u).copied()).unwrap_or(0));
    }
    flag(&mut review.accounts, &record.review_rules);
    due(&mut review.downloads, record.review_rules.explanation_days);
    review.rules = record.review_rules;
    review.work_hours = record.settings.work_hours;
    let named = named(&review);
    review.people = store.users(organization, &named).await?.iter().map(Person::of).collect();
    Ok((review, first))
}

/// The months before a review whose accesses make an account's usual day.
const USUAL_MONTHS: usize = 3;

/// Each account's accesses per working day over the [`USUAL_MONTHS`] before `month` (per day,
/// when the work hours are unknown or name no working day), rounded down.
async fn usual_days(
    store: &dyn Store,
    organization: OrganizationId,
    month: Month,
    zone: Tz,
    hours: Option<&WorkCalendar>,
) -> Result<HashMap<Uuid, u64>, ReviewError> {
    let mut first = month;
    for _ in 0..USUAL_MONTHS {
        first = first.previous().unwrap_or(first);
    }
    let (Some((from, _)), Some((to, _))) = (first.window(zone), month.window(zone)) else {
        return Ok(HashMap::new());
    };
    let (mut day, mut days, mut working) = (first.first_day(), 0u64, 0u64);
    while day < month.first_day() {
        days += 1;
        working += u64::from(hours.is_some_and(|h| h.works_on(day)));
        day = day.succ_opt().unwrap_or(month.first_day());
    }
    let per = if working > 0 { working } else { days.max(1) };
    let volumes = store.account_volumes(organization, from, to).await?;
    Ok(volumes.into_iter().map(|(account, n)| (account, n / per)).collect())
}

/// Flags each of `accounts` by `rules`: a flag for each figure past its threshold, with the
/// figure and the threshold.
fn flag(accounts: &mut [AccountReview], rules: &ReviewRules) {
    for a in accounts {
        let outside = a.outside_work_hours.unwrap_or(0);
        let percent = outside.saturating_mul(100).checked_div(a.accesses).unwrap_or(0);
        let detail =
            |flag, value, threshold: u64| FlagDetail { flag, value, threshold, percent: None };
        let checks = [
            (
                outside > rules.outside_hours_accesses
                    && percent >= u64::from(rules.outside_hours_percent),
                FlagDetail {
                    percent: Some(percent),
                    ..detail(Flag::OutsideWorkHours, outside, rules.outside_hours_accesses)
                },
            ),
            (
                a.bulk_records > rules.bulk_records,
                detail(Flag::Bulk, a.bulk_records, rules.bulk_records),
            ),
            {
                let downloads = a.downloads + a.ledger_exports;
                (downloads > rules.downloads, detail(Flag::Downloads, downloads, rules.downloads))
            },
            {
                let new = a.new_ip_addresses.len() as u64;
                (
                    new > rules.new_ip_addresses,
                    detail(Flag::NewIpAddresses, new, rules.new_ip_addresses),
                )
            },
            {
                // Over the minimum, and over the factor times the account's usual day.
                let busiest = a.busiest_day.as_ref().map_or(0, |(_, n)| *n);
                let usual = a.usual_day.unwrap_or(0);
                let threshold = rules
                    .daily_volume_min
                    .max(usual.saturating_mul(u64::from(rules.daily_volume_factor)));
                (busiest > threshold, detail(Flag::DailyVolume, busiest, threshold))
            },
        ];
        a.flag_details = checks.into_iter().filter(|(on, _)| *on).map(|(_, d)| d).collect();
        a.flags = a.flag_details.iter().map(|d| d.flag.clone()).collect();
    }
}

/// Sets when each request for an explanation of `downloads` is due: `days` after it was made.
fn due(downloads: &mut [DownloadSeen], days: u32) {
    let days = std::time::Duration::from_secs(u64::from(days) * 86_400);
    let requests = downloads.iter_mut().flat_map(|d| d.history.iter_mut().chain(&mut d.review));
    for r in requests.filter(|r| r.status == DownloadStatus::ExplanationRequested) {
        r.due_at = Some(r.reviewed_at.checked_add_duration(days).unwrap_or(Timestamp::MAX));
    }
}

/// The users `review` names: its accounts (an account is a user's UUID), those who decided on
/// its downloads, and who signed it off.
fn named(review: &Review) -> Vec<UserId> {
    let accounts = review.accounts.iter().filter_map(|a| AccountId::parse(&a.account_id).ok());
    let deciders = review.downloads.iter().flat_map(|d| d.history.iter().map(|r| r.reviewed_by));
    let signer = review.signed_off().and_then(Result::ok).map(|s| s.signed_by);
    let mut ids: Vec<UserId> =
        accounts.map(|a| UserId::from_uuid(a.uuid())).chain(deciders).chain(signer).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The review of the facts a store gathered for `query`.
#[expect(clippy::too_many_arguments, reason = "the parts of one review, named where used")]
fn summarise(
    organization: OrganizationId,
    month: Month,
    zone: Tz,
    (from, to): (Timestamp, Timestamp),
    hours: Result<WorkCalendar, String>,
    notes: Vec<String>,
    query: &ReviewQuery,
    facts: ReviewFacts,
) -> Review {
    let account = |uuid| AccountId::from_uuid(uuid).to_string();
    let counted = hours.is_ok();
    // The store's counts name accounts by UUID, a row each of many: they are tallied by UUID
    // and named once each.
    let mut tallied: HashMap<Uuid, AccountReview> = HashMap::new();
    let mut days: BTreeMap<NaiveDate, DayReview> = BTreeMap::new();
    // Each account's accesses per local day, for its busiest day.
    let mut account_days: HashMap<(Uuid, NaiveDate), u64> = HashMap::new();
    let mut weekday_hours = vec![vec![0u64; 24]; 7];
    let mut total = 0;
    // Rows of one slot tend to come together: its local start is found once for them.
    let mut last: Option<(i64, chrono::NaiveDateTime)> = None;
    for slot in facts.slots {
        let start = match last {
            Some((at, start)) if at == slot.slot => start,
            _ => {
                let Some(start) =
                    Timestamp::from_unix_micros(slot.slot.saturating_mul(query.slot_micros))
                        .ok()
                        .map(|t| t.as_datetime().with_timezone(&zone).naive_local())
                else {
                    continue;
                };
                last = Some((slot.slot, start));
                start
            }
        };
        total += slot.entries;
        *account_days.entry((slot.account, start.date())).or_default() += slot.entries;
        let a = tally(&mut tallied, slot.account, counted);
        a.accesses += slot.entries;
        if slot.category.starts_with("BULK_") || slot.bulk_subject {
            a.bulk_accesses += slot.entries;
            // Counts a client recorded: their sum may pass any integer, and stops at the largest.
            a.bulk_records = a.bulk_records.saturating_add(slot.bulk_records);
        }
        if let (Ok(hours), Some(outside)) = (&hours, &mut a.outside_work_hours)
            && !hours.contain(start)
        {
            *outside += slot.entries;
        }
        let day = days.entry(start.date()).or_insert_with(|| DayReview {
            date: start.date().to_string(),
            accesses: 0,
            categories: BTreeMap::new(),
        });
        day.accesses += slot.entries;
        *day.categories.entry(slot.category).or_default() += slot.entries;
        let weekday = start.weekday().num_days_from_monday() as usize;
        weekday_hours[weekday][start.hour() as usize] += slot.entries;
    }
    for ((uuid, date), n) in account_days {
        let a = tally(&mut tallied, uuid, counted);
        let busier = a.busiest_day.as_ref().is_none_or(|(d, most)| {
            // The earlier of two equally busy days.
            n > *most || (n == *most && date.to_string() < *d)
        });
        if busier {
            a.busiest_day = Some((date.to_string(), n));
        }
    }
    for (uuid, subjects) in facts.subjects {
        tally(&mut tallied, uuid, counted).distinct_data_subjects = subjects;
    }
    for (uuid, address) in facts.new_addresses {
        tally(&mut tallied, uuid, counted).new_ip_addresses.push(address);
    }
    let mut accounts: BTreeMap<String, AccountReview> =
        tallied.into_values().map(|a| (a.account_id.clone(), a)).collect();
    // Every decision on each download, in the order they were made: the last is the latest.
    let mut decided: BTreeMap<_, Vec<DownloadReview>> = BTreeMap::new();
    for d in facts.decisions.iter().filter_map(crate::sign_off::download_review) {
        decided.entry(d.entry_id).or_default().push(d);
    }
    let downloads: Vec<DownloadSeen> = facts
        .downloads
        .into_iter()
        .map(|entry| {
            let history = decided.remove(&entry.id).unwrap_or_default();
            (entry, history)
        })
        .map(|(entry, history)| DownloadSeen {
            status: history.last().map_or(DownloadStatus::Pending, |d| d.status),
            review: history.last().cloned(),
            history,
            id: entry.id.to_string(),
            account_id: entry.account_id.to_string(),
            access_time: entry.access_time,
            data_subject: entry.data_subject,
            access_data: entry.access_data.iter().map(|d| d.as_str().to_owned()).collect(),
            access_menu_path: entry.access_menu_path,
            ip_addresses: entry.ip_addresses,
            purpose: entry.purpose,
        })
        .collect();
    for d in &downloads {
        seen(&mut accounts, d.account_id.clone(), counted).downloads += 1;
    }
    let ledger_exports: Vec<LedgerExportSeen> = facts
        .ledger_exports
        .into_iter()
        .map(|entry| LedgerExportSeen {
            account_id: account(entry.user_id.uuid()),
            at: entry.at,
            request_id: entry.request_id,
            client_ip: entry.client_ip,
            filters: entry.filters,
            entries: entry.entries_returned,
        })
        .collect();
    for e in &ledger_exports {
        seen(&mut accounts, e.account_id.clone(), counted).ledger_exports += 1;
    }
    for a in accounts.values_mut() {
        a.new_ip_addresses.sort_unstable();
        a.new_ip_addresses.dedup();
    }
    // Every day of the month is listed, those without accesses with none.
    let mut date = month.first_day();
    while date.month() == month.month() {
        days.entry(date).or_insert_with(|| DayReview {
            date: date.to_string(),
            accesses: 0,
            categories: BTreeMap::new(),
        });
        match date.succ_opt() {
            Some(next) => date = next,
            None => break,
        }
    }
    days.retain(|d, _| d.year() == month.year() && d.month() == month.month());
    Review {
        organization_id: organization,
        month,
        time_zone: zone.name().to_owned(),
        from,
        to,
        work_hours_unknown: hours.err(),
        work_hours_notes: notes,
        accesses: total,
        accounts: accounts.into_values().collect(),
        days: days.into_values().collect(),
        weekday_hours,
        downloads,
        ledger_exports,
        sign_off: facts.sign_off.map(|s| s.body),
        organization_name: String::new(),
        people: vec![],
        rules: ReviewRules::DEFAULT,
        work_hours: vec![],
    }
}

/// The review of the account `id`, started when it is first seen (`counted`: whether accesses
/// outside the work hours are counted).
/// The tally of the account `uuid`, begun empty.
fn tally(
    tallied: &mut HashMap<Uuid, AccountReview>,
    uuid: Uuid,
    counted: bool,
) -> &mut AccountReview {
    tallied.entry(uuid).or_insert_with(|| AccountReview {
        account_id: AccountId::from_uuid(uuid).to_string(),
        outside_work_hours: counted.then_some(0),
        ..AccountReview::default()
    })
}

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

impl fmt::Display for ReviewText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Access review of {} ({}) for {} ({}, {} to {}): {} accesses",
            self.0.organization_name,
            self.0.organization_id,
            self.0.month,
            self.0.time_zone,
            self.0.from,
            self.0.to,
            self.0.accesses
        )?;
        if let Some(why) = &self.0.work_hours_unknown {
            writeln!(f, "Accesses outside work hours are not counted: {why}.")?;
        }
        for note in &self.0.work_hours_notes {
            writeln!(f, "Note: {note}.")?;
        }
        writeln!(
            f,
            "\n{:<24} {:<32} {:>9} {:>6} {:>8} {:>8} {:>9} {:>8} {:>6}  flags",
            "name",
            "account",
            "accesses",
            "bulk",
            "records",
            "outside",
            "downloads",
            "subjects",
            "new IP"
        )?;
        for a in &self.0.accounts {
            let outside = a.outside_work_hours.map_or_else(|| "-".to_owned(), |n| n.to_string());
            let flags: Vec<String> =
                a.flags.iter().map(|flag| flag.as_str().to_lowercase()).collect();
            writeln!(
                f,
                "{:<24} {:<32} {:>9} {:>6} {:>8} {:>8} {:>9} {:>8} {:>6}  {}",
                self.name(&a.account_id),
                a.account_id,
                a.accesses,
                a.bulk_accesses,
                a.bulk_records,
                outside,
                a.downloads + a.ledger_exports,
                a.distinct_data_subjects,
                a.new_ip_addresses.len(),
                flags.join(" ")
            )?;
        }
        match &self.0.sign_off {
            Some(s) => writeln!(
                f,
                "\nSigned off by {} ({}) at {}.",
                s["reviewer"]["name"].as_str().unwrap_or("-"),
                s["signed_by"].as_str().unwrap_or("-"),
                s["signed_at"].as_str().unwrap_or("-")
            )?,
            None => writeln!(f, "\nNot signed off.")?,
        }
        if self.0.downloads.is_empty() && self.0.ledger_exports.is_empty() {
            return writeln!(f, "\nNo downloads this month.");
        }
        writeln!(f, "\nDownloads, in {}: check the reason for each.", self.0.time_zone)?;
        for d in &self.0.downloads {
            let subject = serde_json::to_string(&d.data_subject).map_err(|_| fmt::Error)?;
            writeln!(
                f,
                "  {}  {} ({})  {}  {}  {}  from {}  {}",
                self.local(d.access_time),
                self.name(&d.account_id),
                d.account_id,
                d.id,
                subject,
                d.access_menu_path,
                d.ip_addresses.join(", "),
                d.status.as_str()
            )?;
        }
        for e in &self.0.ledger_exports {
            writeln!(
                f,
                "  {}  {}  export of the privacy ledger through the API: {} entries, {}, request \
                 {}, from {}",
                self.local(e.at),
                e.account_id,
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

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    /// Each rule flags past its threshold and not at it; accesses outside work hours need
    /// both their count and their share.
    #[test]
    fn accounts_are_flagged_by_the_rules_with_their_figures() {
        let rules = ReviewRules::DEFAULT;
        let account = |accesses, outside, records, downloads, new_ips: usize| AccountReview {
            accesses,
            outside_work_hours: Some(outside),
            bulk_records: records,
            downloads,
            new_ip_addresses: (0..new_ips).map(|i| format!("10.0.0.{i}")).collect(),
            ..AccountReview::default()
        };
        let mut accounts = vec![
            account(200, 10, 1000, 5, 0), // every figure at its threshold
            account(100, 11, 1001, 6, 1), // every figure past it
            account(1000, 99, 0, 0, 0),   // 99 outside, but 9 % of its accesses
            account(100, 11, 0, 0, 0),    // 11 outside, 11 %
        ];
        flag(&mut accounts, &rules);
        assert!(accounts[0].flags.is_empty(), "{:?}", accounts[0].flag_details);
        assert_eq!(
            accounts[1].flags,
            [Flag::OutsideWorkHours, Flag::Bulk, Flag::Downloads, Flag::NewIpAddresses]
        );
        assert_eq!(
            accounts[1].flag_details[0],
            FlagDetail {
                flag: Flag::OutsideWorkHours,
                value: 11,
                threshold: 10,
                percent: Some(11)
            }
        );
        assert_eq!(accounts[1].flag_details[2].value, 6);
        assert!(accounts[2].flags.is_empty(), "a share under the rule's");
        assert_eq!(accounts[3].flags, [Flag::OutsideWorkHours]);
        let strict = ReviewRules { outside_hours_accesses: 0, outside_hours_percent: 0, ..rules };
        flag(&mut accounts, &strict);
        assert_eq!(accounts[2].flags, [Flag::OutsideWorkHours]);
    }

    #[test]
    fn a_day_far_busier_than_the_accounts_usual_one_is_flagged() {
        let rules = ReviewRules::DEFAULT; // over 3 times the usual day, and over 100
        let account = |busiest: u64, usual| AccountReview {
            busiest_day: Some(("2026-10-14".into(), busiest)),
            usual_day: Some(usual),
            ..AccountReview::default()
        };
        let mut accounts = vec![
            account(350, 100), // over 300
            account(300, 100), // at it
            account(100, 0),   // a new account: at the minimum
            account(101, 0),   // past it
            account(500, 200), // a busy account's busy day
        ];
        flag(&mut accounts, &rules);
        let flagged: Vec<bool> = accounts.iter().map(|a| !a.flags.is_empty()).collect();
        assert_eq!(flagged, [true, false, false, true, false]);
        assert_eq!(
            accounts[0].flag_details,
            [FlagDetail { flag: Flag::DailyVolume, value: 350, threshold: 300, percent: None }]
        );
        assert_eq!(accounts[3].flag_details[0].threshold, 100, "the minimum without history");
    }

    #[test]
    fn a_month_is_its_calendar_month_in_the_time_zone() {
        let month: Month = "2026-10".parse().unwrap();
        assert_eq!(month.to_string(), "2026-10");
        assert_eq!(
            month.window(Tz::Asia__Seoul),
            Some((t("2026-09-30T15:00:00Z"), t("2026-10-31T15:00:00Z")))
        );
        // New York leaves daylight saving time on 2026-11-01: the month is an hour longer.
        let november: Month = "2026-11".parse().unwrap();
        assert_eq!(
            november.window(Tz::America__New_York),
            Some((t("2026-11-01T04:00:00Z"), t("2026-12-01T05:00:00Z")))
        );
        let december: Month = "2026-12".parse().unwrap();
        assert_eq!(
            december.window(Tz::UTC),
            Some((t("2026-12-01T00:00:00Z"), t("2027-01-01T00:00:00Z")))
        );
        assert_eq!(month.previous().map(|m| m.to_string()).as_deref(), Some("2026-09"));
        let january: Month = "2027-01".parse().unwrap();
        assert_eq!(january.previous(), Some(december));
        // The first and last months a timestamp has are held to its range.
        let first: Month = "0001-01".parse().unwrap();
        assert_eq!(first.window(Tz::Asia__Seoul).map(|w| w.0), Some(Timestamp::MIN));
        let last: Month = "9999-12".parse().unwrap();
        assert_eq!(last.window(Tz::America__New_York).map(|w| w.1), Some(Timestamp::MAX));
        for bad in ["2026-13", "2026-1", "26-10", "2026/10", "", "2026-00"] {
            assert_eq!(bad.parse::<Month>(), Err(MonthError), "{bad:?}");
        }
    }
}
