//! The contract suite: every behaviour the port documentation promises, as one async function
//! per behaviour over a fresh store. Adapters run it with
//! [`store_contract_tests!`](crate::store_contract_tests), so every
//! adapter passes word for word the same tests.
//!
//! [`world`] is the data most cases start from: two organizations with users of every role, a
//! task queue, candidates, jobs (one confidential) and privacy ledger entries of every data
//! subject and query variant, several of them sharing one `access_time`.

use recruit_domain::model::*;
use recruit_domain::{
    AccountId, ApiTokenId, Candidate, CandidateId, Id, IdFilter, JobId, JobStageId, OrganizationId,
    PrivacyAuditLog, PrivacyAuditLogId, Resource, Scope, TaskQueue, TaskQueueId, TimeWindow,
    Timestamp, User, UserId, Uuid,
};

use crate::{
    AccessesWrite, AuditEntry, AuditListQuery, Claim, ImportDocument, ImportError, Interface,
    KeyClaim, LedgerEntry, LedgerPosition, NewApiToken, NewHiringTeamMember, NewJob, NewJobStage,
    OrganizationRecord, PrivacyLogQuery, ProfileUpdate, ReadRecord, ResumedBatch, SecretHash,
    Store, StoreError, StoredResponse, ToolAuditEntry,
};

/// Generates one `#[tokio::test]` per contract case. `$make` is an expression whose value is
/// a future of a fresh, migrated, empty store (or of a guard that derefs to one); it is
/// evaluated once per test.
///
/// ```text
/// recruit_ports::store_contract_tests!(common::fresh_store());
/// ```
#[macro_export]
macro_rules! store_contract_tests {
    ($make:expr) => {
        $crate::store_contract_tests!(@cases $make;
            organizations_are_found_by_id,
            users_are_found_only_in_their_organization,
            reading_a_user_records_the_access_and_only_then,
            a_profile_is_changed_only_as_it_was_read,
            of_concurrent_changes_made_on_one_read_one_wins,
            import_rejects_managers_elsewhere_and_cycles,
            a_job_comes_with_its_hiring_team_names_in_order,
            a_job_of_another_organization_is_not_found,
            a_locked_default_is_the_jobs_setting_whatever_it_overrides,
            job_stage_ids_are_defined_once,
            the_ledger_is_newest_first_with_equal_times_ordered_by_id,
            the_window_includes_gte_and_excludes_lt,
            the_id_filter_returns_only_those_entries,
            pages_continue_after_a_position_without_repeats_or_gaps,
            nothing_of_another_organization_is_ever_returned,
            ledger_entries_round_trip_exactly,
            a_large_batch_round_trips_exactly,
            every_read_is_recorded_with_its_count,
            a_read_without_entries_is_recorded_and_extends_the_chain,
            checkpoints_are_kept_once_and_the_latest_is_the_highest,
            retention_removes_a_chain_prefix_only_below_a_stored_cut,
            an_export_holds_its_count_in_order_with_the_chain_and_is_recorded_first,
            an_export_reads_one_snapshot_whatever_is_recorded_meanwhile,
            a_read_that_cannot_be_recorded_returns_nothing_and_writes_nothing,
            a_ledger_entry_id_is_unique_within_its_organization,
            an_idempotency_key_is_granted_once_then_replayed,
            idempotency_keys_are_released_taken_over_and_purged,
            recorded_accesses_are_written_whole_or_not_at_all,
            concurrent_claims_of_a_key_grant_it_once,
            audit_entries_are_listed_newest_first_by_organization,
            import_writes_every_entity,
            import_rejects_duplicate_ids_and_writes_nothing,
            import_rejects_ids_already_stored,
            a_ledger_batch_is_refused_whole_naming_the_entry,
            a_ledger_batch_written_again_skips_identical_entries_and_refuses_changed_ones,
            import_rejects_missing_references_naming_the_path,
            tokens_are_created_found_by_hash_and_revoked,
            token_conflicts_and_missing_users_are_reported,
            touching_a_token_records_use_at_most_once_a_minute,
            server_secrets_keep_the_first_value,
            a_fresh_store_is_empty_and_answers,
        );
    };
    (@cases $make:expr; $($name:ident,)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let store = $make.await;
                $crate::testkit::$name(&*store).await;
            }
        )*
    };
}

fn id<R: Resource>(n: u128) -> Id<R> {
    Id::from_uuid(Uuid::from_u128(n))
}

/// Organization A of the world.
pub const ORG_A: u128 = 0xA;
/// Organization B of the world.
pub const ORG_B: u128 = 0xB;
/// A third organization, with users and nothing else, for [`lone_organization`].
pub const ORG_C: u128 = 0xC;

/// An instant of the world's timeline: `n` seconds after 2026-01-01T00:00:00Z.
pub fn t(n: i64) -> Timestamp {
    Timestamp::from_unix_micros(1_767_225_600_000_000 + n * 1_000_000).expect("in range")
}

fn org_id(org: u128) -> OrganizationId {
    id(org)
}

/// The user of `org` with `role`: owner, admin or member.
pub fn user_id(org: u128, role: Role) -> UserId {
    let n = match role {
        Role::Owner => 1,
        Role::Admin => 2,
        Role::Member => 3,
    };
    id(org << 64 | 0x100 | n)
}

fn queue_id(org: u128) -> TaskQueueId {
    id(org << 64 | 0x200)
}

fn candidate_id(org: u128, n: u128) -> CandidateId {
    id(org << 64 | 0x300 | n)
}

/// Job `n` of `org`; job 2 is confidential.
pub fn job_id(org: u128, n: u128) -> JobId {
    id(org << 64 | 0x400 | n)
}

fn entry_id(org: u128, n: u128) -> PrivacyAuditLogId {
    id(org << 64 | 0x500 | n)
}

fn organization(org: u128) -> OrganizationRecord {
    let limit = |limit| LoadLimit {
        maximum: MaximumLoad { limit, kind: LoadLimitType::NumberOfInterviews },
        minimum: MinimumLoad { interviews: 0, minutes: 30 },
    };
    OrganizationRecord {
        id: org_id(org),
        name: format!("Organization {org:X}"),
        domain: format!("org-{org:x}.example"),
        settings: OrganizationSettings {
            work_hours: vec![
                WorkHours { day: Weekday::Monday, start: "09:00".into(), end: "17:00".into() },
                WorkHours {
                    day: Weekday::from("HOLIDAY"),
                    start: "10:00".into(),
                    end: "12:00".into(),
                },
            ],
            interviewer_load_limits: InterviewerLoadLimits { daily: limit(4), weekly: limit(15) },
            interview_buffer: InterviewBuffer { before_minutes: 5, after_minutes: 10 },
            feedback_writing_time_minutes: 15,
            conflict_keywords: ConflictKeywords {
                out_of_office: vec!["OOO".into()],
                avoid: vec![],
                available_if_needed: vec!["lunch".into()],
                recruiting_block: vec!["interviews".into()],
            },
        },
        // Organization B shows no interview names by default and holds every job to its
        // interviewer information; A has the built-in defaults.
        scheduling_defaults: if org == ORG_B { b_defaults() } else { SchedulingDefaults::BUILT_IN },
        // Organization B keeps names in SCIM and titles in a directory.
        profile_field_sources: if org == ORG_B {
            ProfileFieldSources {
                name: FieldSource::Scim,
                title: FieldSource::Directory,
                ..ProfileFieldSources::default()
            }
        } else {
            ProfileFieldSources::default()
        },
    }
}

/// Organization B's scheduling defaults.
fn b_defaults() -> SchedulingDefaults {
    let mut defaults = SchedulingDefaults::BUILT_IN;
    defaults.interview_name_setting.values.show_interview_name = false;
    defaults.interviewer_info_setting = OrgDefault {
        values: InterviewerInfoValues { can_show_email: true, ..InterviewerInfoValues::default() },
        is_locked: true,
    };
    defaults
}

/// Stage `s` of job `n` of `org`.
fn stage_id(org: u128, n: u128, s: u128) -> JobStageId {
    id(org << 64 | 0xA00 | n << 4 | s)
}

fn job(org: u128, n: u128, confidential: bool, team: Vec<NewHiringTeamMember>) -> NewJob {
    let flag = |i: u128| (n + i).is_multiple_of(2);
    NewJob {
        organization_id: org_id(org),
        id: job_id(org, n),
        name: format!("Job {n} of {org:X}"),
        status: JobStatus::Open,
        confidential,
        locations: vec!["Berlin".into(), "Remote".into()],
        hiring_team: team,
        ats: Ats { kind: AtsType::from("GREENHOUSE"), id: format!("gh-{n}") },
        created_at: t(10),
        updated_at: Timestamp::from_unix_micros(t(20).unix_micros() + 656_105).expect("in range"),
        settings: JobSettings {
            interview_name_setting: InterviewNameSetting {
                is_custom: flag(0),
                show_interview_name: flag(1),
                is_locked: false,
                level: SettingLevel::Org,
            },
            interviewer_info_setting: InterviewerInfoSetting {
                is_custom: flag(1),
                can_show_info: true,
                can_show_full_name: flag(0),
                can_show_job_title: true,
                can_show_linkedin: false,
                can_show_email: flag(1),
                can_show_profile_picture: true,
                can_show_pronouns: true,
                can_show_bio: false,
                is_locked: true,
                level: SettingLevel::from("JOB"),
            },
            recruiting_team_contact_info_setting: RecruitingTeamContactInfoSetting {
                is_custom: false,
                show_recruiter: true,
                show_coordinator: flag(0),
                can_show_job_title: true,
                can_show_linkedin: flag(1),
                can_show_profile_picture: false,
                can_show_pronouns: true,
                can_show_bio: false,
                can_show_phone: false,
                is_locked: false,
                level: SettingLevel::Org,
            },
            default_task_queue_id: queue_id(org),
            remote_ats_hiring_process: RemoteAtsHiringProcess {
                ats_id: format!("hp-{n}"),
                name: "Default process".into(),
                status: RemoteProcessStatus::NotSet,
            },
            locale: "en-US".into(),
        },
        job_stages: ["Application review", "Phone screen", "Onsite"]
            .into_iter()
            .zip(0..)
            .map(|(name, s)| NewJobStage { id: stage_id(org, n, s), name: name.into() })
            .collect(),
    }
}

