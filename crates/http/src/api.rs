//! What every request goes through: request id, body limit, routing, authentication, the
//! operation under a deadline and a panic barrier, rendering, and one log line.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Limited};
use hyper::body::Body as HttpBody;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response};
use recruit_domain::ErrorCode;
use recruit_service::{RequestContext, Service, ServiceError, Via, guarded};

use crate::metrics::Metrics;
use crate::render::{self, Body};
use crate::route::{Public, Route, Routing, route};

/// The HTTP layer's settings.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// The URL clients reach this server at; `docs_url` links are built from it.
    pub public_base_url: String,
    /// The longest a request may take before it is answered with UPSTREAM_TIMEOUT.
    pub request_deadline: Duration,
    /// The largest request body accepted; larger ones get PAYLOAD_TOO_LARGE.
    pub max_body_bytes: usize,
    /// How long a client may take to send its request headers.
    pub header_read_timeout: Duration,
    /// The largest request head (request line and headers) accepted, in bytes.
    pub max_header_bytes: usize,
    /// How long in-flight requests may run after shutdown begins.
    pub shutdown_grace: Duration,
}

impl HttpConfig {
    /// Defaults: 10 s per request, 64 KiB bodies, 10 s for headers, 16 KiB heads, 10 s grace.
    pub fn new(public_base_url: impl Into<String>) -> Self {
        Self {
            public_base_url: public_base_url.into(),
            request_deadline: Duration::from_secs(10),
            max_body_bytes: 64 * 1024,
            header_read_timeout: Duration::from_secs(10),
            max_header_bytes: 16 * 1024,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// The REST API: a service and the HTTP settings.
#[derive(Debug)]
pub struct Api {
    service: Arc<Service>,
    config: HttpConfig,
    metrics: Metrics,
}

/// A request id a client may choose: 1 to 128 characters of letters, digits, `-`, `_`, `.`.
fn sane_request_id(value: &HeaderValue) -> Option<String> {
    let s = value.to_str().ok()?;
    let ok = (1..=128).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    ok.then(|| s.to_owned())
}

impl Api {
    /// The API over `service`.
    pub fn new(service: Arc<Service>, config: HttpConfig) -> Self {
        Self { service, config, metrics: Metrics::new() }
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

    /// The settings.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// Answers one request. Never fails: every failure is a response in the error envelope.
    pub async fn handle<B>(&self, request: Request<B>, client_ip: Option<IpAddr>) -> Response<Body>
    where
        B: HttpBody + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let started = Instant::now();
        let request_id = request
            .headers()
            .get("x-request-id")
            .and_then(sane_request_id)
            .unwrap_or_else(|| uuid::Uuid::now_v7().simple().to_string());
        let method = request.method().clone();
        let routing = route(&method, request.uri().path(), request.uri().query());
        let template = match &routing {
            Routing::Api(r) => r.template(),
            Routing::Public(_, t) => t,
            Routing::MethodNotAllowed(t) => t,
            Routing::NotFound => "unknown",
        };
        // A known path asked with a method it does not serve: 405 with `Allow`, as HTTP
        // clients and tools expect, in the envelope with the code NOT_IMPLEMENTED.
        let method_not_allowed = matches!(routing, Routing::MethodNotAllowed(_));
        let mut organization = None;
        let result = self.answer(request, routing, &request_id, client_ip, &mut organization).await;
        let mut response = match result {
            Ok(response) => response,
            Err(e) => {
                // Trouble on the server's side is logged once, here; a client's mistake is not
                // an error of the server.
                if e.code.http_status() >= 500 && !method_not_allowed {
                    tracing::error!(
                        request.id = %request_id,
                        error.code = %e.code,
                        error.cause = e.cause.as_deref().unwrap_or("none"),
                        "request failed"
                    );
                }
                let mut response = render::error(&e, &self.config.public_base_url);
                if method_not_allowed {
                    *response.status_mut() = hyper::StatusCode::METHOD_NOT_ALLOWED;
                    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET"));
                }
                response
            }
        };
        if let Ok(value) = HeaderValue::from_str(&request_id) {
            response.headers_mut().insert("x-request-id", value);
        }
        let status = response.status().as_u16();
        self.metrics.observe(template, status, started.elapsed().as_secs_f64());
        if status == 200 && template == "/v1/audit-logs/privacy" {
            self.metrics.ledger_written("api");
        }
        tracing::info!(
            http.method = %method,
            http.route = template,
            http.status = response.status().as_u16(),
            latency_ms = started.elapsed().as_secs_f64() * 1000.0,
            request.id = %request_id,
            organization.id = organization.as_deref().unwrap_or("-"),
            "request"
        );
        response
    }

    async fn answer<B>(
        &self,
        request: Request<B>,
        routing: Routing,
        request_id: &str,
        client_ip: Option<IpAddr>,
        organization: &mut Option<String>,
    ) -> Result<Response<Body>, ServiceError>
    where
        B: HttpBody + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let too_large = || {
            ServiceError::new(
                ErrorCode::PayloadTooLarge,
                format!("The request body exceeds {} bytes.", self.config.max_body_bytes),
            )
        };
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.config.max_body_bytes as u64) {
            return Err(too_large());
        }
        let route = match routing {
            Routing::Api(route) => Some(route),
            Routing::Public(Public::ErrorDocs, _) => return Ok(render::html(render::error_docs())),
            Routing::Public(Public::OpenApi, _) => return Ok(render::openapi()),
            Routing::Public(Public::Metrics, _) => {
                let mut response = render::text(self.metrics.encode());
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    ),
                );
                return Ok(response);
            }
            Routing::Public(Public::Health, _) => {
                return Ok(render::json(&serde_json::json!({"status": "ok"})));
            }
            // The readiness probe asks the database, so it runs like an operation: under the
            // deadline and the panic barrier.
            Routing::Public(Public::Ready, _) => None,
            Routing::NotFound => {
                return Err(ServiceError::new(
                    ErrorCode::NotFound,
                    "There is no such path; the API's paths begin with /v1.",
                ));
            }
            Routing::MethodNotAllowed(_) => {
                return Err(ServiceError::new(
                    ErrorCode::NotImplemented,
                    "This path supports GET only.",
                ));
            }
        };
        let (parts, body) = request.into_parts();
        // The API's operations take no body; one is read (within the limit) and ignored.
        if Limited::new(body, self.config.max_body_bytes).collect().await.is_err() {
            return Err(too_large());
        }
        let authorization = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let context = RequestContext {
            request_id: request_id.to_owned(),
            client_ip: client_ip.map(|ip| ip.to_string()),
            via: Via::Rest,
        };
        // The operation runs as its own task: a panic in it becomes INTERNAL for this request
        // only, and the deadline bounds it.
        let service = Arc::clone(&self.service);
        // Everything logged while the operation runs carries the request id.
        let span = tracing::info_span!("request", request.id = %request_id);
        let operation = tracing::Instrument::instrument(
            async move {
                let Some(route) = route else {
                    service.ready().await?;
                    return Ok((render::json(&serde_json::json!({"status": "ready"})), None));
                };
                let caller = service.authenticate(authorization.as_deref()).await?;
                let org = caller.token.organization_id.to_string();
                let response = match route {
                    Route::ListPrivacyAuditLogs(params) => render::json(
                        &service.list_privacy_audit_logs(&caller, &context, params).await?,
                    ),
                    Route::GetJob(params) => render::json(&service.get_job(&caller, params).await?),
                    Route::GetOrganization(problems) => {
                        render::json(&service.get_organization(&caller, problems).await?)
                    }
                };
                Ok::<_, ServiceError>((response, Some(org)))
            },
            span,
        );
        let (response, org) = guarded(self.config.request_deadline, operation).await?;
        *organization = org;
        Ok(response)
    }
}
