//! The console's pages on a real (SQLite) store, read as HTML: sign-in by token and by link,
//! the session's cookie and its end, the overview's figures against the service's review, a
//! download confirmed, the month signed off and its report, and forms from elsewhere refused.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Response, StatusCode, Uri};
use recruit_adapters_sqlite::SqliteStore;
use recruit_adapters_sqlite::testkit::TestStore;
use recruit_console::{Console, ConsoleConfig, ConsoleRequest};
use recruit_domain::model::{ActivityCategory, Role};
use recruit_domain::{OrganizationId, Scope, Timestamp, Uuid};
use recruit_ports::testkit::{ORG_A, ledger_entry, user_id};
use recruit_ports::{AuditListQuery, Import, ImportDocument, Ledgers};
use recruit_service::cursor::CursorKey;
use recruit_service::{Service, ServiceConfig};
use scraper::{Html, Selector};

const ORIGIN: &str = "http://127.0.0.1:8080";

struct World {
    console: Console,
    service: Arc<Service>,
    store: SqliteStore,
    _dir: tempfile::TempDir,
}

async fn world(public: &str) -> World {
    let TestStore { store, dir } = TestStore::world().await;
    let config = ServiceConfig::new("https://app.example.com", CursorKey::new(&[1; 32]).unwrap());
    let service = Arc::new(Service::new(Arc::new(store.clone()), config));
    let console = Console::new(
        Arc::clone(&service),
        ConsoleConfig { public_base_url: public.into(), deadline: Duration::from_secs(10) },
    );
    World { console, service, store, _dir: dir }
}

fn org() -> OrganizationId {
    OrganizationId::from_uuid(Uuid::from_u128(ORG_A))
}

async fn token(w: &World, role: Role, scopes: &[Scope]) -> String {
    let user = user_id(ORG_A, role);
    w.service.create_token(org(), user, "t".into(), scopes.to_vec(), None).await.unwrap().1
}

/// A browser: its session cookie, kept from the answers it gets.
#[derive(Default)]
struct Browser {
    cookie: Option<String>,
    /// The language cookie, once the switch set it.
    lang: Option<String>,
    /// The `Accept-Language` it sends, if any.
    accept_language: Option<&'static str>,
    /// The body of the last download.
    download: Option<Vec<u8>>,
}

struct Seen {
    status: StatusCode,
    headers: HeaderMap,
    html: Html,
}

