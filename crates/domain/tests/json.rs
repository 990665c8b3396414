//! The JSON of every resource, pinned on one full example each: the Rust value serializes to
//! exactly that JSON, and that JSON deserializes to exactly the Rust value.

use recruit_domain::model::*;
use recruit_domain::{
    AccountId, ErrorCode, ErrorDetail, ErrorResponse, Page, PrivacyAuditLog, Timestamp,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// `value` serializes to `expected`, and `expected` deserializes back to `value`.
fn check<T>(value: &T, expected: Value)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    assert_eq!(serde_json::to_value(value).unwrap(), expected);
    let back: T = serde_json::from_value(expected).unwrap();
    assert_eq!(&back, value);
}

fn id<T: std::str::FromStr>(s: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    s.parse().unwrap()
}

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn job() -> Job {
    Job {
        id: id("job_0190c7d8e4a27cc3b1f0a2d4e6f80001"),
        name: "Senior Backend Engineer".into(),
        status: JobStatus::Open,
        confidential: true,
        locations: vec!["Berlin".into(), "Remote (EU)".into()],
        hiring_team: vec![
            HiringTeamMember {
                role: HiringTeamRole::HiringManager,
                user: UserRef {
                    id: id("usr_0190c7d8e4a27cc3b1f0a2d4e6f80002"),
                    name: "Ada Park".into(),
                },
            },
            HiringTeamMember {
                role: HiringTeamRole::from("RECRUITER"),
                user: UserRef {
                    id: id("usr_0190c7d8e4a27cc3b1f0a2d4e6f80003"),
                    name: "Lin Ortiz".into(),
                },
            },
        ],
        ats: Ats { kind: AtsType::from("GREENHOUSE"), id: "4402117".into() },
        created_at: at("2026-03-02T09:15:00Z"),
        updated_at: at("2026-11-20T01:30:59.656105Z"),
        app_url: "https://app.example.com/jobs/job_0190c7d8e4a27cc3b1f0a2d4e6f80001".into(),
        settings: JobSettings {
            interview_name_setting: InterviewNameSetting {
                is_custom: false,
                show_interview_name: true,
                is_locked: false,
                level: SettingLevel::Org,
            },
            interviewer_info_setting: InterviewerInfoSetting {
                is_custom: true,
                can_show_info: true,
                can_show_full_name: true,
                can_show_job_title: true,
                can_show_linkedin: false,
                can_show_email: false,
                can_show_profile_picture: true,
                can_show_pronouns: true,
                can_show_bio: false,
                is_locked: false,
                level: SettingLevel::Job,
            },
            recruiting_team_contact_info_setting: RecruitingTeamContactInfoSetting {
                is_custom: false,
                show_recruiter: true,
                show_coordinator: true,
                can_show_job_title: true,
                can_show_linkedin: false,
                can_show_profile_picture: false,
                can_show_pronouns: true,
                can_show_bio: false,
                can_show_phone: false,
                is_locked: true,
                level: SettingLevel::Org,
            },
            default_task_queue_id: id("que_0190c7d8e4a27cc3b1f0a2d4e6f80004"),
            remote_ats_hiring_process: RemoteAtsHiringProcess {
                ats_id: "hp-77".into(),
                name: "Engineering default".into(),
                status: RemoteProcessStatus::NotSet,
            },
            locale: "en-US".into(),
        },
        job_stages: vec![
            JobStage {
                id: id("jst_0190c7d8e4a27cc3b1f0a2d4e6f80040"),
                name: "Phone screen".into(),
                position: 0,
            },
            JobStage {
                id: id("jst_0190c7d8e4a27cc3b1f0a2d4e6f80041"),
                name: "Onsite".into(),
                position: 1,
            },
        ],
    }
}

