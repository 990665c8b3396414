//! What every request goes through: request id, body limit, routing, authentication, the
//! operation under a deadline and a panic barrier, rendering, and one log line.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Limited};
use hyper::body::Body as HttpBody;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response};
use hyper_util::service::TowerToHyperService;
use recruit_domain::{ErrorCode, Scope};
use recruit_mcp::{HttpCaller, McpService, Tools, ToolsConfig, transport};
use recruit_service::{
    Arguments, BATCH_BODY_LIMIT, BODY_LIMIT, Identity, Operation, OperationKind, Outcome,
    RequestContext, Service, ServiceError, Via, guarded, input::too_large, log_failure,
};

use crate::metrics::Metrics;
use crate::render::{self, Body};
use crate::route::{Public, Routing, route};

/// What a request to the tool interface may carry beyond its tool's arguments: the JSON-RPC
/// envelope around them.
const MCP_ENVELOPE: usize = 16 * 1024;

/// The request id's header, named once rather than parsed from text for every request.
const X_REQUEST_ID: header::HeaderName = header::HeaderName::from_static("x-request-id");

/// The largest request the tool interface reads: the largest arguments of any tool, in their
/// envelope. Each tool's own limit is checked on its arguments.
pub(crate) const MCP_BODY_LIMIT: usize = BATCH_BODY_LIMIT + MCP_ENVELOPE;

/// The arguments of a REST request for `kind` from its path parameters and query string.
pub(crate) fn rest_arguments(
    kind: OperationKind,
    path: Vec<(&'static str, String)>,
    query: Option<&str>,
) -> Arguments {
    let mut arguments = Arguments::rest(kind);
    for (placeholder, value) in path {
        arguments.path(placeholder, value);
    }
    let pairs = form_urlencoded::parse(query.unwrap_or_default().as_bytes());
    arguments.query(pairs.map(|(k, v)| (k.into_owned(), v.into_owned())));
    arguments
}

/// The HTTP layer's settings.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// The URL clients reach this server at; `docs_url` links are built from it.
    pub public_base_url: String,
    /// The longest a request may take before it is answered with UPSTREAM_TIMEOUT.
    pub request_deadline: Duration,
    /// How long a client may take to send its request headers.
    pub header_read_timeout: Duration,
    /// The largest request head (request line and headers) accepted, in bytes.
    pub max_header_bytes: usize,
    /// How long in-flight requests may run after shutdown begins.
    pub shutdown_grace: Duration,
    /// How long a connection may stay open with no request in flight and no byte moving:
    /// one that never sends anything, or sits idle between keep-alive requests.
    pub idle_timeout: Duration,
    /// The most client connections open at once; past it new ones are closed at once. Lowered
    /// at start to what the process's limit of open files allows.
    pub max_connections: usize,
    /// The most connections one client address may have open at once; past it its new ones
    /// are closed at once. `None`: a quarter of `max_connections`. Trusted proxies are exempt.
    pub max_connections_per_address: Option<usize>,
    /// The proxies (load balancers) whose `X-Forwarded-For` is believed: a request whose peer
    /// is in one of these blocks is taken to come from the address the proxies forwarded.
    /// Empty: the peer is the client.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// The origins whose pages may call the tool interface (`Origin` values such as
    /// `https://agent.example.com`). A request to `/mcp` with any other `Origin` is refused;
    /// requests without one (agents, command-line clients) are not affected.
    pub mcp_allowed_origins: Vec<String>,
    /// Whether the review console is served at `/console`.
    pub console: bool,
    /// The most bytes of request bodies the server holds at once. Each body reserves its
    /// declared length (its limit when it declares none) before it is read and keeps it until
    /// its request is answered; one that finds no room waits for it within the request
    /// deadline, then is refused with UNAVAILABLE. A body larger than all of it waits for all
    /// of it.
    pub max_body_memory: usize,
}

impl HttpConfig {
    /// Defaults: 10 s per request, 10 s for headers, 16 KiB heads, 10 s grace,
    /// idle connections closed after 30 s, at most 4 096 connections (a quarter of them per
    /// client address), 8 MiB of request bodies held at once, no origin allowed to call
    /// the tool interface from a browser, the review console served.
    pub fn new(public_base_url: impl Into<String>) -> Self {
        Self {
            public_base_url: public_base_url.into(),
            request_deadline: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(10),
            max_header_bytes: 16 * 1024,
            shutdown_grace: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_connections: 4096,
            max_connections_per_address: None,
            trusted_proxies: vec![],
            mcp_allowed_origins: vec![],
            console: true,
            max_body_memory: 8 << 20,
        }
    }
}

