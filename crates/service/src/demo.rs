//! Deterministic demo data: realistic organizations, users of every role, task queues,
//! candidates, jobs (the first of each organization confidential) and privacy ledger entries of
//! every data subject and query variant, spread over the year before a given instant.
//!
//! The same configuration always yields the same data, so demos, tests and benchmarks are
//! repeatable. The ledger is an iterator: a million entries never need to be in memory at once.

use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use recruit_domain::model::*;
use recruit_domain::{
    AccountId, Candidate, CandidateId, Id, JobId, OrganizationId, PrivacyAuditLog, Resource,
    TaskQueue, TaskQueueId, Timestamp, User, UserId,
};
use recruit_ports::{
    ImportDocument, LedgerEntry, NewHiringTeamMember, NewJob, NewJobStage, OrganizationRecord,
};

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoConfig {
    /// The seed: the same seed, the same data.
    pub seed: u64,
    /// How many organizations.
    pub organizations: usize,
    /// Users per organization; the first three are an owner, an admin and a member.
    pub users_per_organization: usize,
    /// Jobs per organization; the first is confidential.
    pub jobs_per_organization: usize,
    /// Candidates per organization.
    pub candidates_per_organization: usize,
    /// Privacy ledger entries in all, spread over the organizations (the first gets most).
    pub ledger_entries: usize,
    /// Entries fall in the `days` days before this instant.
    pub now: Timestamp,
    /// How many days before `now` entries fall in.
    pub days: i64,
}

impl DemoConfig {
    /// The demo of the quick start: two organizations and tens of thousands of ledger entries.
    pub fn quick_start(now: Timestamp) -> Self {
        Self {
            seed: 7,
            organizations: 2,
            users_per_organization: 8,
            jobs_per_organization: 6,
            candidates_per_organization: 40,
            ledger_entries: 40_000,
            now,
            days: 365,
        }
    }
}

const ORGANIZATIONS: &[(&str, &str)] = &[
    ("Northwind Labs", "northwind.example"),
    ("Globex Recruiting", "globex.example"),
    ("Initech Talent", "initech.example"),
    ("Umbrella Health", "umbrella.example"),
];
const FIRST: &[&str] = &[
    "Ada", "Lin", "Noor", "Mateo", "Priya", "Jonas", "Amara", "Kenji", "Sofia", "Omar", "Ines",
    "Tomas", "Yara", "Felix", "Mei", "Dara",
];
const LAST: &[&str] = &[
    "Park", "Ortiz", "Haddad", "Novak", "Iyer", "Berg", "Okafor", "Sato", "Rossi", "Farah",
    "Silva", "Kowalski", "Nakamura", "Weber", "Chen", "Murphy",
];
const JOBS: &[&str] = &[
    "Senior Backend Engineer",
    "Product Designer",
    "Engineering Manager",
    "Data Analyst",
    "Recruiting Coordinator",
    "Site Reliability Engineer",
    "Account Executive",
    "Technical Writer",
];
const LOCATIONS: &[&str] = &["Berlin", "Lisbon", "Remote (EU)", "New York", "Toronto", "Singapore"];
const MENUS: &[(&str, &str)] = &[
    ("CANDIDATE_PROFILE", "Candidates > Profile"),
    ("CANDIDATE_LIST", "Candidates > List"),
    ("INTERVIEW_SCHEDULE", "Scheduling > Interviews"),
    ("EMPLOYEE_DIRECTORY", "Settings > Users"),
    ("REPORTS", "Analytics > Reports"),
    ("EXPORT", "Candidates > Export"),
];
const STAGES: &[&str] =
    &["Application review", "Recruiter screen", "Technical interview", "Onsite", "Offer"];
const TITLES: &[&str] = &[
    "Head of People",
    "Talent Partner",
    "Recruiting Coordinator",
    "Engineering Manager",
    "Staff Engineer",
    "Product Designer",
    "Sourcer",
];
const SEARCHES: &[&str] = &["rust", "berlin", "senior", "design", "python", "remote", "manager"];

