//! The operations on a real (SQLite) store, loaded with the ports' test world: authentication,
//! the order of checks, validation reported all at once, pagination with signed cursors,
//! cross-organization probes, the audit ledgers, and the confidential-job rule.

use std::sync::Arc;

use recruit_adapters_sqlite::SqliteStore;
use recruit_adapters_sqlite::testkit::TestStore;
use recruit_domain::model::Role;
use recruit_domain::{ErrorCode, OrganizationId, Scope, Timestamp, Uuid};
use recruit_ports::testkit::{ORG_A, ORG_B, job_id, t, user_id, world};
use recruit_ports::{AuditListQuery, Import, Interface, Ledgers, Tokens};
use recruit_service::cursor::CursorKey;
use recruit_service::{
    Caller, Identity, ListParams, Operation, Outcome, RequestContext, Service, ServiceConfig,
    ServiceError, Via,
};

/// The operations one by one, run through [`Service::execute`] as an authenticated caller.
trait Operations {
    async fn list_privacy_audit_logs(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: ListParams,
    ) -> Result<recruit_domain::Page<recruit_domain::PrivacyAuditLog>, ServiceError>;
    async fn get_job(
        &self,
        caller: &Caller,
        params: recruit_service::GetJobParams,
    ) -> Result<recruit_domain::Job, ServiceError>;
    async fn get_organization(
        &self,
        caller: &Caller,
        problems: Vec<recruit_domain::ErrorDetail>,
    ) -> Result<recruit_domain::Organization, ServiceError>;
}

impl Operations for Service {
    async fn list_privacy_audit_logs(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: ListParams,
    ) -> Result<recruit_domain::Page<recruit_domain::PrivacyAuditLog>, ServiceError> {
        let operation = Operation::ListPrivacyAuditLogs(params);
        match self
            .execute(Identity::Authenticated(Box::new(caller.clone())), context, operation)
            .await?
        {
            recruit_service::Done { outcome: Outcome::PrivacyAuditLogs(page), .. } => Ok(page),
            other => panic!("a list returned {other:?}"),
        }
    }

    async fn get_job(
        &self,
        caller: &Caller,
        params: recruit_service::GetJobParams,
    ) -> Result<recruit_domain::Job, ServiceError> {
        let operation = Operation::GetJob(params);
        match self
            .execute(Identity::Authenticated(Box::new(caller.clone())), &rest(), operation)
            .await?
        {
            recruit_service::Done { outcome: Outcome::Job(job), .. } => Ok(job),
            other => panic!("a job read returned {other:?}"),
        }
    }

    async fn get_organization(
        &self,
        caller: &Caller,
        problems: Vec<recruit_domain::ErrorDetail>,
    ) -> Result<recruit_domain::Organization, ServiceError> {
        let operation = Operation::GetOrganization(recruit_service::NoParams { problems });
        match self
            .execute(Identity::Authenticated(Box::new(caller.clone())), &rest(), operation)
            .await?
        {
            recruit_service::Done { outcome: Outcome::Organization(o), .. } => Ok(o),
            other => panic!("an organization read returned {other:?}"),
        }
    }
}

struct World {
    service: Service,
    store: SqliteStore,
    _dir: tempfile::TempDir,
}

async fn world_service() -> World {
    let TestStore { store, dir } = TestStore::world().await;
    let config = ServiceConfig::new("https://app.example.com/", CursorKey::new(&[9; 32]).unwrap());
    World { service: Service::new(Arc::new(store.clone()), config), store, _dir: dir }
}

fn org(n: u128) -> OrganizationId {
    OrganizationId::from_uuid(Uuid::from_u128(n))
}

/// The secret of a new token of `role` in `organization` with `scopes`.
async fn bearer(w: &World, organization: u128, role: Role, scopes: &[Scope]) -> String {
    let (_, secret) = w
        .service
        .create_token(
            org(organization),
            user_id(organization, role),
            "test".into(),
            scopes.to_vec(),
            None,
        )
        .await
        .unwrap();
    secret
}

async fn caller(w: &World, organization: u128, role: Role, scopes: &[Scope]) -> Caller {
    let secret = bearer(w, organization, role, scopes).await;
    w.service.authenticate(Some(&secret), None).await.unwrap()
}