/// The data subject of ledger entry `n`: every variant of subject and bulk query in turn.
fn subject(org: u128, n: u128) -> DataSubject {
    match n % 7 {
        0 => DataSubject::Employee { user: user_id(org, Role::Member) },
        1 => DataSubject::Candidate { candidate: candidate_id(org, 1) },
        2 => DataSubject::Bulk {
            bulk_count: Some(2),
            query: BulkQuery::CandidateIds {
                ids: vec![candidate_id(org, 1), candidate_id(org, 2)],
            },
        },
        3 => DataSubject::Bulk {
            bulk_count: Some(1),
            query: BulkQuery::EmployeeIds { ids: vec![user_id(org, Role::Admin)] },
        },
        4 => DataSubject::Bulk {
            bulk_count: None,
            query: BulkQuery::CandidateSearch { values: vec!["rust".into(), "berlin".into()] },
        },
        5 => DataSubject::Bulk {
            bulk_count: Some(0),
            query: BulkQuery::EmployeeSearch { values: vec![] },
        },
        _ => DataSubject::Bulk {
            bulk_count: Some(u64::from(u32::MAX) + 7),
            query: BulkQuery::Scope { scope: BulkScope::AllOrgCandidates },
        },
    }
}

/// Ledger entry `n` of `org` at `at`.
pub fn ledger_entry(org: u128, n: u128, at: Timestamp) -> LedgerEntry {
    let categories: Vec<&str> =
        ActivityCategory::KNOWN.iter().copied().chain(["EXPORT_TO_SPREADSHEET"]).collect();
    let category = categories[usize::try_from(n % categories.len() as u128).unwrap_or(0)];
    LedgerEntry {
        organization_id: org_id(org),
        entry: PrivacyAuditLog {
            id: entry_id(org, n),
            access_time: at,
            account_id: AccountId::from_uuid(Uuid::from_u128(org << 64 | 0x600 | n)),
            ip_addresses: vec!["203.0.113.7".into(), "2001:db8::1".into()],
            data_subject: subject(org, n),
            access_data: match n % 3 {
                0 => vec![AccessData::Name],
                1 => vec![AccessData::Name, AccessData::EmailAddress, AccessData::PhoneNumber],
                _ => vec![],
            },
            access_menu: "CANDIDATE_PROFILE".into(),
            access_menu_path: format!("Candidates > Profile > {n}"),
            activity_category: ActivityCategory::from(category),
        },
    }
}

/// The access time of world entry `n` (1..=12): entries 4 to 7 share one instant, 9 and 10
/// another, and entry 12 has sub-second digits.
fn world_time(n: u128) -> Timestamp {
    match n {
        4..=7 => t(400),
        9 | 10 => t(900),
        12 => Timestamp::from_unix_micros(t(1200).unix_micros() + 656_105).expect("in range"),
        n => t(i64::try_from(n).unwrap_or(0) * 100),
    }
}

/// The world's user of `org` with `role`: the member reports to the admin, the admin to the
/// owner; only the owner has a LinkedIn profile.
pub fn world_user(org: u128, role: Role) -> User {
    User {
        id: user_id(org, role),
        organization_id: org_id(org),
        name: format!("{} of {org:X}", role.as_str()),
        email: format!("{}@org-{org:x}.example", role.as_str().to_lowercase()),
        role,
        title: (role != Role::Owner).then(|| format!("{} title", role.as_str())),
        manager: match role {
            Role::Owner => None,
            Role::Admin => Some(user_id(org, Role::Owner)),
            Role::Member => Some(user_id(org, Role::Admin)),
        },
        linkedin_url: (role == Role::Owner)
            .then(|| format!("https://www.linkedin.com/in/owner-{org:x}")),
        created_at: t(1),
        updated_at: Timestamp::from_unix_micros(t(2).unix_micros() + 656_105).expect("in range"),
    }
}

/// An organization with an owner, an admin and a member, and nothing else (no ledger).
pub fn lone_organization(org: u128) -> ImportDocument {
    ImportDocument {
        organizations: vec![organization(org)],
        users: [Role::Owner, Role::Admin, Role::Member].map(|r| world_user(org, r)).to_vec(),
        ..ImportDocument::default()
    }
}

/// The world most cases start from.
pub fn world() -> ImportDocument {
    let mut doc = ImportDocument::default();
    for org in [ORG_A, ORG_B] {
        doc.organizations.push(organization(org));
        for role in Role::ALL {
            doc.users.push(world_user(org, role));
        }
        doc.task_queues.push(TaskQueue {
            id: queue_id(org),
            organization_id: org_id(org),
            name: "Scheduling".into(),
        });
        for n in 1..=2 {
            doc.candidates.push(Candidate {
                id: candidate_id(org, n),
                organization_id: org_id(org),
                name: format!("Candidate {n}"),
                email: format!("candidate{n}@mail.example"),
                phone: "+49 30 1234567".into(),
            });
        }
        let member = |role, user| NewHiringTeamMember { role, user_id: user_id(org, user) };
        doc.jobs.push(job(org, 1, false, vec![member(HiringTeamRole::HiringManager, Role::Admin)]));
        doc.jobs.push(job(
            org,
            2,
            true,
            vec![
                member(HiringTeamRole::from("RECRUITER"), Role::Member),
                member(HiringTeamRole::HiringManager, Role::Owner),
            ],
        ));
        let entries = if org == ORG_A { 12 } else { 4 };
        for n in 1..=entries {
            doc.privacy_audit_logs.push(ledger_entry(org, n, world_time(n)));
        }
    }
    doc
}

/// A store loaded with [`world`].
async fn loaded(store: &dyn Store) {
    store.import(&world()).await.expect("the world imports");
}

/// The window of the whole world timeline.
fn everything() -> TimeWindow {
    TimeWindow::new(t(0), t(100_000)).expect("valid window")
}

fn query(org: u128, limit: u32) -> PrivacyLogQuery {
    PrivacyLogQuery {
        organization_id: org_id(org),
        window: everything(),
        ids: None,
        after: None,
        limit,
    }
}

/// One entry of a request recording accesses, as a client sends it: an employee's name read
/// now, from the menu `menu`.
pub fn access_entry(menu: &str) -> serde_json::Value {
    serde_json::json!({
        "access_time": Timestamp::now().to_string(),
        "account_id": "0B7C5D1E-6F8A-4B3C-9D2E-1F0A1B2C3D4E",
        "ip_addresses": ["203.0.113.9"],
        "data_subject": {"type": "EMPLOYEE", "user": "usr_0b7c5d1e6f8a4b3c9d2e1f0a1b2c3d4e"},
        "access_data": ["NAME"],
        "access_menu": menu,
        "access_menu_path": "/people",
        "activity_category": "READ"
    })
}

/// A record of a read by the owner of `org`, through REST.
pub fn record(org: u128, n: u128) -> ReadRecord {
    ReadRecord {
        api: AuditEntry {
            id: Uuid::from_u128(org << 64 | 0x700 | n),
            at: t(5000 + i64::try_from(n).unwrap_or(0)),
            organization_id: org_id(org),
            token_id: id(org << 64 | 0x800),
            user_id: user_id(org, Role::Owner),
            operation: "listPrivacyAuditLogs".into(),
            request_id: format!("req-{n}"),
            client_ip: Some("127.0.0.1".into()),
            filters: serde_json::json!({"timestamp_gte": "2026-01-01T00:00:00Z"}),
            entries_returned: 9999,
            interface: Interface::Rest,
            tool_name: None,
        },
        tool: None,
    }
}

async fn read(store: &dyn Store, q: &PrivacyLogQuery, n: u128) -> Vec<PrivacyAuditLog> {
    read_page(store, q, n).await.entries
}

async fn read_page(store: &dyn Store, q: &PrivacyLogQuery, n: u128) -> crate::LedgerPage {
    let org = q.organization_id.uuid().as_u128();
    store.read_privacy_audit_logs(q, &record(org, n)).await.expect("read succeeds")
}

fn ids_of(entries: &[PrivacyAuditLog]) -> Vec<PrivacyAuditLogId> {
    entries.iter().map(|e| e.id).collect()
}

/// The world's entries of `org` in the ledger's order, computed here independently.
fn expected_order(org: u128) -> Vec<PrivacyAuditLog> {
    let mut entries: Vec<PrivacyAuditLog> = world()
        .privacy_audit_logs
        .into_iter()
        .filter(|e| e.organization_id == org_id(org))
        .map(|e| e.entry)
        .collect();
    entries.sort_by(|a, b| b.access_time.cmp(&a.access_time).then(b.id.cmp(&a.id)));
    entries
}

fn assert_not_found<T: std::fmt::Debug>(result: Result<T, StoreError>, what: &str) {
    assert!(
        matches!(result, Err(StoreError::NotFound)),
        "{what}: expected NotFound, got {result:?}"
    );
}

// ---- directory ----

/// Organizations are found by id; a missing one is `NotFound`.
pub async fn organizations_are_found_by_id(store: &dyn Store) {
    loaded(store).await;
    assert_eq!(store.organization(org_id(ORG_A)).await.unwrap(), organization(ORG_A));
    assert_eq!(store.organization(org_id(ORG_B)).await.unwrap(), organization(ORG_B));
    assert_not_found(store.organization(org_id(0xC)).await, "missing organization");
}

/// Users are found in their organization only.
pub async fn users_are_found_only_in_their_organization(store: &dyn Store) {
    loaded(store).await;
    let world = world();
    for u in &world.users {
        assert_eq!(&store.user(u.organization_id, u.id).await.unwrap(), u);
        let other = if u.organization_id == org_id(ORG_A) { ORG_B } else { ORG_A };
        assert_not_found(store.user(org_id(other), u.id).await, "user of another organization");
    }
    assert_not_found(store.user(org_id(ORG_A), id(0xdead)).await, "missing user");
    for u in &world.users {
        assert_eq!(&store.find_user(u.id).await.unwrap(), u);
    }
    assert_not_found(store.find_user(id(0xdead)).await, "missing user anywhere");
}

