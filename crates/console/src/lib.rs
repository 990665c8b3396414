//! The review console of recruitd: the pages a privacy officer uses in a browser for the
//! monthly review of the access records (PIPA safety-measure standard, Art. 8): the month at a
//! glance, its downloads to confirm, and the month's sign-off with a printable report; and the
//! log streams that deliver the ledger to the organization's SIEM, paused and resumed by an
//! owner.
//!
//! Pages are rendered on the server from templates checked at compile time (askama, escaping
//! HTML by default); charts are SVG drawn here, so they print and test as text. No page runs a
//! script: the Content-Security-Policy allows none, and only the embedded stylesheet. Every
//! figure comes from the service's operations, run as the signed-in reviewer through
//! [`recruit_service::Service::run`] (each read of the ledger recorded before it is shown, as
//! through the REST API); the console holds no rule of its own.
//!
//! Sessions ([`recruit_service::console`]) are kept server-side; the browser holds the
//! session's secret in an `HttpOnly`, `SameSite=Strict` cookie (`Secure` when the public URL
//! is https). Every POST checks `Origin` against the public URL and the session's CSRF token.
//!
//! It depends on `recruit-service` and `recruit-domain` only: never on a storage adapter, an
//! HTTP server or a protocol library. [`Console::handle`] takes and returns `http` types; the
//! server crate routes `/console` to it.

mod chart;
mod downloads;
mod entries;
mod lang;
mod pages;
mod report;
mod route;
mod sign_in;
mod streams;
pub use route::SSO_CALLBACK;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use askama::Template;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Response, StatusCode, Uri};
use recruit_domain::ErrorCode;
use recruit_service::console::ConsoleCaller;
use recruit_service::review::Review;
use recruit_service::{
    Arguments, Identity, Operation, OperationKind, Outcome, RequestContext, Service, ServiceError,
};

use crate::lang::{Lang, Locale};
use crate::pages::{Page, PageMonth};
use crate::route::Route;

/// The console's cookie.
const COOKIE: &str = "recruitd_console";

/// The stylesheet, embedded.
const STYLESHEET: &str = include_str!("../assets/console.css");

/// What every page may load: its own stylesheet, nothing else, and no script at all.
const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

/// How the console is set up.
#[derive(Clone, Debug)]
pub struct ConsoleConfig {
    /// The URL browsers reach the server at: its origin is the only one a form may come from,
    /// and an https URL makes the session's cookie `Secure`.
    pub public_base_url: String,
    /// The longest an operation of a page may take.
    pub deadline: Duration,
}

/// The review console over a service.
#[derive(Clone)]
pub struct Console {
    service: Arc<Service>,
    config: ConsoleConfig,
    origin: String,
    secure: bool,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console").field("origin", &self.origin).finish_non_exhaustive()
    }
}

/// A request as the console needs it.
#[derive(Debug)]
pub struct ConsoleRequest<'a> {
    /// The method.
    pub method: &'a Method,
    /// The URI (path and query).
    pub uri: &'a Uri,
    /// The headers.
    pub headers: &'a HeaderMap,
    /// The body, read whole (a form).
    pub body: Bytes,
    /// The client's address.
    pub client_ip: Option<IpAddr>,
    /// The request's id, recorded with what the page reads.
    pub request_id: &'a str,
}

impl ConsoleRequest<'_> {
    /// Where the request came from, as the audit ledgers record it.
    pub(crate) fn context(&self) -> RequestContext {
        RequestContext::rest(self.request_id, self.client_ip)
    }
}

/// What the console answers: a page, or a download whose chunks are the body.
#[derive(Debug)]
pub struct ConsoleResponse {
    /// The status and headers; the page's bytes, empty for a download.
    pub response: Response<Vec<u8>>,
    /// A download (an export of the ledger) whose chunks follow as the body.
    pub download: Option<recruit_service::export::Download>,
}

impl From<Response<Vec<u8>>> for ConsoleResponse {
    fn from(response: Response<Vec<u8>>) -> Self {
        Self { response, download: None }
    }
}

