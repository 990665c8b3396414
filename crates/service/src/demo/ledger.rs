//! The demo's privacy ledger: accounts that behave as people do (office hours, office
//! addresses, a download now and then) and two that misbehave, each entry generated in turn.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use recruit_domain::model::*;
use recruit_domain::{AccountId, CandidateId, PrivacyAuditLog, Timestamp, UserId};
use recruit_ports::LedgerEntry;

use super::{DemoConfig, MENUS, People, SEARCHES, build, pick};

/// How a demo account uses the product, which its ledger entries show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// Office hours on working days, from the office's addresses, bulk reads of a few records
    /// and a download now and then: what a review should leave unflagged.
    Staff,
    /// Reads profiles late at night and at weekends from home addresses never seen before.
    NightOwl,
    /// Exports whole candidate lists in bulk and downloads them, in office hours.
    BulkExporter,
}

impl Behaviour {
    /// The behaviour of the organization's `n`th user: the fourth and fifth (when there are
    /// more than four) misbehave, each in their own way; everyone else keeps office hours.
    pub fn of_user(n: usize, users: usize) -> Self {
        match n {
            3 if users > 4 => Self::NightOwl,
            4 if users > 4 => Self::BulkExporter,
            _ => Self::Staff,
        }
    }
}

/// The office's addresses of the `o`th organization, from which its staff work.
fn office_addresses(o: usize) -> [String; 3] {
    [
        format!("203.0.113.{}", 10 + o * 4),
        format!("203.0.113.{}", 11 + o * 4),
        format!("2001:db8:{:x}::10", o + 1),
    ]
}

/// The privacy ledger of the demo, entry by entry. About two thirds of the entries belong to
/// the first organization; access times fall in the `config.days` before `config.now`, in whole
/// milliseconds, and about one in ten shares its instant (and its account) with the entry
/// before it, as the entries of one bulk action do. Accounts behave as [`Behaviour::of_user`]
/// says, in the organization's time zone and work hours (09:00 to 17:30 on weekdays).
pub fn ledger(config: &DemoConfig) -> impl Iterator<Item = LedgerEntry> + Send + use<> {
    let (directory, people) = build(config);
    let zones: Vec<chrono_tz::Tz> = directory.organizations.iter().map(|o| o.time_zone).collect();
    let part = config.part.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x5EED_1ED6_E500_0001 ^ part);
    let now_ms = config.now.unix_micros().div_euclid(1000);
    let days = config.days.max(2);
    let mut last: Option<(i64, usize, usize)> = None;
    (0..config.ledger_entries).map(move |_| {
        let o = if people.len() == 1 || rng.random_ratio(2, 3) {
            0
        } else {
            rng.random_range(1..people.len())
        };
        let (ms, o, actor) = match last {
            Some(tie) if rng.random_ratio(1, 10) => tie,
            _ => {
                let org = &people[o];
                let actor = rng.random_range(0..org.users.len());
                let behaviour = Behaviour::of_user(actor, org.users.len());
                let ms = access_ms(&mut rng, zones[o], behaviour, now_ms, days);
                (ms, o, actor)
            }
        };
        last = Some((ms, o, actor));
        let org = &people[o];
        let behaviour = Behaviour::of_user(actor, org.users.len());
        let access_time = Timestamp::from_unix_micros(ms * 1000).unwrap_or(Timestamp::MIN);
        let at_office = {
            let local = access_time.as_datetime().with_timezone(&zones[o]).naive_local();
            office_hours(local)
        };
        let id = uuid::Builder::from_unix_timestamp_millis(
            u64::try_from(ms).unwrap_or(0),
            &rng.random(),
        )
        .into_uuid();
        let ip = if at_office || behaviour != Behaviour::NightOwl {
            office_addresses(o)[rng.random_range(0..3)].clone()
        } else {
            format!("198.51.100.{}", rng.random_range(1..255))
        };
        let actor = org.users[actor];
        LedgerEntry {
            organization_id: org.organization,
            entry: entry(&mut rng, org, (id.into(), access_time, actor, ip), behaviour),
        }
    })
}

/// Whether the local time `t` is within the demo's office hours: 09:00 to 17:30 on weekdays.
fn office_hours(t: chrono::NaiveDateTime) -> bool {
    use chrono::{Datelike, Timelike};
    let minutes = t.hour() * 60 + t.minute();
    t.weekday().num_days_from_monday() < 5 && (9 * 60..17 * 60 + 30).contains(&minutes)
}

/// An access time for an account of `behaviour` in `zone`, in milliseconds since the epoch,
/// within the `days` before `now_ms` (never the last day, so never ahead of it).
fn access_ms(
    rng: &mut ChaCha8Rng,
    zone: chrono_tz::Tz,
    behaviour: Behaviour,
    now_ms: i64,
    days: i64,
) -> i64 {
    use chrono::{Datelike, TimeZone};
    let today = Timestamp::from_unix_micros(now_ms * 1000)
        .unwrap_or(Timestamp::MIN)
        .as_datetime()
        .with_timezone(&zone)
        .date_naive();
    let after_hours = match behaviour {
        Behaviour::NightOwl => rng.random_ratio(35, 100),
        _ => rng.random_ratio(1, 100),
    };
    for _ in 0..16 {
        let date = today - chrono::Days::new(rng.random_range(1..days).unsigned_abs());
        let weekend = date.weekday().num_days_from_monday() >= 5;
        let minute = match (after_hours, behaviour) {
            (false, _) if weekend => continue,
            (false, _) => rng.random_range(9 * 60..17 * 60 + 30),
            // Late at night (22:00 to 02:00 the next day), any day.
            (true, Behaviour::NightOwl) => rng.random_range(22 * 60..26 * 60),
            // Staying on an hour and a half, on a working day.
            (true, _) if weekend => continue,
            (true, _) => rng.random_range(17 * 60 + 30..19 * 60),
        };
        let midnight = date.and_hms_opt(0, 0, 0).unwrap_or_default();
        let local = midnight + chrono::Duration::minutes(minute);
        let Some(at) = zone.from_local_datetime(&local).earliest() else { continue };
        let ms = at.timestamp_millis() + rng.random_range(0..60_000);
        if ms < now_ms {
            return ms;
        }
    }
    now_ms - 86_400_000
}

