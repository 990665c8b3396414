//! What the server e-mails, through a real SMTP server (mailin-embedded) the test starts: a
//! request for an explanation reaches the person who downloaded with a one-time link that
//! opens their explanation page in the console, once; an owner's sign-in link asked for by
//! address arrives and signs in once.

use std::net::TcpListener;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use mailin_embedded::{Handler, Response, response};
use recruit_domain::AccountId;
use recruit_domain::model::{ActivityCategory, Role};
use recruit_ports::testkit::{ORG_A, ledger_entry, user_id, world};

use crate::common::{Server, cli, form, header, send, token};

/// The messages the SMTP server took, whole (headers and body).
#[derive(Clone, Default)]
struct Mailbox {
    received: Arc<Mutex<Vec<String>>>,
    current: Vec<u8>,
}

impl Handler for Mailbox {
    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.current.extend_from_slice(buf);
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        let message = String::from_utf8_lossy(&std::mem::take(&mut self.current)).into_owned();
        self.received.lock().unwrap().push(message);
        response::OK
    }
}

impl Mailbox {
    /// Starts an SMTP server on a free port; returns the mailbox and the port.
    fn start() -> (Self, u16) {
        let mailbox = Self::default();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut server = mailin_embedded::Server::new(mailbox.clone());
        server.with_name("mail.test").with_tcp_listener(listener);
        std::thread::spawn(move || {
            if let Err(e) = server.serve() {
                panic!("the SMTP server stopped: {e}");
            }
        });
        (mailbox, port)
    }

    /// The next message, its body decoded: waits up to 10 s.
    fn next(&self) -> (String, String) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(message) = {
                let mut received = self.received.lock().unwrap();
                (!received.is_empty()).then(|| received.remove(0))
            } {
                return decoded(&message);
            }
            assert!(Instant::now() < deadline, "no e-mail within 10 s");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }
}

/// A message's headers and its body, decoded from base64 or quoted-printable.
fn decoded(message: &str) -> (String, String) {
    let (headers, body) = message.split_once("\r\n\r\n").unwrap();
    let encoding = headers.to_ascii_lowercase();
    let body = if encoding.contains("content-transfer-encoding: base64") {
        let joined: String = body.split_whitespace().collect();
        let bytes = base64::engine::general_purpose::STANDARD.decode(joined).unwrap();
        String::from_utf8(bytes).unwrap()
    } else if encoding.contains("content-transfer-encoding: quoted-printable") {
        let joined = body.replace("=\r\n", "");
        let mut bytes = vec![];
        let mut rest = joined.as_bytes();
        while let Some((&b, tail)) = rest.split_first() {
            if b == b'=' && tail.len() >= 2 {
                let hex = std::str::from_utf8(&tail[..2]).unwrap();
                bytes.push(u8::from_str_radix(hex, 16).unwrap());
                rest = &tail[2..];
            } else {
                bytes.push(b);
                rest = tail;
            }
        }
        String::from_utf8(bytes).unwrap()
    } else {
        body.to_owned()
    };
    (headers.to_owned(), body)
}

/// The path and query of the first link to `base` in `text`.
fn link_in(text: &str, base: &str) -> String {
    let link = text.split_whitespace().find(|w| w.starts_with(base)).expect("a link");
    link[base.len()..].to_owned()
}

