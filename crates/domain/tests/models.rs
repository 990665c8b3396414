//! Property tests of the models: serialize → deserialize is the identity for arbitrary values,
//! including values of open enums this version does not know and timestamps in any offset.

use proptest::prelude::*;
use recruit_domain::model::*;
use recruit_domain::{AccountId, Id, Resource, Timestamp, UserId, Uuid};
use serde::Serialize;
use serde::de::DeserializeOwned;

fn id<R: Resource>() -> impl Strategy<Value = Id<R>> {
    any::<u128>().prop_map(|n| Id::from_uuid(Uuid::from_u128(n)))
}

fn timestamp() -> impl Strategy<Value = Timestamp> {
    (Timestamp::MIN.unix_micros()..=Timestamp::MAX.unix_micros())
        .prop_map(|us| Timestamp::from_unix_micros(us).expect("in range"))
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[a-zA-Z0-9 ./>-]{0,24}"]
}

fn texts() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(text(), 0..4)
}

/// A known value of an open enum, or any other string.
fn open<T: for<'a> From<&'a str> + std::fmt::Debug>(
    known: &'static [&'static str],
) -> impl Strategy<Value = T> {
    let other = "[A-Z_]{1,20}";
    let value = if known.is_empty() {
        other.boxed()
    } else {
        prop_oneof![prop::sample::select(known).prop_map(str::to_owned), other].boxed()
    };
    value.prop_map(|s| T::from(s.as_str()))
}

fn data_subject() -> impl Strategy<Value = DataSubject> {
    let query = prop_oneof![
        prop::collection::vec(id(), 0..4).prop_map(|ids| BulkQuery::CandidateIds { ids }),
        prop::collection::vec(id(), 0..4).prop_map(|ids| BulkQuery::EmployeeIds { ids }),
        texts().prop_map(|values| BulkQuery::CandidateSearch { values }),
        texts().prop_map(|values| BulkQuery::EmployeeSearch { values }),
        prop_oneof![Just(BulkScope::AllOrgCandidates), Just(BulkScope::AllOrgEmployees)]
            .prop_map(|scope| BulkQuery::Scope { scope }),
    ];
    prop_oneof![
        id().prop_map(|user| DataSubject::Employee { user }),
        id().prop_map(|candidate| DataSubject::Candidate { candidate }),
        (any::<Option<u64>>(), query)
            .prop_map(|(bulk_count, query)| DataSubject::Bulk { bulk_count, query }),
    ]
}

prop_compose! {
    fn privacy_audit_log()(
        id in id(),
        access_time in timestamp(),
        account in any::<u128>(),
        ip_addresses in texts(),
        data_subject in data_subject(),
        access_data in prop::collection::vec(
            prop_oneof![Just(AccessData::Name), Just(AccessData::EmailAddress), Just(AccessData::PhoneNumber)],
            0..4,
        ),
        access_menu in text(),
        access_menu_path in text(),
        activity_category in open::<ActivityCategory>(ActivityCategory::KNOWN),
    ) -> PrivacyAuditLog {
        PrivacyAuditLog {
            id, access_time, account_id: AccountId::from_uuid(Uuid::from_u128(account)),
            ip_addresses, data_subject, access_data, access_menu, access_menu_path, activity_category,
            purpose: None,
        }
    }
}

prop_compose! {
    fn job()(
        id in id(),
        name in text(),
        status in prop_oneof![Just(JobStatus::Draft), Just(JobStatus::Open), Just(JobStatus::Closed)],
        confidential in any::<bool>(),
        locations in texts(),
        hiring_team in prop::collection::vec(
            (open::<HiringTeamRole>(HiringTeamRole::KNOWN), id(), text())
                .prop_map(|(role, id, name)| HiringTeamMember { role, user: UserRef { id, name } }),
            0..4,
        ),
        ats in (open::<AtsType>(AtsType::KNOWN), text()).prop_map(|(kind, id)| Ats { kind, id }),
        created_at in timestamp(),
        updated_at in timestamp(),
        app_url in text(),
        flags in any::<[bool; 24]>(),
        levels in prop::array::uniform3(open::<SettingLevel>(SettingLevel::KNOWN)),
        default_task_queue_id in id(),
        process in (text(), text(), open::<RemoteProcessStatus>(RemoteProcessStatus::KNOWN)),
        locale in text(),
        stages in prop::collection::vec((id(), text()), 0..5),
    ) -> Job {
        let [l0, l1, l2] = levels;
        let f = flags;
        Job {
            id, name, status, confidential, locations, hiring_team, ats, created_at, updated_at, app_url,
            settings: JobSettings {
                interview_name_setting: InterviewNameSetting {
                    is_custom: f[0], show_interview_name: f[1], is_locked: f[2], level: l0,
                },
                interviewer_info_setting: InterviewerInfoSetting {
                    is_custom: f[3], can_show_info: f[4], can_show_full_name: f[5], can_show_job_title: f[6],
                    can_show_linkedin: f[7], can_show_email: f[8], can_show_profile_picture: f[9],
                    can_show_pronouns: f[10], can_show_bio: f[11], is_locked: f[12], level: l1,
                },
                recruiting_team_contact_info_setting: RecruitingTeamContactInfoSetting {
                    is_custom: f[13], show_recruiter: f[14], show_coordinator: f[15], can_show_job_title: f[16],
                    can_show_linkedin: f[17], can_show_profile_picture: f[18], can_show_pronouns: f[19],
                    can_show_bio: f[20], can_show_phone: f[21], is_locked: f[22], level: l2,
                },
                default_task_queue_id,
                remote_ats_hiring_process: RemoteAtsHiringProcess { ats_id: process.0, name: process.1, status: process.2 },
                locale,
            },
            job_stages: stages.into_iter().zip(0..).map(|((id, name), position)| JobStage { id, name, position }).collect(),
        }
    }
}

