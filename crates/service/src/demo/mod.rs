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
    Candidate, CandidateId, Id, JobId, OrganizationId, Resource, TaskQueue, TaskQueueId, Timestamp,
    User, UserId,
};
use recruit_ports::{ImportDocument, NewHiringTeamMember, NewJob, NewJobStage, OrganizationRecord};

mod ledger;

pub use ledger::{Behaviour, ledger};

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
    /// Which part of a ledger grown in parts: each part has entries of its own (other ids and
    /// times) by the same people, so that parts imported one after another grow one ledger.
    pub part: u64,
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
            part: 0,
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
                status: recruit_domain::UserStatus::Active,
                user_name: None,
                external_id: None,
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
        sso: None,
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

#[cfg(test)]
mod tests {
    use recruit_ports::LedgerEntry;

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
        let part = DemoConfig { part: 1, ..config() };
        assert_eq!(directory(&part), directory(&config()), "the same people");
        let ids = |c: &DemoConfig| {
            ledger(c).map(|e| e.entry.id).collect::<std::collections::HashSet<_>>()
        };
        assert!(ids(&part).is_disjoint(&ids(&config())), "entries of its own");
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
        let scopes: Vec<_> =
            recruit_domain::Scope::ALL.into_iter().filter(|s| s.opens_api()).collect();
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
