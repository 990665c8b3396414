//! The e-mail the server sends, and the seam a sender implements: a request for an
//! explanation to the person who downloaded, and a sign-in link to an owner who asked for one.
//! Each message is written in Korean and then in English, and carries a one-time link to one
//! page of the console (its path is declared here, the console routes by it). The binary's
//! SMTP sender implements [`Mailer`]; this crate sends nothing itself.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use recruit_domain::Timestamp;

/// The console's page where the person who downloaded explains a download, opened by the
/// e-mailed link (`?month=…&entry=…&link=…`).
pub const EXPLANATION_PAGE: &str = "/console/explain";

/// The console's sign-in page, which a sign-in link opens (`?link=…`).
pub const SIGN_IN_PAGE: &str = "/console/sign-in";

/// Every byte but RFC 3986's unreserved characters is percent-encoded in a link's query.
const UNRESERVED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// A message to one person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    /// Their name, as the directory keeps it.
    pub to_name: String,
    /// Their address.
    pub to: String,
    /// The subject.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
}

/// A future a [`Mailer`] returns.
pub type Sending<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// What sends the server's e-mail: the message handed to the mail server, or why not.
pub trait Mailer: Send + Sync + 'static {
    /// Sends `mail`, bounded in time by the sender.
    fn send(&self, mail: Mail) -> Sending<'_>;
}

/// How the server sends e-mail: the sender and the URL the links in it start with.
#[derive(Clone)]
pub struct MailConfig {
    /// The sender.
    pub mailer: Arc<dyn Mailer>,
    /// The URL browsers reach the server at (`https://host[:port]`).
    pub base_url: String,
}

impl std::fmt::Debug for MailConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailConfig").field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

impl MailConfig {
    /// The link to `page` with the query `pairs`, each value percent-encoded.
    pub fn link(&self, page: &str, pairs: &[(&str, &str)]) -> String {
        let query: Vec<String> = pairs
            .iter()
            .map(|(k, v)| {
                let v = percent_encoding::utf8_percent_encode(v, UNRESERVED);
                format!("{k}={v}")
            })
            .collect();
        format!("{}{page}?{}", self.base_url.trim_end_matches('/'), query.join("&"))
    }
}

/// What a request for an explanation says.
#[derive(Clone, Debug)]
pub struct ExplanationRequest<'a> {
    /// The organization's name.
    pub organization: &'a str,
    /// Who asks: the reviewer's name.
    pub reviewer: &'a str,
    /// When the download was, in the organization's time zone (`YYYY-MM-DD HH:MM`).
    pub downloaded_at: String,
    /// The time zone.
    pub time_zone: &'a str,
    /// Where in the product.
    pub menu_path: &'a str,
    /// The question.
    pub question: &'a str,
    /// When the explanation is due, in the organization's time zone (`YYYY-MM-DD`).
    pub due: String,
    /// The one-time link.
    pub link: String,
}

/// The message asking `to` (name, address) to explain a download.
pub fn explanation_request(to: (&str, &str), r: &ExplanationRequest<'_>) -> Mail {
    let (name, address) = to;
    let text = format!(
        "{name}님,\n\n\
         {org}의 개인정보 접속기록 점검에서 {reviewer}님이 아래 다운로드의 사유를 소명해 달라고 \
         요청했습니다. {due}까지 아래 링크에서 답해 주십시오. 링크는 한 번만 쓸 수 있으며, \
         다른 사람에게 전달하지 마십시오.\n\n\
         다운로드: {at} ({zone}), {menu}\n질문: {question}\n\n{link}\n\n\
         ----\n\n\
         {name},\n\n\
         In the privacy access review of {org}, {reviewer} asks you to explain why you made the \
         download below. Please answer by {due} at the link below. The link works once; do not \
         forward it.\n\n\
         Download: {at} ({zone}), {menu}\nQuestion: {question}\n\n{link}\n",
        org = r.organization,
        reviewer = r.reviewer,
        due = r.due,
        at = r.downloaded_at,
        zone = r.time_zone,
        menu = r.menu_path,
        question = r.question,
        link = r.link,
    );
    Mail {
        to_name: name.to_owned(),
        to: address.to_owned(),
        subject: "[recruitd] 다운로드 사유 소명 요청 · Please explain a download".to_owned(),
        text,
    }
}

/// The message giving `to` (name, address) a sign-in link to the console of `organization`,
/// valid until `expires` (as the message states it).
pub fn sign_in_link(to: (&str, &str), organization: &str, link: &str, minutes: u64) -> Mail {
    let (name, address) = to;
    let text = format!(
        "{name}님,\n\n\
         {organization}의 개인정보 접속기록 검토 콘솔에 로그인하는 링크입니다. {minutes}분 동안 \
         한 번만 쓸 수 있습니다. 요청한 적이 없다면 이 메일을 무시하십시오.\n\n{link}\n\n\
         ----\n\n\
         {name},\n\n\
         Here is your link to sign in to the privacy access review console of {organization}. \
         It works once, within {minutes} minutes. If you did not ask for it, ignore this \
         message.\n\n{link}\n",
    );
    Mail {
        to_name: name.to_owned(),
        to: address.to_owned(),
        subject: "[recruitd] 검토 콘솔 로그인 링크 · Your sign-in link".to_owned(),
        text,
    }
}

/// When a link for something due at `due` stops working: 30 days after the due date, so that
/// a late answer is still taken (and shown late).
pub fn link_expiry(due: Timestamp) -> Timestamp {
    due.checked_add_duration(std::time::Duration::from_secs(30 * 86_400)).unwrap_or(Timestamp::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_encode_their_values_and_messages_hold_both_languages() {
        struct Nobody;
        impl Mailer for Nobody {
            fn send(&self, _: Mail) -> Sending<'_> {
                Box::pin(async { Ok(()) })
            }
        }
        let config = MailConfig { mailer: Arc::new(Nobody), base_url: "https://r.example/".into() };
        assert_eq!(
            config.link(EXPLANATION_PAGE, &[("month", "2026-10"), ("link", "rce_a-b+c")]),
            "https://r.example/console/explain?month=2026-10&link=rce_a-b%2Bc"
        );
        let mail = sign_in_link(("김민지", "minji@example.com"), "Acme", "https://x/l", 15);
        assert!(mail.text.contains("김민지님") && mail.text.contains("15분"));
        assert!(mail.text.contains("within 15 minutes") && mail.text.contains("https://x/l"));
        let r = ExplanationRequest {
            organization: "Acme",
            reviewer: "박서준",
            downloaded_at: "2026-10-14 22:10".into(),
            time_zone: "Asia/Seoul",
            menu_path: "/candidates/export",
            question: "누구에게 보냈습니까?",
            due: "2026-11-09".into(),
            link: "https://x/e".into(),
        };
        let mail = explanation_request(("김민지", "minji@example.com"), &r);
        for part in [
            "박서준님이",
            "2026-11-09까지",
            "질문: 누구에게",
            "Question: 누구에게",
            "by 2026-11-09",
        ] {
            assert!(mail.text.contains(part), "{part} in {}", mail.text);
        }
    }
}