impl Seen {
    fn location(&self) -> &str {
        self.headers.get(header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    fn text(&self, selector: &str) -> String {
        let s = Selector::parse(selector).unwrap();
        let found = self.html.select(&s).next();
        found.unwrap_or_else(|| panic!("no {selector}")).text().collect::<String>().trim().into()
    }

    fn all(&self, selector: &str) -> Vec<String> {
        let s = Selector::parse(selector).unwrap();
        self.html.select(&s).map(|e| e.text().collect::<String>().trim().to_owned()).collect()
    }

    fn attr(&self, selector: &str, name: &str) -> String {
        let s = Selector::parse(selector).unwrap();
        let found = self.html.select(&s).next().unwrap_or_else(|| panic!("no {selector}"));
        found.value().attr(name).unwrap_or("").to_owned()
    }
}

impl Browser {
    async fn send(
        &mut self,
        w: &World,
        method: Method,
        uri: &str,
        form: &[(&str, &str)],
        origin: Option<&str>,
    ) -> Seen {
        let uri: Uri = uri.parse().unwrap();
        let mut headers = HeaderMap::new();
        let mut cookies = vec![];
        if let Some(cookie) = &self.cookie {
            cookies.push(format!("recruitd_console={cookie}"));
        }
        if let Some(lang) = &self.lang {
            cookies.push(format!("recruitd_lang={lang}"));
        }
        if !cookies.is_empty() {
            headers.insert(header::COOKIE, HeaderValue::from_str(&cookies.join("; ")).unwrap());
        }
        if let Some(accepted) = self.accept_language {
            headers.insert(header::ACCEPT_LANGUAGE, HeaderValue::from_static(accepted));
        }
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
        let request = ConsoleRequest {
            method: &method,
            uri: &uri,
            headers: &headers,
            body: Bytes::from(body),
            client_ip: None,
            request_id: "req-console",
        };
        let answered = w.console.handle(request).await;
        let mut response: Response<Vec<u8>> = answered.response;
        if let Some(mut download) = answered.download {
            // A download's chunks are its body.
            while let Some(chunk) = std::future::poll_fn(|cx| {
                futures_core::Stream::poll_next(std::pin::Pin::new(&mut download.chunks), cx)
            })
            .await
            {
                response.body_mut().extend_from_slice(&chunk.unwrap());
            }
            self.download = Some(response.body().clone());
        }
        for set in response.headers().get_all(header::SET_COOKIE) {
            let set = set.to_str().unwrap();
            match set.split(';').next().unwrap().split_once('=') {
                Some(("recruitd_console", value)) => {
                    self.cookie = (!value.is_empty()).then(|| value.to_owned());
                }
                Some(("recruitd_lang", value)) => self.lang = Some(value.to_owned()),
                _ => panic!("an unknown cookie: {set}"),
            }
        }
        let (parts, body) = response.into_parts();
        Seen {
            status: parts.status,
            headers: parts.headers,
            html: Html::parse_document(&String::from_utf8_lossy(&body)),
        }
    }

    async fn get(&mut self, w: &World, uri: &str) -> Seen {
        self.send(w, Method::GET, uri, &[], None).await
    }

    async fn post(&mut self, w: &World, uri: &str, form: &[(&str, &str)]) -> Seen {
        self.send(w, Method::POST, uri, form, Some(ORIGIN)).await
    }

    async fn sign_in(&mut self, w: &World, token: &str) {
        let seen = self.post(w, "/console/sign-in", &[("token", token)]).await;
        assert_eq!((seen.status, seen.location()), (StatusCode::SEE_OTHER, "/console/overview"));
    }
}

/// `n` with its digits grouped by three, as the pages write counts.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The API ledger's entries of `operation`.
async fn recorded(w: &World, operation: &str) -> usize {
    let query = AuditListQuery { organization_id: Some(org()), limit: 1000 };
    let entries = w.store.api_audit_entries(&query).await.unwrap();
    entries.iter().filter(|e| e.operation == operation).count()
}

/// Without a session every page leads to sign-in; a pasted owner's token opens a session whose
/// cookie is HttpOnly and SameSite=Strict, not Secure on http; every answer carries the
/// strict CSP and no page has a script.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_token_opens_a_session_with_a_strict_cookie() {
    let w = world(ORIGIN).await;
    let mut browser = Browser::default();
    let seen = browser.get(&w, "/console").await;
    assert_eq!((seen.status, seen.location()), (StatusCode::SEE_OTHER, "/console/sign-in"));
    let seen = browser.get(&w, "/console/overview?month=2026-01").await;
    assert_eq!(seen.status, StatusCode::SEE_OTHER);
    let seen = browser.get(&w, "/console/sign-in").await;
    assert_eq!(seen.status, StatusCode::OK);
    assert_eq!(seen.attr("input[name=token]", "type"), "password");
    assert_eq!(seen.attr("label[for=token]", "for"), "token");
    let csp = seen.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(csp.contains("default-src 'none'") && !csp.contains("script-src"), "{csp}");
    assert_eq!(seen.headers[header::X_FRAME_OPTIONS], "DENY");
    // Not `no-referrer`: with it a browser sends `Origin: null` with a form, which is refused.
    assert_eq!(seen.headers[header::REFERRER_POLICY], "strict-origin");

    let member = token(&w, Role::Member, &[Scope::AuditLogsRead]).await;
    let seen = browser.post(&w, "/console/sign-in", &[("token", &member)]).await;
    assert_eq!(seen.status, StatusCode::FORBIDDEN);
    assert!(seen.text("[role=alert]").contains("owner"), "{}", seen.text("[role=alert]"));
    assert_eq!(browser.cookie, None);

    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead]).await;
    let from_elsewhere = browser
        .send(
            &w,
            Method::POST,
            "/console/sign-in",
            &[("token", &owner)],
            Some("https://evil.example"),
        )
        .await;
    assert_eq!(from_elsewhere.status, StatusCode::FORBIDDEN);
    let response = w
        .console
        .handle(ConsoleRequest {
            method: &Method::POST,
            uri: &"/console/sign-in".parse().unwrap(),
            headers: &{
                let mut h = HeaderMap::new();
                h.insert(header::ORIGIN, HeaderValue::from_static(ORIGIN));
                h
            },
            body: Bytes::from(format!("token={owner}")),
            client_ip: None,
            request_id: "r",
        })
        .await;
    let cookie = response.response.headers()[header::SET_COOKIE].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("recruitd_console=rcs_"), "{cookie}");
    for part in ["HttpOnly", "SameSite=Strict", "Path=/console"] {
        assert!(cookie.contains(part), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "not on http: {cookie}");
    browser.sign_in(&w, &owner).await;
    let seen = browser.get(&w, "/console/overview?month=2026-01").await;
    assert_eq!(seen.status, StatusCode::OK);
    assert!(seen.all("script").is_empty());

    let secure = world("https://review.example.com").await;
    let owner = token(&secure, Role::Owner, &[Scope::AuditLogsRead]).await;
    let mut headers = HeaderMap::new();
    headers.insert(header::ORIGIN, HeaderValue::from_static("https://review.example.com"));
    let response = secure
        .console
        .handle(ConsoleRequest {
            method: &Method::POST,
            uri: &"/console/sign-in".parse().unwrap(),
            headers: &headers,
            body: Bytes::from(format!("token={owner}")),
            client_ip: None,
            request_id: "r",
        })
        .await;
    assert!(response.response.headers()[header::SET_COOKIE].to_str().unwrap().contains("; Secure"));
}