fn rest() -> RequestContext {
    RequestContext {
        request_id: "req-1".into(),
        client_ip: Some(std::net::Ipv4Addr::LOCALHOST.into()),
        via: Via::Rest,
    }
}

fn params(gte: &str, lt: &str) -> ListParams {
    ListParams {
        timestamp_gte: Some(gte.into()),
        timestamp_lt: Some(lt.into()),
        ..ListParams::default()
    }
}

fn everything() -> ListParams {
    params("2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z")
}

fn job(id: impl ToString) -> recruit_service::GetJobParams {
    recruit_service::GetJobParams { job_id: id.to_string(), problems: vec![] }
}

fn code<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> ErrorCode {
    result.expect_err("the operation must fail").code
}

fn details(result: Result<impl std::fmt::Debug, ServiceError>) -> Vec<(String, String)> {
    let e = result.expect_err("the operation must fail");
    assert_eq!(e.code, ErrorCode::ValidationFailed, "{e:?}");
    e.details
        .iter()
        .map(|d| (d.get("field").unwrap().to_owned(), d.get("reason").unwrap().to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_live_token_authenticates() {
    let w = world_service().await;
    let good = bearer(&w, ORG_A, Role::Owner, &Scope::ALL).await;
    let caller = w.service.authenticate(Some(&good), None).await.unwrap();
    assert_eq!((caller.user.role, caller.token.organization_id), (Role::Owner, org(ORG_A)));
    for secret in [
        None,
        Some(String::new()),
        Some(format!("Bearer {good}")),
        Some("rtk_short".to_owned()),
        Some(format!("{}x", &good[..good.len() - 1])),
    ] {
        let result = w.service.authenticate(secret.as_deref(), None).await;
        assert_eq!(code(result), ErrorCode::Unauthenticated, "{secret:?}");
    }
    // Revoked: refused from then on.
    w.store.revoke_token(caller.token.id, Timestamp::now()).await.unwrap();
    assert_eq!(code(w.service.authenticate(Some(&good), None).await), ErrorCode::Unauthenticated);
    // Expired: refused.
    let (_, expired) = w
        .service
        .create_token(
            org(ORG_A),
            user_id(ORG_A, Role::Owner),
            "old".into(),
            Scope::ALL.to_vec(),
            Some(t(0)),
        )
        .await
        .unwrap();
    assert_eq!(
        code(w.service.authenticate(Some(&expired), None).await),
        ErrorCode::Unauthenticated
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_run_in_order_scope_then_permission_then_validation() {
    let w = world_service().await;
    let invalid = ListParams { limit: Some("0".into()), ..ListParams::default() };
    let no_scope = caller(&w, ORG_A, Role::Owner, &[Scope::JobsRead]).await;
    let e =
        w.service.list_privacy_audit_logs(&no_scope, &rest(), invalid.clone()).await.unwrap_err();
    assert_eq!(
        (e.code, e.required_scope),
        (ErrorCode::InsufficientScope, Some(Scope::AuditLogsRead))
    );
    for role in [Role::Admin, Role::Member] {
        let not_owner = caller(&w, ORG_A, role, &Scope::ALL).await;
        let result = w.service.list_privacy_audit_logs(&not_owner, &rest(), invalid.clone()).await;
        assert_eq!(code(result), ErrorCode::PermissionDenied, "{role:?}");
    }
    let owner = caller(&w, ORG_A, Role::Owner, &Scope::ALL).await;
    let result = w.service.list_privacy_audit_logs(&owner, &rest(), invalid).await;
    assert_eq!(code(result), ErrorCode::ValidationFailed);
    // A job: scope, then validation, then existence, then access.
    let jobs_only = caller(&w, ORG_A, Role::Member, &[Scope::AuditLogsRead]).await;
    assert_eq!(
        code(w.service.get_job(&jobs_only, job("nonsense")).await),
        ErrorCode::InsufficientScope
    );
    let member = caller(&w, ORG_B, Role::Member, &[Scope::JobsRead]).await;
    assert_eq!(
        code(w.service.get_job(&member, job("nonsense")).await),
        ErrorCode::ValidationFailed
    );
    let missing = job_id(ORG_B, 99).to_string();
    assert_eq!(code(w.service.get_job(&member, job(missing)).await), ErrorCode::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_validation_problem_is_reported_at_once() {
    let w = world_service().await;
    let owner = caller(&w, ORG_A, Role::Owner, &Scope::ALL).await;
    let context = rest();
    let list = |p: ListParams| w.service.list_privacy_audit_logs(&owner, &context, p);
    assert_eq!(
        details(list(ListParams::default()).await),
        [
            ("timestamp_gte".into(), "is required".into()),
            ("timestamp_lt".into(), "is required".into())
        ]
    );
    let all_wrong = ListParams {
        timestamp_gte: Some("2026-01-01".into()),
        timestamp_lt: Some("2026-01-01T00:00:00Z".into()),
        limit: Some("101".into()),
        ids: Some(vec![
            "pal_123".into(),
            String::new(),
            "can_0190c7d8e4a27cc3b1f0a2d4e6f80011".into(),
        ]),
        cursor: Some("whatever".into()),
        problems: vec![recruit_domain::ErrorDetail::field(
            "sort",
            "is not a parameter of this operation",
        )],
        ..ListParams::default()
    };
    let got = details(list(all_wrong).await);
    let fields: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(fields, ["sort", "timestamp_gte", "limit", "ids", "ids", "ids"]);
    assert!(got[1].1.contains("RFC 3339"), "{got:?}");
    assert_eq!(got[2].1, "must be an integer from 1 to 100");
    assert_eq!(
        got[3].1,
        "value 1 has 7 characters; a privacy audit log ID has 32 hexadecimal digits, or 36 characters as a dashed UUID, either optionally after `pal_`"
    );
    assert_eq!(got[4].1, "value 2 is empty; expected a privacy audit log ID");
    assert_eq!(
        got[5].1,
        "value 3 has the prefix `can_`, but a privacy audit log ID takes `pal_` or no prefix"
    );

    assert_eq!(
        details(list(params("2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z")).await),
        [("timestamp_lt".into(), "must be later than timestamp_gte".into())]
    );
    assert_eq!(
        details(list(params("2025-01-01T00:00:00Z", "2026-01-02T00:00:01Z")).await),
        [("timestamp_lt".into(), "must be at most 366 days after timestamp_gte".into())]
    );
    let too_many = ListParams { ids: Some(vec!["x".into(); 101]), ..everything() };
    assert_eq!(
        details(list(too_many).await),
        [("ids".into(), "must hold at most 100 IDs; 101 were given".into())]
    );
    let none = ListParams { ids: Some(vec![]), ..everything() };
    assert_eq!(details(list(none).await), [("ids".into(), "must hold at least one ID".into())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_walk_the_ledger_with_cursors_bound_to_their_filters() {
    let w = world_service().await;
    let owner = caller(&w, ORG_A, Role::Owner, &Scope::ALL).await;
    let context = rest();
    let list = |p: ListParams| w.service.list_privacy_audit_logs(&owner, &context, p);
    let all = list(ListParams { limit: Some("100".into()), ..everything() }).await.unwrap();
    assert_eq!((all.data.len(), all.pagination.next_cursor.as_deref()), (12, None));

    // Pages of 5, then 3 (a limit may change between pages), across equal access times.
    let mut seen = vec![];
    let mut cursor = None;
    for limit in ["5", "3", "3", "3"] {
        let page =
            list(ListParams { limit: Some(limit.into()), cursor: cursor.clone(), ..everything() })
                .await
                .unwrap();
        seen.extend(page.data.iter().map(|e| e.id));
        cursor = page.pagination.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen, all.data.iter().map(|e| e.id).collect::<Vec<_>>());
    assert!(cursor.is_none(), "no cursor after the last entry");

    let first = list(ListParams { limit: Some("2".into()), ..everything() }).await.unwrap();
    let next = first.pagination.next_cursor.unwrap();
    // Changed filters, another organization, tampering: INVALID_CURSOR.
    let changed = ListParams {
        cursor: Some(next.clone()),
        ..params("2026-01-01T00:00:00Z", "2026-06-02T00:00:00Z")
    };
    assert_eq!(code(list(changed).await), ErrorCode::InvalidCursor);
    let owner_b = caller(&w, ORG_B, Role::Owner, &Scope::ALL).await;
    let stolen = w
        .service
        .list_privacy_audit_logs(
            &owner_b,
            &rest(),
            ListParams { cursor: Some(next.clone()), ..everything() },
        )
        .await;
    assert_eq!(code(stolen), ErrorCode::InvalidCursor);
    let tampered = format!("{}A", &next[..next.len() - 1]);
    assert_eq!(
        code(list(ListParams { cursor: Some(tampered), ..everything() }).await),
        ErrorCode::InvalidCursor
    );
    // The same ids in another order are the same filter.
    let ids: Vec<String> = all.data.iter().take(4).map(|e| e.id.to_string()).collect();
    let mut reversed = ids.clone();
    reversed.reverse();
    let page =
        list(ListParams { ids: Some(ids), limit: Some("2".into()), ..everything() }).await.unwrap();
    let rest_of =
        ListParams { ids: Some(reversed), cursor: page.pagination.next_cursor, ..everything() };
    assert_eq!(list(rest_of).await.unwrap().data.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_successful_read_is_recorded_and_failed_ones_are_not() {
    let w = world_service().await;
    let owner = caller(&w, ORG_A, Role::Owner, &Scope::ALL).await;
    w.service
        .list_privacy_audit_logs(
            &owner,
            &rest(),
            ListParams { limit: Some("5".into()), ..everything() },
        )
        .await
        .unwrap();
    let tool = RequestContext {
        request_id: "req-2".into(),
        client_ip: None,
        via: Via::Tool {
            name: "list_privacy_audit_logs".into(),
            arguments: serde_json::json!({"limit": 100}),
        },
    };
    w.service.list_privacy_audit_logs(&owner, &tool, everything()).await.unwrap();
    let _ = w
        .service
        .list_privacy_audit_logs(&owner, &rest(), ListParams::default())
        .await
        .unwrap_err();
    let member = caller(&w, ORG_A, Role::Member, &Scope::ALL).await;
    let _ = w.service.list_privacy_audit_logs(&member, &rest(), everything()).await.unwrap_err();

    let all = AuditListQuery { organization_id: None, limit: 10 };
    let api = w.store.api_audit_entries(&all).await.unwrap();
    let summary: Vec<(Interface, u32, &str)> =
        api.iter().map(|e| (e.interface, e.entries_returned, e.request_id.as_str())).collect();
    assert_eq!(summary, [(Interface::Tool, 12, "req-2"), (Interface::Rest, 5, "req-1")]);
    assert_eq!(api[1].filters["limit"], 5);
    assert_eq!(api[1].client_ip.as_deref(), Some("127.0.0.1"));
    assert_eq!((api[1].token_id, api[1].user_id), (owner.token.id, owner.user.id));
    let tools = w.store.tool_audit_entries(&all).await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(
        (tools[0].tool_name.as_str(), tools[0].entries_returned),
        ("list_privacy_audit_logs", 12)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_are_read_in_their_organization_and_confidential_ones_by_few() {
    let w = world_service().await;
    // Job 1 is open to the organization; job 2 is confidential, with A's member and owner on
    // its team.
    let (open, confidential) = (job_id(ORG_A, 1).to_string(), job_id(ORG_A, 2).to_string());
    for role in Role::ALL {
        let c = caller(&w, ORG_A, role, &[Scope::JobsRead]).await;
        let read =
            w.service.get_job(&c, job(open.to_uppercase().replacen("JOB_", "", 1))).await.unwrap();
        assert_eq!(read.app_url, format!("https://app.example.com/jobs/{open}"));
        assert!(w.service.get_job(&c, job(&confidential)).await.is_ok(), "{role:?}");
    }
    // B's admin may read confidential jobs of B, never anything of A.
    let admin_b = caller(&w, ORG_B, Role::Admin, &[Scope::JobsRead]).await;
    assert_eq!(code(w.service.get_job(&admin_b, job(&open)).await), ErrorCode::NotFound);
    assert_eq!(code(w.service.get_job(&admin_b, job(&confidential)).await), ErrorCode::NotFound);
    // B's job 2 has B's member on its team; B's job 1 does not, but is not confidential.
    let member_b = caller(&w, ORG_B, Role::Member, &[Scope::JobsRead]).await;
    assert!(w.service.get_job(&member_b, job(job_id(ORG_B, 2))).await.is_ok());
    // A member not on a confidential job's team is refused; the error says why.
    let mut doc = recruit_ports::ImportDocument::default();
    doc.users.push(recruit_domain::User {
        id: recruit_domain::UserId::from_uuid(Uuid::from_u128(0xA0A0)),
        organization_id: org(ORG_A),
        name: "Outsider".into(),
        email: "outsider@org-a.example".into(),
        role: Role::Member,
        manager: None,
        ..recruit_ports::testkit::world_user(ORG_A, Role::Member)
    });
    w.store.import(&doc).await.unwrap();
    let (_, secret) = w
        .service
        .create_token(
            org(ORG_A),
            recruit_domain::UserId::from_uuid(Uuid::from_u128(0xA0A0)),
            "x".into(),
            vec![Scope::JobsRead],
            None,
        )
        .await
        .unwrap();
    let outsider = w.service.authenticate(Some(&secret), None).await.unwrap();
    let e = w.service.get_job(&outsider, job(&confidential)).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PermissionDenied);
    assert!(w.service.get_job(&outsider, job(&open)).await.is_ok());
    let e = w.service.get_job(&outsider, job("job_123")).await.unwrap_err();
    assert_eq!(e.details[0].get("field"), Some("jobId"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_organization_is_the_tokens() {
    let w = world_service().await;
    let c = caller(&w, ORG_B, Role::Member, &[Scope::OrganizationRead]).await;
    let o = w.service.get_organization(&c, vec![]).await.unwrap();
    assert_eq!((o.id, o.app_url.as_str()), (org(ORG_B), "https://app.example.com/organization"));
    let no_scope = caller(&w, ORG_B, Role::Owner, &[Scope::JobsRead]).await;
    let e = w.service.get_organization(&no_scope, vec![]).await.unwrap_err();
    assert_eq!(
        (e.code, e.required_scope),
        (ErrorCode::InsufficientScope, Some(Scope::OrganizationRead))
    );
}

#[test]
fn store_failures_become_retryable_codes_without_internals() {
    use recruit_ports::StoreError;
    let e =
        ServiceError::from(StoreError::Unavailable("connection refused (10.0.0.5:5432)".into()));
    assert_eq!(
        (e.code.clone(), e.retry_after),
        (ErrorCode::Unavailable, Some(std::time::Duration::from_secs(1)))
    );
    assert!(
        !e.message.contains("10.0.0.5")
            && e.cause.as_deref().is_some_and(|c| c.contains("10.0.0.5"))
    );
    assert_eq!(ServiceError::from(StoreError::Timeout).code, ErrorCode::UpstreamTimeout);
    let e = ServiceError::from(StoreError::other("duplicate key value violates unique constraint"));
    assert_eq!(e.code, ErrorCode::Internal);
    assert!(!e.message.contains("duplicate"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn problems_found_by_the_transport_are_reported_after_authorization() {
    let w = world_service().await;
    let unknown = || {
        vec![recruit_domain::ErrorDetail::field("expand", "is not a parameter of this operation")]
    };
    let no_scope = caller(&w, ORG_A, Role::Owner, &[Scope::AuditLogsRead]).await;
    assert_eq!(
        code(w.service.get_organization(&no_scope, unknown()).await),
        ErrorCode::InsufficientScope
    );
    let c = caller(&w, ORG_A, Role::Member, &Scope::ALL).await;
    assert_eq!(
        details(w.service.get_organization(&c, unknown()).await),
        [("expand".into(), "is not a parameter of this operation".into())]
    );
    let params = recruit_service::GetJobParams { job_id: "bad".into(), problems: unknown() };
    let fields: Vec<String> =
        details(w.service.get_job(&c, params).await).into_iter().map(|(f, _)| f).collect();
    assert_eq!(fields, ["expand", "jobId"]);
}

/// Runs a profile change as `caller`.
async fn update(
    w: &World,
    caller: &Caller,
    user: impl ToString,
    if_match: Option<&str>,
    patch: serde_json::Value,
) -> Result<recruit_domain::model::UserProfile, ServiceError> {
    let operation = Operation::UpdateUser(recruit_service::UpdateUserParams {
        user_id: user.to_string(),
        if_match: if_match.map(str::to_owned),
        body: Some(patch.to_string().into_bytes()),
        problems: vec![],
    });
    let credential = Identity::Authenticated(Box::new(caller.clone()));
    match w.service.execute(credential, &rest(), operation).await? {
        recruit_service::Done { outcome: Outcome::User(profile), .. } => Ok(profile),
        other => panic!("a profile change returned {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_change_is_checked_in_the_documented_order() {
    let w = world_service().await;
    let all = [Scope::UsersRead, Scope::UsersWrite];
    let owner_b = caller(&w, ORG_B, Role::Owner, &all).await;
    let member_b = caller(&w, ORG_B, Role::Member, &all).await;
    let owner_a = caller(&w, ORG_A, Role::Owner, &all).await;
    let reader = caller(&w, ORG_B, Role::Owner, &[Scope::UsersRead]).await;
    let (admin, member) = (user_id(ORG_B, Role::Admin), user_id(ORG_B, Role::Member));
    let missing = recruit_domain::UserId::from_uuid(Uuid::from_u128(0xdead));
    let synced = serde_json::json!({"name": "N", "nickname": 1});
    // The scope before anything else.
    assert_eq!(
        code(update(&w, &reader, missing, None, synced.clone()).await),
        ErrorCode::InsufficientScope
    );
    // The input before existence: every problem at once.
    let problems = details(update(&w, &owner_b, missing, Some("nope"), synced.clone()).await);
    let fields: Vec<&str> = problems.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(fields, ["If-Match", "nickname"]);
    // Existence before access: another organization's user is not found.
    assert_eq!(
        code(update(&w, &member_b, missing, None, serde_json::json!({})).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(update(&w, &owner_a, member, None, serde_json::json!({})).await),
        ErrorCode::NotFound
    );
    // Access before the sync's fields: a member changes only themselves.
    let name = serde_json::json!({"name": "N"});
    assert_eq!(
        code(update(&w, &member_b, admin, None, name.clone()).await),
        ErrorCode::PermissionDenied
    );
    // The sync's fields before the precondition, each listed even when unchanged.
    let stored = world().users.into_iter().find(|u| u.id == member).unwrap();
    let same = serde_json::json!({"title": stored.title, "manager": null, "name": stored.name});
    let e = update(&w, &member_b, member, Some("\"stale\""), same).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::CannotUpdateSyncManagedFields);
    let listed: Vec<_> = e.details.iter().map(|d| (d.get("field"), d.get("source"))).collect();
    assert_eq!(listed, [(Some("name"), Some("SCIM")), (Some("title"), Some("DIRECTORY"))]);
    // The precondition before the manager.
    let cycle = serde_json::json!({"manager": member.to_string()});
    assert_eq!(
        code(update(&w, &owner_b, admin, Some("\"stale\""), cycle.clone()).await),
        ErrorCode::Conflict
    );
    let e = update(&w, &owner_b, admin, Some("*"), cycle).await.unwrap_err();
    assert!(e.code == ErrorCode::Conflict && e.message.contains("cycle"), "{e:?}");

    // A patch that changes nothing keeps the version, and is still recorded.
    let before = update(&w, &member_b, member, None, serde_json::json!({})).await.unwrap();
    assert_eq!((before.updated_at, &before.etag), (stored.updated_at, &before.etag));
    let again = update(
        &w,
        &member_b,
        member,
        Some(&before.etag),
        serde_json::json!({"linkedin_url": null}),
    )
    .await
    .unwrap();
    assert_eq!(again.etag, before.etag, "the LinkedIn URL was null already");
    let changed =
        update(&w, &owner_b, member, Some(&before.etag), serde_json::json!({"manager": null}))
            .await
            .unwrap();
    assert!(changed.updated_at > before.updated_at && changed.etag != before.etag);
    assert_eq!(changed.manager, None);
    assert_eq!(changed.app_url, format!("https://app.example.com/users/{member}"));
}

/// The test world in a SQLite store that fails on demand, and the directory holding it.
async fn faulty_world() -> (Arc<recruit_ports::faulty::Faulty<SqliteStore>>, tempfile::TempDir) {
    let TestStore { store, dir } = TestStore::world().await;
    (Arc::new(recruit_ports::faulty::Faulty::new(store)), dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_is_not_returned_when_its_read_cannot_be_recorded() {
    let (faulty, _dir) = faulty_world().await;
    let config = ServiceConfig::new("https://app.example.com/", CursorKey::new(&[9; 32]).unwrap());
    let service = Service::new(faulty.clone(), config);
    let (_, secret) = service
        .create_token(
            org(ORG_A),
            user_id(ORG_A, Role::Owner),
            "t".into(),
            vec![Scope::UsersRead],
            None,
        )
        .await
        .unwrap();
    let caller = service.authenticate(Some(&secret), None).await.unwrap();
    faulty.set_after_authentication(recruit_ports::faulty::Fault::Unavailable);
    let operation = Operation::GetUser(recruit_service::GetUserParams {
        user_id: user_id(ORG_A, Role::Member).to_string(),
        problems: vec![],
    });
    let result =
        service.execute(Identity::Authenticated(Box::new(caller)), &rest(), operation).await;
    assert_eq!(code(result), ErrorCode::Unavailable);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_take_turns_and_one_that_waits_too_long_writes_nothing() {
    use recruit_ports::faulty::Fault;
    let (faulty, _dir) = faulty_world().await;
    let mut config =
        ServiceConfig::new("https://app.example.com/", CursorKey::new(&[9; 32]).unwrap());
    config.batch_writes =
        recruit_service::BatchWrites { at_once: 1, wait: std::time::Duration::from_millis(300) };
    let service = Arc::new(Service::new(faulty.clone(), config));
    let (_, secret) = service
        .create_token(
            org(ORG_A),
            user_id(ORG_A, Role::Owner),
            "t".into(),
            vec![Scope::AuditLogsWrite, Scope::AuditLogsRead],
            None,
        )
        .await
        .unwrap();
    let caller = service.authenticate(Some(&secret), None).await.unwrap();
    let batch = |key: &str, menu: &str| {
        let entry = recruit_ports::testkit::access_entry(menu);
        Operation::RecordPrivacyAccesses(recruit_service::RecordParams {
            idempotency_key: Some(key.into()),
            body: Some(serde_json::json!({ "entries": [entry] }).to_string().into_bytes()),
            problems: vec![],
        })
    };
    let run = |operation: Operation| {
        let service = Arc::clone(&service);
        let caller = Identity::Authenticated(Box::new(caller.clone()));
        tokio::spawn(async move { service.execute(caller, &rest(), operation).await })
    };
    // The first batch takes its turn and is slow to write; the second waits longer than it
    // may, and is refused with nothing claimed nor written.
    faulty.set_after_authentication(Fault::Slow(std::time::Duration::from_millis(600)));
    let first = run(batch("first", "People"));
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let started = std::time::Instant::now();
    let refused = run(batch("second", "Payroll")).await.unwrap().expect_err("no turn");
    assert_eq!(refused.code, ErrorCode::Unavailable, "{refused:?}");
    assert!(refused.retry_after.is_some(), "{refused:?}");
    assert!(started.elapsed() < std::time::Duration::from_millis(600), "{:?}", started.elapsed());
    assert!(first.await.unwrap().is_ok(), "the batch in its turn is written");
    faulty.set(Fault::None);
    let hour = |sign: i64| {
        Timestamp::from_unix_micros(Timestamp::now().unix_micros() + sign * 3_600_000_000)
            .unwrap()
            .to_string()
    };
    let window = params(&hour(-1), &hour(1));
    let written = |menu: &'static str| {
        let (service, caller, window) = (Arc::clone(&service), caller.clone(), window.clone());
        async move {
            let page = service.list_privacy_audit_logs(&caller, &rest(), window).await.unwrap();
            page.data.iter().filter(|e| e.access_menu == menu).count()
        }
    };
    assert_eq!((written("People").await, written("Payroll").await), (1, 0));
    // Its key was never claimed: the same request is written when sent again.
    assert!(run(batch("second", "Payroll")).await.unwrap().is_ok());
    assert_eq!(written("Payroll").await, 1);
}