/// What a page handler ends with.
type Answer = Result<ConsoleResponse, Failure>;

/// Why a page is not shown.
enum Failure {
    /// No live session: back to sign-in.
    SignIn(Option<&'static str>),
    /// The service refused or failed.
    Service(ServiceError),
    /// A failure the console words itself: its status and the message's key.
    Said(StatusCode, &'static str),
}

impl Failure {
    /// A form from elsewhere, or without the session's CSRF token.
    const FORGED: Self = Self::Said(StatusCode::FORBIDDEN, "error-forged");
    /// No such page.
    const NOT_FOUND: Self = Self::Said(StatusCode::NOT_FOUND, "error-not-found");
}

impl From<ServiceError> for Failure {
    fn from(e: ServiceError) -> Self {
        Self::Service(e)
    }
}

impl Console {
    /// The console over `service`.
    pub fn new(service: Arc<Service>, config: ConsoleConfig) -> Self {
        let origin = origin_of(&config.public_base_url);
        let secure = config.public_base_url.starts_with("https://");
        Self { service, config, origin, secure }
    }

    /// The path of a one-time sign-in link with the secret `link`, on the public URL.
    pub fn link_url(public_base_url: &str, link: &str) -> String {
        let base = public_base_url.trim_end_matches('/');
        format!("{base}{}?link={link}", Route::SignIn.path())
    }

    /// Answers a request under `/console`.
    pub async fn handle(&self, request: ConsoleRequest<'_>) -> ConsoleResponse {
        let answer = self.route(&request).await;
        let mut answered = match answer {
            Ok(answered) => answered,
            Err(Failure::SignIn(why)) => {
                let target = match why {
                    Some(_) => format!("{}?ended=1", Route::SignIn.path()),
                    None => Route::SignIn.path().to_owned(),
                };
                let mut response = redirect(&target);
                if request.headers.get(header::COOKIE).is_some() {
                    response.headers_mut().append(header::SET_COOKIE, self.cookie(None));
                }
                response.into()
            }
            Err(Failure::Said(status, key)) => {
                let l = locale(&request);
                let problem = pages::Problem { message: l.t(key), ..Default::default() };
                self.error_page(status, problem, l).into()
            }
            Err(Failure::Service(e)) => {
                let l = locale(&request);
                let problem = pages::Problem::of(l.lang, &e, None);
                self.error_page(status_of(e.code), problem, l).into()
            }
        };
        secure_headers(answered.response.headers_mut());
        // A language chosen with the switch is kept for the pages that follow.
        let query = query_pairs(request.uri.query());
        if let Some(lang) = query.get("lang").and_then(|c| Lang::of_code(c)) {
            let cookie = format!(
                "{}={}; Path=/console; Max-Age=31536000; SameSite=Lax{}",
                lang::COOKIE_NAME,
                lang.code(),
                if self.secure { "; Secure" } else { "" }
            );
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                answered.response.headers_mut().append(header::SET_COOKIE, value);
            }
        }
        answered
    }

    async fn route(&self, r: &ConsoleRequest<'_>) -> Answer {
        let query = query_pairs(r.uri.query());
        let Some(route) = Route::of(r.method, r.uri.path()) else {
            return Err(Failure::NOT_FOUND);
        };
        match route {
            Route::Stylesheet => Ok(stylesheet().into()),
            Route::Home => match self.session(r).await {
                Ok(_) => Ok(redirect(Route::Overview.path()).into()),
                Err(_) => Ok(redirect(Route::SignIn.path()).into()),
            },
            Route::Entries => self.entries(r, &query).await,
            Route::EntriesExport => self.export(r, &query).await,
            Route::Integrity => self.integrity(r, &query).await,
            Route::SignIn => {
                let page = pages::SignIn {
                    link: query.get("link").cloned(),
                    ended: query.contains_key("ended"),
                    error: None,
                    mail: self.service.sends_mail(),
                    mailed: false,
                    sso: self.service.offers_sso(),
                    l: locale(r),
                };
                Ok(html(StatusCode::OK, &page).into())
            }
            Route::SignInForm => self.sign_in(r).await,
            Route::MailLink => self.mail_link(r),
            Route::SsoStart => self.sso_start(r).await,
            Route::SsoCallback => self.sso_callback(r, &query).await,
            Route::Explain => {
                let (link, month, entry) = link_target(&query);
                let caller = self.explanation_link(r, &link).await?;
                let view = self.service.explanation_page(&caller, &month, &entry).await?;
                Ok(html(StatusCode::OK, &pages::Explain::new(link, view, None, locale(r))).into())
            }
            Route::ExplainForm => self.explain(r).await,
            Route::SignOut => {
                let session = self.session(r).await?;
                self.check_form(r, &session)?;
                if let Some(secret) = cookie(r.headers) {
                    self.service.end_console_session(&secret, &r.context()).await?;
                }
                let mut response = redirect(Route::SignIn.path());
                response.headers_mut().append(header::SET_COOKIE, self.cookie(None));
                Ok(response.into())
            }
            Route::Overview => {
                let (session, page, review) = self.month_page(r, &query).await?;
                let sort = pages::Sort::from_query(&query);
                let chain = self.chain(&session, &page, &review.time_zone).await?;
                Ok(html(StatusCode::OK, &pages::Overview::new(page, review, sort, chain)).into())
            }
            Route::Downloads => {
                let (_, page, review) = self.month_page(r, &query).await?;
                Ok(html(StatusCode::OK, &pages::Downloads::new(page, review, None)).into())
            }
            Route::Decide => self.decide(r).await,
            Route::SignOff => {
                let (session, page, review) = self.month_page(r, &query).await?;
                let chain = self.chain(&session, &page, &review.time_zone).await?;
                let form = pages::SignOffForm::new(page, review, None, chain);
                Ok(html(StatusCode::OK, &form).into())
            }
            Route::SignOffForm => self.sign_off(r).await,
            Route::Streams => self.streams(r, &query).await,
            Route::StreamForm => self.stream_form(r).await,
            Route::Report => {
                let (_, page, review) = self.month_page(r, &query).await?;
                Ok(html(StatusCode::OK, &pages::Report::new(page, review)).into())
            }
        }
    }

    /// `POST /console/explain`: the explanation of a download, by the holder of the e-mailed
    /// link, which it spends.
    async fn explain(&self, r: &ConsoleRequest<'_>) -> Answer {
        if !self.same_origin(r.headers) {
            return Err(Failure::FORGED);
        }
        let form = query_pairs(std::str::from_utf8(&r.body).ok());
        let (link, month, entry) = link_target(&form);
        let caller = self.explanation_link(r, &link).await?;
        let body = serde_json::json!({
            "explanation": form.get("explanation").map(String::as_str).unwrap_or(""),
        });
        let kind = OperationKind::ExplainPrivacyAccessDownload;
        let mut arguments = Arguments::rest(kind);
        arguments.path("month", month.clone());
        arguments.path("entryId", entry.clone());
        arguments.body(body.to_string().into_bytes());
        let outcome = match Operation::parse(kind, arguments) {
            Ok(operation) => {
                let identity = Identity::Authenticated(Box::new(caller.clone()));
                self.service.run(self.config.deadline, identity, r.context(), operation).await
            }
            Err(e) => Err(e),
        };
        match outcome {
            Ok(_) => {
                self.service.spend_explanation_link(&caller).await?;
                let view = self.service.explanation_page(&caller, &month, &entry).await?;
                let page = pages::Explain {
                    done: true,
                    ..pages::Explain::new(link, view, None, locale(r))
                };
                Ok(html(StatusCode::OK, &page).into())
            }
            Err(e) if server_side(&e) => Err(e.into()),
            Err(e) => {
                let view = self.service.explanation_page(&caller, &month, &entry).await?;
                let problem = pages::Problem::of(locale(r).lang, &e, None);
                let page = pages::Explain::new(link, view, Some(problem), locale(r));
                Ok(html(status_of(e.code), &page).into())
            }
        }
    }

    /// The holder of the explanation link `link`, or a page saying the link is not valid.
    async fn explanation_link(
        &self,
        r: &ConsoleRequest<'_>,
        link: &str,
    ) -> Result<recruit_service::Caller, Failure> {
        match self.service.explanation_link(link, r.client_ip).await {
            Ok(caller) => Ok(caller),
            Err(e) if e.code == ErrorCode::Unauthenticated => {
                Err(Failure::Said(StatusCode::UNAUTHORIZED, "error-link"))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// `POST /console/downloads`: a decision on a download.
    async fn decide(&self, r: &ConsoleRequest<'_>) -> Answer {
        let session = self.session(r).await?;
        self.check_form(r, &session)?;
        let form = query_pairs(std::str::from_utf8(&r.body).ok());
        let page = self.page(r, &session, &form).await?;
        let month = page.month;
        let entry = form.get("entry").cloned().unwrap_or_default();
        let body = serde_json::json!({
            "status": form.get("status").map(String::as_str).unwrap_or(""),
            "reason": form.get("reason").map(String::as_str).unwrap_or(""),
        });
        let path = [("month", month.to_string()), ("entryId", entry.clone())];
        let kind = OperationKind::ReviewPrivacyAccessDownload;
        match self.run(r, &session, kind, &path, Some(body)).await {
            Ok(Outcome::DownloadReview(decided)) if decided.notice.is_some() => {
                // What became of the request for an explanation is shown, not redirected.
                let review = self.review(r, &session, month).await?;
                let mut page = pages::Downloads::new(page, review, None);
                page.notice = decided.notice;
                Ok(html(StatusCode::OK, &page).into())
            }
            Ok(_) => Ok(redirect(&format!("{}#{entry}", Route::Downloads.month(month))).into()),
            Err(e) if server_side(&e) => Err(e.into()),
            Err(e) => {
                let review = self.review(r, &session, month).await?;
                let problem = pages::Problem::of(locale(r).lang, &e, Some(entry));
                Ok(html(status_of(e.code), &pages::Downloads::new(page, review, Some(problem)))
                    .into())
            }
        }
    }

    /// `POST /console/sign-off`: the month's sign-off.
    async fn sign_off(&self, r: &ConsoleRequest<'_>) -> Answer {
        let session = self.session(r).await?;
        self.check_form(r, &session)?;
        let form = query_pairs(std::str::from_utf8(&r.body).ok());
        let page = self.page(r, &session, &form).await?;
        let month = page.month;
        let note = form.get("note").map(|n| n.trim()).filter(|n| !n.is_empty());
        let body = serde_json::json!({ "note": note });
        let path = [("month", month.to_string())];
        let kind = OperationKind::SignOffPrivacyAccessReview;
        match self.run(r, &session, kind, &path, Some(body)).await {
            Ok(_) => Ok(redirect(&Route::Report.month(month)).into()),
            Err(e) if server_side(&e) => Err(e.into()),
            Err(e) => {
                let review = self.review(r, &session, month).await?;
                let problem = pages::Problem::of(locale(r).lang, &e, None);
                let chain = self.chain(&session, &page, &review.time_zone).await?;
                let form = pages::SignOffForm::new(page, review, Some(problem), chain);
                Ok(html(status_of(e.code), &form).into())
            }
        }
    }

    /// What a page of a month shows: the session's page and the month's review.
    async fn month_page(
        &self,
        r: &ConsoleRequest<'_>,
        query: &std::collections::HashMap<String, String>,
    ) -> Result<(ConsoleCaller, Page, Review), Failure> {
        let session = self.session(r).await?;
        let page = self.page(r, &session, query).await?;
        let review = self.review(r, &session, page.month).await?;
        Ok((session, page, review))
    }

    /// The month's part of the chain, verified now, with times in `zone`.
    pub(crate) async fn chain(
        &self,
        session: &ConsoleCaller,
        page: &Page,
        zone: &str,
    ) -> Result<pages::ChainView, Failure> {
        let month = page.month.to_string();
        let integrity = self.service.month_integrity(&session.caller, &month).await?;
        let (lang, verification) = (page.l.lang, &integrity.verification);
        Ok(pages::ChainView::of(lang, verification, integrity.checkpoint.as_ref(), zone))
    }

    /// The page of the month `query` names (the last month that has ended without one).
    pub(crate) async fn page(
        &self,
        r: &ConsoleRequest<'_>,
        session: &ConsoleCaller,
        query: &std::collections::HashMap<String, String>,
    ) -> Result<Page, Failure> {
        let running = self.service.running_month(&session.caller).await?;
        Ok(Page::new(session, PageMonth::from_query(query, running)?, running, locale(r)))
    }

    /// The month's review, read (and recorded) as the session's reviewer.
    async fn review(
        &self,
        r: &ConsoleRequest<'_>,
        session: &ConsoleCaller,
        month: PageMonth,
    ) -> Result<Review, Failure> {
        let path = [("month", month.to_string())];
        match self.run(r, session, OperationKind::GetPrivacyAccessReview, &path, None).await? {
            Outcome::Review(review) => Ok(*review),
            _ => Err(Failure::Service(ServiceError::internal())),
        }
    }

    /// Runs the operation `kind` as the session's reviewer, with the path parameters `path`
    /// and the JSON `body`, as the REST API would.
    async fn run(
        &self,
        r: &ConsoleRequest<'_>,
        session: &ConsoleCaller,
        kind: OperationKind,
        path: &[(&str, String)],
        body: Option<serde_json::Value>,
    ) -> Result<Outcome, ServiceError> {
        let body = body.map(|b| b.to_string().into_bytes());
        let arguments = Arguments::rest_call(kind, path, body);
        self.run_arguments(r, session, kind, arguments).await
    }

    /// Runs an operation with `arguments` as the session's reviewer.
    async fn run_arguments(
        &self,
        r: &ConsoleRequest<'_>,
        session: &ConsoleCaller,
        kind: OperationKind,
        arguments: Arguments,
    ) -> Result<Outcome, ServiceError> {
        let operation = Operation::parse(kind, arguments)?;
        let identity = Identity::Authenticated(Box::new(session.caller.clone()));
        let done = self.service.run(self.config.deadline, identity, r.context(), operation).await?;
        Ok(done.outcome)
    }

    /// Runs the operation `kind` as the session's reviewer with the query parameters
    /// `pairs`, as the REST API would.
    async fn run_query(
        &self,
        r: &ConsoleRequest<'_>,
        session: &ConsoleCaller,
        kind: OperationKind,
        pairs: Vec<(String, String)>,
    ) -> Result<Outcome, ServiceError> {
        let mut arguments = Arguments::rest(kind);
        arguments.query(pairs);
        self.run_arguments(r, session, kind, arguments).await
    }

    /// The live session the request's cookie names.
    async fn session(&self, r: &ConsoleRequest<'_>) -> Result<ConsoleCaller, Failure> {
        let Some(secret) = cookie(r.headers) else {
            return Err(Failure::SignIn(None));
        };
        match self.service.console_caller(&secret, r.client_ip).await {
            Ok(caller) => Ok(caller),
            Err(e) if e.code == ErrorCode::Unauthenticated => Err(Failure::SignIn(Some("ended"))),
            Err(e) => Err(e.into()),
        }
    }

    /// Refuses a form from another origin or without the session's CSRF token.
    fn check_form(&self, r: &ConsoleRequest<'_>, session: &ConsoleCaller) -> Result<(), Failure> {
        let form = query_pairs(std::str::from_utf8(&r.body).ok());
        let token = form.get("csrf").map(String::as_bytes).unwrap_or_default();
        let same = constant_time_eq(token, session.csrf.as_bytes());
        if self.same_origin(r.headers) && same { Ok(()) } else { Err(Failure::FORGED) }
    }

    /// Whether the request's `Origin` is the console's own. Browsers send it with every POST
    /// of a form; a request without one is refused.
    fn same_origin(&self, headers: &HeaderMap) -> bool {
        headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) == Some(self.origin.as_str())
    }

    /// The `Set-Cookie` value holding `secret` for `max_age`, or clearing the cookie.
    fn cookie(&self, secret: Option<(&str, Duration)>) -> HeaderValue {
        let secure = if self.secure { "; Secure" } else { "" };
        let value = match secret {
            Some((secret, max_age)) => format!(
                "{COOKIE}={secret}; Path=/console; HttpOnly; SameSite=Strict{secure}; Max-Age={}",
                max_age.as_secs()
            ),
            None => {
                format!("{COOKIE}=; Path=/console; HttpOnly; SameSite=Strict{secure}; Max-Age=0")
            }
        };
        HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    fn error_page(
        &self,
        status: StatusCode,
        problem: pages::Problem,
        l: Locale,
    ) -> Response<Vec<u8>> {
        html(status, &pages::ErrorPage { status: status.as_u16(), problem, l })
    }
}

/// The origin (`scheme://host[:port]`) of a URL.
fn origin_of(url: &str) -> String {
    let url = url.trim_end_matches('/');
    match url.find("://") {
        Some(i) => match url[i + 3..].find('/') {
            Some(j) => url[..i + 3 + j].to_owned(),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The session cookie's value, if the request carries one.
fn cookie(headers: &HeaderMap) -> Option<String> {
    cookie_named(headers, COOKIE)
}

/// The value of the cookie `name`, if the request carries one.
pub(crate) fn cookie_named(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value.to_owned())
}

/// The pairs of a query string or a form body, decoded; the first of a repeated name wins.
/// The language of a request's page, and the page's own address for the switch.
fn locale(r: &ConsoleRequest<'_>) -> Locale {
    let query = query_pairs(r.uri.query());
    Locale::new(Lang::of(&query, r.headers), r.uri.path(), &query)
}

/// The link's secret, the month and the download an explanation page names.
fn link_target(pairs: &std::collections::HashMap<String, String>) -> (String, String, String) {
    let get = |name: &str| pairs.get(name).map(|v| v.trim().to_owned()).unwrap_or_default();
    (get("link"), get("month"), get("entry"))
}

fn query_pairs(query: Option<&str>) -> std::collections::HashMap<String, String> {
    let mut pairs = std::collections::HashMap::new();
    for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        pairs.entry(name.into_owned()).or_insert_with(|| value.into_owned());
    }
    pairs
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether the failure is the server's (shown as an error page) rather than the reviewer's
/// (shown on the form).
fn server_side(e: &ServiceError) -> bool {
    e.code.http_status() >= 500
}

/// The HTTP status of an error code, as the REST API answers it.
fn status_of(code: ErrorCode) -> StatusCode {
    StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// A page.
fn html(status: StatusCode, page: &impl Template) -> Response<Vec<u8>> {
    let (status, body) = match page.render() {
        Ok(body) => (status, body),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "The page could not be rendered.".to_owned()),
    };
    let mut response = Response::new(body.into_bytes());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A redirect to `location` after a form (303 See Other) or to another page.
fn redirect(location: &str) -> Response<Vec<u8>> {
    let mut response = Response::new(Vec::new());
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn stylesheet() -> Response<Vec<u8>> {
    let mut response = Response::new(STYLESHEET.as_bytes().to_vec());
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/css; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
    response
}

/// The headers every console response carries.
fn secure_headers(headers: &mut HeaderMap) {
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("strict-origin"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        http::HeaderName::from_static("cross-origin-opener-policy"),
        HeaderValue::from_static("same-origin"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_the_scheme_host_and_port_of_the_public_url() {
        assert_eq!(origin_of("https://review.example.com/"), "https://review.example.com");
        assert_eq!(origin_of("http://127.0.0.1:8080/base"), "http://127.0.0.1:8080");
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers
            .insert(header::COOKIE, HeaderValue::from_static("a=1; recruitd_console=rcs_x; b=2"));
        assert_eq!(cookie(&headers).as_deref(), Some("rcs_x"));
        assert!(constant_time_eq(b"abc", b"abc") && !constant_time_eq(b"abc", b"abd"));
    }
}