/// The overview shows the service's review of the month, figure for figure, and its read is
/// recorded in the API ledger like a read through the REST API; its table sorts by a column.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_shows_the_months_review_and_is_recorded() {
    let w = world(ORIGIN).await;
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead]).await;
    let mut browser = Browser::default();
    browser.sign_in(&w, &owner).await;
    let before = recorded(&w, "getPrivacyAccessReview").await;
    let seen = browser.get(&w, "/console/overview?month=2026-01").await;
    assert_eq!(seen.status, StatusCode::OK);
    assert_eq!(recorded(&w, "getPrivacyAccessReview").await, before + 1);
    let month = "2026-01".parse().unwrap();
    let review = recruit_service::review::review(&w.store, org(), month).await.unwrap();
    assert_eq!(seen.text("#accesses"), review.accesses.to_string());
    assert_eq!(seen.text("#accounts"), review.accounts.len().to_string());
    assert_eq!(seen.text("#downloads"), review.downloads.len().to_string());
    assert_eq!(seen.text("#time-zone"), review.time_zone);
    let rows = seen.all("table.accounts tbody tr th");
    assert_eq!(rows.len(), review.accounts.len());
    for account in &review.accounts {
        assert!(rows.contains(&account.account_id), "{} is listed", account.account_id);
    }
    let rules = seen.all("#rules li");
    assert!(rules[0].starts_with("Work hours (UTC): "), "{rules:?}");
    assert!(rules.iter().any(|r| r.contains("over 1,000 records")), "{rules:?}");
    for account in review.accounts.iter().filter(|a| !a.flags.is_empty()) {
        let row = seen.all("table.accounts tbody tr.flagged td ul.flags");
        let detail = &account.flag_details[0];
        let (value, over) = (
            format!(": {} ", grouped(detail.value)),
            format!("over {}", grouped(detail.threshold)),
        );
        assert!(row.iter().any(|r| r.contains(&value) && r.contains(&over)), "{row:?}: {detail:?}");
    }
    let bars = seen.all("svg.daily rect");
    let days_with_accesses = review.days.iter().map(|d| d.categories.len()).sum::<usize>();
    assert_eq!(bars.len(), days_with_accesses, "a bar part per day and category");
    let strip = seen.all("table.strip tbody td");
    let hours: u64 = strip.iter().map(|n| n.parse::<u64>().unwrap()).sum();
    assert_eq!((strip.len(), hours), (7 * 24, review.accesses));

    let sorted = browser.get(&w, "/console/overview?month=2026-01&sort=accesses&dir=asc").await;
    let cells = sorted.all("table.accounts tbody tr td:nth-of-type(1)");
    let counts: Vec<u64> = cells.iter().map(|c| c.parse().unwrap()).collect();
    let mut ascending = counts.clone();
    ascending.sort_unstable();
    assert_eq!(counts, ascending);
    assert_eq!(
        sorted.attr("th[aria-sort=ascending] a", "href"),
        "/console/overview?month=2026-01&sort=accesses&dir=desc"
    );
}