#[test]
fn a_job_has_the_json_of_the_spec() {
    check(
        &job(),
        json!({
            "id": "job_0190c7d8e4a27cc3b1f0a2d4e6f80001",
            "name": "Senior Backend Engineer",
            "status": "OPEN",
            "confidential": true,
            "locations": ["Berlin", "Remote (EU)"],
            "hiring_team": [
                {"role": "HIRING_MANAGER", "user": {"id": "usr_0190c7d8e4a27cc3b1f0a2d4e6f80002", "name": "Ada Park"}},
                {"role": "RECRUITER", "user": {"id": "usr_0190c7d8e4a27cc3b1f0a2d4e6f80003", "name": "Lin Ortiz"}}
            ],
            "ats": {"type": "GREENHOUSE", "id": "4402117"},
            "created_at": "2026-03-02T09:15:00Z",
            "updated_at": "2026-11-20T01:30:59.656105Z",
            "app_url": "https://app.example.com/jobs/job_0190c7d8e4a27cc3b1f0a2d4e6f80001",
            "settings": {
                "interview_name_setting": {
                    "is_custom": false, "show_interview_name": true, "is_locked": false, "level": "ORG"
                },
                "interviewer_info_setting": {
                    "is_custom": true, "can_show_info": true, "can_show_full_name": true,
                    "can_show_job_title": true, "can_show_linkedin": false, "can_show_email": false,
                    "can_show_profile_picture": true, "can_show_pronouns": true, "can_show_bio": false,
                    "is_locked": false, "level": "JOB"
                },
                "recruiting_team_contact_info_setting": {
                    "is_custom": false, "show_recruiter": true, "show_coordinator": true,
                    "can_show_job_title": true, "can_show_linkedin": false,
                    "can_show_profile_picture": false, "can_show_pronouns": true, "can_show_bio": false,
                    "can_show_phone": false, "is_locked": true, "level": "ORG"
                },
                "default_task_queue_id": "que_0190c7d8e4a27cc3b1f0a2d4e6f80004",
                "remote_ats_hiring_process": {"ats_id": "hp-77", "name": "Engineering default", "status": "NOT_SET"},
                "locale": "en-US"
            },
            "job_stages": [
                {"id": "jst_0190c7d8e4a27cc3b1f0a2d4e6f80040", "name": "Phone screen", "position": 0},
                {"id": "jst_0190c7d8e4a27cc3b1f0a2d4e6f80041", "name": "Onsite", "position": 1}
            ]
        }),
    );
}

#[test]
fn an_organization_has_the_json_of_the_spec() {
    let limit = |limit, interviews, minutes| LoadLimit {
        maximum: MaximumLoad { limit, kind: LoadLimitType::NumberOfInterviews },
        minimum: MinimumLoad { interviews, minutes },
    };
    let org = Organization {
        id: id("org_0190c7d8e4a27cc3b1f0a2d4e6f80010"),
        name: "Northwind Labs".into(),
        domain: "northwind.example".into(),
        settings: OrganizationSettings {
            work_hours: vec![
                WorkHours { day: Weekday::Monday, start: "09:00".into(), end: "17:30".into() },
                WorkHours { day: Weekday::Friday, start: "09:00".into(), end: "15:00".into() },
            ],
            interviewer_load_limits: InterviewerLoadLimits {
                daily: limit(4, 0, 0),
                weekly: LoadLimit {
                    maximum: MaximumLoad {
                        limit: 600,
                        kind: LoadLimitType::from("NUMBER_OF_MINUTES"),
                    },
                    minimum: MinimumLoad { interviews: 1, minutes: 45 },
                },
            },
            interview_buffer: InterviewBuffer { before_minutes: 5, after_minutes: 10 },
            feedback_writing_time_minutes: 15,
            conflict_keywords: ConflictKeywords {
                out_of_office: vec!["OOO".into(), "vacation".into()],
                avoid: vec!["focus".into()],
                available_if_needed: vec![],
                recruiting_block: vec!["interview block".into()],
            },
        },
        scheduling_defaults: SchedulingDefaults {
            interview_name_setting: OrgDefault {
                values: InterviewNameValues { show_interview_name: true },
                is_locked: false,
            },
            ..SchedulingDefaults::BUILT_IN
        },
        profile_field_sources: ProfileFieldSources {
            name: FieldSource::Scim,
            ..ProfileFieldSources::default()
        },
        app_url: "https://app.example.com/organization".into(),
    };
    check(
        &org,
        json!({
            "id": "org_0190c7d8e4a27cc3b1f0a2d4e6f80010",
            "name": "Northwind Labs",
            "domain": "northwind.example",
            "settings": {
                "work_hours": [
                    {"day": "MONDAY", "start": "09:00", "end": "17:30"},
                    {"day": "FRIDAY", "start": "09:00", "end": "15:00"}
                ],
                "interviewer_load_limits": {
                    "daily": {"maximum": {"limit": 4, "type": "NUMBER_OF_INTERVIEWS"}, "minimum": {"interviews": 0, "minutes": 0}},
                    "weekly": {"maximum": {"limit": 600, "type": "NUMBER_OF_MINUTES"}, "minimum": {"interviews": 1, "minutes": 45}}
                },
                "interview_buffer": {"before_minutes": 5, "after_minutes": 10},
                "feedback_writing_time_minutes": 15,
                "conflict_keywords": {
                    "out_of_office": ["OOO", "vacation"],
                    "avoid": ["focus"],
                    "available_if_needed": [],
                    "recruiting_block": ["interview block"]
                }
            },
            "scheduling_defaults": {
                "interview_name_setting": {"show_interview_name": true, "is_locked": false},
                "interviewer_info_setting": {
                    "can_show_info": true, "can_show_full_name": true, "can_show_job_title": true,
                    "can_show_linkedin": false, "can_show_email": false,
                    "can_show_profile_picture": true, "can_show_pronouns": true, "can_show_bio": false,
                    "is_locked": false
                },
                "recruiting_team_contact_info_setting": {
                    "show_recruiter": true, "show_coordinator": true, "can_show_job_title": true,
                    "can_show_linkedin": false, "can_show_profile_picture": false,
                    "can_show_pronouns": true, "can_show_bio": false, "can_show_phone": false,
                    "is_locked": false
                }
            },
            "profile_field_sources": {
                "name": "SCIM", "title": "API", "manager": "API", "linkedin_url": "API"
            },
            "app_url": "https://app.example.com/organization"
        }),
    );
}