fn pick<T: Copy>(rng: &mut ChaCha8Rng, items: &[T]) -> T {
    *items.choose(rng).unwrap_or(&items[0])
}

fn new_id<R: Resource>(rng: &mut ChaCha8Rng) -> Id<R> {
    Id::from_uuid(uuid::Builder::from_random_bytes(rng.random()).into_uuid())
}

/// The identifiers of one organization's people, which ledger entries refer to.
#[derive(Clone, Debug)]
struct People {
    organization: OrganizationId,
    users: Vec<UserId>,
    candidates: Vec<CandidateId>,
}

/// Builds the directory and remembers whom it made.
fn build(config: &DemoConfig) -> (ImportDocument, Vec<People>) {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut doc = ImportDocument::default();
    let mut people = vec![];
    let year_ago = config.now.unix_micros() - 365 * 86_400_000_000;
    for o in 0..config.organizations {
        let (name, domain) = match ORGANIZATIONS.get(o) {
            Some(&(name, domain)) => (name.to_owned(), domain.to_owned()),
            None => (format!("Organization {}", o + 1), format!("org{}.example", o + 1)),
        };
        let org: OrganizationId = new_id(&mut rng);
        let mut record = organization(&mut rng, org, name, domain.clone());
        // The first organization keeps every profile field here; the second has names from
        // SCIM and titles from a directory; the others managers from a directory.
        // The second organization holds every job to its interviewer information, showing only
        // interviewers' names.
        if o == 1 {
            record.scheduling_defaults.interviewer_info_setting = OrgDefault {
                values: InterviewerInfoValues {
                    can_show_info: true,
                    can_show_full_name: true,
                    ..InterviewerInfoValues::default()
                },
                is_locked: true,
            };
        }
        record.profile_field_sources = match o {
            0 => ProfileFieldSources::default(),
            1 => ProfileFieldSources {
                name: FieldSource::Scim,
                title: FieldSource::Directory,
                ..ProfileFieldSources::default()
            },
            _ => ProfileFieldSources { manager: FieldSource::Directory, ..Default::default() },
        };
        doc.organizations.push(record);

        let mut users = vec![];
        for u in 0..config.users_per_organization.max(3) {
            let role = match u {
                0 => Role::Owner,
                1 => Role::Admin,
                2 => Role::Member,
                _ if rng.random_ratio(1, 5) => Role::Admin,
                _ => Role::Member,
            };
            let (first, last) = (pick(&mut rng, FIRST), pick(&mut rng, LAST));
            let id: UserId = new_id(&mut rng);
            users.push(id);
            // Profiles come from the user's place, not from the random sequence, so that the
            // rest of the data stays what it was before profiles existed.
            let created = Timestamp::from_unix_micros(year_ago + (u as i64) * 86_400_000_000)
                .unwrap_or(config.now);
            doc.users.push(User {
                id,
                organization_id: org,
                name: format!("{first} {last}"),
                email: format!("{}.{}{u}@{domain}", first.to_lowercase(), last.to_lowercase()),
                role,
                title: Some(TITLES[u % TITLES.len()].into()),
                manager: match role {
                    Role::Owner => None,
                    Role::Admin => Some(users[0]),
                    Role::Member => Some(users[1]),
                },
                linkedin_url: u.is_multiple_of(2).then(|| {
                    format!(
                        "https://www.linkedin.com/in/{}-{}-{u}",
                        first.to_lowercase(),
                        last.to_lowercase()
                    )
                }),
                created_at: created,
                updated_at: created,
            });
        }
        let queues: Vec<TaskQueueId> = (0..2).map(|_| new_id(&mut rng)).collect();
        for (q, &id) in queues.iter().enumerate() {
            let name = if q == 0 { "Scheduling" } else { "Executive scheduling" };
            doc.task_queues.push(TaskQueue { id, organization_id: org, name: name.into() });
        }
        let mut candidates = vec![];
        for c in 0..config.candidates_per_organization.max(1) {
            let (first, last) = (pick(&mut rng, FIRST), pick(&mut rng, LAST));
            let id: CandidateId = new_id(&mut rng);
            candidates.push(id);
            doc.candidates.push(Candidate {
                id,
                organization_id: org,
                name: format!("{first} {last}"),
                email: format!("{}.{}.{c}@mail.example", first.to_lowercase(), last.to_lowercase()),
                phone: format!("+49 30 {:07}", rng.random_range(0..10_000_000)),
            });
        }
        for j in 0..config.jobs_per_organization {
            let id: JobId = new_id(&mut rng);
            let created =
                Timestamp::from_unix_micros(rng.random_range(year_ago..config.now.unix_micros()))
                    .unwrap_or(config.now);
            let updated = Timestamp::from_unix_micros(
                rng.random_range(created.unix_micros()..=config.now.unix_micros()),
            )
            .unwrap_or(config.now);
            // A team of the admin (hiring manager) and, for some jobs, a member as recruiter:
            // the member can read the confidential job only when on its team.
            let mut team = vec![NewHiringTeamMember {
                role: HiringTeamRole::HiringManager,
                user_id: users[1],
            }];
            if j % 2 == 1 {
                team.push(NewHiringTeamMember {
                    role: HiringTeamRole::from("RECRUITER"),
                    user_id: users[2],
                });
            }
            doc.jobs.push(job(&mut rng, org, id, j, queues[0], team, created, updated));
        }
        people.push(People { organization: org, users, candidates });
    }
    (doc, people)
}