fn load_limit() -> impl Strategy<Value = LoadLimit> {
    (any::<i32>(), open::<LoadLimitType>(LoadLimitType::KNOWN), any::<i32>(), any::<i32>())
        .prop_map(|(limit, kind, interviews, minutes)| LoadLimit {
            maximum: MaximumLoad { limit, kind },
            minimum: MinimumLoad { interviews, minutes },
        })
}

prop_compose! {
    fn organization()(
        id in id(),
        name in text(),
        domain in text(),
        work_hours in prop::collection::vec(
            (open::<Weekday>(Weekday::KNOWN), text(), text()).prop_map(|(day, start, end)| WorkHours { day, start, end }),
            0..8,
        ),
        daily in load_limit(),
        weekly in load_limit(),
        buffer in any::<(i32, i32)>(),
        feedback_writing_time_minutes in any::<i32>(),
        keywords in (texts(), texts(), texts(), texts()),
        app_url in text(),
        sources in prop::array::uniform4(prop::sample::select(FieldSource::ALL.to_vec())),
        scheduling_defaults in scheduling_defaults(),
    ) -> Organization {
        Organization {
            id, name, domain, app_url, scheduling_defaults,
            profile_field_sources: ProfileFieldSources {
                name: sources[0], title: sources[1], manager: sources[2], linkedin_url: sources[3],
            },
            settings: OrganizationSettings {
                work_hours,
                interviewer_load_limits: InterviewerLoadLimits { daily, weekly },
                interview_buffer: InterviewBuffer { before_minutes: buffer.0, after_minutes: buffer.1 },
                feedback_writing_time_minutes,
                conflict_keywords: ConflictKeywords {
                    out_of_office: keywords.0, avoid: keywords.1, available_if_needed: keywords.2,
                    recruiting_block: keywords.3,
                },
            },
        }
    }
}

fn scheduling_defaults() -> impl Strategy<Value = SchedulingDefaults> {
    (any::<[bool; 20]>()).prop_map(|f| SchedulingDefaults {
        interview_name_setting: OrgDefault {
            values: InterviewNameValues { show_interview_name: f[0] },
            is_locked: f[1],
        },
        interviewer_info_setting: OrgDefault {
            values: InterviewerInfoValues {
                can_show_info: f[2],
                can_show_full_name: f[3],
                can_show_job_title: f[4],
                can_show_linkedin: f[5],
                can_show_email: f[6],
                can_show_profile_picture: f[7],
                can_show_pronouns: f[8],
                can_show_bio: f[9],
            },
            is_locked: f[10],
        },
        recruiting_team_contact_info_setting: OrgDefault {
            values: ContactInfoValues {
                show_recruiter: f[11],
                show_coordinator: f[12],
                can_show_job_title: f[13],
                can_show_linkedin: f[14],
                can_show_profile_picture: f[15],
                can_show_pronouns: f[16],
                can_show_bio: f[17],
                can_show_phone: f[18],
            },
            is_locked: f[19],
        },
    })
}

fn overrides() -> impl Strategy<Value = SchedulingOverrides> {
    (scheduling_defaults(), any::<[bool; 3]>()).prop_map(|(d, some)| SchedulingOverrides {
        interview_name_setting: some[0].then_some(d.interview_name_setting.values),
        interviewer_info_setting: some[1].then_some(d.interviewer_info_setting.values),
        recruiting_team_contact_info_setting: some[2]
            .then_some(d.recruiting_team_contact_info_setting.values),
    })
}

fn round_trips<T>(value: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let json = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&json).unwrap();
    prop_assert_eq!(&back, value, "through {}", json);
    Ok(())
}