/// A download is confirmed from its form, which needs the session's CSRF token; the month is
/// then signed off from the console, and the printable report shows the sign-off with the
/// chain's verification.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_is_confirmed_and_the_month_signed_off_in_the_console() {
    let w = world(ORIGIN).await;
    let mut download =
        ledger_entry(ORG_A, 700, "2026-10-05T09:00:00Z".parse::<Timestamp>().unwrap());
    download.entry.activity_category = ActivityCategory::Download;
    let member = user_id(ORG_A, Role::Member);
    download.entry.account_id = recruit_domain::AccountId::from_uuid(member.uuid());
    download.entry.purpose = Some("이사회 보고 자료 (board pack)".into());
    let mut own = ledger_entry(ORG_A, 701, "2026-10-06T09:00:00Z".parse::<Timestamp>().unwrap());
    own.entry.activity_category = ActivityCategory::Download;
    own.entry.account_id = recruit_domain::AccountId::from_uuid(user_id(ORG_A, Role::Owner).uuid());
    let doc = ImportDocument {
        privacy_audit_logs: vec![download.clone(), own.clone()],
        ..Default::default()
    };
    w.store.import(&doc).await.unwrap();
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead, Scope::AuditLogsReview]).await;
    let mut browser = Browser::default();
    browser.sign_in(&w, &owner).await;
    let id = download.entry.id.to_string();
    let seen = browser.get(&w, "/console/downloads?month=2026-10").await;
    assert_eq!(seen.text(&format!("article[id='{id}'] dd.status")), "Not decided");
    let purpose = seen.text(&format!("article[id='{id}'] dd.purpose"));
    assert_eq!(purpose, "이사회 보고 자료 (board pack)", "the purpose stated when recorded");
    let heading = seen.text(&format!("article[id='{id}'] h2"));
    assert!(heading.ends_with("MEMBER of A"), "the downloader by name: {heading}");
    let overview = browser.get(&w, "/console/overview?month=2026-10").await;
    let rows = overview.all("table.accounts tbody th");
    assert!(rows.iter().any(|r| r.contains("MEMBER of A") && r.contains("member, ")), "{rows:?}");
    let account = download.entry.account_id.to_string();
    let link = format!("/console/entries?month=2026-10&account_id={account}");
    assert_eq!(overview.attr(&format!("table.accounts tbody th a[href='{link}']"), "href"), link);
    let csrf = seen.attr("form[action='/console/downloads'] input[name=csrf]", "value");
    assert!(!csrf.is_empty());

    let form = [
        ("month", "2026-10"),
        ("entry", id.as_str()),
        ("status", "CONFIRMED"),
        ("reason", "Board pack."),
    ];
    // Four eyes: the reviewer's own download has no form, and deciding on it is refused.
    let own_id = own.entry.id.to_string();
    assert!(seen.all(&format!("article[id='{own_id}'] form")).is_empty(), "no form");
    assert!(seen.text(&format!("article[id='{own_id}'] .own")).contains("another owner"));
    let mine = [
        ("csrf", csrf.as_str()),
        ("month", "2026-10"),
        ("entry", own_id.as_str()),
        ("status", "CONFIRMED"),
        ("reason", "My own."),
    ];
    let refused = browser.post(&w, "/console/downloads", &mine).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(refused.text("[role=alert]").contains("four eyes"), "{}", refused.text("[role=alert]"));

    let forged = browser.post(&w, "/console/downloads", &form).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "no CSRF token");
    let mut with_csrf = form.to_vec();
    with_csrf.push(("csrf", &csrf));
    let elsewhere = browser
        .send(&w, Method::POST, "/console/downloads", &with_csrf, Some("https://evil.example"))
        .await;
    assert_eq!(elsewhere.status, StatusCode::FORBIDDEN, "another origin");
    let done = browser.post(&w, "/console/downloads", &with_csrf).await;
    assert_eq!(
        (done.status, done.location()),
        (StatusCode::SEE_OTHER, format!("/console/downloads?month=2026-10#{id}").as_str())
    );
    let seen = browser.get(&w, "/console/downloads?month=2026-10").await;
    assert_eq!(seen.text(&format!("article[id='{id}'] dd.status")), "Reason confirmed");
    assert_eq!(recorded(&w, "reviewPrivacyAccessDownload").await, 1);

    let blank = browser
        .post(
            &w,
            "/console/downloads",
            &[
                ("csrf", &csrf),
                ("month", "2026-10"),
                ("entry", &id),
                ("status", "CONFIRMED"),
                ("reason", " "),
            ],
        )
        .await;
    assert_eq!(blank.status, StatusCode::BAD_REQUEST);
    assert!(
        blank.text("[role=alert]").contains("reason: must not be blank"),
        "{}",
        blank.text("[role=alert]")
    );

    let signed = browser
        .post(
            &w,
            "/console/sign-off",
            &[("csrf", &csrf), ("month", "2026-10"), ("note", "All explained.")],
        )
        .await;
    assert_eq!(
        (signed.status, signed.location()),
        (StatusCode::SEE_OTHER, "/console/report?month=2026-10")
    );
    let report = browser.get(&w, "/console/report?month=2026-10").await;
    assert_eq!(report.text("#signed-by"), "OWNER of A", "the reviewer by name");
    assert!(report.text("#organization").starts_with("Organization A"), "by name");
    assert_eq!(report.text("#period"), "2026-10-01 to 2026-10-31");
    assert!(report.text("#checkpoint").contains("signs none"), "the world signs no checkpoint");
    assert!(report.all(".later").is_empty(), "every decision came before the sign-off");
    assert_eq!(report.text("#note"), "All explained.");
    assert!(
        report.text("#verification").starts_with("Intact:"),
        "{}",
        report.text("#verification")
    );
    assert!(report.all("table.downloads tbody td").contains(&"Reason confirmed".to_owned()));
    let page = browser.get(&w, "/console/sign-off?month=2026-10").await;
    assert!(page.all("form[action='/console/sign-off']").is_empty(), "signed once");

    // A decision after the sign-off is kept beside it, and the report says it came later.
    let asked = [
        ("csrf", csrf.as_str()),
        ("month", "2026-10"),
        ("entry", id.as_str()),
        ("status", "EXPLANATION_REQUESTED"),
        ("reason", "Which board meeting?"),
    ];
    let answered = browser.post(&w, "/console/downloads", &asked).await;
    assert_eq!(answered.status, StatusCode::OK, "the page says what became of the request");
    let notice = answered.text("p.notice[role=status]");
    assert!(notice.starts_with("No e-mail server is configured"), "{notice}");
    let report = browser.get(&w, "/console/report?month=2026-10").await;
    assert_eq!(report.all(".later"), ["(after the sign-off)"]);
    assert!(report.all("table.figures td").contains(&"1".to_owned()), "the figures as signed");
}

