//! The review console's sessions on a real (SQLite) store: who may sign in, by token or by a
//! one-time link, and every way a session ends.

use std::sync::Arc;
use std::time::Duration;

use recruit_adapters_sqlite::SqliteStore;
use recruit_adapters_sqlite::testkit::TestStore;
use recruit_domain::model::Role;
use recruit_domain::{ErrorCode, OrganizationId, Scope, Uuid};
use recruit_ports::Tokens;
use recruit_ports::testkit::{ORG_A, user_id};
use recruit_service::console::{SessionLimits, SignIn, sign_in_link};
use recruit_service::cursor::CursorKey;
use recruit_service::{Service, ServiceConfig, ServiceError};

struct World {
    service: Service,
    store: SqliteStore,
    _dir: tempfile::TempDir,
}

async fn world(limits: SessionLimits) -> World {
    let TestStore { store, dir } = TestStore::world().await;
    let mut config =
        ServiceConfig::new("https://app.example.com", CursorKey::new(&[1; 32]).unwrap());
    config.console_sessions = limits;
    World { service: Service::new(Arc::new(store.clone()), config), store, _dir: dir }
}

async fn token(w: &World, role: Role, scopes: &[Scope]) -> String {
    let org = OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let user = user_id(ORG_A, role);
    w.service.create_token(org, user, "t".into(), scopes.to_vec(), None).await.unwrap().1
}

fn code<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> ErrorCode {
    result.expect_err("an error").code
}

/// The API ledger's entries of `operation`, newest first: what they say (their filters) and
/// whose request it was.
async fn recorded(w: &World, operation: &str) -> Vec<(serde_json::Value, String)> {
    let query = recruit_ports::AuditListQuery { organization_id: None, limit: 100 };
    let entries = recruit_ports::Ledgers::api_audit_entries(&w.store, &query).await.unwrap();
    let ours = entries.into_iter().filter(|e| e.operation == operation);
    ours.map(|e| (e.filters, e.request_id)).collect()
}

/// An owner's token with `audit_logs:read` opens a session that acts as it, with a CSRF token
/// of its own; a member's token, or one without the scope, opens none; signing out ends it.
/// Each sign-in and the sign-out are on the API ledger's record; refusals are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owners_token_opens_a_session_that_acts_through_it_until_signed_out() {
    let w = world(SessionLimits::DEFAULT).await;
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead, Scope::AuditLogsReview]).await;
    let opened = w.service.open_console_session(SignIn::Token(&owner), &context()).await.unwrap();
    assert!(opened.secret.starts_with("rcs_"));
    let session = w.service.console_caller(&opened.secret, None).await.unwrap();
    let pasted = w.service.authenticate(Some(&owner), None).await.unwrap();
    assert_eq!(session.caller.token.id, pasted.token.id, "the session acts through the token");
    let again = w.service.console_caller(&opened.secret, None).await.unwrap();
    assert_eq!(session.csrf, again.csrf);
    let other = w.service.open_console_session(SignIn::Token(&owner), &context()).await.unwrap();
    assert_ne!(w.service.console_caller(&other.secret, None).await.unwrap().csrf, session.csrf);

    let member = token(&w, Role::Member, &[Scope::AuditLogsRead]).await;
    let refused = w.service.open_console_session(SignIn::Token(&member), &context()).await;
    assert_eq!(code(refused), ErrorCode::PermissionDenied);
    let jobs = token(&w, Role::Owner, &[Scope::JobsRead]).await;
    let refused = w.service.open_console_session(SignIn::Token(&jobs), &context()).await;
    assert_eq!(code(refused), ErrorCode::InsufficientScope);
    let refused = w.service.open_console_session(SignIn::Token("rtk_nope"), &context()).await;
    assert_eq!(code(refused), ErrorCode::Unauthenticated);

    let sign_ins = recorded(&w, "consoleSignIn").await;
    assert_eq!(sign_ins.len(), 2, "two sessions opened: {sign_ins:?}");
    assert_eq!(sign_ins[0].0["method"], "TOKEN");
    assert_eq!(sign_ins[0].1, "console-test");
    w.service.end_console_session(&opened.secret, &context()).await.unwrap();
    w.service.end_console_session(&opened.secret, &context()).await.unwrap();
    let sign_outs = recorded(&w, "consoleSignOut").await;
    assert_eq!(sign_outs.len(), 1, "signed out once: {sign_outs:?}");
    assert_eq!(sign_outs[0].0["session_id"], sign_ins[1].0["session_id"], "the first session");
    let ended = w.service.console_caller(&opened.secret, None).await;
    assert_eq!(code(ended), ErrorCode::Unauthenticated);
    assert!(w.service.console_caller(&other.secret, None).await.is_ok(), "others go on");
    let forged = w.service.console_caller(&owner, None).await;
    assert_eq!(code(forged), ErrorCode::Unauthenticated, "an API token is no session");
}

