//! Log streams: the ledger's entries pushed to an organization's SIEM. Each event is the
//! entry's export line ([`crate::export::line`]: id, organization, chain position, hash and
//! previous hash), so that a receiver dedups by id, finds a gap by position and checks the
//! chain with the same code as an export.
//!
//! This module holds a stream's rules: its settings as an owner gives them (checked field by
//! field), its state as shown, and its secrets. [`deliver`] delivers a leased stream; the
//! destinations' wire formats are the HTTPS destination's batches signed per Standard Webhooks
//! ([`webhook`]), Splunk HTTP Event Collector's envelope and answers ([`splunk`]), and the
//! RFC 5424 messages in RFC 5425 frames of syslog over TLS ([`syslog`]).

pub mod deliver;
mod runs;
mod send;
pub mod splunk;
pub mod syslog;
mod tail;
pub mod webhook;

use recruit_domain::model::{
    DeliveryError, LogStream, LogStreamDestination, LogStreamSettings, LogStreamState,
};
use recruit_domain::{ErrorDetail, LogStreamId};
use recruit_ports::streams::{Health, StreamRecord};
use serde_json::Value;

/// The members of a stream's settings.
pub const MEMBERS: [&str; 4] = ["name", "destination", "after_position", "after_time"];

/// How long a rotated secret signs beside the new one when the rotation names no overlap.
pub const DEFAULT_OVERLAP: u64 = 24 * 3600;

/// The longest overlap of a rotation: a week.
const MAX_OVERLAP: u64 = 7 * 24 * 3600;

/// The overlap of a rotation's `body` (`{"overlap_seconds": n}`, 0 to a week; `{}`:
/// [`DEFAULT_OVERLAP`]); `None` with the problem noted.
pub fn overlap_body(body: &[u8], problems: &mut Vec<ErrorDetail>) -> Option<u64> {
    let before = problems.len();
    let members = crate::sign_off::object(body, &["overlap_seconds"], problems)?;
    if problems.len() > before {
        return None;
    }
    match members.get("overlap_seconds") {
        None | Some(Value::Null) => Some(DEFAULT_OVERLAP),
        Some(n) => match n.as_u64().filter(|n| *n <= MAX_OVERLAP) {
            Some(n) => Some(n),
            None => {
                let why = format!("must be a whole number of seconds from 0 to {MAX_OVERLAP}");
                problems.push(ErrorDetail::field("overlap_seconds", why));
                None
            }
        },
    }
}

/// The secrets that sign a stream's batches at `now`: its signing secret, and the one it
/// replaced until its overlap ends.
pub fn signing_secrets(stream: &StreamRecord, now: recruit_domain::Timestamp) -> Vec<String> {
    let s = &stream.secrets;
    let overlapping = s["previous_until"]
        .as_str()
        .and_then(|t| recruit_domain::Timestamp::parse(t).ok())
        .is_some_and(|until| until > now);
    let previous = s["previous"].as_str().filter(|_| overlapping);
    s["signing"].as_str().into_iter().chain(previous).map(str::to_owned).collect()
}

/// The longest name.
const NAME_MAX: usize = 100;

/// The longest destination URL.
const URL_MAX: usize = 2048;

/// The settings of `body`, a JSON object of [`MEMBERS`] only, each of its type: every problem
/// is noted (the values themselves are checked by [`problems`]).
pub fn settings_body(body: &[u8], problems: &mut Vec<ErrorDetail>) -> Option<LogStreamSettings> {
    let before = problems.len();
    let members = crate::sign_off::object(body, &MEMBERS, problems)?;
    settings_of(members, problems, before)
}

fn settings_of(
    members: serde_json::Map<String, Value>,
    problems: &mut Vec<ErrorDetail>,
    before: usize,
) -> Option<LogStreamSettings> {
    for name in ["name", "destination"].into_iter().filter(|n| !members.contains_key(*n)) {
        problems.push(ErrorDetail::field(name, "is required"));
    }
    if problems.len() > before {
        return None;
    }
    serde_path_to_error::deserialize(Value::Object(members))
        .map_err(|e| {
            let field = e.path().to_string();
            problems.push(ErrorDetail::field(field, e.into_inner().to_string()));
        })
        .ok()
}

