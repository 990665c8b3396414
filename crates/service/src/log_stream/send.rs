//! What a leased stream's batch is, and how it goes to each kind of destination: the body
//! (export lines, RFC 5424 frames or HEC events), the request (signed per Standard Webhooks,
//! to a Splunk collector, or over syslog's TLS) and what the answer means for the batch
//! ([`Attempt`]). [`super::deliver`] decides what becomes of the stream.

use std::time::{Duration, SystemTime};

use recruit_domain::Timestamp;
use recruit_domain::chain::Ledger;
use recruit_domain::model::{BatchFormat, LogStreamDestination};
use recruit_domain::retry::retry_after;
use recruit_ports::chain::ExportedEntry;
use recruit_ports::streams::StreamRecord;

use super::deliver::digest;
use super::runs::Prepared;
use super::webhook::{SigningSecret, headers};
use crate::outbound::{Fetch, http};

/// What an attempt to send a batch came to.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Attempt {
    /// The destination acknowledged it.
    Delivered,
    /// Try again after at least this long (`Retry-After`), or the backoff's when none.
    Retry { status: Option<u16>, message: String, after: Option<Duration> },
    /// The batch is too large: send fewer entries.
    Shrink,
    /// The destination says to stop (410 Gone).
    Stop { status: Option<u16>, message: String },
    /// Taken, and delivered once the collector acknowledges this id as indexed.
    Pending(u64),
}

/// The body of a batch of `entries` in the stream's format, at most `max` bytes unless its
/// first entry alone is larger, and how many entries it holds.
pub(super) fn body(
    stream: &StreamRecord,
    entries: &[std::sync::Arc<Prepared>],
    max: usize,
) -> (Vec<u8>, usize) {
    let destination = super::destination(stream);
    let array = matches!(
        destination,
        Some(LogStreamDestination::Https { format: BatchFormat::JsonArray, .. })
    );
    let sender = destination.as_ref().and_then(super::sender);
    let collector = destination.as_ref().and_then(super::collector);
    let mut out = Vec::with_capacity(max.min(entries.iter().map(|p| p.line().len()).sum()));
    let mut count = 0;
    for prepared in entries {
        let (e, line) = (&prepared.exported, prepared.line());
        // The line as the destination takes it (with its line feed): as prepared for HTTPS.
        let wrapped = if let Some(sender) = &sender {
            Some(super::syslog::frame(&syslog_message(sender, e, line)))
        } else if let Some(collector) = &collector {
            let params = coordinates(e);
            let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let event =
                super::splunk::event(collector, Ledger::Privacy.as_str(), e.time, &params, line);
            // An export line is JSON: an event of it always is.
            let mut event = event.unwrap_or_default();
            event.push(b'\n');
            Some(event)
        } else {
            None
        };
        let line = wrapped.as_deref().unwrap_or(line);
        // In an array, a line is its object after `[` or `,`, without the line feed: as long.
        if count > 0 && out.len() + line.len() + 1 > max {
            break;
        }
        if array {
            out.push(if count == 0 { b'[' } else { b',' });
            out.extend_from_slice(&line[..line.len() - 1]);
        } else {
            out.extend_from_slice(line);
        }
        count += 1;
    }
    if array {
        out.push(b']');
    }
    (out, count)
}

/// The RFC 5424 message of `entry`, whose export line is `line`: the entry's own time, the
/// ledger as MSGID, and the chain's coordinates as structured data.
fn syslog_message(sender: &super::syslog::Sender, entry: &ExportedEntry, line: &[u8]) -> Vec<u8> {
    let params = coordinates(entry);
    let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    super::syslog::message(sender, entry.time, Ledger::Privacy.as_str(), &params, line)
}

