//! The one place that turns results into responses: the JSON of a success, and the error
//! envelope with its status, `docs_url` and headers for every failure.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use recruit_domain::ErrorCode;
use recruit_service::ServiceError;
use recruit_service::export::Chunks;

/// A response body: a whole document, already serialized, or a download streamed as it is
/// read. A download that fails mid-way ends with an error, so that the connection is cut
/// (HTTP/1.1 without its last chunk, HTTP/2 with a reset) and the client sees it incomplete,
/// never as a complete response.
pub struct Body(Kind);

enum Kind {
    Whole(Option<Bytes>),
    Streamed(Chunks),
}

impl Body {
    /// A body of the chunks of a download.
    pub(crate) fn streamed(chunks: Chunks) -> Self {
        Self(Kind::Streamed(chunks))
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        Self(Kind::Whole(Some(bytes)))
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Kind::Whole(bytes) => f.debug_tuple("Whole").field(bytes).finish(),
            Kind::Streamed(chunks) => f.debug_tuple("Streamed").field(chunks).finish(),
        }
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = ServiceError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ServiceError>>> {
        match &mut self.0 {
            Kind::Whole(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Streamed(chunks) => futures_core::Stream::poll_next(Pin::new(chunks), cx)
                .map(|chunk| chunk.map(|chunk| chunk.map(|bytes| Frame::data(Bytes::from(bytes))))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.0, Kind::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Kind::Whole(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            Kind::Streamed(_) => SizeHint::default(),
        }
    }
}

/// A 200 response carrying `value` as JSON.
pub(crate) fn json<T: serde::Serialize>(value: &T) -> Response<Body> {
    match serde_json::to_vec(value) {
        Ok(bytes) => with_json(StatusCode::OK, bytes),
        Err(_) => error(&ServiceError::internal(), ""),
    }
}

/// A response of `status` without a body (`204 No Content`).
pub(crate) fn empty(status: u16) -> Response<Body> {
    let mut response = Response::new(Body::from(Bytes::new()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::NO_CONTENT);
    response
}

/// A response of `status` carrying `bytes`, JSON already written.
pub(crate) fn json_bytes(status: u16, bytes: Vec<u8>) -> Response<Body> {
    with_json(StatusCode::from_u16(status).unwrap_or(StatusCode::OK), bytes)
}

/// The response of a write, byte for byte as first sent; a replay says so in
/// `Idempotent-Replayed: true`.
pub(crate) fn recorded(recorded: &recruit_service::Recorded) -> Response<Body> {
    let status = StatusCode::from_u16(recorded.status).unwrap_or(StatusCode::CREATED);
    let mut response = with_json(status, recorded.body.clone());
    if recorded.replayed {
        response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    response
}

/// `response` with the `ETag` of what it carries.
pub(crate) fn with_etag(mut response: Response<Body>, etag: &str) -> Response<Body> {
    if let Ok(value) = HeaderValue::from_str(etag) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response
}

fn with_json(status: StatusCode, bytes: Vec<u8>) -> Response<Body> {
    respond(status, bytes, "application/json")
}

/// A refusal of the tool interface's transport: its status, and the JSON-RPC error as JSON.
pub(crate) fn json_rpc_refusal(refusal: recruit_mcp::transport::Refusal) -> Response<Body> {
    let status = StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::BAD_REQUEST);
    with_json(status, refusal.body)
}

/// A response with `body` of `content_type`.
fn respond(
    status: StatusCode,
    body: impl Into<Bytes>,
    content_type: &'static str,
) -> Response<Body> {
    let mut response = Response::new(Body::from(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A 200 response streaming `download`: NDJSON, its count in `Recruitd-Export-Count`, named
/// as a file to save, and never stored by a cache (it holds personal data).
pub(crate) fn download(download: recruit_service::export::Download) -> Response<Body> {
    let disposition = download.content_disposition();
    let mut response = Response::new(Body::streamed(download.chunks));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(download.media_type));
    headers.insert("recruitd-export-count", HeaderValue::from(download.count));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    response
}

/// A SCIM response: its body as `application/scim+json`, and the headers it asks for.
pub(crate) fn scim(answer: recruit_service::ScimResponse) -> Response<Body> {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let bytes = answer.body.map(|b| serde_json::to_vec(&b).unwrap_or_default()).unwrap_or_default();
    let mut response = if bytes.is_empty() {
        empty(status.as_u16())
    } else {
        respond(status, bytes, recruit_service::scim::MEDIA_TYPE)
    };
    let headers = response.headers_mut();
    if let Some(location) = answer.location.and_then(|l| HeaderValue::from_str(&l).ok()) {
        headers.insert(header::LOCATION, location);
    }
    if let Some(allow) = answer.allow {
        headers.insert(header::ALLOW, HeaderValue::from_static(allow));
    }
    if let Some(wait) = answer.retry_after {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(wait.as_secs().max(1)));
    }
    if answer.unauthenticated {
        headers.insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"scim\", error=\"invalid_token\""),
        );
    }
    response
}

/// A 200 response with `body` of `content_type`.
pub(crate) fn ok(body: impl Into<Bytes>, content_type: &'static str) -> Response<Body> {
    respond(StatusCode::OK, body, content_type)
}

/// The error envelope of `e`, with the status of its code, a link to its documentation under
/// `docs_base` (the server's public base URL), and the headers clients act on.
pub(crate) fn error(e: &ServiceError, docs_base: &str) -> Response<Body> {
    let code = &e.code;
    let body = e.envelope(docs_base);
    let status =
        StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let bytes = serde_json::to_vec(&body).unwrap_or_else(|_| {
        br#"{"error":{"code":"INTERNAL","message":"An unexpected error occurred."}}"#.to_vec()
    });
    let mut response = with_json(status, bytes);
    let headers = response.headers_mut();
    match code {
        // A request without a credential is challenged without an error code (RFC 6750
        // §3.1); one whose credential is not valid learns that it is not.
        ErrorCode::Unauthenticated if e.no_credential => {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        ErrorCode::Unauthenticated => {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(r#"Bearer error="invalid_token""#),
            );
        }
        ErrorCode::InsufficientScope => {
            let scope = e.required_scope.map(|s| s.as_str()).unwrap_or_default();
            let value = format!(r#"Bearer error="insufficient_scope", scope="{scope}""#);
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(header::WWW_AUTHENTICATE, value);
            }
        }
        _ => {}
    }
    if let Some(after) = e.retry_after {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(whole_seconds(after).max(1)));
    }
    rate_limit(headers, e.rate_limit.as_deref());
    response
}

/// A duration in whole seconds, rounded up: a client that waits that long is never early.
fn whole_seconds(d: std::time::Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The `RateLimit-Policy` and `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers-10) of
/// where the client stands with a rate limit: the policy's name, quota and window in seconds,
/// then the operations remaining and the seconds until the whole quota is available again.
pub(crate) fn rate_limit(
    headers: &mut hyper::HeaderMap,
    status: Option<&recruit_service::limits::RateLimitStatus>,
) {
    // Names made once, not parsed from text for every answer.
    const POLICY: header::HeaderName = header::HeaderName::from_static("ratelimit-policy");
    const CURRENT: header::HeaderName = header::HeaderName::from_static("ratelimit");
    let Some(s) = status else { return };
    // Written piece by piece: `format!` costs several times as much for two numbers.
    let field = |first: (&str, u64), second: (&str, u64)| {
        let mut text = String::with_capacity(48);
        text.push('"');
        text.push_str(s.policy);
        text.push('"');
        for (name, n) in [first, second] {
            text.push_str(name);
            text.push_str(itoa::Buffer::new().format(n));
        }
        text
    };
    let policy = field((";q=", s.quota.into()), (";w=", whole_seconds(s.window)));
    let current = field((";r=", s.remaining.into()), (";t=", whole_seconds(s.reset)));
    for (name, value) in [(POLICY, policy), (CURRENT, current)] {
        // The text moves into the value: checked, not copied.
        if let Ok(value) = HeaderValue::from_maybe_shared(Bytes::from(value)) {
            headers.insert(name, value);
        }
    }
}

/// The error envelope of `e` as a whole HTTP/1.1 response with `status`, written to the socket
/// where no response object exists any more (a request hyper could not parse). The connection
/// is closed after it.
pub(crate) fn http1_error(
    status: u16,
    e: &ServiceError,
    docs_base: &str,
    request_id: &str,
) -> Vec<u8> {
    let body = serde_json::to_vec(&e.envelope(docs_base)).unwrap_or_else(|_| {
        br#"{"error":{"code":"INTERNAL","message":"An unexpected error occurred."}}"#.to_vec()
    });
    let reason = StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("");
    let mut response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nx-request-id: {request_id}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(&body);
    response
}

/// `docs/openapi.yaml` as JSON, converted when the crate was built.
const OPENAPI_JSON: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/openapi.json"));

/// A 200 response with the OpenAPI document.
pub(crate) fn openapi() -> Response<Body> {
    ok(Bytes::from_static(OPENAPI_JSON), "application/json")
}

/// The reference of the error codes: each with its meaning, HTTP status and recovery, under an
/// anchor named after the code, which `docs_url` points at.
pub(crate) fn error_docs() -> String {
    let mut rows = String::new();
    for name in ErrorCode::KNOWN {
        let code = ErrorCode::from(*name);
        let status = match code {
            ErrorCode::NotImplemented => {
                "501; 405 with <code>Allow</code> when a path is asked with a method it does not serve"
                    .to_owned()
            }
            ErrorCode::PayloadTooLarge => {
                "413; 431 when the request head is too large, 414 when the request target is"
                    .to_owned()
            }
            _ => code.http_status().to_string(),
        };
        rows.push_str(&format!(
            "<section id=\"{name}\"><h2><a href=\"#{name}\">{name}</a></h2>\n<p><strong>HTTP {status}.</strong> {meaning}</p>\n<p>What to do: {recovery}</p></section>\n",
            meaning = escape(code.meaning()),
            recovery = escape(code.recovery()),
        ));
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>recruitd: error codes</title></head>\n<body><h1>Error codes</h1>\n<p>Every failure of the REST API and of the tool interface is reported as <code>{{\"error\": {{\"code\", \"message\", \"docs_url\", \"details\"}}}}</code>. Branch on <code>code</code>, never on the message.</p>\n{rows}</body></html>\n"
    )
}

/// Escapes text for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('`', "")
}