proptest! {
    #[test]
    fn privacy_audit_logs_round_trip(pages in prop::collection::vec(privacy_audit_log(), 0..4), cursor in any::<Option<String>>()) {
        for entry in &pages {
            round_trips(entry)?;
        }
        round_trips(&Page { data: pages, pagination: Pagination { next_cursor: cursor } })?;
    }

    #[test]
    fn jobs_round_trip(job in job()) {
        round_trips(&job)?;
    }

    #[test]
    fn organizations_round_trip(org in organization()) {
        round_trips(&org)?;
    }

    /// The resolution rule, setting by setting: a locked default is never overridden; an
    /// unlocked one always yields to an override; `is_custom`, `level` and `is_locked` always
    /// say where the values came from.
    #[test]
    fn a_locked_default_holds_an_override_wins_otherwise_and_the_setting_says_which(
        defaults in scheduling_defaults(),
        job in overrides(),
    ) {
        let (name, info, contact) = defaults.resolve(&job);
        fn check<V: PartialEq + std::fmt::Debug + Copy>(
            default: OrgDefault<V>,
            job: Option<V>,
            (values, is_custom, is_locked, level): (V, bool, bool, SettingLevel),
        ) -> Result<(), TestCaseError> {
            prop_assert_eq!(is_locked, default.is_locked, "is_locked is the default's lock");
            match job {
                Some(own) if !default.is_locked => {
                    prop_assert_eq!(values, own, "an unlocked default yields to the override");
                    prop_assert!(is_custom && level == SettingLevel::Job);
                }
                _ => {
                    prop_assert_eq!(values, default.values, "a locked or not overridden default holds");
                    prop_assert!(!is_custom && level == SettingLevel::Org);
                }
            }
            Ok(())
        }
        check(defaults.interview_name_setting, job.interview_name_setting,
              (name.values(), name.is_custom, name.is_locked, name.level.clone()))?;
        check(defaults.interviewer_info_setting, job.interviewer_info_setting,
              (info.values(), info.is_custom, info.is_locked, info.level.clone()))?;
        check(defaults.recruiting_team_contact_info_setting, job.recruiting_team_contact_info_setting,
              (contact.values(), contact.is_custom, contact.is_locked, contact.level.clone()))?;
    }

    /// A job that overrides nothing has exactly its organization's defaults.
    #[test]
    fn a_job_without_overrides_has_the_defaults(defaults in scheduling_defaults()) {
        let (name, info, contact) = defaults.resolve(&SchedulingOverrides::default());
        prop_assert_eq!(name.values(), defaults.interview_name_setting.values);
        prop_assert_eq!(info.values(), defaults.interviewer_info_setting.values);
        prop_assert_eq!(contact.values(), defaults.recruiting_team_contact_info_setting.values);
    }

    /// A resolved setting kept (values, is_custom, is_locked) reads back as resolved: the level
    /// follows from whose values they are.
    #[test]
    fn a_kept_resolution_reads_back_as_resolved(
        defaults in scheduling_defaults(),
        job in overrides(),
    ) {
        let (name, info, contact) = defaults.resolve(&job);
        prop_assert_eq!(
            InterviewNameSetting::from_resolved(Resolved::kept(name.values(), name.is_custom, name.is_locked)),
            name
        );
        prop_assert_eq!(
            InterviewerInfoSetting::from_resolved(Resolved::kept(info.values(), info.is_custom, info.is_locked)),
            info
        );
        prop_assert_eq!(
            RecruitingTeamContactInfoSetting::from_resolved(
                Resolved::kept(contact.values(), contact.is_custom, contact.is_locked)
            ),
            contact
        );
    }

    #[test]
    fn user_profiles_round_trip(
        id in any::<u128>(),
        name in text(),
        role in prop::sample::select(Role::ALL.to_vec()),
        title in prop::option::of(text()),
        manager in prop::option::of(any::<u128>()),
        linkedin_url in prop::option::of(text()),
        (created_at, updated_at) in (timestamp(), timestamp()),
        etag in text(),
    ) {
        let profile = UserProfile {
            id: UserId::from_uuid(Uuid::from_u128(id)),
            email: format!("{name}@example.com"),
            name,
            role,
            title,
            manager: manager.map(|m| UserId::from_uuid(Uuid::from_u128(m))),
            linkedin_url,
            created_at,
            updated_at,
            app_url: "https://app.example/users/x".into(),
            etag,
        };
        round_trips(&profile)?;
        let json = serde_json::to_value(&profile).unwrap();
        for nullable in ["title", "manager", "linkedin_url"] {
            prop_assert!(json.get(nullable).is_some(), "{} is always present, null or not", nullable);
        }
    }

    #[test]
    fn timestamps_in_any_offset_mean_the_same_instant(t in timestamp(), offset_minutes in -1439i32..=1439) {
        let offset = chrono::FixedOffset::east_opt(offset_minutes * 60).unwrap();
        let local = t.as_datetime().with_timezone(&offset).to_rfc3339();
        // Offsets can carry an instant near the ends of the range outside four-digit years.
        if let Ok(parsed) = local.parse::<Timestamp>() {
            prop_assert_eq!(parsed, t, "{}", local);
        }
        prop_assert_eq!(t.to_string().parse::<Timestamp>(), Ok(t));
        let s = t.to_string();
        prop_assert!(s.ends_with('Z') && (s.len() == 20 || s.len() == 27), "{}", s);
    }
}