fn organization(
    rng: &mut ChaCha8Rng,
    id: OrganizationId,
    name: String,
    domain: String,
) -> OrganizationRecord {
    let days =
        [Weekday::Monday, Weekday::Tuesday, Weekday::Wednesday, Weekday::Thursday, Weekday::Friday];
    let start = if rng.random_bool(0.5) { "09:00" } else { "08:30" };
    OrganizationRecord {
        id,
        name,
        domain,
        settings: OrganizationSettings {
            work_hours: days
                .into_iter()
                .map(|day| WorkHours { day, start: start.into(), end: "17:30".into() })
                .collect(),
            interviewer_load_limits: InterviewerLoadLimits {
                daily: LoadLimit {
                    maximum: MaximumLoad {
                        limit: rng.random_range(2..=5),
                        kind: LoadLimitType::NumberOfInterviews,
                    },
                    minimum: MinimumLoad { interviews: 0, minutes: 0 },
                },
                weekly: LoadLimit {
                    maximum: MaximumLoad {
                        limit: rng.random_range(8..=15),
                        kind: LoadLimitType::NumberOfInterviews,
                    },
                    minimum: MinimumLoad { interviews: 1, minutes: 45 },
                },
            },
            interview_buffer: InterviewBuffer { before_minutes: 5, after_minutes: 10 },
            feedback_writing_time_minutes: 15,
            conflict_keywords: ConflictKeywords {
                out_of_office: vec!["OOO".into(), "Vacation".into()],
                avoid: vec!["Focus time".into()],
                available_if_needed: vec!["Lunch".into()],
                recruiting_block: vec!["Interview block".into()],
            },
        },
        scheduling_defaults: SchedulingDefaults::BUILT_IN,
        profile_field_sources: ProfileFieldSources::default(),
        time_zone: chrono_tz::Tz::Asia__Seoul,
        review_rules: ReviewRules::DEFAULT,
    }
}

