//! `recruit-client`: a typed async client of the recruitd API, for Rust services that embed
//! [`recruit_domain`] and call recruitd.
//!
//! - **One method per operation**, taking and returning `recruit-domain`'s identifiers and
//!   resources; a refusal is an [`Error::Api`] with the envelope's [`ErrorCode`].
//! - **Retries that are safe** ([`RetryPolicy`]): only connection failures, 429, 502, 503
//!   and 504, after the server's `Retry-After` or `RateLimit` reset, else full-jitter
//!   backoff, bounded in attempts and time. Every recording of accesses carries an
//!   `Idempotency-Key`, the same through all its retries and returned to the caller; a
//!   profile change carries `If-Match`, so a retry never applies it twice.
//! - **Lists are streams** over the server's cursors.
//! - **Downloads prove themselves** ([`Client::export`]): every line's hash is computed again
//!   and linked to the line before, and the chain must reach a checkpoint signed by a key the
//!   client trusts (the server's key set, or keys pinned with [`ClientBuilder::pin_key`]).
//!   An alteration, insertion, removal or cut is an error naming the position.
//! - [`follow`] keeps an NDJSON file equal to the ledger, resuming where it stopped.
//!
//! ```no_run
//! use futures_util::StreamExt;
//! use recruit_client::{ChainPoint, Client};
//!
//! # async fn run() -> Result<(), recruit_client::Error> {
//! let client = Client::builder("https://recruitd.example.com", "rtk_…").build()?;
//! let me = client.me().await?;
//! println!("acting as {} in {}", me.user.id, me.organization_id);
//! let mut export = client.export(ChainPoint::START).await?;
//! while let Some(line) = export.lines.next().await {
//!     let line = line?; // an altered, missing or extra entry is an error here
//!     println!("{} {}", line.point.position, line.line.entry["id"]);
//! }
//! # Ok(()) }
//! ```
//!
//! It depends on `recruit-domain` and on no other crate of recruitd: it speaks to a server
//! over HTTP only.

mod endpoint;
mod error;
mod export;
pub mod follow;
mod retry;
mod streams;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use futures_core::Stream;
use recruit_domain::model::{
    Job, Me, Organization, Page, PrivacyAuditLog, ReviewRules, SingleSignOn, SingleSignOnSettings,
    UserProfile,
};
use recruit_domain::{ErrorResponse, JobId, Month, PrivacyAuditLogId, Timestamp, UserId};
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Method, RequestBuilder, Response, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use endpoint::{ENDPOINTS, Endpoint};
pub use error::Error;
pub use export::{Export, VerifiedLine};
pub use recruit_domain::ErrorCode;
pub use recruit_domain::chain::{
    ChainBreak, ChainPoint, Checkpoint, ExportLine, Problem, ReceivedChain, VerifyingKey,
};
pub use recruit_domain::review::{DownloadReview, DownloadStatus, Review, SignOff};
pub use retry::RetryPolicy;

/// The media type of the JSON bodies the client sends.
const JSON: &str = "application/json";

/// A client of one recruitd server, acting as one API token. Cheap to clone: clones share
/// connections.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    /// The server's base URL.
    base: Url,
    token: String,
    retry: RetryPolicy,
    timeout: Duration,
    pinned: Vec<VerifyingKey>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("Client").field("base", &self.base).field("retry", &self.retry).finish()
    }
}

/// How a [`Client`] is set up: [`Client::builder`], then [`ClientBuilder::build`].
#[derive(Clone)]
pub struct ClientBuilder {
    base: String,
    token: String,
    timeout: Duration,
    connect_timeout: Duration,
    retry: RetryPolicy,
    user_agent: String,
    pinned: Vec<VerifyingKey>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("ClientBuilder")
            .field("base", &self.base)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// How long one attempt of a call may take, from sending to the whole answer (30 s). A
    /// download's lines are not bounded by it, only each wait for more of them.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long opening a connection may take (10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How failed calls are retried ([`RetryPolicy::default`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The `User-Agent` sent (`recruit-client/VERSION`).
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// Trusts checkpoints signed by `key` only (repeat for several), instead of the key set
    /// the server publishes: a server, or whoever took its place, cannot then vouch for a
    /// chain with a key of its own.
    pub fn pin_key(mut self, key: VerifyingKey) -> Self {
        self.pinned.push(key);
        self
    }