/// Without a month the pages open on the last month that has ended (ORG_A keeps UTC); the
/// running month is shown in progress, with no sign-off form, and a sign-off of it or of a
/// month to come is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_month_that_has_ended_is_signed_off_in_the_console() {
    let w = world(ORIGIN).await;
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead, Scope::AuditLogsReview]).await;
    let mut browser = Browser::default();
    browser.sign_in(&w, &owner).await;
    let running = recruit_domain::Month::of(chrono::Utc::now().date_naive()).unwrap();
    let last = running.previous().unwrap();
    let overview = browser.get(&w, "/console/overview").await;
    assert_eq!(overview.text(".months [aria-current=page]"), last.to_string());
    assert_eq!(overview.attr("form.pick-month input[name=month]", "value"), last.to_string());

    let page = browser.get(&w, &format!("/console/sign-off?month={running}")).await;
    assert!(page.text(".months [aria-current=page]").contains("in progress"));
    assert!(page.all("form[action='/console/sign-off']").is_empty(), "no form while it runs");
    let csrf = page.attr("form.sign-out input[name=csrf]", "value");
    for month in [running, running.next().unwrap()] {
        let month = month.to_string();
        let form = [("csrf", csrf.as_str()), ("month", month.as_str()), ("note", "Early.")];
        let refused = browser.post(&w, "/console/sign-off", &form).await;
        assert_eq!(refused.status, StatusCode::CONFLICT, "{month}");
        assert!(refused.text("[role=alert]").contains("has not ended"), "{month}");
    }
    let page = browser.get(&w, &format!("/console/sign-off?month={last}")).await;
    assert!(!page.all("form[action='/console/sign-off']").is_empty(), "{last} has ended");
}

/// Signing out ends the session: its cookie is cleared, and the next page leads to sign-in;
/// a one-time link signs in once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ends_at_sign_out_and_a_link_signs_in_once() {
    let w = world(ORIGIN).await;
    let link = recruit_service::console::sign_in_link(
        &w.store,
        user_id(ORG_A, Role::Owner),
        Duration::from_secs(900),
    )
    .await
    .unwrap();
    let url = Console::link_url(ORIGIN, &link);
    let path = url.trim_start_matches(ORIGIN);
    let mut browser = Browser::default();
    let page = browser.get(&w, path).await;
    assert_eq!(page.attr("form input[name=link]", "value"), link);
    let opened = browser.post(&w, "/console/sign-in", &[("link", &link)]).await;
    assert_eq!(opened.status, StatusCode::SEE_OTHER);
    let overview = browser.get(&w, "/console/overview?month=2026-01").await;
    assert_eq!(overview.status, StatusCode::OK);
    let csrf = overview.attr("form.sign-out input[name=csrf]", "value");

    let mut other = Browser::default();
    let spent = other.post(&w, "/console/sign-in", &[("link", &link)]).await;
    assert_eq!(spent.status, StatusCode::UNAUTHORIZED);
    assert_eq!(other.cookie, None);

    let out = browser.post(&w, "/console/sign-out", &[("csrf", &csrf)]).await;
    assert_eq!((out.status, out.location()), (StatusCode::SEE_OTHER, "/console/sign-in"));
    assert_eq!(browser.cookie, None, "the cookie is cleared");
    browser.cookie = Some("rcs_".to_owned() + &"x".repeat(43));
    let after = browser.get(&w, "/console/overview?month=2026-01").await;
    assert_eq!(
        (after.status, after.location()),
        (StatusCode::SEE_OTHER, "/console/sign-in?ended=1")
    );
}