/// The REST API and the tool interface: a service and the HTTP settings.
pub struct Api {
    service: Arc<Service>,
    config: HttpConfig,
    metrics: Metrics,
    mcp: TowerToHyperService<McpService>,
    console: Option<recruit_console::Console>,
    /// Room for request bodies, in KiB ([`HttpConfig::max_body_memory`]).
    body_room: tokio::sync::Semaphore,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api").field("config", &self.config).finish_non_exhaustive()
    }
}

/// The room a request's body holds until the request is answered; none for an empty body.
type BodyRoom<'a> = Option<tokio::sync::SemaphorePermit<'a>>;

/// [`HttpConfig::max_body_memory`] in KiB, at least one.
fn body_room_kib(config: &HttpConfig) -> u32 {
    u32::try_from(config.max_body_memory.div_ceil(1024)).unwrap_or(u32::MAX).max(1)
}

/// A body that found no room within the request deadline: nothing of it was read.
fn no_body_room(config: &HttpConfig, declared: u64) -> ServiceError {
    ServiceError {
        retry_after: Some(Duration::from_secs(1)),
        ..ServiceError::new(
            ErrorCode::Unavailable,
            format!(
                "The server holds at most {} bytes of request bodies at once and found no room \
                 for this one's {declared} within {} ms. Nothing was read or written: send it \
                 again.",
                config.max_body_memory,
                config.request_deadline.as_millis()
            ),
        )
    }
}

/// A body that did not arrive whole within the request deadline.
fn body_too_slow(config: &HttpConfig) -> ServiceError {
    ServiceError {
        cause: Some("the request body did not arrive within the request deadline".into()),
        ..ServiceError::new(
            ErrorCode::UpstreamTimeout,
            format!(
                "The request body did not arrive whole within {} ms. Nothing was written: send \
                 it again.",
                config.request_deadline.as_millis()
            ),
        )
    }
}

/// What is left of a request's time until `until`: none once it has passed.
fn left(until: Instant) -> Duration {
    until.saturating_duration_since(Instant::now())
}

/// A request id a client may choose: 1 to 128 characters of letters, digits, `-`, `_`, `.`.
fn sane_request_id(value: &HeaderValue) -> Option<String> {
    let s = value.to_str().ok()?;
    let ok = (1..=128).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    ok.then(|| s.to_owned())
}

/// The secret of the `Authorization` header (`Bearer <secret>`, the scheme in any case), if
/// there is one. Two or more headers are refused: which one the caller meant is not for the
/// server to guess (RFC 9110 allows one such field).
fn bearer_secret(headers: &hyper::HeaderMap) -> Result<Option<String>, ServiceError> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(ServiceError::new(
            ErrorCode::Unauthenticated,
            "The request carries more than one Authorization header; send exactly one.",
        ));
    }
    Ok(first.and_then(|v| v.to_str().ok()).and_then(bearer_token).map(str::to_owned))
}

/// The token of an `Authorization` header value: `Bearer <token>`, the scheme in any case.
fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

