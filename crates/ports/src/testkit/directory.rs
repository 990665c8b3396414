//! Contract cases of the directory: organizations, users and the changes to their profiles,
//! jobs with their hiring teams, settings and stages.

use recruit_domain::model::*;
use recruit_domain::{IdFilter, JobStageId, User, UserId};

use crate::{ImportDocument, LedgerEntry, PrivacyLogQuery, ProfileUpdate, Store, StoreError};

use super::{
    ORG_A, ORG_B, assert_invalid, assert_not_found, assert_nothing_written, b_defaults,
    futures_join_all, id, job, job_id, ledger_entry, loaded, org_id, organization, query, read,
    stage_id, t, user_id, world, world_user,
};

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

    // Many at once: the organization's, by id, each once; others and unknown ones left out.
    let a = org_id(ORG_A);
    let mut of_a: Vec<&User> = world.users.iter().filter(|u| u.organization_id == a).collect();
    of_a.sort_by_key(|u| u.id);
    let mut ids: Vec<UserId> = world.users.iter().map(|u| u.id).rev().collect();
    ids.extend([id(0xdead), of_a[0].id]);
    let found = store.users(a, &ids).await.unwrap();
    assert_eq!(found.iter().collect::<Vec<_>>(), of_a);
    assert!(store.users(a, &[]).await.unwrap().is_empty());
    // More ids than one statement binds on SQLite.
    let many: Vec<UserId> = (1..40_000).map(id).chain([of_a[0].id]).collect();
    assert_eq!(store.users(a, &many).await.unwrap(), [of_a[0].clone()]);

    // By e-mail address, in any organization, the address's case ignored.
    let owner: &User = of_a.iter().find(|u| u.role == recruit_domain::Role::Owner).unwrap();
    assert_eq!(store.users_by_email(&owner.email).await.unwrap(), std::slice::from_ref(owner));
    let shouted = owner.email.to_uppercase();
    assert_eq!(store.users_by_email(&shouted).await.unwrap(), std::slice::from_ref(owner));
    assert!(store.users_by_email("nobody@org-a.example").await.unwrap().is_empty());
    assert!(store.users_by_email("%").await.unwrap().is_empty(), "no pattern matching");
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
    assert_eq!(store.read_user(member.id, &entry).await.unwrap(), member);
    assert!(ledger_holds(store, &entry, 1).await);
    let other = profile_entry(ORG_B, 61, member.id, ActivityCategory::Read);
    assert_not_found(store.read_user(member.id, &other).await, "other org");
    assert!(!ledger_holds(store, &other, 2).await, "a failed read is not recorded");
    let missed = profile_entry(ORG_A, 62, id(0xdead), ActivityCategory::Read);
    assert_not_found(store.read_user(id(0xdead), &missed).await, "missing user");
    assert!(!ledger_holds(store, &missed, 2).await, "a failed read is not recorded");
    // An entry that cannot be written fails the read.
    let result = store.read_user(member.id, &entry).await;
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