#[test]
fn a_user_profile_has_the_json_of_the_api() {
    let profile = UserProfile {
        id: id("usr_0190c7d8e4a27cc3b1f0a2d4e6f80020"),
        name: "Ada Park".into(),
        email: "ada.park@northwind.example".into(),
        role: Role::Admin,
        title: None,
        manager: Some(id("usr_0190c7d8e4a27cc3b1f0a2d4e6f80021")),
        linkedin_url: Some("https://www.linkedin.com/in/ada-park".into()),
        created_at: at("2026-01-05T09:00:00Z"),
        updated_at: at("2026-11-20T01:30:59.656105Z"),
        app_url: "https://app.example.com/users/usr_0190c7d8e4a27cc3b1f0a2d4e6f80020".into(),
        etag: "\"3q2-7w\"".into(),
    };
    check(
        &profile,
        json!({
            "id": "usr_0190c7d8e4a27cc3b1f0a2d4e6f80020",
            "name": "Ada Park",
            "email": "ada.park@northwind.example",
            "role": "ADMIN",
            "title": null,
            "manager": "usr_0190c7d8e4a27cc3b1f0a2d4e6f80021",
            "linkedin_url": "https://www.linkedin.com/in/ada-park",
            "created_at": "2026-01-05T09:00:00Z",
            "updated_at": "2026-11-20T01:30:59.656105Z",
            "app_url": "https://app.example.com/users/usr_0190c7d8e4a27cc3b1f0a2d4e6f80020",
            "etag": "\"3q2-7w\""
        }),
    );
}

fn entry(n: u8, data_subject: DataSubject, category: &str) -> PrivacyAuditLog {
    PrivacyAuditLog {
        id: id(&format!("pal_0190c7d8e4a27cc3b1f0a2d4e6f800{n:02x}")),
        access_time: at("2026-11-20T01:30:59.656105Z"),
        account_id: AccountId::parse("0190c7d8e4a27cc3b1f0a2d4e6f8aaaa").unwrap(),
        ip_addresses: vec!["203.0.113.7".into(), "2001:db8::1".into()],
        data_subject,
        access_data: vec![AccessData::Name, AccessData::EmailAddress, AccessData::PhoneNumber],
        access_menu: "CANDIDATE_PROFILE".into(),
        access_menu_path: "Candidates > Profile".into(),
        activity_category: ActivityCategory::from(category),
        purpose: None,
    }
}

fn entry_json(n: u8, data_subject: Value, category: &str) -> Value {
    json!({
        "id": format!("pal_0190c7d8e4a27cc3b1f0a2d4e6f800{n:02x}"),
        "access_time": "2026-11-20T01:30:59.656105Z",
        "account_id": "0190c7d8e4a27cc3b1f0a2d4e6f8aaaa",
        "ip_addresses": ["203.0.113.7", "2001:db8::1"],
        "data_subject": data_subject,
        "access_data": ["NAME", "EMAIL_ADDRESS", "PHONE_NUMBER"],
        "access_menu": "CANDIDATE_PROFILE",
        "access_menu_path": "Candidates > Profile",
        "activity_category": category
    })
}