/// Revoking the pasted token ends its sessions at once, for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ends_at_once_when_its_token_is_revoked() {
    let w = world(SessionLimits::DEFAULT).await;
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead]).await;
    let opened = w.service.open_console_session(SignIn::Token(&owner), &context()).await.unwrap();
    let caller = w.service.console_caller(&opened.secret, None).await.unwrap().caller;
    w.store.revoke_token(caller.token.id, recruit_domain::Timestamp::now()).await.unwrap();
    let over = w.service.console_caller(&opened.secret, None).await;
    assert_eq!(code(over), ErrorCode::Unauthenticated);
    let hash = recruit_service::auth::hash_secret(&opened.secret);
    let stored = w.store.console_session(&hash).await.unwrap().session;
    assert!(stored.ended_at.is_some(), "the session is ended, not only refused");
}

/// A session ends after its idle time without use, and after its longest time whatever its use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ends_when_idle_and_when_it_reaches_its_longest() {
    let idle =
        SessionLimits { idle: Duration::from_millis(300), longest: Duration::from_secs(3600) };
    let w = world(idle).await;
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead]).await;
    let opened = w.service.open_console_session(SignIn::Token(&owner), &context()).await.unwrap();
    assert!(w.service.console_caller(&opened.secret, None).await.is_ok());
    tokio::time::sleep(Duration::from_millis(400)).await;
    let over = w.service.console_caller(&opened.secret, None).await.unwrap_err();
    assert_eq!(over.code, ErrorCode::Unauthenticated);
    assert!(over.message.contains("without use"), "{}", over.message);

    let short =
        SessionLimits { idle: Duration::from_secs(3600), longest: Duration::from_millis(300) };
    let w = world(short).await;
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead]).await;
    let opened = w.service.open_console_session(SignIn::Token(&owner), &context()).await.unwrap();
    for _ in 0..3 {
        assert!(w.service.console_caller(&opened.secret, None).await.is_ok());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let over = w.service.console_caller(&opened.secret, None).await.unwrap_err();
    assert!(over.message.contains("longest"), "{}", over.message);
}

/// A link is made for an owner only; its first sign-in spends it and gets a session with a
/// token of its own holding the console's scopes (the review's and the log streams'); a second
/// sign-in with it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_link_opens_one_session_only() {
    let w = world(SessionLimits::DEFAULT).await;
    let owner = user_id(ORG_A, Role::Owner);
    let link = sign_in_link(&w.store, owner, Duration::from_secs(900)).await.unwrap();
    let opened = w.service.open_console_session(SignIn::Link(&link), &context()).await.unwrap();
    let session = w.service.console_caller(&opened.secret, None).await.unwrap();
    assert_eq!(session.caller.user.id, owner);
    let scopes = [Scope::AuditLogsRead, Scope::AuditLogsReview, Scope::LogStreamsAdmin];
    assert_eq!(session.caller.token.scopes, scopes, "the review and the log streams' page");
    assert_eq!(session.caller.token.name, "console session");
    let spent = w.service.open_console_session(SignIn::Link(&link), &context()).await;
    assert_eq!(code(spent), ErrorCode::Unauthenticated);
    let sign_ins = recorded(&w, "consoleSignIn").await;
    assert_eq!(sign_ins.len(), 1, "one sign-in: {sign_ins:?}");
    assert_eq!(sign_ins[0].0["method"], "LINK");
    let member =
        sign_in_link(&w.store, user_id(ORG_A, Role::Member), Duration::from_secs(900)).await;
    assert_eq!(code(member), ErrorCode::PermissionDenied);
}

/// A link's secret opens the console's link sign-in and nothing else: the API and the tools
/// refuse it (it travels in e-mail, chat and browser history), and so does the sign-in by a
/// pasted token; an API token is no link either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_links_secret_is_no_api_token() {
    let w = world(SessionLimits::DEFAULT).await;
    let owner = user_id(ORG_A, Role::Owner);
    let link = sign_in_link(&w.store, owner, Duration::from_secs(900)).await.unwrap();
    assert!(link.starts_with("rcl_"), "{link}");
    assert_eq!(code(w.service.authenticate(Some(&link), None).await), ErrorCode::Unauthenticated);
    let pasted = w.service.open_console_session(SignIn::Token(&link), &context()).await;
    assert_eq!(code(pasted), ErrorCode::Unauthenticated);
    let api = token(&w, Role::Owner, &[Scope::AuditLogsRead]).await;
    let as_link = w.service.open_console_session(SignIn::Link(&api), &context()).await;
    assert_eq!(code(as_link), ErrorCode::Unauthenticated);
    w.service
        .open_console_session(SignIn::Link(&link), &context())
        .await
        .expect("the link still works");
}

/// Where the test's requests come from.
fn context() -> recruit_service::RequestContext {
    recruit_service::RequestContext::rest("console-test", None)
}