/// The entries page lists what the API's list shows for the month and the URL's filters,
/// keeps them in its form (a reload or a bookmark shows the same view), links each value to
/// its filter, downloads the filtered entries as CSV (recorded as the API's export), and the
/// integrity page shows the month's chain verified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_entries_page_filters_by_its_url_and_downloads_what_it_shows() {
    let w = world(ORIGIN).await;
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead]).await;
    let mut browser = Browser::default();
    browser.sign_in(&w, &owner).await;
    let all = browser.get(&w, "/console/entries?month=2026-01").await;
    assert_eq!(all.status, StatusCode::OK);
    let rows = all.all("table.entries tbody tr");
    assert_eq!(rows.len(), 12, "the world's twelve entries of organization A");
    assert_eq!(all.text("#matching"), "Matching entries: 12");
    assert_eq!(recorded(&w, "listPrivacyAuditLogs").await, 1, "the page's read is recorded");

    let reads = browser.get(&w, "/console/entries?month=2026-01&activity_category=READ").await;
    let categories = reads.all("table.entries tbody tr td:nth-child(3)");
    assert!(!categories.is_empty() && categories.iter().all(|c| c == "READ"), "{categories:?}");
    assert_eq!(reads.text("#matching"), format!("Matching entries: {}", categories.len()));
    assert_eq!(reads.attr("#f-activity_category option[selected]", "value"), "READ");
    // A value filters by itself: the first row's account.
    let by_account = all.attr("table.entries tbody tr td:nth-child(2) a", "href");
    assert!(by_account.contains("account_id="), "{by_account}");
    let one = browser.get(&w, &by_account).await;
    assert_eq!(one.all("table.entries tbody tr").len(), 1);
    assert_eq!(
        one.attr("#f-account_id", "value"),
        all.text("table.entries tbody tr td:nth-child(2)")
    );

    let bad = browser.get(&w, "/console/entries?month=2026-01&ip_address=nowhere").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.text(".problem").contains("ip_address"), "{}", bad.text(".problem"));

    let csv = reads.attr("a[href^='/console/entries/export'][href*='format=csv']", "href");
    let seen = browser.get(&w, &csv).await;
    assert_eq!(seen.status, StatusCode::OK);
    assert!(seen.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/csv"));
    let body = String::from_utf8(browser.download.take().unwrap()).unwrap();
    let body = body.strip_prefix('\u{feff}').expect("a UTF-8 byte-order mark first");
    let lines: Vec<&str> = body.lines().collect();
    assert!(lines[0].starts_with("position,hash,id,access_time"), "{}", lines[0]);
    let disposition = seen.headers[header::CONTENT_DISPOSITION].to_str().unwrap();
    assert!(
        disposition.contains("_2026-01-01_2026-01-31_activity-category-READ.csv"),
        "{disposition}"
    );
    assert_eq!(lines.len() - 1, categories.len());
    assert_eq!(recorded(&w, "exportPrivacyAuditLogs").await, 1, "recorded as a download");
    assert!(seen.headers.contains_key(header::CONTENT_SECURITY_POLICY));

    let integrity = browser.get(&w, "/console/integrity?month=2026-01").await;
    assert_eq!(integrity.status, StatusCode::OK);
    assert_eq!(integrity.attr("#verification", "class"), "intact");
}