impl Api {
    /// A SCIM request, answered in SCIM's own messages whatever happens, the body's limit
    /// and the deadline included.
    async fn scim<B>(
        &self,
        request: Request<B>,
        below: &str,
        client_ip: Option<IpAddr>,
        until: Instant,
    ) -> Response<Body>
    where
        B: HttpBody,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (parts, body) = request.into_parts();
        let base = format!(
            "{}{}",
            self.config.public_base_url.trim_end_matches('/'),
            crate::route::SCIM_BASE
        );
        let answer = async {
            let secret = bearer_secret(&parts.headers)?;
            let (body, _room) = self.read_body(body, BODY_LIMIT, until).await?;
            let content_type =
                parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
            let request = recruit_service::ScimRequest {
                method: parts.method.as_str(),
                path: below,
                query: parts.uri.query().unwrap_or(""),
                content_type,
                body: &body,
                secret: secret.as_deref(),
                client_ip,
                base_url: &base,
            };
            match tokio::time::timeout(left(until), self.service.scim(request)).await {
                Ok(response) => Ok(response),
                Err(_) => Err(ServiceError::new(
                    ErrorCode::Unavailable,
                    "The request did not finish in time; try again.",
                )),
            }
        };
        let response = answer.await.unwrap_or_else(recruit_service::ScimResponse::refused);
        render::scim(response)
    }

    /// The API over `service`.
    pub fn new(service: Arc<Service>, config: HttpConfig) -> Self {
        let mut metrics = Metrics::new();
        let counted = Arc::clone(&service);
        metrics.set_service_counts(Box::new(move || {
            (counted.rate_limit_refusals(), counted.ledger_records(), counted.heavy_reads())
        }));
        let deliveries = service.deliveries();
        metrics.set_stream_figures(Box::new(move || deliveries.figures()));
        let tools = ToolsConfig {
            public_base_url: config.public_base_url.clone(),
            deadline: config.request_deadline,
        };
        let mcp = TowerToHyperService::new(Tools::http(Arc::clone(&service), tools));
        let console = config.console.then(|| {
            let console = recruit_console::ConsoleConfig {
                public_base_url: config.public_base_url.clone(),
                deadline: config.request_deadline,
            };
            recruit_console::Console::new(Arc::clone(&service), console)
        });
        let body_room = tokio::sync::Semaphore::new(body_room_kib(&config) as usize);
        Self { service, config, metrics, mcp, console, body_room }
    }

    /// Reports the database pool's numbers in the metrics, read from `status` at every scrape.
    #[must_use]
    pub fn with_pool_status(
        mut self,
        status: impl Fn() -> recruit_ports::PoolStatus + Send + Sync + 'static,
    ) -> Self {
        self.metrics.set_pool_status(Box::new(status));
        self
    }

    /// Reports the log lines lost so far (to a full, closed or failing sink) in the metrics,
    /// read from `dropped` at every scrape.
    #[must_use]
    pub fn with_dropped_log_lines(
        mut self,
        dropped: impl Fn() -> u64 + Send + Sync + 'static,
    ) -> Self {
        self.metrics.set_log_drops(Box::new(dropped));
        self
    }

    /// The settings.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    pub(crate) fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The whole HTTP/1.1 response, in the error envelope, that replaces hyper's own empty
    /// answer (`status` 400, 414 or 431) to a request it could not parse: counted, logged, and
    /// the connection closed after it.
    pub(crate) fn protocol_refusal(&self, status: u16) -> Vec<u8> {
        let error = match status {
            431 => ServiceError::new(
                ErrorCode::PayloadTooLarge,
                format!(
                    "The request head (request line and headers) exceeds {} bytes.",
                    self.config.max_header_bytes
                ),
            ),
            414 => ServiceError::new(
                ErrorCode::PayloadTooLarge,
                "The request target (path and query) is too long.",
            ),
            _ => ServiceError::new(
                ErrorCode::ValidationFailed,
                "The request could not be parsed: its request line or a header is not valid \
                 HTTP/1.1 (a character that is not allowed, or a malformed line).",
            ),
        };
        let request_id = uuid::Uuid::now_v7().simple().to_string();
        self.metrics.observe("unparsable", status, 0.0);
        tracing::info!(http.status = status, request.id = %request_id, "request refused unparsed");
        render::http1_error(status, &error, &self.config.public_base_url, &request_id)
    }

    /// Answers one request from the TCP peer `peer`. Never fails: every failure is a response
    /// in the error envelope.
    pub async fn handle<B>(&self, request: Request<B>, peer: Option<IpAddr>) -> Response<Body>
    where
        B: HttpBody + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let started = Instant::now();
        let client_ip =
            crate::client::client_address(peer, request.headers(), &self.config.trusted_proxies);
        let request_id = request
            .headers()
            .get(&X_REQUEST_ID)
            .and_then(sane_request_id)
            .unwrap_or_else(|| uuid::Uuid::now_v7().simple().to_string());
        let method = request.method().clone();
        let routing = route(&method, request.uri().path());
        let template = match &routing {
            Routing::Api(kind, _) => kind.spec().path,
            Routing::Public(_, t) | Routing::MethodNotAllowed(t, _) => t,
            Routing::Mcp => "/mcp",
            Routing::Console => "/console",
            Routing::Scim(_) => "/scim/v2",
            Routing::NotFound => "unknown",
        };
        // A known path asked with a method it does not serve: 405 with `Allow`, as HTTP
        // clients and tools expect, in the envelope with the code NOT_IMPLEMENTED.
        let allow = match routing {
            Routing::MethodNotAllowed(_, allow) => Some(allow),
            _ => None,
        };
        let mcp = routing == Routing::Mcp;
        let mut organization = None;
        // One deadline for the whole request: authentication, the body and the operation.
        let until = started + self.config.request_deadline;
        let result =
            self.answer(request, routing, &request_id, client_ip, until, &mut organization).await;
        let mut response = match result {
            Ok(response) => response,
            // Trouble on the server's side was logged where it happened, once.
            Err(e) => {
                let mut response = render::error(&e, &self.config.public_base_url);
                if let Some(allow) = allow {
                    *response.status_mut() = hyper::StatusCode::METHOD_NOT_ALLOWED;
                    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
                }
                // The tool interface's clients learn where to read about it (RFC 9728).
                if mcp && e.code == ErrorCode::Unauthenticated {
                    let error = if e.no_credential { "" } else { r#"error="invalid_token", "# };
                    let value = format!(
                        r#"Bearer {error}resource_metadata="{}""#,
                        self.protected_resource_url()
                    );
                    if let Ok(value) = HeaderValue::from_str(&value) {
                        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
                    }
                }
                response
            }
        };
        if let Ok(value) = HeaderValue::from_str(&request_id) {
            response.headers_mut().insert(X_REQUEST_ID, value);
        }
        let status = response.status().as_u16();
        let seconds = started.elapsed().as_secs_f64();
        self.metrics.observe(template, status, seconds);
        // Written into a buffer on the stack, not into a string of its own. Texts as `%`: a
        // route or an identifier needs no quotes, and writing a `&str` field quotes and
        // escapes it character by character.
        let mut organization_text = [0; recruit_domain::CANONICAL_LEN];
        tracing::info!(
            http.method = %method,
            http.route = %template,
            http.status = status,
            latency_ms = seconds * 1000.0,
            request.id = %request_id,
            organization.id = %organization.as_ref().map_or("-", |id| id.encode(&mut organization_text)),
            "request"
        );
        response
    }

    /// The caller a request's bearer token names, under the request deadline. A request's body
    /// is read only after this: the server holds no body of a client it does not know.
    async fn authenticate(
        &self,
        headers: &hyper::HeaderMap,
        client_ip: Option<IpAddr>,
        request_id: &str,
        until: Instant,
    ) -> Result<recruit_service::Caller, ServiceError> {
        let secret = bearer_secret(headers)?;
        let service = Arc::clone(&self.service);
        let authenticate =
            Box::pin(async move { service.authenticate(secret.as_deref(), client_ip).await });
        guarded(left(until), authenticate).await.inspect_err(|e| log_failure(request_id, e))
    }

    /// The whole request body, refused with PAYLOAD_TOO_LARGE past `limit` bytes, with the
    /// room it holds until the request is answered. Waiting for room and reading both end at
    /// the request deadline: a client that stops sending holds neither a task nor room past it.
    async fn read_body<B>(
        &self,
        body: B,
        limit: usize,
        until: Instant,
    ) -> Result<(bytes::Bytes, BodyRoom<'_>), ServiceError>
    where
        B: HttpBody,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        // Most requests (every GET) have no body: nothing to wait for or to read.
        if body.is_end_stream() {
            return Ok((bytes::Bytes::new(), None));
        }
        let declared = body.size_hint().upper().map_or(limit as u64, |n| n.min(limit as u64));
        let kib = declared.div_ceil(1024).min(u64::from(body_room_kib(&self.config))) as u32;
        let room = match tokio::time::timeout(left(until), self.body_room.acquire_many(kib)).await {
            Ok(Ok(room)) => Some(room),
            // The deadline passed, or (never) the room was closed.
            _ => return Err(no_body_room(&self.config, declared)),
        };
        match tokio::time::timeout(left(until), Limited::new(body, limit).collect()).await {
            Ok(Ok(collected)) => Ok((collected.to_bytes(), room)),
            Ok(Err(_)) => Err(too_large(limit)),
            Err(_) => Err(body_too_slow(&self.config)),
        }
    }

    /// Where the tool interface's protected resource metadata is served.
    fn protected_resource_url(&self) -> String {
        let base = self.config.public_base_url.trim_end_matches('/');
        format!("{base}/.well-known/oauth-protected-resource/mcp")
    }

    /// The tool interface's protected resource metadata (RFC 9728): what it is, how to present
    /// a token, and the scopes its tools need.
    fn protected_resource(&self) -> serde_json::Value {
        let base = self.config.public_base_url.trim_end_matches('/');
        serde_json::json!({
            "resource": format!("{base}/mcp"),
            "resource_name": "recruitd tool interface (Model Context Protocol)",
            "bearer_methods_supported": ["header"],
            "scopes_supported": Scope::ALL
                .iter()
                .filter(|s| s.opens_api())
                .map(|s| s.as_str())
                .collect::<Vec<_>>(),
            "resource_documentation": format!("{base}/docs/errors"),
        })
    }

    /// `POST /mcp`: checks what HTTP must (origin, body size, the bearer token), then hands the
    /// request to the tool interface with the caller in its extensions.
    async fn mcp<B>(
        &self,
        request: Request<B>,
        request_id: &str,
        client_ip: Option<IpAddr>,
        until: Instant,
        organization: &mut Option<recruit_domain::OrganizationId>,
    ) -> Result<Response<Body>, ServiceError>
    where
        B: HttpBody + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        // DNS rebinding: a page of another site must not reach a server on the user's network.
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let allowed = origin
                .to_str()
                .is_ok_and(|o| self.config.mcp_allowed_origins.iter().any(|a| a == o));
            if !allowed {
                return Err(ServiceError::permission_denied(
                    "Requests from this origin may not use the tool interface: the server's \
                     allow-list of origins does not name it.",
                ));
            }
        }
        let (mut parts, body) = request.into_parts();
        let caller = self.authenticate(&parts.headers, client_ip, request_id, until).await?;
        *organization = Some(caller.token.organization_id);
        let (body, _room) = self.read_body(body, MCP_BODY_LIMIT, until).await?;
        let accept = parts.headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok());
        let content_type = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        if let Err(refusal) = transport::check_request(content_type, accept, &body) {
            return Ok(render::json_rpc_refusal(refusal));
        }
        parts.extensions.insert(HttpCaller {
            caller,
            request_id: request_id.to_owned(),
            client_ip,
            until,
        });
        let request = Request::from_parts(parts, http_body_util::Full::new(body.clone()));
        let response = match hyper::service::Service::call(&self.mcp, request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let (parts, answer) = response.into_parts();
        let answer = match answer.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(never) => match never {},
        };
        // What rmcp still refuses in plain text goes out as a JSON-RPC error too.
        let content_type = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        if let Some(refusal) =
            transport::as_json_rpc(parts.status.as_u16(), content_type, &answer, &body)
        {
            return Ok(render::json_rpc_refusal(refusal));
        }
        Ok(Response::from_parts(parts, Body::from(answer)))
    }

    async fn answer<B>(
        &self,
        request: Request<B>,
        routing: Routing,
        request_id: &str,
        client_ip: Option<IpAddr>,
        until: Instant,
        organization: &mut Option<recruit_domain::OrganizationId>,
    ) -> Result<Response<Body>, ServiceError>
    where
        B: HttpBody + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let limit = match &routing {
            Routing::Api(kind, _) => kind.spec().body_limit,
            Routing::Mcp => MCP_BODY_LIMIT,
            _ => BODY_LIMIT,
        };
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(too_large(limit));
        }
        let operation = match routing {
            Routing::Api(kind, path) => Some((kind, path)),
            Routing::Public(Public::ErrorDocs, _) => {
                return Ok(render::ok(render::error_docs(), "text/html; charset=utf-8"));
            }
            Routing::Public(Public::OpenApi, _) => return Ok(render::openapi()),
            Routing::Public(Public::Metrics, _) => {
                return Ok(render::ok(
                    self.metrics.encode(),
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                ));
            }
            Routing::Public(Public::Health, _) => {
                return Ok(render::json(&serde_json::json!({"status": "ok"})));
            }
            Routing::Public(Public::Ready, _) => None,
            Routing::NotFound => {
                return Err(ServiceError::new(
                    ErrorCode::NotFound,
                    "There is no such path; the API's paths begin with /v1.",
                ));
            }
            Routing::MethodNotAllowed(_, allow) => {
                return Err(ServiceError::new(
                    ErrorCode::NotImplemented,
                    format!("This path supports {allow} only."),
                ));
            }
            Routing::Public(Public::ProtectedResource, _) => {
                return Ok(render::json(&self.protected_resource()));
            }
            Routing::Public(Public::CheckpointKeys, _) => {
                let keys = self.service.checkpoint_keys().ok_or_else(|| {
                    ServiceError::new(
                        ErrorCode::NotFound,
                        "This server signs no checkpoints: it runs without a checkpoint key.",
                    )
                })?;
                let keys = serde_json::to_vec(&keys).map_err(|e| {
                    ServiceError::internal_because(format!(
                        "the key set could not be serialized: {e}"
                    ))
                });
                let keys = keys.inspect_err(|e| log_failure(request_id, e))?;
                return Ok(render::ok(keys, "application/jwk-set+json"));
            }
            Routing::Console => {
                let Some(console) = &self.console else {
                    return Err(ServiceError::not_found("page"));
                };
                let (parts, body) = request.into_parts();
                let (body, _room) = self.read_body(body, BODY_LIMIT, until).await?;
                let answer = Box::pin(console.handle(recruit_console::ConsoleRequest {
                    method: &parts.method,
                    uri: &parts.uri,
                    headers: &parts.headers,
                    body,
                    client_ip,
                    request_id,
                }))
                .await;
                let (parts, page) = answer.response.into_parts();
                let Some(download) = answer.download else {
                    return Ok(Response::from_parts(parts, Body::from(bytes::Bytes::from(page))));
                };
                return Ok(Response::from_parts(parts, Body::streamed(download.chunks)));
            }
            // The console's, SCIM's and the tool interface's state is on the heap: inline, it
            // would make every API request's future (moved whole at each layer) kilobytes larger.
            Routing::Scim(below) => {
                return Ok(Box::pin(self.scim(request, &below, client_ip, until)).await);
            }
            Routing::Mcp => {
                return Box::pin(self.mcp(request, request_id, client_ip, until, organization))
                    .await;
            }
        };
        let (parts, body) = request.into_parts();
        let Some((kind, path)) = operation else {
            // The readiness probe asks the database, so it runs like an operation: under the
            // deadline and the panic barrier.
            let service = Arc::clone(&self.service);
            guarded(left(until), async move { service.ready().await })
                .await
                .inspect_err(|e| log_failure(request_id, e))?;
            let streams = self.service.deliveries().health();
            let ready = serde_json::json!({"status": "ready", "log_streams": streams});
            return Ok(render::json(&ready));
        };
        let caller = self.authenticate(&parts.headers, client_ip, request_id, until).await?;
        let (body, _room) = self.read_body(body, limit, until).await?;
        let mut arguments = rest_arguments(kind, path, parts.uri.query());
        crate::write::headers_and_body(kind, &mut arguments, &parts.headers, body);
        let operation =
            Operation::parse(kind, arguments).inspect_err(|e| log_failure(request_id, e))?;
        let context =
            RequestContext { request_id: request_id.to_owned(), client_ip, via: Via::Rest };
        let done = self
            .service
            .run(left(until), Identity::Authenticated(Box::new(caller)), context, operation)
            .await?;
        let mut response = match done.outcome {
            Outcome::Recorded(recorded) => render::recorded(&recorded),
            Outcome::User(profile) => render::with_etag(render::json(&profile), &profile.etag),
            Outcome::Download(download) => render::download(download),
            Outcome::Removed => render::empty(kind.spec().success),
            outcome => render::json_bytes(
                kind.spec().success,
                outcome.to_json_bytes().inspect_err(|e| log_failure(request_id, e))?,
            ),
        };
        render::rate_limit(response.headers_mut(), done.rate_limit.as_ref());
        *organization = Some(done.organization);
        Ok(response)
    }
}