/// A privacy ledger entry of `org` recording an access to the profile of `user`.
fn profile_entry(org: u128, n: u128, user: UserId, category: ActivityCategory) -> LedgerEntry {
    let mut entry = ledger_entry(org, n, t(3000 + i64::try_from(n).unwrap_or(0)));
    entry.entry.data_subject = DataSubject::Employee { user };
    entry.entry.activity_category = category;
    entry
}

/// Whether `org`'s ledger holds `entry`, exactly.
async fn ledger_holds(store: &dyn Store, entry: &LedgerEntry, n: u128) -> bool {
    let org = entry.organization_id.uuid().as_u128();
    let q = PrivacyLogQuery {
        ids: Some(IdFilter::new(vec![entry.entry.id]).expect("one id")),
        ..query(org, 10)
    };
    let found = read(store, &q, n).await;
    assert!(found.is_empty() || found == [entry.entry.clone()], "{found:?}");
    !found.is_empty()
}

/// Reading a user appends its entry to the privacy ledger, in the same transaction; a user of
/// another organization, or none, is `NotFound` and nothing is written.
pub async fn reading_a_user_records_the_access_and_only_then(store: &dyn Store) {
    loaded(store).await;
    let member = world_user(ORG_A, Role::Member);
    let entry = profile_entry(ORG_A, 60, member.id, ActivityCategory::Read);
    assert_eq!(store.read_user(org_id(ORG_A), member.id, &entry).await.unwrap(), member);
    assert!(ledger_holds(store, &entry, 1).await);
    let missed = profile_entry(ORG_A, 61, member.id, ActivityCategory::Read);
    assert_not_found(store.read_user(org_id(ORG_B), member.id, &missed).await, "other org");
    assert_not_found(store.read_user(org_id(ORG_A), id(0xdead), &missed).await, "missing user");
    assert!(!ledger_holds(store, &missed, 2).await, "a failed read is not recorded");
    // An entry that cannot be written fails the read.
    let result = store.read_user(org_id(ORG_A), member.id, &entry).await;
    assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
}

/// A change is written, with its entry, only while every user it read is stored as read.
pub async fn a_profile_is_changed_only_as_it_was_read(store: &dyn Store) {
    loaded(store).await;
    let (org, owner, admin) =
        (org_id(ORG_A), world_user(ORG_A, Role::Owner), world_user(ORG_A, Role::Admin));
    let member = world_user(ORG_A, Role::Member);
    let changed = User {
        name: "Renamed Member".into(),
        title: None,
        manager: Some(owner.id),
        linkedin_url: Some("https://www.linkedin.com/in/renamed".into()),
        updated_at: t(4000),
        ..member.clone()
    };
    let read = vec![(member.id, member.updated_at), (owner.id, owner.updated_at)];
    // Read at another time, or a user of another organization: nothing is written.
    for (read, n) in [
        vec![(member.id, t(5)), (owner.id, owner.updated_at)],
        vec![(member.id, member.updated_at), (owner.id, t(5))],
        vec![(member.id, member.updated_at), (user_id(ORG_B, Role::Owner), t(1))],
    ]
    .into_iter()
    .zip(30..)
    {
        let entry = profile_entry(ORG_A, 62, member.id, ActivityCategory::Update);
        let update = ProfileUpdate { user: changed.clone(), read, entry: entry.clone() };
        let result = store.update_user(&update).await;
        assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
        assert!(!ledger_holds(store, &entry, n).await);
        assert_eq!(store.user(org, member.id).await.unwrap(), member);
    }
    let entry = profile_entry(ORG_A, 63, member.id, ActivityCategory::Update);
    let update = ProfileUpdate { user: changed.clone(), read: read.clone(), entry: entry.clone() };
    assert_eq!(store.update_user(&update).await.unwrap(), changed);
    assert_eq!(store.user(org, member.id).await.unwrap(), changed);
    assert!(ledger_holds(store, &entry, 4).await);
    // What was read is stale now.
    let again = ProfileUpdate {
        entry: profile_entry(ORG_A, 64, member.id, ActivityCategory::Update),
        ..update
    };
    assert!(matches!(store.update_user(&again).await, Err(StoreError::Conflict(_))));
    // The others are untouched.
    assert_eq!(store.user(org, admin.id).await.unwrap(), admin);
    assert_eq!(store.user(org, owner.id).await.unwrap(), owner);
}

/// Of concurrent changes decided on the same read, exactly one is made.
pub async fn of_concurrent_changes_made_on_one_read_one_wins(store: &dyn Store) {
    loaded(store).await;
    let member = world_user(ORG_A, Role::Member);
    let updates: Vec<ProfileUpdate> = (0..8)
        .map(|n| ProfileUpdate {
            user: User { name: format!("Name {n}"), updated_at: t(4000), ..member.clone() },
            read: vec![(member.id, member.updated_at)],
            entry: profile_entry(ORG_A, 70 + n, member.id, ActivityCategory::Update),
        })
        .collect();
    let results = futures_join_all(updates.iter().map(|u| store.update_user(u))).await;
    let won: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(won.len(), 1, "{results:?}");
    assert!(results.iter().all(|r| matches!(r, Ok(_) | Err(StoreError::Conflict(_)))));
    assert_eq!(&store.user(org_id(ORG_A), member.id).await.unwrap(), won[0]);
    let mut recorded = 0;
    for (n, u) in updates.iter().enumerate() {
        recorded += usize::from(ledger_holds(store, &u.entry, 10 + n as u128).await);
    }
    assert_eq!(recorded, 1, "only the change made is recorded");
}

/// A manager of another organization, a missing one, or a chain of managers that comes back
/// to the user, is refused with its path.
pub async fn import_rejects_managers_elsewhere_and_cycles(store: &dyn Store) {
    let mut doc = world();
    doc.users[2].manager = Some(user_id(ORG_B, Role::Owner));
    assert_invalid(
        store.import(&doc).await,
        "users[2].manager",
        "the manager belongs to another organization",
    );
    let mut doc = world();
    doc.users[2].manager = Some(id(0xdead));
    assert_invalid(store.import(&doc).await, "users[2].manager", "no such user");
    let mut doc = world();
    doc.users[0].manager = Some(user_id(ORG_A, Role::Member));
    assert_invalid(
        store.import(&doc).await,
        "users[0].manager",
        "the chain of managers comes back to the user",
    );
    let mut doc = world();
    doc.users[0].manager = Some(user_id(ORG_A, Role::Owner));
    assert_invalid(
        store.import(&doc).await,
        "users[0].manager",
        "the chain of managers comes back to the user",
    );
    assert_nothing_written(store).await;
    // A manager stored already is found.
    let mut doc = world();
    let (users, rest): (Vec<_>, Vec<_>) = doc.users.drain(..).partition(|u| u.role == Role::Owner);
    store
        .import(&ImportDocument {
            organizations: doc.organizations.clone(),
            users,
            ..Default::default()
        })
        .await
        .unwrap();
    doc.organizations.clear();
    doc.users = rest;
    store.import(&doc).await.unwrap();
    let member = world_user(ORG_B, Role::Member);
    assert_eq!(store.user(org_id(ORG_B), member.id).await.unwrap(), member);
}

/// A job is returned with every field, its hiring team's names resolved, in stored order.
pub async fn a_job_comes_with_its_hiring_team_names_in_order(store: &dyn Store) {
    loaded(store).await;
    let job = store.job(org_id(ORG_A), job_id(ORG_A, 2)).await.unwrap();
    let new = world().jobs.into_iter().find(|j| j.id == job_id(ORG_A, 2)).unwrap();
    let team: Vec<(String, UserId, String)> = job
        .hiring_team
        .iter()
        .map(|m| (m.role.as_str().to_owned(), m.user.id, m.user.name.clone()))
        .collect();
    assert_eq!(
        team,
        [
            ("RECRUITER".to_owned(), user_id(ORG_A, Role::Member), "MEMBER of A".to_owned()),
            ("HIRING_MANAGER".to_owned(), user_id(ORG_A, Role::Owner), "OWNER of A".to_owned()),
        ]
    );
    assert_eq!(job.organization_id, new.organization_id);
    assert_eq!(
        (job.id, &job.name, job.status, job.confidential, &job.locations, &job.ats),
        (new.id, &new.name, new.status, new.confidential, &new.locations, &new.ats)
    );
    assert_eq!((job.created_at, job.updated_at), (new.created_at, new.updated_at));
    let stages: Vec<(JobStageId, &str, u32)> =
        job.job_stages.iter().map(|s| (s.id, s.name.as_str(), s.position)).collect();
    assert_eq!(
        stages,
        [
            (stage_id(ORG_A, 2, 0), "Application review", 0),
            (stage_id(ORG_A, 2, 1), "Phone screen", 1),
            (stage_id(ORG_A, 2, 2), "Onsite", 2),
        ]
    );
    let s = &job.settings;
    assert_eq!(
        (s.default_task_queue_id, &s.remote_ats_hiring_process, &s.locale),
        (
            new.settings.default_task_queue_id,
            &new.settings.remote_ats_hiring_process,
            &new.settings.locale
        )
    );
    // A's defaults are the built-in ones, unlocked. Job 2 overrides the interview name (not
    // shown) and nothing else, whatever its document said of levels and locks.
    assert_eq!(
        s.interview_name_setting,
        InterviewNameSetting {
            is_custom: true,
            show_interview_name: false,
            is_locked: false,
            level: SettingLevel::Job
        }
    );
    let built_in = SchedulingDefaults::BUILT_IN;
    assert_eq!(
        (s.interviewer_info_setting.values(), s.interviewer_info_setting.is_custom),
        (built_in.interviewer_info_setting.values, false)
    );
    assert_eq!(
        (s.interviewer_info_setting.is_locked, &s.interviewer_info_setting.level),
        (false, &SettingLevel::Org)
    );
    assert_eq!(
        s.recruiting_team_contact_info_setting.values(),
        built_in.recruiting_team_contact_info_setting.values
    );
}

