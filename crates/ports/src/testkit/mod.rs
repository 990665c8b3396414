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
    AccountId, Candidate, CandidateId, Id, JobId, JobStageId, OrganizationId, PrivacyAuditLog,
    PrivacyAuditLogId, Resource, TaskQueue, TaskQueueId, TimeWindow, Timestamp, User, UserId, Uuid,
};

use crate::{
    AuditEntry, ImportDocument, ImportError, Interface, LedgerEntry, NewHiringTeamMember, NewJob,
    NewJobStage, OrganizationRecord, PrivacyLogQuery, ReadRecord, Store, StoreError,
};

mod chain;
mod directory;
mod filters;
mod import;
mod ledgers;
mod maintenance;
mod review;
mod streams;
mod tokens;

pub use chain::*;
pub use directory::*;
pub use filters::*;
pub use import::*;
pub use ledgers::*;
pub use maintenance::*;
pub use review::*;
pub use streams::*;
pub use tokens::*;

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
            users_are_provisioned_and_deactivation_ends_their_credentials,
            single_sign_on_settings_are_kept_and_removed,
            import_rejects_managers_elsewhere_and_cycles,
            a_job_comes_with_its_hiring_team_names_in_order,
            a_job_of_another_organization_is_not_found,
            a_locked_default_is_the_jobs_setting_whatever_it_overrides,
            job_stage_ids_are_defined_once,
            the_ledger_is_newest_first_with_equal_times_ordered_by_id,
            the_window_includes_gte_and_excludes_lt,
            the_id_filter_returns_only_those_entries,
            field_filters_keep_only_matching_entries,
            pages_continue_after_a_position_without_repeats_or_gaps,
            nothing_of_another_organization_is_ever_returned,
            ledger_entries_round_trip_exactly,
            a_large_batch_round_trips_exactly,
            every_read_is_recorded_with_its_count,
            a_read_without_entries_is_recorded_and_extends_the_chain,
            checkpoints_are_kept_once_and_the_latest_is_the_highest,
            retention_removes_a_chain_prefix_only_below_a_stored_cut,
            an_export_holds_its_count_in_order_with_the_chain_and_is_recorded_first,
            a_chain_is_read_from_a_time_by_its_recording_order,
            an_export_reads_one_snapshot_whatever_is_recorded_meanwhile,
            a_read_that_cannot_be_recorded_returns_nothing_and_writes_nothing,
            a_ledger_entry_id_is_unique_within_its_organization,
            an_idempotency_key_is_granted_once_then_replayed,
            idempotency_keys_expire_and_are_purged,
            recorded_accesses_are_written_whole_or_not_at_all,
            concurrent_writes_with_a_key_write_once,
            concurrent_reads_and_writes_extend_one_chain,
            audit_entries_are_listed_newest_first_by_organization,
            a_months_review_counts_its_entries_by_account_and_slot,
            a_reviews_decisions_and_sign_off_are_kept_with_their_records,
            a_months_bulk_counts_add_up_to_the_largest_without_failing,
            a_months_facts_are_those_of_its_entries_in_every_zone,
            retention_takes_its_entries_out_of_their_months_review,
            a_months_review_counts_texts_of_any_length,
            import_writes_every_entity,
            import_rejects_duplicate_ids_and_writes_nothing,
            import_rejects_ids_already_stored,
            a_ledger_batch_is_refused_whole_naming_the_entry,
            a_ledger_batch_written_again_skips_identical_entries_and_refuses_changed_ones,
            import_rejects_missing_references_naming_the_path,
            tokens_are_created_found_by_hash_and_revoked,
            console_sessions_are_found_with_their_token_and_end_once,
            token_conflicts_and_missing_users_are_reported,
            touching_a_token_records_use_at_most_once_a_minute,
            server_secrets_keep_the_first_value,
            log_streams_are_kept_and_delivered_by_one_holder_at_a_time,
            a_fresh_store_is_empty_and_answers,
            the_database_tells_its_clock_or_that_it_has_none,
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
        review_rules: if org == ORG_B {
            ReviewRules {
                holidays: vec!["2026-10-03".parse().unwrap_or_default()],
                downloads: 2,
                ..ReviewRules::DEFAULT
            }
        } else {
            ReviewRules::DEFAULT
        },
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
        // Organization B reviews its months in Seoul.
        time_zone: if org == ORG_B { chrono_tz::Tz::Asia__Seoul } else { chrono_tz::Tz::UTC },
        sso: None,
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
            purpose: None,
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
        status: UserStatus::Active,
        user_name: None,
        external_id: (role == Role::Admin).then(|| format!("idp-admin-{org:x}")),
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
/// The position of the head of `org`'s chain of the API audit ledger (0 before any entry).
async fn api_head(store: &dyn Store, org: u128) -> i64 {
    let heads = store.chain_heads(Some(org_id(org))).await.unwrap();
    let api = recruit_domain::chain::Ledger::Api.as_str();
    heads.into_iter().find(|h| h.ledger == api).map_or(0, |h| h.position)
}

async fn loaded(store: &dyn Store) {
    store.import(&world()).await.expect("the world imports");
}

/// The window of the whole world timeline.
fn everything() -> TimeWindow {
    TimeWindow::new(t(0), t(100_000)).expect("valid window")
}

/// An export of the whole privacy ledger of `org`, unfiltered.
pub fn privacy_export(org: u128) -> crate::chain::ExportQuery {
    crate::chain::ExportQuery {
        ledger: recruit_domain::chain::Ledger::Privacy,
        organization: Some(org_id(org)),
        from: None,
        to: None,
        ids: None,
        recorded_before: None,
        after_position: None,
        filter: Default::default(),
    }
}

fn query(org: u128, limit: u32) -> PrivacyLogQuery {
    PrivacyLogQuery {
        organization_id: org_id(org),
        window: everything(),
        ids: None,
        after: None,
        filter: Default::default(),
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