/// Users are provisioned: created, found by `userName` (their e-mail address standing for a
/// missing one, case ignored) and by `externalId`, paged by id, changed whole; a taken
/// `userName` is `Conflict`; the fields written become SCIM-managed; a deactivation ends every
/// credential of the user, and a removed user is no longer listed.
pub async fn users_are_provisioned_and_deactivation_ends_their_credentials(store: &dyn Store) {
    use crate::{ConsoleSession, NewApiToken, Provisioning, SecretHash, UserLookup};
    loaded(store).await;
    let org = org_id(ORG_A);
    let owner = world_user(ORG_A, Role::Owner);
    let all = store.provisioned_users(org, &UserLookup::All, 0, 100).await.unwrap();
    assert_eq!((all.0.len(), all.1), (3, 3), "{all:?}");
    let by_email = UserLookup::UserName(owner.email.to_uppercase());
    assert_eq!(
        store.provisioned_users(org, &by_email, 0, 10).await.unwrap(),
        (vec![owner.clone()], 1)
    );

    let new = User {
        id: id(0x5C1),
        name: "Provisioned".into(),
        email: "p@org-a.example".into(),
        role: Role::Member,
        title: Some("Engineer".into()),
        manager: Some(owner.id),
        linkedin_url: None,
        created_at: t(50),
        updated_at: t(50),
        status: UserStatus::Active,
        user_name: Some("Pat.Provisioned".into()),
        external_id: Some("00u-okta-1".into()),
        organization_id: org,
    };
    let entry = profile_entry(ORG_A, 70, new.id, ActivityCategory::Create);
    let create = Provisioning {
        user: new.clone(),
        create: true,
        managed: vec![ProfileField::Name, ProfileField::Title],
        ends_credentials: false,
        entry: entry.clone(),
    };
    assert_eq!(store.provision_user(&create).await.unwrap(), new);
    assert_eq!(store.user(org, new.id).await.unwrap(), new);
    assert!(ledger_holds(store, &entry, 1).await);
    let sources = store.organization(org).await.unwrap().profile_field_sources;
    assert_eq!((sources.name, sources.title), (FieldSource::Scim, FieldSource::Scim));
    assert_eq!(sources.manager, FieldSource::Api, "only the fields written");
    for lookup in [
        UserLookup::UserName("pat.provisioned".into()),
        UserLookup::ExternalId("00u-okta-1".into()),
    ] {
        assert_eq!(
            store.provisioned_users(org, &lookup, 0, 10).await.unwrap(),
            (vec![new.clone()], 1)
        );
    }
    let none = UserLookup::ExternalId("00U-OKTA-1".into());
    assert_eq!(store.provisioned_users(org, &none, 0, 10).await.unwrap(), (vec![], 0), "exact");
    let (page, total) = store.provisioned_users(org, &UserLookup::All, 1, 2).await.unwrap();
    assert_eq!((page.len(), total), (2, 4));
    let elsewhere = UserLookup::UserName("pat.provisioned".into());
    let other = store.provisioned_users(org_id(ORG_B), &elsewhere, 0, 10).await.unwrap();
    assert_eq!(other, (vec![], 0), "another organization's");

    // A userName taken, its case aside: nothing is written.
    let twin = Provisioning {
        user: User { id: id(0x5C2), user_name: Some("PAT.provisioned".into()), ..new.clone() },
        entry: profile_entry(ORG_A, 71, id(0x5C2), ActivityCategory::Create),
        ..create.clone()
    };
    assert!(matches!(store.provision_user(&twin).await, Err(StoreError::Conflict(_))));
    assert!(!ledger_holds(store, &twin.entry, 2).await);
    assert_not_found(store.user(org, id(0x5C2)).await, "not stored");

    // Deactivated: every live credential of the user ends at the change; others stay.
    let token = |n: u128, user: UserId| NewApiToken {
        id: id(0x5C00 | n),
        organization_id: org,
        user_id: user,
        name: format!("token {n}"),
        scopes: vec![recruit_domain::Scope::JobsRead],
        secret_hash: SecretHash([u8::try_from(0x80 + n).unwrap_or(0); 32]),
        created_at: t(60),
        expires_at: None,
    };
    let mine = store.create_token(&token(1, new.id)).await.unwrap();
    let link = store.create_token(&token(2, new.id)).await.unwrap();
    let theirs = store.create_token(&token(3, owner.id)).await.unwrap();
    let session = ConsoleSession {
        id: recruit_domain::Uuid::from_u128(0x5C5),
        organization_id: org,
        user_id: new.id,
        token_id: mine.id,
        secret_hash: SecretHash([0x5C; 32]),
        created_at: t(61),
        last_seen_at: t(61),
        expires_at: t(61 + 3600),
        ended_at: None,
    };
    store.open_session(&session, &super::record(ORG_A, 55)).await.unwrap();
    store.revoke_token(link.id, t(62)).await.unwrap();
    let off = User { status: UserStatus::Deactivated, updated_at: t(70), ..new.clone() };
    let entry = profile_entry(ORG_A, 72, new.id, ActivityCategory::Update);
    let deactivate = Provisioning {
        user: off.clone(),
        create: false,
        managed: vec![],
        ends_credentials: true,
        entry: entry.clone(),
    };
    assert_eq!(store.provision_user(&deactivate).await.unwrap(), off);
    assert!(ledger_holds(store, &entry, 3).await);
    let held = store.credential(&mine.secret_hash).await.unwrap();
    assert_eq!((held.token.revoked_at, held.user.status), (Some(t(70)), UserStatus::Deactivated));
    let kept = store.credential(&link.secret_hash).await.unwrap().token.revoked_at;
    assert_eq!(kept, Some(t(62)), "an earlier revocation stays");
    assert_eq!(store.credential(&theirs.secret_hash).await.unwrap().token.revoked_at, None);
    let ended = store.console_session(&session.secret_hash).await.unwrap().session.ended_at;
    assert_eq!(ended, Some(t(70)));

    // Removed: no longer listed, its userName free again.
    let gone = Provisioning {
        user: User { status: UserStatus::Removed, updated_at: t(80), ..off },
        entry: profile_entry(ORG_A, 73, new.id, ActivityCategory::Delete),
        ..deactivate
    };
    store.provision_user(&gone).await.unwrap();
    let (all, total) = store.provisioned_users(org, &UserLookup::All, 0, 100).await.unwrap();
    assert!(all.iter().all(|u| u.id != new.id) && total == 3, "{all:?}");
    assert!(store.provision_user(&Provisioning { create: true, ..twin }).await.is_ok());
    let missing = Provisioning {
        user: User { id: id(0x5C3), ..new },
        create: false,
        entry: profile_entry(ORG_A, 74, id(0x5C3), ActivityCategory::Update),
        ..create
    };
    assert_not_found(store.provision_user(&missing).await, "a change of no user");
}