/// A setting its organization locks is the organization's, whatever the job overrides; an
/// unlocked one the job does not override is the organization's too.
pub async fn a_locked_default_is_the_jobs_setting_whatever_it_overrides(store: &dyn Store) {
    loaded(store).await;
    // B's job 1 overrides its interviewer information, which B locks, and takes B's interview
    // name setting.
    let job = store.job(org_id(ORG_B), job_id(ORG_B, 1)).await.unwrap();
    let new = world().jobs.into_iter().find(|j| j.id == job_id(ORG_B, 1)).unwrap();
    assert!(new.settings.interviewer_info_setting.is_custom, "the document overrides it");
    let info = &job.settings.interviewer_info_setting;
    assert_eq!((info.is_custom, info.is_locked, &info.level), (false, true, &SettingLevel::Org));
    assert_eq!(info.values(), b_defaults().interviewer_info_setting.values);
    let name = &job.settings.interview_name_setting;
    assert_eq!(
        (name.is_custom, name.show_interview_name, &name.level),
        (false, false, &SettingLevel::Org)
    );
    assert_eq!(store.organization(org_id(ORG_B)).await.unwrap().scheduling_defaults, b_defaults());
}

/// A stage's identifier is defined once, in the document and in the store.
pub async fn job_stage_ids_are_defined_once(store: &dyn Store) {
    let mut doc = world();
    doc.jobs[1].job_stages[2].id = stage_id(ORG_A, 1, 0);
    assert_invalid(
        store.import(&doc).await,
        "jobs[1].job_stages[2].id",
        "duplicates jobs[0].job_stages[0].id",
    );
    assert_nothing_written(store).await;
    loaded(store).await;
    let mut more = ImportDocument::default();
    let mut job = job(ORG_A, 9, false, vec![]);
    job.job_stages[1].id = stage_id(ORG_A, 2, 1);
    more.jobs.push(job);
    assert_invalid(store.import(&more).await, "jobs[0].job_stages[1].id", "already exists");
}

/// A job of another organization is reported exactly like a missing one.
pub async fn a_job_of_another_organization_is_not_found(store: &dyn Store) {
    loaded(store).await;
    assert_not_found(
        store.job(org_id(ORG_B), job_id(ORG_A, 1)).await,
        "job of another organization",
    );
    assert_not_found(store.job(org_id(ORG_A), job_id(ORG_A, 99)).await, "missing job");
    assert_not_found(
        store.job(org_id(0xC), job_id(ORG_A, 1)).await,
        "job of a missing organization",
    );
}

// ---- privacy ledger ----

/// Newest first; entries with equal `access_time` ordered by id, descending.
pub async fn the_ledger_is_newest_first_with_equal_times_ordered_by_id(store: &dyn Store) {
    loaded(store).await;
    let page = read(store, &query(ORG_A, 100), 1).await;
    assert_eq!(ids_of(&page), ids_of(&expected_order(ORG_A)));
    let limited = read(store, &query(ORG_A, 5), 2).await;
    assert_eq!(ids_of(&limited), ids_of(&expected_order(ORG_A)[..5]));
}

/// `gte` is inclusive and `lt` exclusive.
pub async fn the_window_includes_gte_and_excludes_lt(store: &dyn Store) {
    loaded(store).await;
    // Entries 4..=7 are at t(400), 8 at t(800), 9 and 10 at t(900).
    let q =
        PrivacyLogQuery { window: TimeWindow::new(t(400), t(900)).unwrap(), ..query(ORG_A, 100) };
    let mut got = ids_of(&read(store, &q, 1).await);
    got.sort();
    assert_eq!(got, [4, 5, 6, 7, 8].map(|n| entry_id(ORG_A, n)));
    let just_after = Timestamp::from_unix_micros(t(400).unix_micros() + 1).unwrap();
    let q = PrivacyLogQuery { window: TimeWindow::new(just_after, t(900)).unwrap(), ..q };
    assert_eq!(ids_of(&read(store, &q, 2).await), [entry_id(ORG_A, 8)]);
    let q = PrivacyLogQuery { window: TimeWindow::new(t(0), t(100)).unwrap(), ..q };
    assert!(read(store, &q, 3).await.is_empty());
}

/// With an id filter, only those entries of the organization come back, in ledger order.
pub async fn the_id_filter_returns_only_those_entries(store: &dyn Store) {
    loaded(store).await;
    let wanted = [12, 5, 6, 1].map(|n| entry_id(ORG_A, n));
    let filter = IdFilter::new(wanted.iter().copied().chain([entry_id(ORG_A, 404)])).unwrap();
    let q = PrivacyLogQuery { ids: Some(filter), ..query(ORG_A, 100) };
    let expected: Vec<_> =
        ids_of(&expected_order(ORG_A)).into_iter().filter(|id| wanted.contains(id)).collect();
    assert_eq!(ids_of(&read(store, &q, 1).await), expected);
}

/// Walking pages of any size after the last position seen visits every entry once, in order,
/// across equal timestamps; `more` is true exactly when entries follow.
pub async fn pages_continue_after_a_position_without_repeats_or_gaps(store: &dyn Store) {
    loaded(store).await;
    let expected = ids_of(&expected_order(ORG_A));
    for size in [1, 2, 3, 5, 11, 12, 13] {
        let mut seen = vec![];
        let mut after = None;
        for n in 0.. {
            let q = PrivacyLogQuery { after, ..query(ORG_A, size) };
            let page = read_page(store, &q, u128::from(size) * 1000 + n).await;
            seen.extend(ids_of(&page.entries));
            assert!(page.entries.len() <= size as usize);
            assert_eq!(page.more, seen.len() < expected.len(), "page size {size}, page {n}");
            match page.entries.last() {
                Some(last) if page.more => after = Some(LedgerPosition::of(last)),
                _ => break,
            }
        }
        assert_eq!(seen, expected, "page size {size}");
    }
    // Continuing after the last entry finds nothing.
    let last = expected_order(ORG_A).pop().unwrap();
    let q = PrivacyLogQuery { after: Some(LedgerPosition::of(&last)), ..query(ORG_A, 100) };
    assert!(read(store, &q, 1).await.is_empty());
}

/// Another organization's entries never come back: not by window, not by id filter, not by
/// a position taken from them.
pub async fn nothing_of_another_organization_is_ever_returned(store: &dyn Store) {
    loaded(store).await;
    let b = read(store, &query(ORG_B, 100), 1).await;
    assert_eq!(ids_of(&b), ids_of(&expected_order(ORG_B)));
    let filter = IdFilter::new((1..=4).map(|n| entry_id(ORG_A, n))).unwrap();
    let q = PrivacyLogQuery { ids: Some(filter), ..query(ORG_B, 100) };
    assert!(read(store, &q, 2).await.is_empty());
    let q = PrivacyLogQuery { organization_id: org_id(0xC), ..query(ORG_A, 100) };
    let err = store.read_privacy_audit_logs(&q, &record(0xC, 3)).await;
    // A missing organization has no ledger: either nothing or NotFound, never data.
    assert!(
        matches!(&err, Ok(p) if p.entries.is_empty()) || matches!(err, Err(StoreError::NotFound)),
        "{err:?}"
    );
}

/// Every field of every variant comes back as it was appended.
pub async fn ledger_entries_round_trip_exactly(store: &dyn Store) {
    loaded(store).await;
    let page = read(store, &query(ORG_A, 100), 1).await;
    assert_eq!(page, expected_order(ORG_A));
}

/// A large batch (stores may write it otherwise than a few rows) round-trips exactly too:
/// every data subject and query variant, every nullable column empty and filled.
pub async fn a_large_batch_round_trips_exactly(store: &dyn Store) {
    loaded(store).await;
    let entries: Vec<LedgerEntry> = (100..250)
        .map(|n| ledger_entry(ORG_B, n, t(2000 + i64::try_from(n).unwrap_or(0))))
        .collect();
    // With another entity, so that the document is not a ledger batch only.
    let candidate = Candidate {
        id: candidate_id(ORG_B, 77),
        organization_id: org_id(ORG_B),
        name: "Batch".into(),
        email: "batch@mail.example".into(),
        phone: String::new(),
    };
    let doc = ImportDocument {
        candidates: vec![candidate],
        privacy_audit_logs: entries.clone(),
        ..Default::default()
    };
    store.import(&doc).await.unwrap();
    let mut expected: Vec<PrivacyAuditLog> = entries.into_iter().map(|e| e.entry).collect();
    expected.reverse();
    let mut q = query(ORG_B, 100);
    q.window = TimeWindow::new(t(2000), t(3000)).unwrap();
    let first = read_page(store, &q, 1).await;
    q.after = first.entries.last().map(LedgerPosition::of);
    let second = read_page(store, &q, 2).await;
    let read: Vec<PrivacyAuditLog> = first.entries.into_iter().chain(second.entries).collect();
    assert_eq!(read, expected);
}