fn entry(
    rng: &mut ChaCha8Rng,
    org: &People,
    (id, access_time, actor, ip): (recruit_domain::PrivacyAuditLogId, Timestamp, UserId, String),
    behaviour: Behaviour,
) -> PrivacyAuditLog {
    let (mut menu, mut path) = pick(rng, MENUS);
    let some_candidates = |rng: &mut ChaCha8Rng| -> Vec<CandidateId> {
        (0..rng.random_range(1..=5)).map(|_| pick(rng, &org.candidates)).collect()
    };
    let everyone = org.candidates.len() as u64;
    let exporting = behaviour == Behaviour::BulkExporter && rng.random_ratio(6, 10);
    let roll = if exporting { 99 } else { rng.random_range(0..100) };
    let (data_subject, bulk) = match roll {
        0..=59 => (DataSubject::Candidate { candidate: pick(rng, &org.candidates) }, false),
        60..=89 => (DataSubject::Employee { user: pick(rng, &org.users) }, false),
        90 | 91 => {
            let ids = some_candidates(rng);
            let n = ids.len() as u64;
            (
                DataSubject::Bulk { bulk_count: Some(n), query: BulkQuery::CandidateIds { ids } },
                true,
            )
        }
        92 | 93 => {
            let ids: Vec<UserId> =
                (0..rng.random_range(1..=3)).map(|_| pick(rng, &org.users)).collect();
            let n = ids.len() as u64;
            (DataSubject::Bulk { bulk_count: Some(n), query: BulkQuery::EmployeeIds { ids } }, true)
        }
        94 | 95 => {
            let values = vec![pick(rng, SEARCHES).to_owned(), pick(rng, SEARCHES).to_owned()];
            let count = rng.random_bool(0.5).then(|| rng.random_range(0..=everyone / 2));
            (
                DataSubject::Bulk {
                    bulk_count: count,
                    query: BulkQuery::CandidateSearch { values },
                },
                true,
            )
        }
        96 | 97 => {
            let values = vec![pick(rng, SEARCHES).to_owned()];
            (
                DataSubject::Bulk { bulk_count: None, query: BulkQuery::EmployeeSearch { values } },
                true,
            )
        }
        _ => {
            let scope = if exporting || rng.random_bool(0.7) {
                BulkScope::AllOrgCandidates
            } else {
                BulkScope::AllOrgEmployees
            };
            let count = (exporting || rng.random_bool(0.5)).then_some(everyone);
            (DataSubject::Bulk { bulk_count: count, query: BulkQuery::Scope { scope } }, true)
        }
    };
    if exporting {
        (menu, path) = ("EXPORT", "Candidates > Export");
    }
    let mut access_data = vec![AccessData::Name];
    if rng.random_bool(0.6) {
        access_data.push(AccessData::EmailAddress);
    }
    if rng.random_bool(0.3) {
        access_data.push(AccessData::PhoneNumber);
    }
    // Staff say why they download; the bulk exporter does not.
    let purpose_of = |rng: &mut ChaCha8Rng| {
        let purposes = [
            "Interview panel pack for the hiring committee",
            "Offer approval for the compensation review",
            "Reference check requested by the hiring manager",
            "Candidate records for a data subject access request",
        ];
        Some(pick(rng, &purposes).to_owned())
    };
    let category = if exporting {
        match rng.random_range(0..10) {
            0..=2 => ActivityCategory::Download,
            3..=7 => ActivityCategory::from("BULK_EXPORT"),
            _ => ActivityCategory::BulkRead,
        }
    } else {
        match (bulk, rng.random_range(0..80)) {
            (_, 0) if menu == "EXPORT" => ActivityCategory::Download,
            (true, 0..=59) => ActivityCategory::BulkRead,
            (true, 60..=69) => ActivityCategory::BulkUpdate,
            (true, _) => ActivityCategory::from("BULK_EXPORT"),
            (false, 0..=59) => ActivityCategory::Read,
            (false, 60..=69) => ActivityCategory::Update,
            (false, 70..=74) => ActivityCategory::Create,
            (false, _) => ActivityCategory::Delete,
        }
    };
    let purpose = if category == ActivityCategory::Download && behaviour == Behaviour::Staff {
        purpose_of(rng)
    } else {
        None
    };
    PrivacyAuditLog {
        id,
        access_time,
        account_id: AccountId::from_uuid(actor.uuid()),
        ip_addresses: vec![ip],
        data_subject,
        access_data,
        access_menu: menu.into(),
        access_menu_path: path.into(),
        activity_category: category,
        purpose,
    }
}