#[test]
fn privacy_audit_log_entries_have_the_json_of_the_spec_for_every_variant() {
    let can = "can_0190c7d8e4a27cc3b1f0a2d4e6f80020";
    let usr = "usr_0190c7d8e4a27cc3b1f0a2d4e6f80021";
    let bulk = |bulk_count, query| DataSubject::Bulk { bulk_count, query };
    let cases: Vec<(DataSubject, Value)> = vec![
        (DataSubject::Employee { user: id(usr) }, json!({"type": "EMPLOYEE", "user": usr})),
        (
            DataSubject::Candidate { candidate: id(can) },
            json!({"type": "CANDIDATE", "candidate": can}),
        ),
        (
            bulk(Some(2), BulkQuery::CandidateIds { ids: vec![id(can), id(can)] }),
            json!({"type": "BULK", "bulk_count": 2, "query": {"type": "CANDIDATE_IDS", "ids": [can, can]}}),
        ),
        (
            bulk(Some(1), BulkQuery::EmployeeIds { ids: vec![id(usr)] }),
            json!({"type": "BULK", "bulk_count": 1, "query": {"type": "EMPLOYEE_IDS", "ids": [usr]}}),
        ),
        (
            bulk(None, BulkQuery::CandidateSearch { values: vec!["rust".into(), "berlin".into()] }),
            json!({"type": "BULK", "bulk_count": null, "query": {"type": "CANDIDATE_SEARCH", "values": ["rust", "berlin"]}}),
        ),
        (
            bulk(Some(0), BulkQuery::EmployeeSearch { values: vec![] }),
            json!({"type": "BULK", "bulk_count": 0, "query": {"type": "EMPLOYEE_SEARCH", "values": []}}),
        ),
        (
            bulk(None, BulkQuery::Scope { scope: BulkScope::AllOrgCandidates }),
            json!({"type": "BULK", "bulk_count": null, "query": {"type": "SCOPE", "scope": "ALL_ORG_CANDIDATES"}}),
        ),
        (
            bulk(Some(12_000), BulkQuery::Scope { scope: BulkScope::AllOrgEmployees }),
            json!({"type": "BULK", "bulk_count": 12000, "query": {"type": "SCOPE", "scope": "ALL_ORG_EMPLOYEES"}}),
        ),
    ];
    let categories = ActivityCategory::KNOWN.iter().copied().chain(["EXPORT"]).cycle();
    for (n, ((subject, subject_json), category)) in cases.into_iter().zip(categories).enumerate() {
        let n = u8::try_from(n).unwrap();
        check(&entry(n, subject, category), entry_json(n, subject_json, category));
    }
}

#[test]
fn a_page_has_data_and_a_cursor_that_is_null_at_the_end() {
    let subject = DataSubject::Employee { user: id("usr_0190c7d8e4a27cc3b1f0a2d4e6f80021") };
    let subject_json = json!({"type": "EMPLOYEE", "user": "usr_0190c7d8e4a27cc3b1f0a2d4e6f80021"});
    let page = Page {
        data: vec![entry(1, subject.clone(), "READ")],
        pagination: Pagination { next_cursor: Some("eyJ2IjoxfQ.c2ln".into()) },
    };
    check(
        &page,
        json!({"data": [entry_json(1, subject_json, "READ")], "pagination": {"next_cursor": "eyJ2IjoxfQ.c2ln"}}),
    );
    let last: Page<PrivacyAuditLog> =
        Page { data: vec![], pagination: Pagination { next_cursor: None } };
    check(&last, json!({"data": [], "pagination": {"next_cursor": null}}));
}

#[test]
fn the_error_envelope_has_the_json_of_the_spec() {
    let full = ErrorResponse::new(ErrorCode::ValidationFailed, "The request has invalid fields.")
        .with_docs_url("http://127.0.0.1:8080/docs/errors#VALIDATION_FAILED")
        .with_detail(ErrorDetail::field("limit", "must be an integer from 1 to 100"))
        .with_detail(ErrorDetail::field("ids", "must hold at least one ID"));
    check(
        &full,
        json!({"error": {
            "code": "VALIDATION_FAILED",
            "message": "The request has invalid fields.",
            "docs_url": "http://127.0.0.1:8080/docs/errors#VALIDATION_FAILED",
            "details": [
                {"field": "limit", "reason": "must be an integer from 1 to 100"},
                {"field": "ids", "reason": "must hold at least one ID"}
            ]
        }}),
    );
    // Optional members are absent, not null, when there is nothing to say.
    check(
        &ErrorResponse::new(ErrorCode::NotFound, "No such job."),
        json!({"error": {"code": "NOT_FOUND", "message": "No such job."}}),
    );
    // Details keep the order their keys were written in.
    let sync = ErrorDetail::field("title", "managed by sync").with("source", "SCIM");
    assert_eq!(
        serde_json::to_string(&sync).unwrap(),
        r#"{"field":"title","reason":"managed by sync","source":"SCIM"}"#
    );
}