/// The settings of `stream` changed by the JSON Merge Patch (RFC 7396) `body`, whose members
/// are `name` and `destination`: every problem noted.
pub fn patched(
    stream: &StreamRecord,
    body: &[u8],
    problems: &mut Vec<ErrorDetail>,
) -> Option<LogStreamSettings> {
    let before = problems.len();
    let patch = crate::sign_off::object(body, &MEMBERS[..2], problems)?;
    let mut target = serde_json::Map::new();
    target.insert("name".into(), Value::String(stream.name.clone()));
    target.insert("destination".into(), stream.destination.clone());
    let mut merged = Value::Object(target);
    merge(&mut merged, &Value::Object(patch));
    let Value::Object(members) = merged else { unreachable!("a merge into an object") };
    settings_of(members, problems, before)
}

/// RFC 7396 §2: `patch` merged into `target`, a `null` removing what it names.
fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(members) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    let Value::Object(into) = target else { return };
    for (name, value) in members {
        if value.is_null() {
            into.remove(name);
        } else {
            merge(into.entry(name.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Why `settings` are refused: each field and what is wrong with it. The destination's host is
/// checked against the server's outbound policy apart, by whoever can resolve it.
pub fn problems(settings: &LogStreamSettings) -> Vec<(&'static str, String)> {
    let mut problems = vec![];
    if settings.after_position.is_some() && settings.after_time.is_some() {
        problems
            .push(("after_time", "A stream starts after a position or a time, not both.".into()));
    }
    let name = settings.name.trim();
    if name.is_empty() || name.chars().count() > NAME_MAX || name.chars().any(char::is_control) {
        problems.push(("name", format!("A name is 1 to {NAME_MAX} characters, none a control.")));
    }
    match &settings.destination {
        LogStreamDestination::Https { url, format } => {
            if let Err(why) = endpoint(url) {
                problems.push(("destination.url", why));
            }
            if let recruit_domain::model::BatchFormat::Other(v) = format {
                let known = recruit_domain::model::BatchFormat::KNOWN.join(", ");
                let why = format!("The format {} is not one of {known}.", v.as_str());
                problems.push(("destination.format", why));
            }
        }
        LogStreamDestination::SyslogTls {
            host,
            port,
            ca_certificate,
            client_certificate,
            client_key,
            ..
        } => {
            if host.len() > 253 || url::Host::parse(host).is_err() {
                problems
                    .push(("destination.host", "The host is not a host name or address.".into()));
            }
            if *port == 0 {
                problems.push(("destination.port", "A port is 1 to 65535.".into()));
            }
            for (field, pem) in [
                ("destination.ca_certificate", ca_certificate),
                ("destination.client_certificate", client_certificate),
            ] {
                if let Some(pem) = pem
                    && let Err(why) = certificates(pem)
                {
                    problems.push((field, why));
                }
            }
            if let Some(key) = client_key
                && let Err(why) = private_key(&key.0)
            {
                problems.push(("destination.client_key", why));
            }
            if let Some(sender) = sender(&settings.destination) {
                for (field, why) in sender.problems() {
                    let field = match field {
                        "facility" => "destination.facility",
                        "hostname" => "destination.hostname",
                        "app_name" => "destination.app_name",
                        _ => "destination",
                    };
                    problems.push((field, why));
                }
            }
        }
        LogStreamDestination::SplunkHec {
            url,
            index,
            source,
            sourcetype,
            host,
            channel,
            token,
            gzip: _,
        } => {
            if let Err(why) = endpoint(url) {
                problems.push(("destination.url", why));
            }
            for (field, value) in [
                ("destination.index", index),
                ("destination.source", source),
                ("destination.sourcetype", sourcetype),
                ("destination.host", host),
            ] {
                if let Some(value) = value
                    && (value.trim().is_empty()
                        || value.len() > 256
                        || value.chars().any(char::is_control))
                {
                    problems.push((field, "1 to 256 characters, none a control.".into()));
                }
            }
            if let Some(channel) = channel
                && uuid::Uuid::try_parse(channel).is_err()
            {
                problems.push(("destination.channel", "A channel is a GUID.".into()));
            }
            if let Some(token) = token
                && (token.0.trim().is_empty() || token.0.len() > 256)
            {
                problems.push(("destination.token", "A token is 1 to 256 characters.".into()));
            }
        }
        _ => problems.push(("destination.type", "This destination is not supported.".into())),
    }
    problems
}

/// `destination` with its channel chosen when it names none (a Splunk collector's requests
/// name one, kept for the stream's life, so that acknowledgements are asked where they were
/// given).
pub fn with_channel(mut destination: LogStreamDestination) -> LogStreamDestination {
    if let LogStreamDestination::SplunkHec { channel: channel @ None, .. } = &mut destination {
        *channel = Some(uuid::Uuid::now_v7().hyphenated().to_string());
    }
    destination
}

/// The SD-ID of the chain's coordinates in syslog messages (32473: the private enterprise
/// number reserved for documentation, RFC 5612, until one is registered).
pub const SD_ID: &str = "recruitd@32473";

/// What a syslog destination's messages say of their sender; `None` for other destinations.
pub fn sender(destination: &LogStreamDestination) -> Option<syslog::Sender> {
    match destination {
        LogStreamDestination::SyslogTls { hostname, app_name, facility, .. } => {
            Some(syslog::Sender {
                facility: *facility,
                severity: 6,
                hostname: hostname.clone(),
                app_name: app_name.clone(),
                sd_id: SD_ID.to_owned(),
            })
        }
        _ => None,
    }
}

/// Where a Splunk destination's events go; `None` for other destinations.
pub fn collector(destination: &LogStreamDestination) -> Option<splunk::Collector> {
    match destination {
        LogStreamDestination::SplunkHec { index, source, sourcetype, host, .. } => {
            Some(splunk::Collector {
                index: index.clone(),
                source: source.clone(),
                sourcetype: sourcetype.clone(),
                host: host.clone(),
            })
        }
        _ => None,
    }
}

/// The certificates of `pem` (one at least), or why it holds none.
fn certificates(pem: &str) -> Result<usize, String> {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let found: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(pem.as_bytes()).collect();
    match found {
        Ok(certs) if !certs.is_empty() => Ok(certs.len()),
        Ok(_) => Err("No PEM certificate (BEGIN CERTIFICATE) was found.".into()),
        Err(e) => Err(format!("The PEM is not valid: {e}.")),
    }
}

/// Whether `pem` holds a private key (PKCS #8, PKCS #1 or SEC1), or why not.
fn private_key(pem: &str) -> Result<(), String> {
    use rustls_pki_types::PrivateKeyDer;
    use rustls_pki_types::pem::PemObject;
    PrivateKeyDer::from_pem_slice(pem.as_bytes())
        .map(drop)
        .map_err(|e| format!("No PEM private key was found: {e}."))
}

/// The host a destination reaches, when its settings name one.
pub fn host(destination: &LogStreamDestination) -> Option<String> {
    match destination {
        LogStreamDestination::Https { url, .. } => endpoint(url).ok(),
        LogStreamDestination::SyslogTls { host, .. } => Some(host.clone()),
        LogStreamDestination::SplunkHec { url, .. } => endpoint(url).ok(),
        _ => None,
    }
}

/// The secrets to store for `destination` (its write-only members), given those stored
/// (`stored`, `Null` for a new stream): a client key given replaces the stored one, and a
/// client certificate needs a key, given or stored. The field and why, when it has none.
pub fn secrets_of(
    destination: &LogStreamDestination,
    mut stored: Value,
) -> Result<Value, (&'static str, String)> {
    if !stored.is_object() {
        stored = Value::Object(serde_json::Map::new());
    }
    if let LogStreamDestination::SyslogTls { client_certificate, client_key, .. } = destination {
        if let Some(key) = client_key {
            stored["client_key"] = Value::String(key.0.clone());
        }
        if client_certificate.is_some() && !stored["client_key"].is_string() {
            let why = "A client certificate needs its client_key.".to_owned();
            return Err(("destination.client_key", why));
        }
        if client_certificate.is_none()
            && let Some(o) = stored.as_object_mut()
        {
            o.remove("client_key");
        }
    }
    if let LogStreamDestination::SplunkHec { token, .. } = destination {
        if let Some(token) = token {
            stored["hec_token"] = Value::String(token.0.clone());
        }
        if !stored["hec_token"].is_string() {
            return Err(("destination.token", "The collector's token is required.".to_owned()));
        }
    }
    Ok(stored)
}

/// The host of an HTTPS destination's `url`, or why it is not one: `https` (`http` only to
/// this machine's loopback), a host, no credentials and no fragment.
pub fn endpoint(url: &str) -> Result<String, String> {
    if url.len() > URL_MAX {
        return Err(format!("A URL is at most {URL_MAX} characters."));
    }
    let parsed = url::Url::parse(url).map_err(|e| format!("The URL is not valid: {e}."))?;
    let host = parsed.host_str().unwrap_or_default().to_owned();
    let loopback = crate::sso::is_loopback(&parsed);
    if parsed.scheme() != "https" && !(parsed.scheme() == "http" && loopback) {
        return Err("The URL must be https (http only on this machine's loopback).".into());
    }
    if host.is_empty() {
        return Err("The URL has no host.".into());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("The URL holds no credentials.".into());
    }
    if parsed.fragment().is_some() {
        return Err("The URL has no fragment.".into());
    }
    Ok(host)
}

/// What a stream's `destination` column holds for `destination`: everything but its
/// write-only members, which the stream's secrets hold ([`secrets_of`]).
pub fn stored(destination: &LogStreamDestination) -> Value {
    let mut stored = serde_json::to_value(destination).unwrap_or(Value::Null);
    if let Some(members) = stored.as_object_mut() {
        members.remove("client_key");
        members.remove("token");
    }
    stored
}

/// The destination a stored stream names; `None` when this version does not know it.
pub fn destination(stream: &StreamRecord) -> Option<LogStreamDestination> {
    serde_json::from_value(stream.destination.clone()).ok()
}

/// A stream's state: paused by an owner, else its delivery's health.
pub fn state(stream: &StreamRecord) -> LogStreamState {
    match (stream.paused, stream.delivery.health) {
        (true, _) => LogStreamState::Paused,
        (false, Health::Ok) => LogStreamState::Active,
        (false, Health::Failing) => LogStreamState::Failing,
        (false, Health::Suspended) => LogStreamState::Suspended,
    }
}

/// `stream` as the API shows it, with `head` the last position of its ledger's chain.
pub fn shown(stream: &StreamRecord, head: u64) -> LogStream {
    let d = &stream.delivery;
    let last_error = d.last_error.clone().and_then(|e| serde_json::from_value(e).ok());
    let failing = d.health != Health::Ok;
    LogStream {
        id: LogStreamId::from_uuid(stream.id),
        name: stream.name.clone(),
        ledger: stream.ledger.clone(),
        destination: destination(stream).unwrap_or(LogStreamDestination::Https {
            url: String::new(),
            format: recruit_domain::model::BatchFormat::Ndjson,
        }),
        state: state(stream),
        delivered_position: d.position,
        delivered_at: d.at,
        lag_entries: head.saturating_sub(d.position),
        failing_since: d.failing_since.filter(|_| failing),
        last_error: last_error.filter(|_: &DeliveryError| failing),
        created_at: stream.created_at,
        updated_at: stream.updated_at,
        signing_secret: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recruit_domain::model::BatchFormat;
    use serde_json::json;

    fn settings(body: Value) -> (Option<LogStreamSettings>, Vec<ErrorDetail>) {
        let mut problems = vec![];
        let body = serde_json::to_vec(&body).unwrap();
        (settings_body(&body, &mut problems), problems)
    }

    fn fields(problems: &[(&'static str, String)]) -> Vec<&'static str> {
        problems.iter().map(|(f, _)| *f).collect()
    }

    #[test]
    fn settings_name_every_member_that_is_missing_unknown_or_of_the_wrong_type() {
        let (s, problems) = settings(
            json!({"name": "SIEM", "destination": {"type": "https", "url": "https://siem.example.com/in"}}),
        );
        let s = s.unwrap();
        assert!(problems.is_empty());
        assert_eq!(s.after_position, None, "from now");
        assert!(matches!(
            s.destination,
            LogStreamDestination::Https { format: BatchFormat::Ndjson, .. }
        ));
        let (none, problems) = settings(json!({"extra": 1}));
        assert!(none.is_none());
        assert_eq!(problems.len(), 3, "extra, name, destination: {problems:?}");
        let (none, problems) =
            settings(json!({"name": "x", "destination": {"type": "ftp", "url": "x"}}));
        assert!(none.is_none());
        assert!(format!("{problems:?}").contains("destination"), "{problems:?}");
        let (none, problems) = settings(
            json!({"name": "x", "destination": {"type": "https", "url": "https://a.example"}, "after_position": -1}),
        );
        assert!(none.is_none());
        assert!(format!("{problems:?}").contains("after_position"), "{problems:?}");
    }

    #[test]
    fn a_destination_is_https_with_a_host_and_no_credentials_or_fragment() {
        let of = |url: &str, name: &str| LogStreamSettings {
            name: name.into(),
            destination: LogStreamDestination::Https {
                url: url.into(),
                format: BatchFormat::Ndjson,
            },
            after_position: None,
            after_time: None,
        };
        assert_eq!(fields(&problems(&of("https://siem.example.com:8443/in?x=1", "SIEM"))), [""; 0]);
        assert_eq!(fields(&problems(&of("http://127.0.0.1:9000/in", "SIEM"))), [""; 0]);
        assert_eq!(fields(&problems(&of("http://localhost:9000/in", "SIEM"))), [""; 0]);
        for url in [
            "http://siem.example.com/in",
            "ftp://siem.example.com/in",
            "https://user:pw@siem.example.com/in",
            "https://siem.example.com/in#x",
            "not a url",
            &format!("https://siem.example.com/{}", "a".repeat(URL_MAX)),
        ] {
            assert_eq!(fields(&problems(&of(url, "SIEM"))), ["destination.url"], "{url}");
        }
        for name in ["", "   ", "a\nb", &"가".repeat(NAME_MAX + 1)] {
            assert_eq!(fields(&problems(&of("https://a.example", name))), ["name"], "{name:?}");
        }
        assert!(problems(&of("https://a.example", &"가".repeat(NAME_MAX))).is_empty());
        let other = LogStreamSettings {
            destination: LogStreamDestination::Https {
                url: "https://a.example".into(),
                format: BatchFormat::from("XML"),
            },
            ..of("https://a.example", "SIEM")
        };
        assert_eq!(fields(&problems(&other)), ["destination.format"]);
    }

    #[test]
    fn a_splunk_destination_needs_a_token_and_gets_a_channel_kept_for_its_life() {
        let of = |extra: Value| {
            let mut d = json!({"type": "splunk_hec", "url": "https://splunk.example.com:8088"});
            for (k, v) in extra.as_object().unwrap() {
                d[k] = v.clone();
            }
            serde_json::from_value::<LogStreamDestination>(d).unwrap()
        };
        let settings = |destination| LogStreamSettings {
            name: "Splunk".into(),
            destination,
            after_position: None,
            after_time: None,
        };
        assert!(problems(&settings(of(json!({"token": "t", "index": "audit"})))).is_empty());
        for (extra, field) in [
            (json!({"url": "http://splunk.example.com:8088"}), "destination.url"),
            (json!({"index": ""}), "destination.index"),
            (json!({"channel": "not-a-guid"}), "destination.channel"),
            (json!({"token": ""}), "destination.token"),
        ] {
            assert_eq!(fields(&problems(&settings(of(extra.clone())))), [field], "{extra}");
        }
        let chosen = with_channel(of(json!({"token": "t"})));
        let LogStreamDestination::SplunkHec { channel: Some(channel), .. } = &chosen else {
            panic!("{chosen:?}")
        };
        assert!(uuid::Uuid::try_parse(channel).is_ok());
        assert_eq!(with_channel(chosen.clone()), chosen, "kept once chosen");
        let stored = stored(&chosen);
        assert!(stored.get("token").is_none(), "the token is kept apart: {stored}");
        let secrets = secrets_of(&chosen, Value::Null).unwrap();
        assert_eq!(secrets["hec_token"], "t");
        let without = of(json!({}));
        assert_eq!(secrets_of(&without, Value::Null).unwrap_err().0, "destination.token");
        assert_eq!(
            secrets_of(&without, secrets.clone()).unwrap(),
            secrets,
            "the stored token kept"
        );
    }

    #[test]
    fn a_rotated_secret_signs_beside_the_new_one_until_its_overlap_ends() {
        let mut problems = vec![];
        assert_eq!(overlap_body(b"{}", &mut problems), Some(DEFAULT_OVERLAP));
        assert_eq!(overlap_body(br#"{"overlap_seconds": 0}"#, &mut problems), Some(0));
        assert_eq!(
            overlap_body(br#"{"overlap_seconds": 604800}"#, &mut problems),
            Some(MAX_OVERLAP)
        );
        assert!(problems.is_empty());
        for bad in [
            &br#"{"overlap_seconds": 604801}"#[..],
            br#"{"overlap_seconds": -1}"#,
            br#"{"overlap_seconds": "1h"}"#,
            br#"{"x": 1}"#,
        ] {
            let mut problems = vec![];
            assert_eq!(overlap_body(bad, &mut problems), None);
            assert_eq!(problems.len(), 1, "{problems:?}");
        }
        let at = |s: i64| recruit_domain::Timestamp::from_unix_micros(s * 1_000_000).unwrap();
        let stream = StreamRecord {
            secrets: json!({"signing": "new", "previous": "old", "previous_until": at(100)}),
            ..stream()
        };
        assert_eq!(signing_secrets(&stream, at(99)), ["new", "old"]);
        assert_eq!(signing_secrets(&stream, at(100)), ["new"]);
        let first = StreamRecord { secrets: json!({"signing": "only"}), ..stream };
        assert_eq!(signing_secrets(&first, at(0)), ["only"]);
    }

    fn stream() -> StreamRecord {
        StreamRecord {
            organization_id: recruit_domain::OrganizationId::from_uuid(uuid::Uuid::from_u128(1)),
            id: uuid::Uuid::from_u128(2),
            name: "SIEM".into(),
            ledger: "privacy".into(),
            destination: json!({"type": "https", "url": "https://a.example/in", "format": "NDJSON"}),
            secrets: json!({}),
            paused: false,
            created_by: recruit_domain::UserId::from_uuid(uuid::Uuid::from_u128(3)),
            created_at: recruit_domain::Timestamp::MIN,
            updated_at: recruit_domain::Timestamp::MIN,
            delivery: recruit_ports::streams::Delivery::starting(0, [0; 32]),
        }
    }

    #[test]
    fn a_merge_patch_changes_what_it_names_and_keeps_the_rest() {
        let stream = stream();
        let mut problems = vec![];
        let patch = br#"{"destination": {"format": "JSON_ARRAY"}}"#;
        let changed = patched(&stream, patch, &mut problems).unwrap();
        assert_eq!(changed.name, "SIEM");
        assert_eq!(
            changed.destination,
            LogStreamDestination::Https {
                url: "https://a.example/in".into(),
                format: BatchFormat::JsonArray
            }
        );
        let none = patched(&stream, br#"{"destination": {"url": null}}"#, &mut problems);
        assert!(none.is_none(), "a destination without its URL");
        assert!(format!("{problems:?}").contains("url"), "{problems:?}");
        let mut problems = vec![];
        assert!(patched(&stream, br#"{"after_position": 3}"#, &mut problems).is_none());
        assert_eq!(problems.len(), 1, "a stream's start is not changed: {problems:?}");
        assert_eq!(shown(&stream, 7).lag_entries, 7);
        assert_eq!(state(&StreamRecord { paused: true, ..stream.clone() }), LogStreamState::Paused);
    }
}
