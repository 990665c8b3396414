//! The organization's work hours, read in its time zone: whether a moment is within them
//! ([`WorkCalendar::contain`]), the slots of time by which the review counts entries (no slot
//! straddles a boundary of the work hours or of a local hour), and the spans of a window
//! within or outside them, slot by slot as the review counts, which a filter of the ledger
//! hands to the store.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone, Timelike};
use chrono_tz::Tz;
use recruit_domain::Timestamp;
use recruit_domain::model::{OrganizationSettings, Weekday};

/// The organization's work hours, per weekday, as intervals of wall-clock time, and its days
/// off beyond the weekdays without hours (holidays), which have none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkCalendar {
    days: BTreeMap<u32, Vec<(NaiveTime, NaiveTime)>>,
    holidays: BTreeSet<NaiveDate>,
}

impl WorkCalendar {
    /// The work hours of `settings`, `HH:MM` or `HH:MM:SS` each, and a note for each entry of
    /// a day that is not a weekday (the enumeration is open), which is left out. A weekday not
    /// listed has none. An hour in another format is an error naming it: the review does not
    /// guess. `holidays` are days off: every moment of them is outside the work hours.
    pub fn of(
        settings: &OrganizationSettings,
        holidays: &[NaiveDate],
    ) -> Result<(Self, Vec<String>), String> {
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
        Ok((Self { days, holidays: holidays.iter().copied().collect() }, notes))
    }

    /// Whether `date` is a working day: a weekday with hours that is no holiday.
    pub fn works_on(&self, date: NaiveDate) -> bool {
        !self.holidays.contains(&date)
            && self.days.contains_key(&date.weekday().num_days_from_monday())
    }

    /// Whether the local time `local` is within the work hours: those of its weekday, or the
    /// end of the previous day's hours when they run past midnight (22:00 to 06:00).
    pub fn contain(&self, local: NaiveDateTime) -> bool {
        if self.holidays.contains(&local.date()) {
            return false;
        }
        let (day, time) = (local.weekday().num_days_from_monday(), local.time());
        let today = |&(start, end): &(NaiveTime, NaiveTime)| {
            if start < end { start <= time && time < end } else { time >= start }
        };
        let overnight = |&(start, end): &(NaiveTime, NaiveTime)| end <= start && time < end;
        let yesterday = (day + 6) % 7;
        self.days.get(&day).is_some_and(|hours| hours.iter().any(today))
            || self.days.get(&yesterday).is_some_and(|hours| hours.iter().any(overnight))
    }

    /// The widest slot, in seconds, that never straddles a boundary of the work hours or of
    /// a local hour, given `zone_slot`, one that divides every offset the zone has in the
    /// month: a divisor of it and of every boundary's seconds since midnight.
    fn slot_seconds(&self, zone_slot: i64) -> i64 {
        let boundaries = self.days.values().flatten().flat_map(|&(a, b)| [a, b]);
        boundaries.fold(zone_slot, |slot, t| gcd(slot, i64::from(t.num_seconds_from_midnight())))
    }
}

/// The widest slot, in seconds, whose local starts in `zone` over `[from, to)` are whole
/// hours, halves or quarters as the zone's offsets there are: a divisor of an hour and of
/// every offset the zone has at the start of each day (offsets change at most once a day).
fn zone_slot(zone: Tz, from: Timestamp, to: Timestamp) -> i64 {
    let offset = |t: chrono::DateTime<chrono::Utc>| {
        i64::from(zone.offset_from_utc_datetime(&t.naive_utc()).fix().local_minus_utc())
    };
    let (mut at, end) = (from.as_datetime(), to.as_datetime());
    let mut slot = gcd(3600, offset(end));
    while at < end {
        slot = gcd(slot, offset(at).abs());
        at += chrono::Duration::hours(12);
    }
    slot
}

