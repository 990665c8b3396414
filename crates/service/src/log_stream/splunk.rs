//! The Splunk HTTP Event Collector destination: each entry an event in the collector's
//! envelope (`time`, `host`, `source`, `sourcetype`, `index`, `event`, indexed `fields`), a
//! batch the events concatenated, and what the collector's answers mean for the batch. When the
//! collector's token acknowledges indexing, its answer carries an `ackId`, and the batch is
//! delivered only once `/services/collector/ack` says that id is indexed.

use std::time::{Duration, SystemTime};

use recruit_domain::Timestamp;
use serde_json::{Map, Value};

/// Where a stream's events go in Splunk; unset members take the token's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collector {
    /// The index.
    pub index: Option<String>,
    /// The source (`recruitd:<ledger>` when unset).
    pub source: Option<String>,
    /// The source type (`recruitd:audit` when unset).
    pub sourcetype: Option<String>,
    /// The host.
    pub host: Option<String>,
}

/// One event: the entry's export line (`line`, JSON) as `event`, written at `at`, with the
/// chain's coordinates as indexed `fields` (strings, as the collector requires).
pub fn event(
    collector: &Collector,
    ledger: &str,
    at: Timestamp,
    fields: &[(&str, &str)],
    line: &[u8],
) -> Result<Vec<u8>, serde_json::Error> {
    let event: Value = serde_json::from_slice(line)?;
    let micros = at.unix_micros();
    // Seconds with their fraction, written out: the collector refuses an exponent.
    let time = format!("{}.{:06}", micros.div_euclid(1_000_000), micros.rem_euclid(1_000_000));
    let mut envelope = Map::new();
    envelope.insert("time".into(), Value::Number(time.parse()?));
    let source = collector.source.clone().unwrap_or_else(|| format!("recruitd:{ledger}"));
    let sourcetype = collector.sourcetype.clone().unwrap_or_else(|| "recruitd:audit".into());
    envelope.insert("source".into(), source.into());
    envelope.insert("sourcetype".into(), sourcetype.into());
    if let Some(index) = &collector.index {
        envelope.insert("index".into(), index.clone().into());
    }
    if let Some(host) = &collector.host {
        envelope.insert("host".into(), host.clone().into());
    }
    envelope.insert("event".into(), event);
    let fields: Map<String, Value> =
        fields.iter().map(|(k, v)| ((*k).to_owned(), Value::from(*v))).collect();
    envelope.insert("fields".into(), fields.into());
    serde_json::to_vec(&envelope)
}

/// What a collector's answer means for the batch it answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Taken; delivered when there is no `ackId`, else once that id is acknowledged.
    Taken {
        /// The id to ask `/services/collector/ack` about, when the token acknowledges.
        ack_id: Option<u64>,
    },
    /// Not taken now: the same batch again after at least `after`, when the collector said.
    Retry {
        /// The wait the collector asked for.
        after: Option<Duration>,
        /// The collector's words.
        why: String,
    },
    /// Too large: the batch again, smaller.
    Shrink,
    /// Refused for what the stream's settings say (a token, an index): retried slowly, in case
    /// an operator mends them, and shown as the stream's last error.
    Misconfigured(String),
    /// Refused for what recruitd sent: a fault of the server's, never retried as it is.
    Malformed(String),
}

/// The meaning of an answer of `status` with `body`, with its `Retry-After` if any, received
/// at `now`.
pub fn classify(status: u16, body: &[u8], retry_after: Option<&str>, now: SystemTime) -> Answer {
    let answer: Value = serde_json::from_slice(body).unwrap_or_default();
    let code = answer["code"].as_i64();
    let why = answer["text"].as_str().map_or_else(
        || format!("HTTP {status}"),
        |t| format!("HTTP {status}, code {}: {t}", code.unwrap_or(-1)),
    );
    let after = retry_after.and_then(|v| recruit_domain::retry::retry_after(v, now));
    match (status, code) {
        (200..=299, Some(0) | None) => Answer::Taken { ack_id: answer["ackId"].as_u64() },
        (413, _) => Answer::Shrink,
        (429 | 500..=599, _) => Answer::Retry { after, why },
        // Token disabled, required, invalid; an index the token may not write; acknowledgement
        // off where the stream expects it.
        (401 | 403, _) | (400, Some(7 | 14)) => Answer::Misconfigured(why),
        _ => Answer::Malformed(why),
    }
}