#[expect(clippy::too_many_arguments, reason = "one job's every input, called from one place")]
fn job(
    rng: &mut ChaCha8Rng,
    org: OrganizationId,
    id: JobId,
    index: usize,
    queue: TaskQueueId,
    team: Vec<NewHiringTeamMember>,
    created_at: Timestamp,
    updated_at: Timestamp,
) -> NewJob {
    let mut flag = || rng.random_bool(0.5);
    // Some jobs override the interview name and the interviewer information settings; the
    // others (and every contact information setting) take the organization's defaults.
    let settings = JobSettings {
        interview_name_setting: InterviewNameSetting {
            is_custom: index % 3 == 1,
            show_interview_name: flag(),
            is_locked: false,
            level: SettingLevel::Org,
        },
        interviewer_info_setting: InterviewerInfoSetting {
            is_custom: index % 4 == 2,
            can_show_info: true,
            can_show_full_name: flag(),
            can_show_job_title: true,
            can_show_linkedin: flag(),
            can_show_email: false,
            can_show_profile_picture: flag(),
            can_show_pronouns: true,
            can_show_bio: flag(),
            is_locked: false,
            level: SettingLevel::Org,
        },
        recruiting_team_contact_info_setting: RecruitingTeamContactInfoSetting {
            is_custom: false,
            show_recruiter: true,
            show_coordinator: flag(),
            can_show_job_title: true,
            can_show_linkedin: false,
            can_show_profile_picture: flag(),
            can_show_pronouns: true,
            can_show_bio: false,
            can_show_phone: false,
            is_locked: false,
            level: SettingLevel::Org,
        },
        default_task_queue_id: queue,
        remote_ats_hiring_process: RemoteAtsHiringProcess {
            ats_id: format!("hp-{}", rng.random_range(1000..9999)),
            name: "Default hiring process".into(),
            status: RemoteProcessStatus::NotSet,
        },
        locale: "en-US".into(),
    };
    let status = match index % 5 {
        3 => JobStatus::Draft,
        4 => JobStatus::Closed,
        _ => JobStatus::Open,
    };
    NewJob {
        organization_id: org,
        id,
        name: JOBS[index % JOBS.len()].into(),
        status,
        confidential: index == 0,
        locations: vec![pick(rng, LOCATIONS).into(), pick(rng, LOCATIONS).into()],
        hiring_team: team,
        ats: Ats {
            kind: AtsType::from("GREENHOUSE"),
            id: format!("{}", 4_400_000 + rng.random_range(0..100_000)),
        },
        created_at,
        updated_at,
        settings,
        // Stage ids come from the job's, not from the random sequence, so that the rest of the
        // data stays what it was before stages existed.
        job_stages: STAGES[..3 + index % 3]
            .iter()
            .zip(1u128..)
            .map(|(name, s)| NewJobStage {
                id: Id::from_uuid(uuid::Uuid::from_u128(id.uuid().as_u128() ^ (s << 64))),
                name: (*name).into(),
            })
            .collect(),
    }
}