/// Every read writes one API audit entry with the number of entries returned; a read through
/// the tool interface writes a tool-interface entry too.
pub async fn every_read_is_recorded_with_its_count(store: &dyn Store) {
    loaded(store).await;
    let all = AuditListQuery { organization_id: None, limit: 100 };
    assert!(store.api_audit_entries(&all).await.unwrap().is_empty());
    let got = store.read_privacy_audit_logs(&query(ORG_A, 5), &record(ORG_A, 1)).await.unwrap();
    assert_eq!((got.entries.len(), got.more), (5, true));
    let mut tool_record = record(ORG_A, 2);
    tool_record.api.interface = Interface::Tool;
    tool_record.api.tool_name = Some("list_privacy_audit_logs".into());
    tool_record.tool = Some(ToolAuditEntry {
        id: Uuid::from_u128(0x7001),
        at: tool_record.api.at,
        organization_id: org_id(ORG_A),
        token_id: tool_record.api.token_id,
        user_id: tool_record.api.user_id,
        tool_name: "list_privacy_audit_logs".into(),
        arguments: serde_json::json!({"limit": 100, "ids": ["pal_1"]}),
        entries_returned: 0,
        request_id: "req-2".into(),
    });
    let got = store.read_privacy_audit_logs(&query(ORG_A, 100), &tool_record).await.unwrap();
    assert_eq!((got.entries.len(), got.more), (12, false));

    let api = store.api_audit_entries(&all).await.unwrap();
    let mut first = record(ORG_A, 1).api;
    first.entries_returned = 5;
    let mut second = tool_record.api.clone();
    second.entries_returned = 12;
    assert_eq!(api, [second, first]);
    let tool = store.tool_audit_entries(&all).await.unwrap();
    let mut expected = tool_record.tool.clone().unwrap();
    expected.entries_returned = 12;
    assert_eq!(tool, [expected]);
}

/// A read that returns no ledger entry (a checkpoint's) is recorded with a count of 0, as the
/// next entry of the organization's API ledger chain; one of another organization's chain
/// leaves it alone. The heads of one organization are found without the others'.
pub async fn a_read_without_entries_is_recorded_and_extends_the_chain(store: &dyn Store) {
    loaded(store).await;
    let heads = |org| async move {
        store
            .chain_heads(Some(org_id(org)))
            .await
            .unwrap()
            .into_iter()
            .map(|h| (h.ledger, h.position))
            .collect::<Vec<_>>()
    };
    let before = heads(ORG_A).await;
    assert!(before.iter().all(|(l, _)| l == "privacy"), "{before:?}");
    let b_before = heads(ORG_B).await;
    store.record_read(&record(ORG_A, 1)).await.unwrap();
    let mut expected = record(ORG_A, 1).api;
    expected.entries_returned = 0;
    let all = AuditListQuery { organization_id: None, limit: 100 };
    assert_eq!(store.api_audit_entries(&all).await.unwrap(), [expected]);
    let mut after = before.clone();
    after.insert(0, ("api".to_owned(), 1));
    assert_eq!(heads(ORG_A).await, after);
    assert_eq!(heads(ORG_B).await, b_before);
    assert_eq!(store.chain_heads(None).await.unwrap().len(), after.len() + b_before.len());
    // A record the store refuses (of an organization it does not hold) writes nothing.
    let mut refused = record(ORG_A, 2);
    refused.api.organization_id = org_id(0xDEAD);
    assert!(store.record_read(&refused).await.is_err());
    assert_eq!(store.api_audit_entries(&all).await.unwrap().len(), 1);
    assert_eq!(heads(ORG_A).await, after);
}

/// Checkpoints are stored once each (saving one again changes nothing), listed by
/// organization, ledger and position, and the latest of a chain is the one at its highest
/// position.
pub async fn checkpoints_are_kept_once_and_the_latest_is_the_highest(store: &dyn Store) {
    use recruit_domain::chain::{Checkpoint, Ledger};
    loaded(store).await;
    let key = recruit_domain::chain::SigningKey::from_bytes(&[4; 32]);
    let sign = |org, ledger, position, at| {
        Checkpoint::sign(&key, ledger, org_id(org), position, &[position as u8; 32], t(at))
    };
    assert_eq!(store.latest_checkpoint(org_id(ORG_A), Ledger::Privacy).await.unwrap(), None);
    let (a3, a7, b2) = (
        sign(ORG_A, Ledger::Privacy, 3, 10),
        sign(ORG_A, Ledger::Privacy, 7, 20),
        sign(ORG_B, Ledger::Privacy, 2, 30),
    );
    let a_api = sign(ORG_A, Ledger::Api, 9, 40);
    store.save_checkpoints(&[a7.clone(), b2.clone(), a3.clone()]).await.unwrap();
    store.save_checkpoints(&[a_api.clone(), a7.clone()]).await.unwrap();
    store.save_checkpoints(&[]).await.unwrap();
    assert_eq!(
        store.latest_checkpoint(org_id(ORG_A), Ledger::Privacy).await.unwrap(),
        Some(a7.clone())
    );
    assert_eq!(store.latest_checkpoint(org_id(ORG_B), Ledger::Api).await.unwrap(), None);
    let a = store.checkpoints(Some(org_id(ORG_A)), None).await.unwrap();
    assert_eq!(a, [a_api.clone(), a3.clone(), a7.clone()]);
    assert_eq!(store.checkpoints(None, Some(Ledger::Privacy)).await.unwrap().len(), 3);
    assert_eq!(store.checkpoints(None, None).await.unwrap().len(), 4);
    for c in store.checkpoints(None, None).await.unwrap() {
        assert!(c.verify(&key.verifying_key()).is_ok(), "{c:?} is stored as signed");
    }
}