/// The entries page pages both ways: each page links to the next and to the one before, with
/// its number, and going back shows the same entries as coming.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_entries_page_pages_both_ways() {
    let w = world(ORIGIN).await;
    let entries: Vec<_> = (0..120u128)
        .map(|n| {
            let at = format!("2026-08-{:02}T10:{:02}:00Z", 1 + n % 28, n % 60);
            ledger_entry(ORG_A, 5000 + n, at.parse::<Timestamp>().unwrap())
        })
        .collect();
    let doc = ImportDocument { privacy_audit_logs: entries, ..Default::default() };
    w.store.import(&doc).await.unwrap();
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead]).await;
    let mut browser = Browser::default();
    browser.sign_in(&w, &owner).await;
    let ids = |seen: &Seen| seen.all("table.entries tbody tr td:first-child");
    let first = browser.get(&w, "/console/entries?month=2026-08").await;
    assert_eq!(first.text("nav.pages [aria-current=page]"), "Page 1");
    assert_eq!(first.text("#matching"), "Matching entries: 120", "every page's count");
    assert!(first.all("nav.pages a[rel=prev]").is_empty());
    let mut pages = vec![(first.all("table.entries tbody tr").len(), ids(&first))];
    let mut seen = first;
    for number in 2..=3 {
        let next = seen.attr("nav.pages a[rel=next]", "href");
        seen = browser.get(&w, &next).await;
        assert_eq!(seen.text("nav.pages [aria-current=page]"), format!("Page {number}"));
        pages.push((seen.all("table.entries tbody tr").len(), ids(&seen)));
    }
    assert_eq!(pages.iter().map(|p| p.0).collect::<Vec<_>>(), [50, 50, 20]);
    assert_eq!(seen.text("#matching"), "Matching entries: 120");
    assert!(seen.all("nav.pages a[rel=next]").is_empty(), "the last page");
    for number in [2, 1] {
        let previous = seen.attr("nav.pages a[rel=prev]", "href");
        seen = browser.get(&w, &previous).await;
        assert_eq!(seen.text("nav.pages [aria-current=page]"), format!("Page {number}"));
        assert_eq!(ids(&seen), pages[number - 1].1, "page {number} again");
    }
}

/// The pages speak the browser's language, Korean or English; the switch on every page
/// changes it, and the choice is kept; times and counts are written as each language writes
/// them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_speak_korean_or_english_and_the_switch_is_kept() {
    let w = world(ORIGIN).await;
    let mut browser =
        Browser { accept_language: Some("ko-KR,ko;q=0.9,en;q=0.5"), ..Default::default() };
    let sign_in = browser.get(&w, "/console/sign-in").await;
    assert_eq!(sign_in.attr("html", "lang"), "ko");
    assert_eq!(sign_in.text("h1"), "접속기록 점검 로그인");
    let owner = token(&w, Role::Owner, &[Scope::AuditLogsRead, Scope::AuditLogsReview]).await;
    browser.sign_in(&w, &owner).await;
    let korean = browser.get(&w, "/console/overview?month=2026-10").await;
    assert_eq!(korean.text("h1"), "2026-10 접속기록 점검");
    assert!(
        korean.all("#rules li").iter().any(|r| r.contains("1,000건")),
        "{:?}",
        korean.all("#rules li")
    );
    let switch = korean.attr("nav.language a", "href");
    assert_eq!(switch, "/console/overview?month=2026-10&lang=en");
    assert_eq!(korean.text("nav.language a"), "English");

    let english = browser.get(&w, &switch).await;
    assert_eq!(
        (english.attr("html", "lang"), english.text("h1")),
        ("en".into(), "Access review of 2026-10".into())
    );
    assert_eq!(browser.lang.as_deref(), Some("en"), "the choice is kept in a cookie");
    let next = browser.get(&w, "/console/downloads?month=2026-10").await;
    assert_eq!(next.text("h1"), "Downloads of 2026-10", "the Korean browser now gets English");
    assert_eq!(next.attr("nav.language a", "href"), "/console/downloads?month=2026-10&lang=ko");

    // The API's refusals: in Korean what the code means, then the API's own words, marked
    // as English; in English those words alone.
    let bad = "/console/entries?month=2026-10&ip_address=nowhere";
    let english = browser.get(&w, bad).await;
    assert_eq!(english.all(".problem p").len(), 1, "{:?}", english.all(".problem p"));
    let korean = browser.get(&w, &format!("{bad}&lang=ko")).await;
    assert_eq!(korean.status, StatusCode::BAD_REQUEST);
    assert_eq!(korean.all(".problem p")[0], "입력한 내용 중 올바르지 않은 것이 있습니다.");
    assert_eq!(korean.text(".problem p[lang=en]"), english.text(".problem p"));
    assert!(korean.text(".problem ul[lang=en] li").starts_with("ip_address: "));
    let missing = browser.get(&w, "/console/nowhere").await;
    assert_eq!(missing.text(".problem p"), "콘솔에 그런 페이지가 없습니다.");
}