/// The body that asks which of `ids` are indexed.
pub fn ack_query(ids: &[u64]) -> Vec<u8> {
    serde_json::json!({ "acks": ids }).to_string().into_bytes()
}

/// The ids an answer to [`ack_query`] says are indexed (each is said once).
pub fn acknowledged(body: &[u8]) -> Result<Vec<u64>, String> {
    let answer: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let acks = answer["acks"].as_object().ok_or("no acks in the answer")?;
    let mut ids: Vec<u64> = acks
        .iter()
        .filter(|(_, indexed)| indexed.as_bool() == Some(true))
        .filter_map(|(id, _)| id.parse().ok())
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_an_event_with_its_time_coordinates_and_export_line() {
        let at: Timestamp = "2026-11-28T01:02:03.000456Z".parse().unwrap();
        let collector = Collector { index: Some("audit".into()), ..Collector::default() };
        let line = b"{\"ledger\":\"privacy\",\"position\":41}\n";
        let bytes = event(&collector, "privacy", at, &[("pos", "41")], line).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains(r#""time":1795827723.000456"#), "{text}");
        let sent: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(sent["source"], "recruitd:privacy");
        assert_eq!(sent["sourcetype"], "recruitd:audit");
        assert_eq!(sent["index"], "audit");
        assert!(sent.get("host").is_none(), "the token's default");
        assert_eq!(sent["event"]["position"], 41);
        assert_eq!(sent["fields"]["pos"], "41", "indexed fields are strings");
        assert!(event(&collector, "privacy", at, &[], b"not json").is_err());
    }

    #[test]
    fn the_collectors_answers_decide_what_becomes_of_a_batch() {
        let now = SystemTime::UNIX_EPOCH;
        let says = |status, body: &str| classify(status, body.as_bytes(), None, now);
        assert_eq!(says(200, r#"{"text":"Success","code":0}"#), Answer::Taken { ack_id: None });
        let acked = says(200, r#"{"text":"Success","code":0,"ackId":7}"#);
        assert_eq!(acked, Answer::Taken { ack_id: Some(7) });
        let busy = classify(503, br#"{"text":"Server is busy","code":9}"#, Some("12"), now);
        assert_eq!(
            busy,
            Answer::Retry {
                after: Some(Duration::from_secs(12)),
                why: "HTTP 503, code 9: Server is busy".into()
            }
        );
        assert!(matches!(
            says(500, r#"{"text":"Internal server error","code":8}"#),
            Answer::Retry { .. }
        ));
        assert!(matches!(says(502, "<html>bad gateway</html>"), Answer::Retry { .. }));
        assert_eq!(says(413, ""), Answer::Shrink);
        for (status, body) in [
            (403, r#"{"text":"Token disabled","code":1}"#),
            (401, r#"{"text":"Invalid authorization","code":3}"#),
            (400, r#"{"text":"Incorrect index","code":7,"invalid-event-number":0}"#),
        ] {
            assert!(matches!(says(status, body), Answer::Misconfigured(_)), "{body}");
        }
        let bad = says(400, r#"{"text":"Invalid data format","code":6,"invalid-event-number":3}"#);
        assert_eq!(bad, Answer::Malformed("HTTP 400, code 6: Invalid data format".into()));
    }

    #[test]
    fn acknowledgements_are_asked_for_by_id_and_read_back() {
        assert_eq!(ack_query(&[0, 1, 2]), br#"{"acks":[0,1,2]}"#);
        let indexed = acknowledged(br#"{"acks":{"2":true,"0":true,"1":false}}"#).unwrap();
        assert_eq!(indexed, [0, 2]);
        assert!(acknowledged(br#"{"text":"ACK is disabled","code":14}"#).is_err());
    }
}
