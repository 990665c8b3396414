//! The explanation of a download (소명) on a real (SQLite) store, the mail recorded: a
//! reviewer asks, the person who downloaded gets a one-time link that opens only their
//! explanation page, explains once, and the reviewer accepts; and sign-in links by e-mail,
//! answered alike for any address.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use recruit_adapters_sqlite::testkit::TestStore;
use recruit_domain::model::{ActivityCategory, Role};
use recruit_domain::{AccountId, ErrorCode, OrganizationId, Scope, Timestamp, Uuid};
use recruit_ports::ImportDocument;
use recruit_ports::testkit::{ORG_A, ledger_entry, user_id};
use recruit_service::console::SignIn;
use recruit_service::cursor::CursorKey;
use recruit_service::mail::{Mail, MailConfig, Mailer, Sending};
use recruit_service::{
    Arguments, Identity, Operation, OperationKind, Outcome, RequestContext, Service, ServiceConfig,
    ServiceError, Via,
};
use serde_json::json;

/// A mailer that keeps what it is given.
#[derive(Default)]
struct Outbox(Mutex<Vec<Mail>>);

impl Mailer for Outbox {
    fn send(&self, mail: Mail) -> Sending<'_> {
        self.0.lock().unwrap().push(mail);
        Box::pin(async { Ok(()) })
    }
}

impl Outbox {
    fn taken(&self) -> Vec<Mail> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// The value of `name` in the first link of `text`.
fn link_value(text: &str, name: &str) -> String {
    let link = text.split_whitespace().find(|w| w.starts_with("https://")).expect("a link");
    let query = link.split_once('?').unwrap().1;
    let pair = query.split('&').find_map(|p| p.strip_prefix(&format!("{name}="))).unwrap();
    pair.to_owned()
}

struct World {
    service: Arc<Service>,
    outbox: Arc<Outbox>,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let TestStore { store, dir } = TestStore::world().await;
    let mut config =
        ServiceConfig::new("https://app.example.com", CursorKey::new(&[1; 32]).unwrap());
    let outbox = Arc::new(Outbox::default());
    let mailer: Arc<dyn Mailer> = outbox.clone();
    config.mail = Some(MailConfig { mailer, base_url: "https://review.example".into() });
    let service = Arc::new(Service::new(Arc::new(store), config));
    World { service, outbox, _dir: dir }
}

async fn token(w: &World, role: Role, scopes: &[Scope]) -> String {
    let org = OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let user = user_id(ORG_A, role);
    w.service.create_token(org, user, "t".into(), scopes.to_vec(), None).await.unwrap().1
}

/// Runs `kind` at `path` with `body` as the holder of `identity`.
async fn put(
    w: &World,
    identity: Identity,
    kind: OperationKind,
    path: [(&str, String); 2],
    body: serde_json::Value,
) -> Result<serde_json::Value, ServiceError> {
    let mut arguments = Arguments::rest(kind);
    for (name, value) in path {
        arguments.path(name, value);
    }
    arguments.body(body.to_string().into_bytes());
    let operation = Operation::parse(kind, arguments)?;
    let context = RequestContext { request_id: "req".into(), client_ip: None, via: Via::Rest };
    let done = w.service.run(Duration::from_secs(10), identity, context, operation).await?;
    match done.outcome {
        Outcome::DownloadReview(r) => Ok(serde_json::to_value(r).unwrap()),
        other => panic!("{other:?}"),
    }
}

fn bearer(secret: &str) -> Identity {
    Identity::Secret(Some(secret.to_owned()))
}

/// The member's download is asked about by the owner: the member is e-mailed a link that
/// opens their explanation page and nothing else, explains once through it, and the owner
/// accepts; the review holds every step in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_is_explained_through_the_mailed_link_and_accepted() {
    let w = world().await;
    let member = user_id(ORG_A, Role::Member);
    let at: Timestamp = "2026-10-14T13:10:00Z".parse().unwrap();
    let mut download = ledger_entry(ORG_A, 900, at);
    download.entry.activity_category = ActivityCategory::Download;
    download.entry.account_id = AccountId::from_uuid(member.uuid());
    let doc = ImportDocument { privacy_audit_logs: vec![download.clone()], ..Default::default() };
    w.service.store().import(&doc).await.unwrap();
    let entry = download.entry.id.to_string();
    let path = || [("month", "2026-10".to_owned()), ("entryId", entry.clone())];
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead, Scope::AuditLogsReview]).await;

    let review = OperationKind::ReviewPrivacyAccessDownload;
    let ask = json!({"status": "EXPLANATION_REQUESTED", "reason": "누구에게 보냈습니까?"});
    let asked = put(&w, bearer(&owner), review, path(), ask).await.unwrap();
    assert_eq!(asked["notice"], "E-mailed to member@org-a.example.", "{asked}");
    let due: Timestamp = asked["due_at"].as_str().unwrap().parse().unwrap();
    let asked_at: Timestamp = asked["reviewed_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(due.unix_micros() - asked_at.unix_micros(), 7 * 86_400 * 1_000_000);
    let mails = w.outbox.taken();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to, "member@org-a.example");
    assert!(mails[0].text.contains("누구에게 보냈습니까?"), "{}", mails[0].text);
    assert!(mails[0].text.contains("https://review.example/console/explain?month=2026-10&entry="));
    let link = link_value(&mails[0].text, "link");
    assert!(link.starts_with("rce_"), "{link}");

    // The link opens neither the API nor the console's sign-in.
    let me = OperationKind::GetMe;
    let refused = w.service.authenticate(Some(&link), None).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::Unauthenticated);
    let operation = Operation::parse(me, Arguments::rest(me)).unwrap();
    let context = RequestContext { request_id: "r".into(), client_ip: None, via: Via::Rest };
    let refused = w.service.run(Duration::from_secs(5), bearer(&link), context, operation).await;
    assert_eq!(refused.unwrap_err().code, ErrorCode::Unauthenticated);
    let refused = w
        .service
        .open_console_session(SignIn::Link(&link), &RequestContext::rest("t", None))
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::Unauthenticated);

    // It opens the member's explanation page, with the question.
    let caller = w.service.explanation_link(&link, None).await.unwrap();
    assert_eq!(caller.user.id, member);
    let page = w.service.explanation_page(&caller, "2026-10", &entry).await.unwrap();
    assert!(page.open());
    assert_eq!(page.download.question().unwrap().reason, "누구에게 보냈습니까?");
    assert_eq!(page.asked_by.as_ref().map(|p| p.id), Some(user_id(ORG_A, Role::Owner)));

    // Only the member explains, once.
    let explain = OperationKind::ExplainPrivacyAccessDownload;
    let text = json!({"explanation": "The hiring committee asked for the packet."});
    let by_owner = put(&w, bearer(&owner), explain, path(), text.clone()).await.unwrap_err();
    assert_eq!(by_owner.code, ErrorCode::Conflict, "{by_owner:?}");
    let holder = Identity::Authenticated(Box::new(caller.clone()));
    let explained = put(&w, holder, explain, path(), text.clone()).await.unwrap();
    assert_eq!(explained["status"], "EXPLAINED");
    assert_eq!(explained["reviewed_by"], member.to_string());
    w.service.spend_explanation_link(&caller).await.unwrap();
    let spent = w.service.explanation_link(&link, None).await.unwrap_err();
    assert_eq!(spent.code, ErrorCode::Unauthenticated, "the link is spent");
    let member_token = token(&w, Role::Member, &[]).await;
    let retried = put(&w, bearer(&member_token), explain, path(), text).await.unwrap();
    assert_eq!(retried, explained, "the same explanation again is the one kept (a retry)");
    let other = json!({"explanation": "Something else."});
    let again = put(&w, bearer(&member_token), explain, path(), other).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::Conflict, "answered once");

    // The owner accepts it; the review holds each step.
    let accept = json!({"status": "CONFIRMED", "reason": "Explained and checked."});
    let accepted = put(&w, bearer(&owner), review, path(), accept).await.unwrap();
    assert!(accepted.get("notice").is_none());
    let org = OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let month = "2026-10".parse().unwrap();
    let reviewed =
        recruit_service::review::review(w.service.store().as_ref(), org, month).await.unwrap();
    let seen = &reviewed.downloads[0];
    let steps: Vec<&str> = seen.history.iter().map(|h| h.status.as_str()).collect();
    assert_eq!(steps, ["EXPLANATION_REQUESTED", "EXPLAINED", "CONFIRMED"]);
    assert_eq!(seen.explanation().unwrap().reason, "The hiring committee asked for the packet.");
    assert!(reviewed.person(member.uuid()).is_some(), "the one who explained is named");
    assert!(w.outbox.taken().is_empty(), "accepting e-mails nobody");
}