    /// The client. Fails when the base URL is not an `http` or `https` URL.
    pub fn build(self) -> Result<Client, Error> {
        let base = self.base.trim_end_matches('/').to_owned();
        let parsed = Url::parse(&base).map_err(|e| Error::Config(format!("{base}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.cannot_be_a_base() {
            return Err(Error::Config(format!("{base}: not an http or https URL")));
        }
        // reqwest is built without a crypto provider: ring's, unless the process chose one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .user_agent(self.user_agent)
            .connect_timeout(self.connect_timeout)
            .read_timeout(self.timeout)
            .build()
            .map_err(|e| Error::Config(e.to_string()))?;
        Ok(Client {
            http,
            base: parsed,
            token: self.token,
            retry: self.retry,
            timeout: self.timeout,
            pinned: self.pinned,
        })
    }
}

/// A recording of accesses as the server stored it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedBatch {
    /// The idempotency key it was sent with: send it again to learn the outcome of the same
    /// batch.
    pub key: String,
    /// The entries stored, with their ids.
    pub entries: Vec<PrivacyAuditLog>,
    /// Whether the server answered with the batch stored by an earlier attempt with this key.
    pub replayed: bool,
}

/// The filters of a list of the privacy ledger: a window of time, and optionally one value
/// per field (the API's `account_id`, `activity_category`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogQuery {
    /// Entries at or after this time.
    pub timestamp_gte: Timestamp,
    /// Entries before this time.
    pub timestamp_lt: Timestamp,
    /// Entries a page (1 to 100; the server's default when none).
    pub limit: Option<u8>,
    /// Only this account's entries.
    pub account_id: Option<String>,
    /// Only entries of this activity category (`READ`, `DOWNLOAD`, …).
    pub activity_category: Option<String>,
    /// Only entries of this product area.
    pub access_menu: Option<String>,
    /// Only entries about this user or candidate.
    pub data_subject_id: Option<String>,
    /// Only entries that recorded this address.
    pub ip_address: Option<String>,
    /// Only entries outside (`true`) or within (`false`) the organization's work hours.
    pub outside_work_hours: Option<bool>,
}

impl LogQuery {
    /// Every entry from `timestamp_gte` to before `timestamp_lt`.
    pub fn new(timestamp_gte: Timestamp, timestamp_lt: Timestamp) -> Self {
        Self {
            timestamp_gte,
            timestamp_lt,
            limit: None,
            account_id: None,
            activity_category: None,
            access_menu: None,
            data_subject_id: None,
            ip_address: None,
            outside_work_hours: None,
        }
    }

    fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = vec![
            ("timestamp_gte", self.timestamp_gte.to_string()),
            ("timestamp_lt", self.timestamp_lt.to_string()),
        ];
        let text = [
            ("account_id", &self.account_id),
            ("activity_category", &self.activity_category),
            ("access_menu", &self.access_menu),
            ("data_subject_id", &self.data_subject_id),
            ("ip_address", &self.ip_address),
        ];
        pairs.extend(text.into_iter().filter_map(|(k, v)| Some((k, v.clone()?))));
        pairs.extend(self.limit.map(|l| ("limit", l.to_string())));
        pairs.extend(self.outside_work_hours.map(|b| ("outside_work_hours", b.to_string())));
        pairs
    }
}

/// A new idempotency key: a UUIDv7, unique to one logical call.
pub fn new_idempotency_key() -> String {
    recruit_domain::Uuid::now_v7().to_string()
}