/// The greatest common divisor; `gcd(a, 0)` is `a`.
fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Monday 0 to Sunday 6; `None` for a day this version does not know.
pub fn weekday(day: &Weekday) -> Option<u32> {
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

/// The width, in seconds, of the slots by which the entries of `[from, to)` are read against
/// `hours` in `zone`: no slot straddles a boundary of the work hours or of a local hour.
pub(crate) fn slot_seconds(
    zone: Tz,
    hours: Option<&WorkCalendar>,
    from: Timestamp,
    to: Timestamp,
) -> i64 {
    let zone_slot = zone_slot(zone, from, to);
    hours.map_or(zone_slot, |h| h.slot_seconds(zone_slot))
}

/// The spans of `[from, to)` outside the work hours (or within them, when `within`), in
/// order, each read at the start of its slot as the review counts entries: an entry is in one
/// of them exactly when the review counts it so.
pub fn spans(
    zone: Tz,
    hours: &WorkCalendar,
    (from, to): (Timestamp, Timestamp),
    within: bool,
) -> Vec<(Timestamp, Timestamp)> {
    let width = slot_seconds(zone, Some(hours), from, to) * 1_000_000;
    let (start, end) = (from.unix_micros(), to.unix_micros());
    let mut spans: Vec<(i64, i64)> = vec![];
    let mut slot = start.div_euclid(width) * width;
    while slot < end {
        let next = slot.saturating_add(width);
        // The slot read at its start, aligned to the epoch, as the review reads it.
        let at = Timestamp::from_unix_micros(slot)
            .ok()
            .map(|t| t.as_datetime().with_timezone(&zone).naive_local());
        if at.is_some_and(|at| hours.contain(at) == within) {
            let (a, b) = (slot.max(start), next.min(end));
            match spans.last_mut() {
                Some(last) if last.1 == a => last.1 = b,
                _ => spans.push((a, b)),
            }
        }
        slot = next;
    }
    spans
        .into_iter()
        .filter_map(|(a, b)| {
            Some((Timestamp::from_unix_micros(a).ok()?, Timestamp::from_unix_micros(b).ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::{Month, MonthWindow};
    use recruit_domain::model::WorkHours as Hours;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn a_slot_never_straddles_a_boundary_of_the_work_hours_or_of_an_hour() {
        let settings = |hours: Vec<Hours>| {
            let mut s = recruit_ports::testkit::world().organizations[0].settings.clone();
            s.work_hours = hours;
            s
        };
        let day = |start: &str, end: &str| Hours {
            day: Weekday::Monday,
            start: start.into(),
            end: end.into(),
        };
        let slot = |hours| WorkCalendar::of(&settings(hours), &[]).unwrap().0.slot_seconds(3600);
        assert_eq!(slot(vec![]), 3600);
        assert_eq!(slot(vec![day("09:00", "18:00")]), 3600);
        assert_eq!(slot(vec![day("08:30", "17:30")]), 1800);
        assert_eq!(slot(vec![day("09:10", "17:00")]), 600);
        assert_eq!(slot(vec![day("09:00:30", "17:00")]), 30);
        let october = |zone| {
            let (from, to) = "2026-10".parse::<Month>().unwrap().window(zone).unwrap();
            zone_slot(zone, from, to)
        };
        assert_eq!(october(Tz::Asia__Seoul), 3600);
        assert_eq!(october(Tz::America__New_York), 3600, "a clock change moves whole hours");
        assert_eq!(october(Tz::Asia__Kolkata), 1800);
        assert_eq!(october(Tz::Asia__Kathmandu), 900);
        assert_eq!(october(Tz::Australia__Lord_Howe), 1800, "half an hour of daylight saving");
    }

    #[test]
    fn work_hours_are_read_per_weekday_in_local_time() {
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
        let (hours, notes) = WorkCalendar::of(
            &settings(vec![
                day(Weekday::Monday, "09:00", "18:00"),
                day(Weekday::Tuesday, "22:00", "06:00:00"),
                day(Weekday::from("HOLIDAY"), "10:00", "12:00"),
            ]),
            &["2026-11-30".parse().unwrap()],
        )
        .unwrap();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("HOLIDAY"));
        let at = |s: &str, zone: Tz| t(s).as_datetime().with_timezone(&zone).naive_local();
        let seoul = |s: &str| hours.contain(at(s, Tz::Asia__Seoul));
        // 2026-11-23 is a Monday.
        assert!(seoul("2026-11-23T00:00:00Z"), "09:00 Monday in Seoul");
        assert!(!seoul("2026-11-23T09:00:00Z"), "18:00 is the end");
        assert!(!hours.contain(at("2026-11-23T00:00:00Z", Tz::UTC)), "00:00 Monday in UTC");
        assert!(seoul("2026-11-24T14:00:00Z"), "23:00 Tuesday, overnight");
        assert!(seoul("2026-11-24T17:00:00Z"), "02:00 Wednesday, Tuesday's night");
        assert!(!seoul("2026-11-23T18:00:00Z"), "03:00 Tuesday: Monday has no night");
        assert!(!seoul("2026-11-25T00:00:00Z"), "09:00 Wednesday has none");
        assert!(!seoul("2026-11-30T00:00:00Z"), "09:00 Monday, a holiday, has none");
        assert!(seoul("2026-12-07T00:00:00Z"), "09:00 the Monday after");
        let unreadable = WorkCalendar::of(&settings(vec![day(Weekday::Friday, "9am", "5pm")]), &[]);
        assert!(unreadable.unwrap_err().contains("9am"));
    }
}