/// The officer asks the member about a download: the member is e-mailed through the SMTP
/// server a link to their explanation page, explains there once (the link is then spent, and
/// never opened the API), and the review shows the explanation; an owner asks for a sign-in
/// link by address and signs in with it once, while an unknown address gets the same answer
/// and no mail.
#[test]
fn the_explanation_and_sign_in_links_go_by_mail_and_work_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("recruitd.db").display());
    let member = user_id(ORG_A, Role::Member);
    let mut document = world();
    let mut download = ledger_entry(ORG_A, 990, "2026-10-14T13:10:00Z".parse().unwrap());
    download.entry.activity_category = ActivityCategory::Download;
    download.entry.account_id = AccountId::from_uuid(member.uuid());
    document.privacy_audit_logs.push(download.clone());
    let path = dir.path().join("world.json");
    std::fs::write(&path, serde_json::to_string(&document).unwrap()).unwrap();
    cli(&url, &["import", path.to_str().unwrap()]);
    let owner = token(&url, ORG_A, Role::Owner, "audit_logs:read,audit_logs:review");

    let (mailbox, smtp) = Mailbox::start();
    let smtp_url = format!("smtp://127.0.0.1:{smtp}");
    let args = ["--smtp-url", &smtp_url, "--smtp-from", "Privacy review <privacy@acme.example>"];
    let server = Server::spawn(&url, &args, "warn", Stdio::inherit());
    let base = server.url();
    let entry = download.entry.id.to_string();

    let decide = format!("/v1/audit-logs/privacy/reviews/2026-10/downloads/{entry}");
    let bearer = format!("Bearer {owner}");
    let json = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
    let ask = r#"{"status": "EXPLANATION_REQUESTED", "reason": "누구에게 보냈습니까?"}"#;
    let (status, _, body) = send(&server, "PUT", &decide, &json, ask);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("E-mailed to member@"), "{body}");
    let (headers, text) = mailbox.next();
    assert!(headers.contains("From: \"Privacy review\" <privacy@acme.example>"), "{headers}");
    assert!(headers.contains("To: ") && headers.contains("member@"), "{headers}");
    assert!(text.contains("누구에게 보냈습니까?"), "{text}");
    let page = link_in(&text, &base);
    assert!(page.starts_with("/console/explain?month=2026-10&entry="), "{page}");
    let secret = page.split("link=").nth(1).unwrap().to_owned();

    // The link opens no API.
    let (status, _, _) = server.request("GET", "/v1/me", Some(&secret));
    assert_eq!(status, 401, "an explanation link is no bearer token");

    // It opens the explanation page; the explanation is sent from it once.
    let (status, _, html) = server.request_raw("GET", &page, None);
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("누구에게 보냈습니까?") && html.contains("Send the explanation"));
    let origin = base.as_str();
    let posted = form(&[
        ("link", &secret),
        ("month", "2026-10"),
        ("entry", &entry),
        ("explanation", "채용위원회 검토 자료로 보냈습니다."),
    ]);
    let headers = [("Origin", origin), ("Content-Type", "application/x-www-form-urlencoded")];
    let (status, _, html) = send(&server, "POST", "/console/explain", &headers, &posted);
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("your explanation is recorded"), "{html}");
    let (status, _, html) = send(&server, "POST", "/console/explain", &headers, &posted);
    assert_eq!(status, 401, "the link is spent: {html}");
    let (status, _, html) = server.request_raw("GET", &page, None);
    assert_eq!(status, 401, "{html}");

    let (status, _, review) =
        server.request("GET", "/v1/audit-logs/privacy/reviews/2026-10", Some(&owner));
    assert_eq!(status, 200);
    let seen = review["downloads"].as_array().unwrap().iter().find(|d| d["id"] == entry.as_str());
    let seen = seen.expect("the download is reviewed");
    assert_eq!(seen["status"], "EXPLAINED");
    assert_eq!(seen["history"][1]["reason"], "채용위원회 검토 자료로 보냈습니다.");
    assert_eq!(seen["history"][1]["reviewed_by"], member.to_string());

    // A sign-in link by e-mail: the same answer for any address, mail only to an owner.
    let owner_user = user_id(ORG_A, Role::Owner);
    let owner_email = document.users.iter().find(|u| u.id == owner_user).unwrap().email.clone();
    let mut answers = vec![];
    for email in ["nobody@example.com", owner_email.as_str()] {
        let (status, _, html) =
            send(&server, "POST", "/console/sign-in/email", &headers, &form(&[("email", email)]));
        assert_eq!(status, 200);
        answers.push(html.split("<main").nth(1).unwrap().to_owned());
    }
    assert_eq!(answers[0], answers[1], "the same page whether the address is known or not");
    let (_, text) = mailbox.next();
    let page = link_in(&text, &base);
    assert!(page.starts_with("/console/sign-in?link=rcl_"), "{page}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(mailbox.count(), 0, "nothing for the unknown address");
    let secret = page.split("link=").nth(1).unwrap();
    let sign_in = form(&[("link", secret)]);
    let (status, response_headers, _) =
        send(&server, "POST", "/console/sign-in", &headers, &sign_in);
    assert_eq!((status, header(&response_headers, "location")), (303, "/console/overview"));
    let (status, _, _) = send(&server, "POST", "/console/sign-in", &headers, &sign_in);
    assert_eq!(status, 401, "a sign-in link works once");
    server.stop();
}