/// The chain's coordinates of `entry`, by name: its id, organization, position, hash and the
/// hash before it.
fn coordinates(entry: &ExportedEntry) -> [(&'static str, String); 5] {
    let hex = |h: &Option<Vec<u8>>| recruit_domain::chain::hex(&digest(h));
    [
        ("id", recruit_domain::PrivacyAuditLogId::from_uuid(entry.entry.id).to_string()),
        ("org", entry.organization_id.to_string()),
        ("pos", entry.entry.position.unwrap_or_default().to_string()),
        ("hash", hex(&entry.entry.hash)),
        ("prev", hex(&entry.entry.prev_hash)),
    ]
}

/// Sends the batch `id` with `body` to `stream`'s destination, signed by its secrets.
pub(super) async fn send(
    fetch: &dyn Fetch,
    stream: &StreamRecord,
    id: &str,
    body: Vec<u8>,
) -> Attempt {
    let (url, format) = match super::destination(stream) {
        Some(LogStreamDestination::Https { url, format }) => (url, format),
        Some(LogStreamDestination::SyslogTls {
            host,
            port,
            ca_certificate,
            client_certificate,
            ..
        }) => {
            let key = stream.secrets["client_key"].as_str().map(str::to_owned);
            let client = client_certificate.zip(key);
            let to = crate::outbound::SyslogTarget { host, port, ca_certificate, client };
            return match fetch.syslog(to, body).await {
                Ok(()) => Attempt::Delivered,
                Err(e) => Attempt::Retry { status: None, message: e.0, after: None },
            };
        }
        Some(LogStreamDestination::SplunkHec { url, channel, gzip, .. }) => {
            let body = if gzip { Gzipped::new(body) } else { Gzipped::Not(body) };
            return collect(fetch, stream, &url, channel.as_deref(), body).await;
        }
        _ => {
            let message = "this version cannot deliver to the stream's destination".to_owned();
            return Attempt::Stop { status: None, message };
        }
    };
    let secrets: Vec<SigningSecret> = super::signing_secrets(stream, Timestamp::now())
        .iter()
        .filter_map(|s| SigningSecret::parse(s).ok())
        .collect();
    if secrets.is_empty() {
        let message = "the stream has no signing secret".to_owned();
        return Attempt::Stop { status: None, message };
    }
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    let signed = headers(&secrets.iter().collect::<Vec<_>>(), id, now, &body);
    let kind = match format {
        BatchFormat::JsonArray => "application/json",
        _ => "application/x-ndjson",
    };
    let mut request = http::Request::builder()
        .method(http::Method::POST)
        .uri(url.as_str())
        .header(http::header::CONTENT_TYPE, kind)
        .header("recruitd-stream", recruit_domain::LogStreamId::from_uuid(stream.id).to_string())
        .header("recruitd-batch", id);
    for (name, value) in signed {
        request = request.header(name, value);
    }
    let request = match request.body(body) {
        Ok(r) => r,
        Err(e) => return Attempt::Stop { status: None, message: format!("the request: {e}") },
    };
    match fetch.fetch(request).await {
        Err(e) => Attempt::Retry { status: None, message: e.0, after: None },
        Ok(answer) => classify(&answer),
    }
}

/// The URL of the collector's `endpoint` (`event`, `ack`) under the stream's `base` URL.
fn collector_url(base: &str, endpoint: &str) -> String {
    let base = base.trim_end_matches('/');
    let base = base.find("/services/collector").map_or(base, |i| &base[..i]);
    format!("{base}/services/collector/{endpoint}")
}

/// A request to the stream's collector: its token and channel.
fn to_collector(
    stream: &StreamRecord,
    url: String,
    channel: Option<&str>,
    body: Gzipped,
) -> Result<http::Request<Vec<u8>>, http::Error> {
    let token = stream.secrets["hec_token"].as_str().unwrap_or_default();
    let request = http::Request::builder()
        .method(http::Method::POST)
        .uri(url)
        .header(http::header::AUTHORIZATION, format!("Splunk {token}"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .header("x-splunk-request-channel", channel.unwrap_or_default());
    match body {
        Gzipped::Yes(body) => request.header(http::header::CONTENT_ENCODING, "gzip").body(body),
        Gzipped::Not(body) => request.body(body),
    }
}

/// A request's body, compressed or not.
enum Gzipped {
    Yes(Vec<u8>),
    Not(Vec<u8>),
}

impl Gzipped {
    /// `body` compressed at gzip's fastest level (JSON events shrink about tenfold even so),
    /// or as it is should compressing fail.
    fn new(body: Vec<u8>) -> Self {
        use std::io::Write;
        let mut encoder = flate2::write::GzEncoder::new(
            Vec::with_capacity(body.len() / 8),
            flate2::Compression::fast(),
        );
        match encoder.write_all(&body).and_then(|()| encoder.finish()) {
            Ok(compressed) => Self::Yes(compressed),
            Err(_) => Self::Not(body),
        }
    }
}

/// Sends a batch of events to the stream's collector at `base`.
async fn collect(
    fetch: &dyn Fetch,
    stream: &StreamRecord,
    base: &str,
    channel: Option<&str>,
    body: Gzipped,
) -> Attempt {
    let request = match to_collector(stream, collector_url(base, "event"), channel, body) {
        Ok(r) => r,
        Err(e) => return Attempt::Stop { status: None, message: format!("the request: {e}") },
    };
    let answer = match fetch.fetch(request).await {
        Ok(answer) => answer,
        Err(e) => return Attempt::Retry { status: None, message: e.0, after: None },
    };
    let status = answer.status().as_u16();
    let waited = answer.headers().get(http::header::RETRY_AFTER).and_then(|v| v.to_str().ok());
    match super::splunk::classify(status, answer.body(), waited, SystemTime::now()) {
        super::splunk::Answer::Taken { ack_id: None } => Attempt::Delivered,
        super::splunk::Answer::Taken { ack_id: Some(id) } => Attempt::Pending(id),
        super::splunk::Answer::Retry { after, why } => {
            Attempt::Retry { status: Some(status), message: why, after }
        }
        super::splunk::Answer::Shrink => Attempt::Shrink,
        super::splunk::Answer::Misconfigured(why) => {
            Attempt::Retry { status: Some(status), message: why, after: None }
        }
        super::splunk::Answer::Malformed(why) => {
            Attempt::Stop { status: Some(status), message: why }
        }
    }
}

/// Whether the stream's collector says `ack_id` is indexed (no answer: not yet).
pub(super) async fn acknowledged(fetch: &dyn Fetch, stream: &StreamRecord, ack_id: u64) -> bool {
    let Some(LogStreamDestination::SplunkHec { url, channel, .. }) = super::destination(stream)
    else {
        return false;
    };
    let body = Gzipped::Not(super::splunk::ack_query(&[ack_id]));
    let Ok(request) = to_collector(stream, collector_url(&url, "ack"), channel.as_deref(), body)
    else {
        return false;
    };
    match fetch.fetch(request).await {
        Ok(answer) if answer.status().is_success() => {
            super::splunk::acknowledged(answer.body()).is_ok_and(|ids| ids.contains(&ack_id))
        }
        _ => false,
    }
}

/// What an answer of the destination means for the batch (Standard Webhooks' advice: 2xx is
/// success, a redirect is a failure, 410 says to stop, `Retry-After` is honoured).
pub(super) fn classify(answer: &http::Response<Vec<u8>>) -> Attempt {
    let status = answer.status();
    let code = Some(status.as_u16());
    let waited = answer
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| retry_after(v, SystemTime::now()));
    let said = String::from_utf8_lossy(&answer.body()[..answer.body().len().min(200)]).into_owned();
    match status.as_u16() {
        200..=299 => Attempt::Delivered,
        410 => Attempt::Stop { status: code, message: format!("the destination is gone: {said}") },
        413 => Attempt::Shrink,
        300..=399 => Attempt::Retry {
            status: code,
            message: "the destination redirects, and redirects are not followed".into(),
            after: None,
        },
        _ => Attempt::Retry { status: code, message: format!("{status}: {said}"), after: waited },
    }
}