#[test]
fn every_code_has_its_stable_string_and_status() {
    let expected = [
        ("UNAUTHENTICATED", 401),
        ("INSUFFICIENT_SCOPE", 403),
        ("VALIDATION_FAILED", 400),
        ("INVALID_CURSOR", 400),
        ("PAYLOAD_TOO_LARGE", 413),
        ("NOT_FOUND", 404),
        ("PERMISSION_DENIED", 403),
        ("IDEMPOTENCY_KEY_REQUIRED", 400),
        ("IDEMPOTENCY_KEY_REUSED", 422),
        ("RATE_LIMITED", 429),
        ("CONFLICT", 409),
        ("CANNOT_UPDATE_SYNC_MANAGED_FIELDS", 409),
        ("NOT_IMPLEMENTED", 501),
        ("INTERNAL", 500),
        ("UPSTREAM_TIMEOUT", 504),
        ("UNAVAILABLE", 503),
    ];
    assert_eq!(ErrorCode::KNOWN, expected.map(|(s, _)| s));
    for (s, status) in expected {
        let code = ErrorCode::from(s);
        assert!(code.is_known(), "{s}");
        assert_eq!(code.as_str(), s);
        assert_eq!(code.http_status(), status, "{s}");
        assert_eq!(serde_json::to_value(&code).unwrap(), json!(s));
        assert!(!code.meaning().is_empty() && !code.recovery().is_empty());
    }
}

#[test]
fn clients_keep_values_this_version_does_not_know() {
    let body = json!({"error": {"code": "QUOTA_EXCEEDED", "message": "Later.", "details": [{"quota": "jobs"}]}});
    let err: ErrorResponse = serde_json::from_value(body.clone()).unwrap();
    assert!(!err.error.code.is_known());
    assert_eq!(err.error.code.http_status(), 500);
    assert_eq!(serde_json::to_value(&err).unwrap(), body);
    // Closed enums refuse what they do not know.
    assert!(serde_json::from_value::<JobStatus>(json!("ARCHIVED")).is_err());
    assert!(serde_json::from_value::<AccessData>(json!("ADDRESS")).is_err());
}

#[test]
fn timestamps_in_other_offsets_are_read_and_written_in_utc() {
    let mut value = serde_json::to_value(job()).unwrap();
    value["created_at"] = json!("2026-03-02T10:15:00+01:00");
    let job: Job = serde_json::from_value(value).unwrap();
    assert_eq!(job.created_at.to_string(), "2026-03-02T09:15:00Z");
    let mut value = serde_json::to_value(&job).unwrap();
    value["created_at"] = json!("2026-03-02 09:15");
    let err = serde_json::from_value::<Job>(value).unwrap_err().to_string();
    assert!(err.contains("is not an RFC 3339 date-time"), "{err}");
}

#[test]
fn closed_enums_spell_their_values_as_serde_does() {
    fn check<T: Serialize + Copy + PartialEq + std::fmt::Debug>(
        values: &[T],
        as_str: fn(T) -> &'static str,
        from_wire: fn(&str) -> Option<T>,
    ) {
        for &v in values {
            assert_eq!(serde_json::to_value(v).unwrap(), json!(as_str(v)));
            assert_eq!(from_wire(as_str(v)), Some(v));
            assert_eq!(from_wire(&as_str(v).to_lowercase()), None);
        }
    }
    check(
        &[JobStatus::Draft, JobStatus::Open, JobStatus::Closed],
        JobStatus::as_str,
        JobStatus::from_wire,
    );
    check(
        &[BulkScope::AllOrgCandidates, BulkScope::AllOrgEmployees],
        BulkScope::as_str,
        BulkScope::from_wire,
    );
    check(
        &[AccessData::Name, AccessData::EmailAddress, AccessData::PhoneNumber],
        AccessData::as_str,
        AccessData::from_wire,
    );
    check(&Role::ALL, Role::as_str, Role::from_wire);
}