/// An organization's single sign-on settings are kept whole and removed; the organization's
/// other fields stay; an organization not stored is `NotFound`.
pub async fn single_sign_on_settings_are_kept_and_removed(store: &dyn Store) {
    loaded(store).await;
    let org = org_id(ORG_A);
    let before = store.organization(org).await.unwrap();
    assert_eq!(before.sso, None);
    let sso = crate::SsoSettings {
        issuer: "https://idp.example.com/realms/acme".into(),
        client_id: "recruitd".into(),
        client_secret: "s3cr3t".into(),
        user_claim: "email".into(),
        owner_groups: vec!["privacy-officers".into()],
        tokens_and_links: false,
    };
    let start = super::api_head(store, ORG_A).await;
    store.set_sso(org, Some(&sso), None).await.unwrap();
    assert_eq!(
        super::api_head(store, ORG_A).await,
        start,
        "an operator's change has no API record"
    );
    let after = store.organization(org).await.unwrap();
    assert_eq!(after.sso.as_ref(), Some(&sso));
    assert_eq!(OrganizationRecordWithout(after.clone()), OrganizationRecordWithout(before.clone()));
    assert_eq!(store.organization(org_id(ORG_B)).await.unwrap().sso, None, "one organization's");
    store.set_sso(org, None, Some(&super::record(ORG_A, 90))).await.unwrap();
    assert_eq!(store.organization(org).await.unwrap(), before);
    assert_eq!(super::api_head(store, ORG_A).await, start + 1, "the API's change is on the record");
    let refused = store.set_sso(id(0xdead), Some(&sso), Some(&super::record(ORG_A, 91))).await;
    assert_not_found(refused, "no organization");
    assert_eq!(
        super::api_head(store, ORG_A).await,
        start + 1,
        "nothing recorded for what was not written"
    );
}

/// An organization record compared without its single sign-on settings.
#[derive(Debug)]
struct OrganizationRecordWithout(crate::OrganizationRecord);

impl PartialEq for OrganizationRecordWithout {
    fn eq(&self, other: &Self) -> bool {
        let strip =
            |r: &crate::OrganizationRecord| crate::OrganizationRecord { sso: None, ..r.clone() };
        strip(&self.0) == strip(&other.0)
    }
}