impl Client {
    /// A builder of a client of the server at `base_url` (`https://…`), acting as `token`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use recruit_client::{Client, RetryPolicy};
    ///
    /// let client = Client::builder("https://recruitd.example.com", "rtk_…")
    ///     .timeout(Duration::from_secs(10))
    ///     .retry(RetryPolicy { max_attempts: 8, ..RetryPolicy::default() })
    ///     .user_agent("billing-sync/2.1")
    ///     .build()
    ///     .unwrap();
    /// # drop(client);
    /// ```
    pub fn builder(base_url: impl Into<String>, token: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            base: base_url.into(),
            token: token.into(),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            user_agent: concat!("recruit-client/", env!("CARGO_PKG_VERSION")).to_owned(),
            pinned: vec![],
        }
    }

    /// The URL of `endpoint` with its path `segments` and `query`.
    fn url(
        &self,
        endpoint: Endpoint,
        segments: &[String],
        query: &[(&str, String)],
    ) -> Result<Url, Error> {
        endpoint.url(&self.base, segments, query)
    }

    /// Sends what `request` builds, retried by the policy; the first success, or the error.
    async fn send(&self, request: impl Fn() -> RequestBuilder) -> Result<Response, Error> {
        self.send_retried(request, false).await
    }

    /// Sends what `request` builds, retried by the policy; with `unsent_only`, retried only
    /// when the request was certainly not carried out (no connection, or a rate limit): what a
    /// request that is not idempotent may be retried after.
    async fn send_retried(
        &self,
        request: impl Fn() -> RequestBuilder,
        unsent_only: bool,
    ) -> Result<Response, Error> {
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (failure, headers) = match request().bearer_auth(&self.token).send().await {
                Ok(r) if r.status().is_success() => return Ok(r),
                Ok(r) if unsent_only && r.status() != reqwest::StatusCode::TOO_MANY_REQUESTS => {
                    return Err(refusal(r).await);
                }
                Err(e) if unsent_only && !e.is_connect() => return Err(Error::Transport(e)),
                Ok(r) if retry::retryable(r.status()) => {
                    let headers = r.headers().clone();
                    (refusal(r).await, Some(headers))
                }
                Ok(r) => return Err(refusal(r).await),
                // Not sent, or sent and cut: the request is safe to send again.
                Err(e) if e.is_connect() || e.is_timeout() || e.is_request() || e.is_body() => {
                    (Error::Transport(e), None)
                }
                Err(e) => return Err(Error::Transport(e)),
            };
            let wait = self.retry.wait(attempt, headers.as_ref());
            if attempt >= self.retry.max_attempts
                || started.elapsed() + wait > self.retry.max_elapsed
            {
                return Err(match attempt {
                    1 => failure,
                    _ => Error::GaveUp {
                        attempts: attempt,
                        elapsed: started.elapsed(),
                        last: Box::new(failure),
                    },
                });
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// Sends `body` (of `media_type`) with `method` to `url`, with the header `extra` if
    /// given, retried by the policy; the JSON of the first success.
    async fn send_body<T: DeserializeOwned>(
        &self,
        method: Method,
        url: Url,
        media_type: &str,
        body: Vec<u8>,
        extra: Option<(&str, &str)>,
    ) -> Result<(T, HeaderMap), Error> {
        let response = self
            .send(|| {
                let request = self
                    .http
                    .request(method.clone(), url.clone())
                    .timeout(self.timeout)
                    .header("content-type", media_type)
                    .body(body.clone());
                match extra {
                    Some((name, value)) => request.header(name, value),
                    None => request,
                }
            })
            .await?;
        let headers = response.headers().clone();
        Ok((json(response).await?, headers))
    }

    async fn get<T: DeserializeOwned>(&self, url: Url) -> Result<T, Error> {
        let response = self.send(|| self.http.get(url.clone()).timeout(self.timeout)).await?;
        json(response).await
    }

    /// `GET /v1/me`: the user and token the client acts as, and their organization.
    pub async fn me(&self) -> Result<Me, Error> {
        self.get(self.url(endpoint::GET_ME, &[], &[])?).await
    }

    /// `GET /v1/organization`: the token's organization and its settings.
    pub async fn organization(&self) -> Result<Organization, Error> {
        self.get(self.url(endpoint::GET_ORGANIZATION, &[], &[])?).await
    }

    /// `GET /v1/jobs/{jobId}`: a job of the token's organization.
    pub async fn job(&self, id: JobId) -> Result<Job, Error> {
        self.get(self.url(endpoint::GET_JOB, &[id.to_string()], &[])?).await
    }

    /// `GET /v1/users/{userId}`: a user's profile, with its entity tag (`etag`) to change it.
    pub async fn user(&self, id: UserId) -> Result<UserProfile, Error> {
        self.get(self.url(endpoint::GET_USER, &[id.to_string()], &[])?).await
    }

    /// `PATCH /v1/users/{userId}`: changes a profile by a JSON merge patch, if it is still the
    /// one tagged `etag` (`If-Match`). A profile changed since is [`ErrorCode::Conflict`]:
    /// read it again and decide. Retried safely: a change that was made changed the tag, so a
    /// repeat of it is refused, not made twice.
    pub async fn update_user(
        &self,
        id: UserId,
        etag: &str,
        patch: &serde_json::Value,
    ) -> Result<UserProfile, Error> {
        let url = self.url(endpoint::UPDATE_USER, &[id.to_string()], &[])?;
        let body = serde_json::to_vec(patch)
            .map_err(|e| Error::Request(format!("the patch cannot be sent as JSON: {e}")))?;
        let merge_patch = "application/merge-patch+json";
        let if_match = Some(("if-match", etag));
        Ok(self.send_body(Method::PATCH, url, merge_patch, body, if_match).await?.0)
    }

    /// `GET /v1/audit-logs/privacy`: one page of the privacy ledger under `query`, from
    /// `cursor` (none: the first page).
    pub async fn privacy_audit_log_page(
        &self,
        query: &LogQuery,
        cursor: Option<&str>,
    ) -> Result<Page<PrivacyAuditLog>, Error> {
        let mut pairs = query.pairs();
        pairs.extend(cursor.map(|c| ("cursor", c.to_owned())));
        self.get(self.url(endpoint::LIST_PRIVACY_AUDIT_LOGS, &[], &pairs)?).await
    }

    /// Every entry of the privacy ledger under `query`, page after page, as a stream. Each
    /// read of a page is recorded by the server in its audit ledger.
    ///
    /// ```no_run
    /// # async fn run(client: recruit_client::Client) -> Result<(), recruit_client::Error> {
    /// use futures_util::TryStreamExt;
    /// use recruit_client::LogQuery;
    /// use recruit_domain::Timestamp;
    ///
    /// let month = LogQuery {
    ///     activity_category: Some("DOWNLOAD".into()),
    ///     ..LogQuery::new("2026-11-01T00:00:00Z".parse().unwrap(), "2026-12-01T00:00:00Z".parse().unwrap())
    /// };
    /// let downloads: Vec<_> = client.privacy_audit_logs(month).try_collect().await?;
    /// # Ok(()) }
    /// ```
    pub fn privacy_audit_logs(
        &self,
        query: LogQuery,
    ) -> impl Stream<Item = Result<PrivacyAuditLog, Error>> + Send + '_ {
        struct Pages {
            query: LogQuery,
            cursor: Option<String>,
            entries: VecDeque<PrivacyAuditLog>,
            done: bool,
        }
        let pages = Pages { query, cursor: None, entries: VecDeque::new(), done: false };
        futures_util::stream::try_unfold(pages, move |mut pages| async move {
            loop {
                if let Some(entry) = pages.entries.pop_front() {
                    return Ok(Some((entry, pages)));
                }
                if pages.done {
                    return Ok(None);
                }
                let page =
                    self.privacy_audit_log_page(&pages.query, pages.cursor.as_deref()).await?;
                pages.entries.extend(page.data);
                pages.done = page.pagination.next_cursor.is_none();
                pages.cursor = page.pagination.next_cursor;
            }
        })
    }

    /// `POST /v1/audit-logs/privacy`: records a batch of accesses (each entry as the API
    /// takes it), with the idempotency `key` given or a new one. Retries send the same key,
    /// so a batch whose answer was lost is stored once; the key is in the result.
    pub async fn record_privacy_accesses<E: Serialize>(
        &self,
        entries: &[E],
        key: Option<&str>,
    ) -> Result<RecordedBatch, Error> {
        let key = key.map_or_else(new_idempotency_key, str::to_owned);
        let url = self.url(endpoint::RECORD_PRIVACY_ACCESSES, &[], &[])?;
        #[derive(Serialize)]
        struct Batch<'a, E> {
            entries: &'a [E],
        }
        let body = serde_json::to_vec(&Batch { entries })
            .map_err(|e| Error::Request(format!("the entries cannot be sent as JSON: {e}")))?;
        let quoted = format!("\"{}\"", key.replace('\\', "\\\\").replace('"', "\\\""));
        #[derive(serde::Deserialize)]
        struct Stored {
            entries: Vec<PrivacyAuditLog>,
        }
        let key_header = Some(("idempotency-key", quoted.as_str()));
        let (stored, headers): (Stored, _) =
            self.send_body(Method::POST, url, JSON, body, key_header).await?;
        let replayed = header(&headers, "idempotent-replayed") == Some("true");
        Ok(RecordedBatch { key, entries: stored.entries, replayed })
    }

    /// `GET /v1/audit-logs/privacy/checkpoints/latest`: the latest signed checkpoint of the
    /// organization's privacy ledger, as the server gives it (not verified here: see
    /// [`Client::trusted_checkpoint`]).
    pub async fn latest_checkpoint(&self) -> Result<Checkpoint, Error> {
        self.get(self.url(endpoint::GET_LATEST_CHECKPOINT, &[], &[])?).await
    }

    /// `GET /.well-known/recruitd-checkpoint-keys`: the keys the server signs checkpoints
    /// with.
    pub async fn checkpoint_keys(&self) -> Result<Vec<VerifyingKey>, Error> {
        let mut url = self.base.clone();
        url.set_path(&format!(
            "{}{}",
            self.base.path().trim_end_matches('/'),
            endpoint::CHECKPOINT_KEYS
        ));
        let set: serde_json::Value = self.get(url).await?;
        let Some(keys) = set.get("keys").and_then(serde_json::Value::as_array) else {
            return Err(Error::Decode("the checkpoint key set has no `keys` array".into()));
        };
        // A key of a kind this client does not know is passed over, as a JWK set's reader does.
        Ok(keys.iter().filter_map(recruit_domain::chain::key_from_jwk).collect())
    }

    /// The latest checkpoint, its signature verified with a pinned key, or else with a key
    /// of the server's key set; and the hash it signs.
    pub async fn trusted_checkpoint(&self) -> Result<(Checkpoint, [u8; 32]), Error> {
        let checkpoint = self.latest_checkpoint().await?;
        let keys = match self.pinned.is_empty() {
            true => self.checkpoint_keys().await?,
            false => self.pinned.clone(),
        };
        let key = keys
            .iter()
            .find(|k| recruit_domain::chain::key_id(k) == checkpoint.key_id)
            .ok_or_else(|| {
                Error::Untrusted(format!(
                    "the checkpoint at position {} is signed by key {}, which is not trusted",
                    checkpoint.position, checkpoint.key_id
                ))
            })?;
        let hash = checkpoint.verify(key).map_err(|e| {
            Error::Untrusted(format!("the checkpoint at position {}: {e}", checkpoint.position))
        })?;
        Ok((checkpoint, hash))
    }

    /// `GET /v1/audit-logs/privacy/reviews/{month}`: a month's access review (`YYYY-MM`): per
    /// account, per day and per weekday hour, every download with where its review stands,
    /// and the sign-off if the month was signed off ([`Review::signed_off`]).
    ///
    /// ```no_run
    /// # async fn run(client: recruit_client::Client) -> Result<(), recruit_client::Error> {
    /// let review = client.privacy_access_review("2026-10".parse().unwrap()).await?;
    /// for account in review.accounts.iter().filter(|a| !a.flags.is_empty()) {
    ///     println!("{}: {:?}", account.account_id, account.flags);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn privacy_access_review(&self, month: Month) -> Result<Review, Error> {
        self.get(self.url(endpoint::GET_PRIVACY_ACCESS_REVIEW, &[month.to_string()], &[])?).await
    }

    /// `PUT /v1/audit-logs/privacy/reviews/{month}/downloads/{entryId}`: a reviewer's
    /// decision on a download (`CONFIRMED`, `EXPLANATION_REQUESTED` or `REJECTED`) with its
    /// reason. Asking for an explanation e-mails the person who downloaded, when the server
    /// sends e-mail (`notice` says).
    /// Safe to retry: the same decision again changes nothing.
    pub async fn review_download(
        &self,
        month: Month,
        entry: PrivacyAuditLogId,
        status: DownloadStatus,
        reason: &str,
    ) -> Result<DownloadReview, Error> {
        let segments = [month.to_string(), entry.to_string()];
        let url = self.url(endpoint::REVIEW_PRIVACY_ACCESS_DOWNLOAD, &segments, &[])?;
        let body = serde_json::json!({ "status": status, "reason": reason }).to_string();
        Ok(self.send_body(Method::PUT, url, JSON, body.into_bytes(), None).await?.0)
    }

    /// `GET /v1/audit-logs/privacy/review-rules`: the rules the organization's monthly review
    /// flags accounts by.
    pub async fn review_rules(&self) -> Result<ReviewRules, Error> {
        self.get(self.url(endpoint::GET_PRIVACY_REVIEW_RULES, &[], &[])?).await
    }

    /// `PUT /v1/audit-logs/privacy/review-rules`: replaces them; the change is recorded in the
    /// API audit ledger. Safe to retry: the same rules again leave them as they are.
    pub async fn set_review_rules(&self, rules: &ReviewRules) -> Result<ReviewRules, Error> {
        let url = self.url(endpoint::SET_PRIVACY_REVIEW_RULES, &[], &[])?;
        let body = serde_json::to_vec(rules)
            .map_err(|e| Error::Request(format!("the rules cannot be sent as JSON: {e}")))?;
        Ok(self.send_body(Method::PUT, url, JSON, body, None).await?.0)
    }

    /// `GET /v1/organization/sso`: the organization's single sign-on to the console, without
    /// its secret ([`ErrorCode::NotFound`] when it has none).
    pub async fn single_sign_on(&self) -> Result<SingleSignOn, Error> {
        self.get(self.url(endpoint::GET_SINGLE_SIGN_ON, &[], &[])?).await
    }

    /// `PUT /v1/organization/sso`: sets it, once the server has discovered the provider at
    /// the issuer ([`ErrorCode::ValidationFailed`] naming `issuer` otherwise); recorded in the
    /// API audit ledger. Safe to retry: the same settings again leave them as they are.
    pub async fn set_single_sign_on(
        &self,
        settings: &SingleSignOnSettings,
    ) -> Result<SingleSignOn, Error> {
        let url = self.url(endpoint::SET_SINGLE_SIGN_ON, &[], &[])?;
        let body = serde_json::to_vec(settings)
            .map_err(|e| Error::Request(format!("the settings cannot be sent as JSON: {e}")))?;
        Ok(self.send_body(Method::PUT, url, JSON, body, None).await?.0)
    }

    /// `DELETE /v1/organization/sso`: removes it (none to remove is no error); recorded in
    /// the API audit ledger. Safe to retry.
    pub async fn remove_single_sign_on(&self) -> Result<(), Error> {
        let url = self.url(endpoint::REMOVE_SINGLE_SIGN_ON, &[], &[])?;
        self.send(|| self.http.delete(url.clone()).timeout(self.timeout)).await.map(drop)
    }

    /// `PUT /v1/audit-logs/privacy/reviews/{month}/downloads/{entryId}/explanation`: the
    /// explanation of a download by the person who made it, while a reviewer's request for
    /// one is open ([`ErrorCode::Conflict`] otherwise). Safe to retry: the same explanation
    /// again is answered with the one kept.
    pub async fn explain_download(
        &self,
        month: Month,
        entry: PrivacyAuditLogId,
        explanation: &str,
    ) -> Result<DownloadReview, Error> {
        let segments = [month.to_string(), entry.to_string()];
        let url = self.url(endpoint::EXPLAIN_PRIVACY_ACCESS_DOWNLOAD, &segments, &[])?;
        let body = serde_json::json!({ "explanation": explanation }).to_string();
        Ok(self.send_body(Method::PUT, url, JSON, body.into_bytes(), None).await?.0)
    }

    /// `POST /v1/audit-logs/privacy/reviews/{month}/sign-off`: signs off a month, with a note
    /// when one is needed. The answer is the sign-off as recorded, with what the server added:
    /// the month's figures, the chain's verification and the latest signed checkpoint. Safe to
    /// retry: the same reviewer's same sign-off is answered with the one recorded; another is
    /// [`ErrorCode::Conflict`].
    pub async fn sign_off_review(
        &self,
        month: Month,
        note: Option<&str>,
    ) -> Result<SignOff, Error> {
        let url = self.url(endpoint::SIGN_OFF_PRIVACY_ACCESS_REVIEW, &[month.to_string()], &[])?;
        let body = serde_json::json!({ "note": note }).to_string();
        Ok(self.send_body(Method::POST, url, JSON, body.into_bytes(), None).await?.0)
    }
}

/// The value of header `name`, if it is text.
fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok())
}

/// The JSON body of a successful answer.
async fn json<T: DeserializeOwned>(response: Response) -> Result<T, Error> {
    let bytes = response.bytes().await.map_err(Error::Transport)?;
    serde_json::from_slice(&bytes).map_err(|e| Error::Decode(e.to_string()))
}

/// The error an answer that is not a success stands for.
async fn refusal(response: Response) -> Error {
    let status = response.status().as_u16();
    let retry_after = retry::retry_after(response.headers(), std::time::SystemTime::now());
    match response.bytes().await {
        Ok(bytes) => match serde_json::from_slice::<ErrorResponse>(&bytes) {
            Ok(envelope) => Error::Api {
                status,
                code: envelope.error.code,
                message: envelope.error.message,
                details: envelope.error.details,
                retry_after,
            },
            Err(_) => Error::Decode(format!(
                "status {status} without an error envelope: {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            )),
        },
        Err(e) => Error::Transport(e),
    }
}