/// A retention plan at an instant names, for each chain, what was recorded before it: the
/// last position, its hash, how many entries (all of a chain recorded before it: its head). No
/// entry is removed until a stored cut covers it, and then every planned entry goes at once;
/// the chains' heads stay, and the next entry links to the last one removed.
pub async fn retention_removes_a_chain_prefix_only_below_a_stored_cut(store: &dyn Store) {
    use crate::chain::{ChainPage, ExportQuery};
    use recruit_domain::chain::{Ledger, RetentionCut};
    loaded(store).await;
    store.record_read(&record(ORG_A, 1)).await.unwrap();
    assert!(store.retention_plan(t(0)).await.unwrap().is_empty(), "all recorded since");
    let now = Timestamp::now();
    let before = Timestamp::from_unix_micros(now.unix_micros() + 1_000).unwrap();
    while Timestamp::now() <= before {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let plan = store.retention_plan(before).await.unwrap();
    let heads = store.chain_heads(None).await.unwrap();
    assert_eq!(plan.len(), heads.len(), "every chain is planned: {plan:?}");
    let mut total = 0;
    for p in &plan {
        let head = heads
            .iter()
            .find(|h| {
                h.organization_id == p.organization_id.uuid() && h.ledger == p.ledger.as_str()
            })
            .unwrap();
        assert_eq!(p.position, u64::try_from(head.position).unwrap());
        assert_eq!(p.hash.as_slice(), head.hash.as_slice());
        assert_eq!(p.entries, p.position, "{p:?}: the whole chain");
        total += p.entries;
    }
    let stored = async || {
        let mut n = 0;
        for ledger in Ledger::ALL {
            let q = ExportQuery {
                ledger,
                organization: None,
                from: None,
                to: None,
                ids: None,
                recorded_before: Some(before),
            };
            n += store.export(&q, None).await.unwrap().count;
        }
        n
    };
    assert_eq!(stored().await, total, "an export at the boundary holds what goes");

    // Without a cut, or with cuts of some chains only, nothing is removed.
    assert!(store.remove_retained(before).await.is_err());
    let key = recruit_domain::chain::SigningKey::from_bytes(&[5; 32]);
    let cuts: Vec<RetentionCut> = plan
        .iter()
        .map(|p| {
            let (ledger, org) = (p.ledger, p.organization_id);
            RetentionCut::sign(&key, ledger, org, (p.position, &p.hash), before, now)
        })
        .collect();
    store.save_retention_cuts(&cuts[..1]).await.unwrap();
    assert!(store.remove_retained(before).await.is_err());
    assert_eq!(stored().await, total, "refused whole");

    store.save_retention_cuts(&cuts).await.unwrap();
    store.save_retention_cuts(&cuts).await.unwrap();
    let mut kept = store.retention_cuts(None, None).await.unwrap();
    let mut signed = cuts.clone();
    let order = |c: &RetentionCut| (c.organization_id, c.ledger.as_str(), c.position);
    kept.sort_by_key(order);
    signed.sort_by_key(order);
    assert_eq!(kept, signed, "kept once, as signed");
    assert_eq!(store.remove_retained(before).await.unwrap(), total);
    assert_eq!(stored().await, 0);
    assert!(store.retention_plan(before).await.unwrap().is_empty());
    assert_eq!(store.chain_heads(None).await.unwrap(), heads, "the heads stay");
    assert!(
        store
            .chain_entries(Ledger::Privacy, org_id(ORG_A), ChainPage::Linked(None), 10)
            .await
            .unwrap()
            .is_empty()
    );

    // The next entry links to the last one removed.
    store.record_read(&record(ORG_A, 2)).await.unwrap();
    let api =
        store.chain_entries(Ledger::Api, org_id(ORG_A), ChainPage::Linked(None), 10).await.unwrap();
    let cut = cuts.iter().find(|c| c.ledger == Ledger::Api).unwrap();
    assert_eq!(api.len(), 1);
    assert_eq!(api[0].position, Some(i64::try_from(cut.position).unwrap() + 1));
    assert_eq!(
        api[0].prev_hash.as_deref(),
        recruit_domain::chain::parse_hex(&cut.hash).as_ref().map(|h| &h[..])
    );

    // Pages follow one another by (position, id), each up to its limit.
    let first = api[0].position.unwrap();
    for n in 3..6 {
        store.record_read(&record(ORG_A, n)).await.unwrap();
    }
    let positions = |page, limit| async move {
        let entries = store.chain_entries(Ledger::Api, org_id(ORG_A), page, limit).await.unwrap();
        entries.into_iter().map(|e| e.position.unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(positions(ChainPage::Linked(None), 2).await, [first, first + 1]);
    let after = ChainPage::Linked(None).after(&api[0]);
    assert_eq!(positions(after, 10).await, [first + 1, first + 2, first + 3]);
    let unlinked = store.chain_entries(Ledger::Api, org_id(ORG_A), ChainPage::Unlinked(None), 10);
    assert!(unlinked.await.unwrap().is_empty(), "every entry is linked");
}

/// The next entry of an export.
async fn next_exported(
    export: &mut crate::chain::Export,
) -> Option<Result<crate::chain::ExportedEntry, StoreError>> {
    std::future::poll_fn(|cx| export.entries.as_mut().poll_next(cx)).await
}

/// Every entry of an export.
async fn drain(mut export: crate::chain::Export) -> Vec<crate::chain::ExportedEntry> {
    let mut all = vec![];
    while let Some(entry) = next_exported(&mut export).await {
        all.push(entry.expect("an exported entry"));
    }
    all
}

/// An export counts its entries, records the read with that count before any entry is
/// taken, then yields exactly those entries in (organization, time, id) order, each with a
/// hash its chain fields prove; the window and the ids filter it; an export of every
/// organization holds each organization's entries.
pub async fn an_export_holds_its_count_in_order_with_the_chain_and_is_recorded_first(
    store: &dyn Store,
) {
    use crate::chain::ExportQuery;
    use recruit_domain::chain::{Ledger, entry_hash};
    loaded(store).await;
    let a = ExportQuery {
        ledger: Ledger::Privacy,
        organization: Some(org_id(ORG_A)),
        from: None,
        to: None,
        ids: None,
        recorded_before: None,
    };
    let export = store.export(&a, Some(&record(ORG_A, 1))).await.unwrap();
    let all = AuditListQuery { organization_id: None, limit: 100 };
    let recorded = store.api_audit_entries(&all).await.unwrap();
    assert_eq!(recorded.len(), 1, "recorded before any entry is taken");
    assert_eq!(u64::from(recorded[0].entries_returned), export.count);
    let count = export.count;
    let entries = drain(export).await;
    assert_eq!(entries.len() as u64, count);
    let expected: Vec<_> = {
        let mut e = expected_order(ORG_A);
        e.reverse();
        e.into_iter().map(|e| e.id.uuid()).collect()
    };
    assert_eq!(entries.iter().map(|e| e.entry.id).collect::<Vec<_>>(), expected);
    let mut positions: Vec<i64> = entries.iter().map(|e| e.entry.position.unwrap()).collect();
    positions.sort_unstable();
    assert_eq!(positions, (1..=i64::try_from(count).unwrap()).collect::<Vec<_>>());
    for e in &entries {
        let prev: [u8; 32] = e.entry.prev_hash.as_deref().unwrap().try_into().unwrap();
        let position = u64::try_from(e.entry.position.unwrap()).unwrap();
        let hash = entry_hash(Ledger::Privacy, org_id(ORG_A), position, &prev, &e.entry.canonical);
        assert_eq!(e.entry.hash.as_deref(), Some(&hash[..]), "the chain proves each entry");
        assert_eq!(e.organization_id, org_id(ORG_A));
    }

    let window =
        ExportQuery { from: Some(entries[2].time), to: Some(entries[5].time), ..a.clone() };
    let windowed = drain(store.export(&window, None).await.unwrap()).await;
    assert!(windowed.iter().all(|e| e.time >= entries[2].time && e.time < entries[5].time));
    assert!(!windowed.is_empty());
    let ids = vec![entries[1].entry.id, entries[4].entry.id, Uuid::from_u128(0xDEAD)];
    let by_id =
        drain(store.export(&ExportQuery { ids: Some(ids), ..a.clone() }, None).await.unwrap())
            .await;
    assert_eq!(
        by_id.iter().map(|e| e.entry.id).collect::<Vec<_>>(),
        [entries[1].entry.id, entries[4].entry.id]
    );
    let every = ExportQuery { organization: None, ..a.clone() };
    let both = drain(store.export(&every, None).await.unwrap()).await;
    let b = drain(
        store
            .export(&ExportQuery { organization: Some(org_id(ORG_B)), ..a.clone() }, None)
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(both.len(), entries.len() + b.len());
    let orgs: Vec<_> = both.iter().map(|e| e.organization_id.uuid()).collect();
    assert!(orgs.windows(2).all(|w| w[0] <= w[1]), "by organization");
    let api = ExportQuery { ledger: Ledger::Api, ..every };
    let api = drain(store.export(&api, None).await.unwrap()).await;
    assert_eq!(api.iter().map(|e| e.entry.id).collect::<Vec<_>>(), [recorded[0].id]);
}

/// An export reads one snapshot: entries recorded while it is being read (here, past the
/// chunk the store holds ready) are not in it, and it yields exactly its count.
pub async fn an_export_reads_one_snapshot_whatever_is_recorded_meanwhile(store: &dyn Store) {
    use crate::chain::ExportQuery;
    use recruit_domain::chain::Ledger;
    loaded(store).await;
    let batch = |range: std::ops::Range<u128>| ImportDocument {
        privacy_audit_logs: range
            // Ids past the world's: `entry_id` ORs its bits with `n`'s.
            .map(|i| ledger_entry(ORG_B, i << 12, t(10_000 + i64::try_from(i).unwrap_or(0))))
            .collect(),
        ..Default::default()
    };
    store.import(&batch(1_000..4_500)).await.unwrap();
    let q = ExportQuery {
        ledger: Ledger::Privacy,
        organization: Some(org_id(ORG_B)),
        from: Some(t(10_000)),
        to: None,
        ids: None,
        recorded_before: None,
    };
    let mut export = store.export(&q, None).await.unwrap();
    assert_eq!(export.count, 3_500);
    let first = next_exported(&mut export).await.unwrap().unwrap();
    assert_eq!(first.time, t(11_000));
    // Later than everything: read in a chunk the store has not read yet.
    store.import(&batch(5_000..5_100)).await.unwrap();
    let mut n = 1;
    while let Some(entry) = next_exported(&mut export).await {
        let entry = entry.unwrap();
        assert!(entry.time < t(15_000), "an entry recorded after the export began");
        n += 1;
    }
    assert_eq!(n, 3_500);
}

/// When the record cannot be written, the read fails, returns no entries, and writes nothing.
pub async fn a_read_that_cannot_be_recorded_returns_nothing_and_writes_nothing(store: &dyn Store) {
    loaded(store).await;
    store.read_privacy_audit_logs(&query(ORG_A, 5), &record(ORG_A, 1)).await.unwrap();
    // A record the store refuses (of an organization it does not hold): the read fails whole.
    let mut refused = record(ORG_A, 2);
    refused.api.organization_id = org_id(0xDEAD);
    let result = store.read_privacy_audit_logs(&query(ORG_A, 5), &refused).await;
    assert!(result.is_err(), "{result:?}");
    // A tool record refused fails the read too, and its API entry is not kept.
    let mut again = record(ORG_A, 3);
    again.tool = Some(ToolAuditEntry {
        id: Uuid::from_u128(0x7002),
        at: t(1),
        organization_id: org_id(0xDEAD),
        token_id: again.api.token_id,
        user_id: again.api.user_id,
        tool_name: "list_privacy_audit_logs".into(),
        arguments: serde_json::json!({}),
        entries_returned: 0,
        request_id: "req".into(),
    });
    let result = store.read_privacy_audit_logs(&query(ORG_A, 1), &again).await;
    assert!(result.is_err(), "{result:?}");
    let all = AuditListQuery { organization_id: None, limit: 100 };
    let api: Vec<Uuid> =
        store.api_audit_entries(&all).await.unwrap().iter().map(|e| e.id).collect();
    assert_eq!(api, [record(ORG_A, 1).api.id]);
    assert!(store.tool_audit_entries(&all).await.unwrap().is_empty());
}

/// An entry's id is unique within its organization's ledger only: the same id in another
/// organization's ledger is another entry.
pub async fn a_ledger_entry_id_is_unique_within_its_organization(store: &dyn Store) {
    loaded(store).await;
    let fresh = ledger_entry(ORG_A, 50, t(5000));
    let mut elsewhere = ledger_entry(ORG_A, 1, t(5000));
    elsewhere.organization_id = org_id(ORG_B);
    let doc = ImportDocument { privacy_audit_logs: vec![fresh, elsewhere], ..Default::default() };
    store.import(&doc).await.unwrap();
    assert_eq!(read(store, &query(ORG_A, 100), 1).await.len(), 13);
    assert_eq!(read(store, &query(ORG_B, 100), 2).await.len(), 5);
}

fn key_claim(org: u128, key: &str, fingerprint: u8, now: i64) -> KeyClaim {
    KeyClaim {
        organization_id: org_id(org),
        key: key.into(),
        fingerprint: [fingerprint; 32],
        now: t(now),
        lease_until: t(now + 30),
        expires_at: t(now + 86_400),
    }
}

fn accesses(claim: &KeyClaim, entries: Vec<LedgerEntry>, n: u128) -> AccessesWrite {
    let org = claim.organization_id.uuid().as_u128();
    let mut record = record(org, n);
    record.api.operation = "recordPrivacyAccesses".into();
    AccessesWrite {
        entries,
        record,
        claim: claim.clone(),
        response: StoredResponse { status: 201, body: format!("{{\"n\":{n}}}").into_bytes() },
    }
}

/// A key is granted once; while its request runs a claim with the same fingerprint finds it in
/// flight and one with another fingerprint finds another request; once the accesses are
/// recorded, the same claim finds the response; keys are per organization.
pub async fn an_idempotency_key_is_granted_once_then_replayed(store: &dyn Store) {
    loaded(store).await;
    let claim = key_claim(ORG_A, "key-1", 1, 100);
    assert_eq!(store.claim_idempotency_key(&claim).await.unwrap(), Claim::Granted);
    let again = key_claim(ORG_A, "key-1", 1, 101);
    assert_eq!(
        store.claim_idempotency_key(&again).await.unwrap(),
        Claim::InFlight { until: t(130) }
    );
    let other = key_claim(ORG_A, "key-1", 2, 101);
    assert_eq!(store.claim_idempotency_key(&other).await.unwrap(), Claim::OtherRequest);
    let elsewhere = key_claim(ORG_B, "key-1", 2, 101);
    assert_eq!(store.claim_idempotency_key(&elsewhere).await.unwrap(), Claim::Granted);

    let write = accesses(&claim, vec![ledger_entry(ORG_A, 40, t(90))], 1);
    store.record_privacy_accesses(&write).await.unwrap();
    match store.claim_idempotency_key(&again).await.unwrap() {
        Claim::Completed(response) => assert_eq!(response, write.response),
        other => panic!("expected the stored response, got {other:?}"),
    }
    assert_eq!(store.claim_idempotency_key(&other).await.unwrap(), Claim::OtherRequest);
    let entries = read(store, &query(ORG_A, 100), 2).await;
    assert_eq!(entries.len(), 13);
    assert!(entries.iter().any(|e| e.id == entry_id(ORG_A, 40)));
    let all = AuditListQuery { organization_id: Some(org_id(ORG_A)), limit: 10 };
    let recorded = store.api_audit_entries(&all).await.unwrap();
    let write_entry = recorded.iter().find(|e| e.operation == "recordPrivacyAccesses").unwrap();
    assert_eq!(write_entry.entries_returned, 1);
}

/// A released key is free again; a lease that lapsed is granted again and the request that
/// held it can no longer complete; an expired key is granted anew and purged.
pub async fn idempotency_keys_are_released_taken_over_and_purged(store: &dyn Store) {
    loaded(store).await;
    let claim = key_claim(ORG_A, "key-2", 1, 100);
    assert_eq!(store.claim_idempotency_key(&claim).await.unwrap(), Claim::Granted);
    store.release_idempotency_key(&claim).await.unwrap();
    let other = key_claim(ORG_A, "key-2", 2, 101);
    assert_eq!(store.claim_idempotency_key(&other).await.unwrap(), Claim::Granted);

    // `other`'s lease (until 131) lapses; a claim at 200 takes the key over.
    let late = key_claim(ORG_A, "key-2", 2, 200);
    assert_eq!(store.claim_idempotency_key(&late).await.unwrap(), Claim::Granted);
    let write = accesses(&late, vec![ledger_entry(ORG_A, 41, t(90))], 3);
    store.record_privacy_accesses(&write).await.unwrap();
    let stale = accesses(&other, vec![ledger_entry(ORG_A, 42, t(90))], 4);
    let result = store.record_privacy_accesses(&stale).await;
    assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
    assert_eq!(read(store, &query(ORG_A, 100), 5).await.len(), 13, "only the holder wrote");

    // A day after the claim the key has expired: purged, and granted anew.
    assert_eq!(store.purge_idempotency_keys(t(200 + 86_399)).await.unwrap(), 0);
    assert_eq!(store.purge_idempotency_keys(t(200 + 86_400)).await.unwrap(), 1);
    let next_day = key_claim(ORG_A, "key-2", 3, 200 + 86_400);
    assert_eq!(store.claim_idempotency_key(&next_day).await.unwrap(), Claim::Granted);
}

/// Recorded accesses are written whole or not at all: an entry whose id is taken, or that
/// appears twice, writes nothing (no entry, no audit record, no response with the key).
pub async fn recorded_accesses_are_written_whole_or_not_at_all(store: &dyn Store) {
    loaded(store).await;
    let claim = key_claim(ORG_A, "key-3", 1, 100);
    assert_eq!(store.claim_idempotency_key(&claim).await.unwrap(), Claim::Granted);
    let fresh = ledger_entry(ORG_A, 43, t(90));
    let taken = ledger_entry(ORG_A, 1, t(90));
    for entries in [vec![fresh.clone(), taken], vec![fresh.clone(), fresh.clone()]] {
        let result = store.record_privacy_accesses(&accesses(&claim, entries, 6)).await;
        assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
    }
    assert_eq!(read(store, &query(ORG_A, 100), 7).await.len(), 12);
    let all = AuditListQuery { organization_id: Some(org_id(ORG_A)), limit: 100 };
    let recorded = store.api_audit_entries(&all).await.unwrap();
    assert!(recorded.iter().all(|e| e.operation != "recordPrivacyAccesses"));
    // The key still holds no response: the request may complete or release it.
    let again = key_claim(ORG_A, "key-3", 1, 101);
    assert!(matches!(store.claim_idempotency_key(&again).await.unwrap(), Claim::InFlight { .. }));
    store.record_privacy_accesses(&accesses(&claim, vec![fresh], 8)).await.unwrap();
}

/// Of concurrent claims of one key, exactly one is granted.
pub async fn concurrent_claims_of_a_key_grant_it_once(store: &dyn Store) {
    loaded(store).await;
    let claim = key_claim(ORG_A, "key-4", 1, 100);
    let claims = (0..8).map(|_| store.claim_idempotency_key(&claim));
    let results = futures_join_all(claims).await;
    let granted = results.iter().filter(|r| matches!(r, Ok(Claim::Granted))).count();
    assert_eq!(granted, 1, "{results:?}");
    assert!(results.iter().all(|r| matches!(r, Ok(Claim::Granted | Claim::InFlight { .. }))));
}

/// Runs the futures concurrently on this task, in order, without another dependency.
async fn futures_join_all<F: std::future::Future>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output> {
    let mut futures: Vec<_> = futures.map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *output = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending { std::task::Poll::Pending } else { std::task::Poll::Ready(()) }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// Operators list audit entries newest first, of one organization or all, up to a limit.
pub async fn audit_entries_are_listed_newest_first_by_organization(store: &dyn Store) {
    loaded(store).await;
    for n in 1..=3 {
        read(store, &query(ORG_A, 1), n).await;
    }
    read(store, &query(ORG_B, 1), 4).await;
    let list =
        |org: Option<u128>, limit| AuditListQuery { organization_id: org.map(org_id), limit };
    let ids = |entries: Vec<AuditEntry>| entries.into_iter().map(|e| e.id).collect::<Vec<_>>();
    let a: Vec<Uuid> = [3, 2, 1].map(|n| record(ORG_A, n).api.id).to_vec();
    assert_eq!(ids(store.api_audit_entries(&list(Some(ORG_A), 100)).await.unwrap()), a);
    assert_eq!(ids(store.api_audit_entries(&list(Some(ORG_A), 2)).await.unwrap()), a[..2]);
    assert_eq!(
        ids(store.api_audit_entries(&list(Some(ORG_B), 100)).await.unwrap()),
        [record(ORG_B, 4).api.id]
    );
    assert_eq!(store.api_audit_entries(&list(None, 100)).await.unwrap().len(), 4);
}

// ---- import ----

/// A document is written whole, and its summary counts each kind.
pub async fn import_writes_every_entity(store: &dyn Store) {
    let summary = store.import(&world()).await.unwrap();
    assert_eq!(
        (
            summary.organizations,
            summary.users,
            summary.task_queues,
            summary.candidates,
            summary.jobs,
            summary.privacy_audit_logs
        ),
        (2, 6, 2, 4, 4, 16)
    );
    // A second document may refer to what the first stored.
    let mut more = ImportDocument::default();
    more.users.push(User {
        id: id(0xABC),
        organization_id: org_id(ORG_A),
        name: "Late joiner".into(),
        email: "late@org-a.example".into(),
        manager: Some(user_id(ORG_A, Role::Admin)),
        ..world_user(ORG_A, Role::Member)
    });
    let member = NewHiringTeamMember { role: HiringTeamRole::HiringManager, user_id: id(0xABC) };
    more.jobs.push(job(ORG_A, 7, false, vec![member]));
    store.import(&more).await.unwrap();
    let job = store.job(org_id(ORG_A), job_id(ORG_A, 7)).await.unwrap();
    assert_eq!(job.hiring_team[0].user.name, "Late joiner");
}

async fn assert_nothing_written(store: &dyn Store) {
    assert!(store.is_empty().await.unwrap(), "the store must hold nothing after a failed import");
    assert_not_found(store.user(org_id(ORG_A), user_id(ORG_A, Role::Owner)).await, "user");
}

fn assert_invalid<T: std::fmt::Debug>(result: Result<T, ImportError>, path: &str, reason: &str) {
    match result {
        Err(ImportError::Invalid(p)) => {
            assert_eq!((p.path.as_str(), p.reason.as_str()), (path, reason));
        }
        other => panic!("expected an invalid document at {path}, got {other:?}"),
    }
}

/// A document that defines an id twice is refused whole, naming the path.
pub async fn import_rejects_duplicate_ids_and_writes_nothing(store: &dyn Store) {
    let mut doc = world();
    let dup = doc.users[1].clone();
    doc.users.push(dup);
    assert_invalid(store.import(&doc).await, "users[6].id", "duplicates users[1].id");
    assert_nothing_written(store).await;
    let mut doc = world();
    let dup = doc.privacy_audit_logs[3].clone();
    doc.privacy_audit_logs.insert(10, dup);
    assert_invalid(
        store.import(&doc).await,
        "privacy_audit_logs[10].id",
        "duplicates privacy_audit_logs[3].id",
    );
    assert_nothing_written(store).await;
}

/// A document that defines an id already stored is refused whole.
pub async fn import_rejects_ids_already_stored(store: &dyn Store) {
    loaded(store).await;
    let mut doc = ImportDocument::default();
    doc.candidates.push(Candidate {
        id: candidate_id(ORG_A, 9),
        organization_id: org_id(ORG_A),
        name: "New".into(),
        email: "new@mail.example".into(),
        phone: String::new(),
    });
    doc.jobs.push(job(ORG_A, 1, false, vec![]));
    assert_invalid(store.import(&doc).await, "jobs[0].id", "already exists");
    // Nothing of the refused document was kept: its candidate imports alone now.
    doc.jobs.clear();
    let summary = store.import(&doc).await.expect("the candidate was not stored before");
    assert_eq!(summary.candidates, 1);
    let mut doc = ImportDocument::default();
    doc.privacy_audit_logs.push(ledger_entry(ORG_B, 2, t(1)));
    assert_invalid(store.import(&doc).await, "privacy_audit_logs[0].id", "already exists");
}

/// A document of ledger entries only (a batch of the NDJSON import) is refused whole, naming
/// the entry, when an entry repeats or its organization is missing.
pub async fn a_ledger_batch_is_refused_whole_naming_the_entry(store: &dyn Store) {
    loaded(store).await;
    let mut doc = ImportDocument::default();
    doc.privacy_audit_logs.push(ledger_entry(ORG_A, 100, t(5)));
    doc.privacy_audit_logs.push(ledger_entry(ORG_B, 101, t(6)));
    doc.privacy_audit_logs.push(ledger_entry(ORG_A, 100, t(5)));
    assert_invalid(
        store.import(&doc).await,
        "privacy_audit_logs[2].id",
        "duplicates privacy_audit_logs[0].id",
    );
    doc.privacy_audit_logs[2] = ledger_entry(0xC, 102, t(7));
    assert_invalid(
        store.import(&doc).await,
        "privacy_audit_logs[2].organization_id",
        "no such organization",
    );
    // Nothing of the refused batches was written: its valid entries import now.
    doc.privacy_audit_logs.truncate(2);
    assert_eq!(store.import(&doc).await.unwrap().privacy_audit_logs, 2);
    assert_invalid(store.import(&doc).await, "privacy_audit_logs[0].id", "already exists");
}

/// A batch of an import that stopped part-way, written again: what is stored exactly as given
/// is left out and counted, the rest written; an entry stored with other values refuses the
/// whole batch, naming it, and the stored entry stays as it was.
pub async fn a_ledger_batch_written_again_skips_identical_entries_and_refuses_changed_ones(
    store: &dyn Store,
) {
    loaded(store).await;
    let first = [ledger_entry(ORG_A, 200, t(5)), ledger_entry(ORG_B, 201, t(6))];
    let mut doc = ImportDocument::default();
    doc.privacy_audit_logs.extend(first.clone());
    assert_eq!(store.import(&doc).await.unwrap().privacy_audit_logs, 2);

    doc.privacy_audit_logs.push(ledger_entry(ORG_A, 202, t(7)));
    let resumed = store.resume_ledger(&doc).await.unwrap();
    assert_eq!(resumed, ResumedBatch { written: 1, already_stored: 2 });
    let resumed = store.resume_ledger(&doc).await.unwrap();
    assert_eq!(resumed, ResumedBatch { written: 0, already_stored: 3 });

    let mut changed = ImportDocument::default();
    changed.privacy_audit_logs.push(ledger_entry(ORG_A, 203, t(8)));
    let mut edited = first[1].clone();
    edited.entry.access_menu = "edited".into();
    changed.privacy_audit_logs.push(edited);
    assert_invalid(
        store.resume_ledger(&changed).await,
        "privacy_audit_logs[1].id",
        "already exists with other values; the stored entry is kept",
    );
    // Nothing of the refused batch was written, and the stored entry is as it was.
    changed.privacy_audit_logs.truncate(1);
    assert_eq!(store.resume_ledger(&changed).await.unwrap().written, 1);
    let mut original = ImportDocument::default();
    original.privacy_audit_logs.push(first[1].clone());
    assert_eq!(store.resume_ledger(&original).await.unwrap().already_stored, 1);
    // Other problems are still named: an organization that does not exist.
    let mut orphan = ImportDocument::default();
    orphan.privacy_audit_logs.push(ledger_entry(0xC, 204, t(9)));
    assert_invalid(
        store.resume_ledger(&orphan).await,
        "privacy_audit_logs[0].organization_id",
        "no such organization",
    );
}

/// A reference to something missing, or of another organization, is refused with its path.
pub async fn import_rejects_missing_references_naming_the_path(store: &dyn Store) {
    let mut doc = world();
    doc.jobs[3].hiring_team[1].user_id = id(0xdead);
    assert_invalid(store.import(&doc).await, "jobs[3].hiring_team[1].user_id", "no such user");
    let mut doc = world();
    doc.jobs[0].hiring_team[0].user_id = user_id(ORG_B, Role::Admin);
    assert_invalid(
        store.import(&doc).await,
        "jobs[0].hiring_team[0].user_id",
        "the user belongs to another organization",
    );
    let mut doc = world();
    doc.jobs[2].settings.default_task_queue_id = queue_id(ORG_A);
    assert_invalid(
        store.import(&doc).await,
        "jobs[2].settings.default_task_queue_id",
        "the task queue belongs to another organization",
    );
    let mut doc = world();
    doc.users[4].organization_id = org_id(0xC);
    assert_invalid(store.import(&doc).await, "users[4].organization_id", "no such organization");
    let mut doc = world();
    doc.privacy_audit_logs[15].organization_id = org_id(0xC);
    assert_invalid(
        store.import(&doc).await,
        "privacy_audit_logs[15].organization_id",
        "no such organization",
    );
    assert_nothing_written(store).await;
}

// ---- tokens ----

fn new_token(org: u128, n: u128, role: Role) -> NewApiToken {
    NewApiToken {
        id: id::<recruit_domain::resource::ApiToken>(org << 64 | 0x900 | n),
        organization_id: org_id(org),
        user_id: user_id(org, role),
        name: format!("token {n}"),
        scopes: vec![Scope::JobsRead, Scope::AuditLogsRead],
        secret_hash: SecretHash([u8::try_from(n).unwrap_or(0xff); 32]),
        created_at: t(i64::try_from(n).unwrap_or(0)),
        expires_at: Some(t(100_000)),
    }
}

/// A created token is found by its secret hash together with its user; revoking it keeps the
/// first revocation time.
pub async fn tokens_are_created_found_by_hash_and_revoked(store: &dyn Store) {
    loaded(store).await;
    let new = new_token(ORG_A, 1, Role::Owner);
    let created = store.create_token(&new).await.unwrap();
    assert_eq!(
        (
            created.id,
            created.organization_id,
            created.user_id,
            &created.name,
            created.created_at,
            created.expires_at
        ),
        (new.id, new.organization_id, new.user_id, &new.name, new.created_at, new.expires_at)
    );
    assert_eq!(created.scopes, [Scope::AuditLogsRead, Scope::JobsRead]);
    assert_eq!((created.revoked_at, created.last_used_at), (None, None));
    let found = store.credential(&new.secret_hash).await.unwrap();
    assert_eq!(found.token, created);
    assert_eq!(found.user.role, Role::Owner);
    assert_eq!(found.user.id, user_id(ORG_A, Role::Owner));
    assert_not_found(store.credential(&SecretHash([0xee; 32])).await, "unknown secret");

    let mut never = new_token(ORG_A, 2, Role::Member);
    never.expires_at = None;
    never.scopes = vec![];
    let never = store.create_token(&never).await.unwrap();
    assert_eq!((never.expires_at, never.scopes.len()), (None, 0));

    let revoked = store.revoke_token(created.id, t(50)).await.unwrap();
    assert_eq!(revoked.revoked_at, Some(t(50)));
    let again = store.revoke_token(created.id, t(60)).await.unwrap();
    assert_eq!(again.revoked_at, Some(t(50)));
    assert_eq!(store.credential(&new.secret_hash).await.unwrap().token.revoked_at, Some(t(50)));
    assert_not_found(store.revoke_token(id(0x999), t(1)).await, "revoking a missing token");

    let listed: Vec<ApiTokenId> = store.tokens(None).await.unwrap().iter().map(|t| t.id).collect();
    assert_eq!(listed, [never.id, created.id]);
    assert!(store.tokens(Some(org_id(ORG_B))).await.unwrap().is_empty());
}

/// A taken id or secret hash is a conflict; a user outside the organization is not found.
pub async fn token_conflicts_and_missing_users_are_reported(store: &dyn Store) {
    loaded(store).await;
    store.create_token(&new_token(ORG_A, 1, Role::Owner)).await.unwrap();
    let mut same_hash = new_token(ORG_A, 2, Role::Owner);
    same_hash.secret_hash = new_token(ORG_A, 1, Role::Owner).secret_hash;
    let result = store.create_token(&same_hash).await;
    assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
    let mut same_id = new_token(ORG_A, 3, Role::Owner);
    same_id.id = new_token(ORG_A, 1, Role::Owner).id;
    let result = store.create_token(&same_id).await;
    assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
    let mut stranger = new_token(ORG_A, 4, Role::Owner);
    stranger.user_id = user_id(ORG_B, Role::Owner);
    assert_not_found(store.create_token(&stranger).await, "a user of another organization");
    assert_eq!(store.tokens(None).await.unwrap().len(), 1);
}

/// Use is recorded, but not more often than once a minute.
pub async fn touching_a_token_records_use_at_most_once_a_minute(store: &dyn Store) {
    loaded(store).await;
    let token = store.create_token(&new_token(ORG_A, 1, Role::Owner)).await.unwrap();
    // As operators see it in the token list: a credential kept in memory may show an older
    // last use (see `Tokens::credential`).
    let last_used = || async {
        let tokens = store.tokens(Some(org_id(ORG_A))).await.unwrap();
        tokens.iter().find(|t| t.id == token.id).and_then(|t| t.last_used_at)
    };
    store.touch_token(token.id, t(1000)).await.unwrap();
    assert_eq!(last_used().await, Some(t(1000)));
    store.touch_token(token.id, t(1059)).await.unwrap();
    assert_eq!(last_used().await, Some(t(1000)), "within a minute nothing is written");
    store.touch_token(token.id, t(1061)).await.unwrap();
    assert_eq!(last_used().await, Some(t(1061)));
    store.touch_token(id(0x999), t(2000)).await.unwrap();
}

// ---- maintenance ----

/// The first secret stored under a name is the one every later caller gets.
pub async fn server_secrets_keep_the_first_value(store: &dyn Store) {
    assert_eq!(store.server_secret("cursor", b"first").await.unwrap(), b"first");
    assert_eq!(store.server_secret("cursor", b"second").await.unwrap(), b"first");
    assert_eq!(store.server_secret("other", b"second").await.unwrap(), b"second");
}

/// A fresh store answers and holds nothing; after an import it is not empty.
pub async fn a_fresh_store_is_empty_and_answers(store: &dyn Store) {
    store.ping().await.unwrap();
    assert!(store.is_empty().await.unwrap());
    loaded(store).await;
    assert!(!store.is_empty().await.unwrap());
}