/// The directory of the demo: organizations, users, task queues, candidates and jobs, without
/// ledger entries.
pub fn directory(config: &DemoConfig) -> ImportDocument {
    build(config).0
}

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
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x5EED_1ED6_E500_0001);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> DemoConfig {
        DemoConfig {
            ledger_entries: 5_000,
            ..DemoConfig::quick_start(Timestamp::parse("2026-11-21T00:00:00Z").unwrap())
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_data() {
        assert_eq!(directory(&config()), directory(&config()));
        assert!(ledger(&config()).eq(ledger(&config())));
        let other = DemoConfig { seed: 8, ..config() };
        assert_ne!(directory(&other), directory(&config()));
    }

    #[test]
    fn the_directory_passes_the_import_check_and_has_what_the_demo_needs() {
        let doc = directory(&config());
        doc.check(&recruit_ports::ExistingIds::default()).unwrap();
        assert_eq!(doc.organizations.len(), 2);
        for role in Role::ALL {
            let first_org = doc.organizations[0].id;
            assert!(
                doc.users.iter().any(|u| u.role == role && u.organization_id == first_org),
                "{role:?}"
            );
        }
        assert_eq!(doc.jobs.iter().filter(|j| j.confidential).count(), 2);
    }

    #[test]
    fn the_ledger_covers_every_variant_within_the_year_with_ties() {
        let cfg = config();
        let entries: Vec<LedgerEntry> = ledger(&cfg).collect();
        assert_eq!(entries.len(), 5_000);
        let mut doc = directory(&cfg);
        doc.privacy_audit_logs = entries.clone();
        doc.check(&recruit_ports::ExistingIds::default()).unwrap();
        let kinds: std::collections::HashSet<&str> = entries
            .iter()
            .map(|e| match &e.entry.data_subject {
                DataSubject::Employee { .. } => "EMPLOYEE",
                DataSubject::Candidate { .. } => "CANDIDATE",
                DataSubject::Bulk { query: BulkQuery::CandidateIds { .. }, .. } => "CANDIDATE_IDS",
                DataSubject::Bulk { query: BulkQuery::EmployeeIds { .. }, .. } => "EMPLOYEE_IDS",
                DataSubject::Bulk { query: BulkQuery::CandidateSearch { .. }, .. } => {
                    "CANDIDATE_SEARCH"
                }
                DataSubject::Bulk { query: BulkQuery::EmployeeSearch { .. }, .. } => {
                    "EMPLOYEE_SEARCH"
                }
                DataSubject::Bulk { query: BulkQuery::Scope { .. }, .. } => "SCOPE",
            })
            .collect();
        assert_eq!(kinds.len(), 7, "{kinds:?}");
        let year_ago = cfg.now.unix_micros() - 365 * 86_400_000_000;
        assert!(entries.iter().all(|e| {
            (year_ago..cfg.now.unix_micros()).contains(&e.entry.access_time.unix_micros())
        }));
        let mut times: Vec<i64> =
            entries.iter().map(|e| e.entry.access_time.unix_micros()).collect();
        times.sort_unstable();
        assert!(times.windows(2).any(|w| w[0] == w[1]), "some entries share an access time");
    }
}

/// How many ledger entries one batch of the demo's loading carries.
const LEDGER_BATCH: usize = 5_000;

/// A user of the demo and a token acting as them, with every scope.
#[derive(Clone, Debug)]
pub struct DemoToken {
    /// The user.
    pub user: User,
    /// The token's secret, shown once.
    pub secret: String,
}

/// What [`load`] loaded.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The directory: organizations, users, task queues, candidates and jobs.
    pub directory: ImportDocument,
    /// How many privacy ledger entries were written.
    pub ledger_entries: usize,
    /// A token of an owner of the first organization.
    pub owner: DemoToken,
    /// A token of a member (not an owner) of the first organization.
    pub member: DemoToken,
    /// The first organization's confidential job, which the member may not read.
    pub confidential_job: Option<JobId>,
}

/// Loads the demo of `config` into `store` and creates a token for an owner and one for a
/// member of its first organization, when the store is empty; when it holds anything, changes
/// nothing and returns `None`. `progress` is told the number of ledger entries written so far
/// after each batch.
pub async fn load(
    store: &dyn recruit_ports::Store,
    config: &DemoConfig,
    mut progress: impl FnMut(usize) + Send,
) -> Result<Option<Loaded>, recruit_ports::ImportError> {
    if !store.is_empty().await? {
        return Ok(None);
    }
    let directory = directory(config);
    store.import(&directory).await?;
    let mut written = 0;
    let mut batch = ImportDocument::default();
    let mut entries = ledger(config).peekable();
    while entries.peek().is_some() {
        batch.privacy_audit_logs.clear();
        batch.privacy_audit_logs.extend(entries.by_ref().take(LEDGER_BATCH));
        store.import(&batch).await?;
        written += batch.privacy_audit_logs.len();
        progress(written);
    }
    let org = &directory.organizations[0];
    let user = |role| {
        directory.users.iter().find(|u| u.organization_id == org.id && u.role == role).cloned()
    };
    let (Some(owner), Some(member)) = (user(Role::Owner), user(Role::Member)) else {
        return Err(recruit_ports::StoreError::other("the demo has no owner or member").into());
    };
    let token = async |user: User, name: &str| {
        let scopes = recruit_domain::Scope::ALL.to_vec();
        let store: &dyn recruit_ports::Tokens = store;
        let (_, secret) =
            crate::auth::create_token(store, org.id, user.id, name.into(), scopes, None).await?;
        Ok::<_, recruit_ports::StoreError>(DemoToken { user, secret })
    };
    let owner = token(owner, "demo owner").await?;
    let member = token(member, "demo member").await?;
    let confidential_job =
        directory.jobs.iter().find(|j| j.organization_id == org.id && j.confidential).map(|j| j.id);
    Ok(Some(Loaded { directory, ledger_entries: written, owner, member, confidential_job }))
}