/// An owner sees the organization's log streams with how each delivers, and pauses and
/// resumes one (each change recorded as theirs); a refused change names the stream, and a
/// session without the streams' scope is told why it sees none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_pauses_and_resumes_a_log_stream_in_the_console() {
    use recruit_ports::streams::LogStreams;
    let w = world(ORIGIN).await;
    let stream = recruit_ports::testkit::stream_record(1);
    let record = recruit_ports::testkit::record(ORG_A, 1);
    w.store.create_stream(&stream, &record).await.unwrap();
    let id = recruit_domain::LogStreamId::from_uuid(stream.id).to_string();
    let scopes = [Scope::AuditLogsRead, Scope::AuditLogsReview, Scope::LogStreamsAdmin];
    let owner = token(&w, Role::Owner, &scopes).await;
    let mut browser = Browser::default();
    browser.sign_in(&w, &owner).await;
    let seen = browser.get(&w, "/console/log-streams?month=2026-10").await;
    assert_eq!(seen.status, StatusCode::OK);
    let card = format!("article[id='{id}']");
    assert_eq!(seen.text(&format!("{card} h2")), "SIEM 1");
    assert_eq!(seen.text(&format!("{card} dd.state")), "Delivering");
    assert!(seen.text(&format!("{card} dl")).contains("https://siem.example.com/in"));
    assert!(!seen.html.html().contains("whsec_"), "no secret on the page");
    assert_eq!(seen.text(&format!("{card} button")), "Pause");
    let csrf = seen.attr(&format!("{card} input[name=csrf]"), "value");

    let form = |action: &'static str, stream: String| {
        vec![
            ("csrf", csrf.clone()),
            ("month", "2026-10".into()),
            ("stream", stream),
            ("action", action.into()),
        ]
    };
    let post = async |browser: &mut Browser, pairs: Vec<(&str, String)>| {
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        browser.post(&w, "/console/log-streams", &pairs).await
    };
    let paused = post(&mut browser, form("pause", id.clone())).await;
    let back = format!("/console/log-streams?month=2026-10#{id}");
    assert_eq!((paused.status, paused.location()), (StatusCode::SEE_OTHER, back.as_str()));
    let seen = browser.get(&w, "/console/log-streams?month=2026-10").await;
    assert_eq!(seen.text(&format!("{card} dd.state")), "Paused");
    assert_eq!(seen.text(&format!("{card} button")), "Resume");
    assert_eq!(recorded(&w, "pauseLogStream").await, 1);
    let resumed = post(&mut browser, form("resume", id.clone())).await;
    assert_eq!(resumed.status, StatusCode::SEE_OTHER);
    let seen = browser.get(&w, "/console/log-streams?month=2026-10").await;
    assert_eq!(seen.text(&format!("{card} dd.state")), "Delivering");
    assert_eq!(recorded(&w, "resumeLogStream").await, 1);

    // A stream of no one's: the page again, with the refusal naming it.
    let other = recruit_domain::LogStreamId::from_uuid(Uuid::from_u128(0x5ea)).to_string();
    let refused = post(&mut browser, form("pause", other.clone())).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    assert!(refused.text(".problem").contains(&other), "{}", refused.text(".problem"));
    assert_eq!(refused.text(&format!("{card} h2")), "SIEM 1", "the streams still listed");
    let unknown = post(&mut browser, form("restart", id.clone())).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    // A form from elsewhere changes nothing.
    let forged = browser
        .send(
            &w,
            Method::POST,
            "/console/log-streams",
            &[("csrf", "x"), ("stream", &id), ("action", "pause")],
            Some(ORIGIN),
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert_eq!(recorded(&w, "pauseLogStream").await, 1);

    // In Korean; and a session whose token lacks the streams' scope sees why it sees none.
    let reviewer = token(&w, Role::Owner, &[Scope::AuditLogsRead, Scope::AuditLogsReview]).await;
    let mut korean = Browser { accept_language: Some("ko"), ..Browser::default() };
    korean.sign_in(&w, &reviewer).await;
    let seen = korean.get(&w, "/console/log-streams?month=2026-10").await;
    assert_eq!(seen.text("h1"), "로그 스트림");
    assert!(seen.all("article.stream").is_empty());
    assert!(seen.text(".problem").contains("log_streams:admin"), "{}", seen.text(".problem"));
}