/// A sign-in link asked for by address reaches an owner's mailbox and signs in once; an
/// unknown address, or a member's, gets the same answer and no mail; an address's quota ends
/// the sending, not the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_link_is_mailed_to_owners_alone_and_answered_alike() {
    let w = world().await;
    let wait = || tokio::time::sleep(Duration::from_millis(300));
    w.service.email_sign_in_link("OWNER@org-a.example", None).unwrap();
    w.service.email_sign_in_link("nobody@org-a.example", None).unwrap();
    w.service.email_sign_in_link("member@org-a.example", None).unwrap();
    wait().await;
    let mails = w.outbox.taken();
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert_eq!(mails[0].to, "owner@org-a.example");
    assert!(mails[0].text.contains("https://review.example/console/sign-in?link=rcl_"));
    let link = link_value(&mails[0].text, "link");
    let opened =
        w.service.open_console_session(SignIn::Link(&link), &RequestContext::rest("t", None)).await;
    assert!(opened.is_ok(), "{opened:?}");
    let again = w
        .service
        .open_console_session(SignIn::Link(&link), &RequestContext::rest("t", None))
        .await
        .unwrap_err();
    assert_eq!(again.code, ErrorCode::Unauthenticated, "once");

    for _ in 0..5 {
        w.service.email_sign_in_link("owner@org-a.example", None).unwrap();
    }
    wait().await;
    let limit = recruit_service::limits::MAILED_LINKS_PER_HOUR as usize;
    assert_eq!(w.outbox.taken().len(), limit - 1, "the address's quota ends the sending");
}
