//! Log streams to a Splunk HTTP Event Collector: the stand-in `hec_collector.py`, which
//! enforces the collector's documented behaviour (no real one can run here). Every entry
//! arrives as an event (its export line, its coordinates as indexed fields); with indexer
//! acknowledgement a batch counts as delivered only once the collector says it is indexed, and
//! is sent again when that never comes (a collector restarted); a busy collector is waited out,
//! a batch too large is split, and a refused token or index holds the stream, failing, until
//! its settings are mended.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use recruit_client::Client;
use recruit_domain::chain::ExportLine;
use recruit_domain::model::{LogStreamDestination, LogStreamSettings, LogStreamState};
use serde_json::json;

use crate::common::*;

impl Peer {
    /// The events indexed with `index`, by position, once every position up to `last` is;
    /// each checked as the envelope of its entry.
    async fn indexed(&self, index: Option<&str>, last: u64) -> BTreeMap<u64, ExportLine> {
        held_up_to(last, || async {
            let received = self.received().await;
            let mut lines = vec![];
            for event in received["indexed"].as_array().unwrap() {
                if event["index"].as_str() != index {
                    continue;
                }
                let line: ExportLine = serde_json::from_value(event["event"].clone()).unwrap();
                let position = line.position.unwrap();
                assert_eq!(event["fields"]["pos"], position.to_string(), "{event}");
                assert_eq!(event["fields"]["hash"].as_str(), line.hash.as_deref(), "{event}");
                assert_eq!(event["fields"]["id"], line.entry["id"], "{event}");
                assert_eq!(event["source"], "recruitd:privacy");
                assert_eq!(event["sourcetype"], "recruitd:audit");
                assert!(event["time"].is_number(), "{event}");
                lines.push(line);
            }
            (lines, format!("refused {}", received["refused"]))
        })
        .await
    }
}

async fn record(client: &Client, n: usize) -> u64 {
    client.record_privacy_accesses(&accesses(n, "READ", "Splunk"), None).await.unwrap();
    let export = client.export(recruit_client::ChainPoint::START).await.unwrap();
    let lines: Vec<_> = futures_util::TryStreamExt::try_collect(export.lines).await.unwrap();
    lines.len() as u64
}

fn stream(url: &str, index: Option<&str>, token: &str) -> LogStreamSettings {
    gzipped(url, index, token, false)
}

fn gzipped(url: &str, index: Option<&str>, token: &str, gzip: bool) -> LogStreamSettings {
    let destination =
        json!({"type": "splunk_hec", "url": url, "index": index, "token": token, "gzip": gzip});
    LogStreamSettings {
        name: format!("Splunk {token}"),
        destination: serde_json::from_value::<LogStreamDestination>(destination).unwrap(),
        after_position: Some(0),
        after_time: None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_entry_is_indexed_by_the_collector_and_acknowledged_batches_wait_for_it() {
    let collector = Peer::start(Path::new("python3"), "hec_collector.py");
    let tokens = json!({
        "plain": {},
        "acked": {"ack": true, "indexes": ["audit"]},
        "off": {"disabled": true},
    });
    collector.control("__config", json!({"tokens": tokens, "ack_delay": 1.0})).await;
    let world = World::sqlite();
    let serve = [
        "--outbound-allow",
        "127.0.0.1",
        "--log-stream-lease",
        "3s",
        "--log-stream-ack-timeout",
        "4s",
    ];
    let server = world.serve(&serve);
    let client = world.client(&server);
    let first = record(&client, 4).await;

    // Without acknowledgement: taken is delivered. The token is never shown; the channel the
    // server chose is.
    let plain = client.create_log_stream(&stream(&collector.url, None, "plain")).await.unwrap();
    let shown = serde_json::to_value(&plain).unwrap();
    assert!(shown["destination"].get("token").is_none(), "{shown}");
    let channel = shown["destination"]["channel"].as_str().unwrap().to_owned();
    assert!(recruit_domain::Uuid::try_parse(&channel).is_ok(), "{channel}");
    chained(&collector.indexed(None, first).await);

    // With acknowledgement: the stream holds its position until the collector says the batch
    // is indexed.
    let acked = stream(&collector.url, Some("audit"), "acked");
    let acked = client.create_log_stream(&acked).await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let waiting = client.log_stream(acked.id).await.unwrap();
    assert_eq!(waiting.delivered_position, 0, "not delivered before it is indexed");
    chained(&collector.indexed(Some("audit"), first).await);
    let done = client.log_stream(acked.id).await.unwrap();
    assert_eq!((done.delivered_position, done.state), (first, LogStreamState::Active));

    // A collector that forgets its channels (restarted) never acknowledges the batch it
    // took: the batch is sent again once the wait for it runs out.
    collector.control("__config", json!({"ack_delay": 3.0})).await;
    let second = record(&client, 2).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    collector.control("__restart", json!({})).await;
    collector.control("__config", json!({"ack_delay": 0.2})).await;
    chained(&collector.indexed(Some("audit"), second).await);

    // Busy (503 code 9 with Retry-After) is waited out.
    collector
        .control("__faults", json!({"faults": [{"status": 503, "code": 9, "retry_after": "1"}]}))
        .await;
    let third = record(&client, 1).await;
    chained(&collector.indexed(None, third).await);

    // Too large for the collector: sent in smaller batches.
    collector.control("__config", json!({"max_content_length": 4096})).await;
    let fourth = record(&client, 12).await;
    chained(&collector.indexed(None, fourth).await);
    chained(&collector.indexed(Some("audit"), fourth).await);
    collector.control("__config", json!({"max_content_length": 1 << 20})).await;

    // A disabled token and an index the token may not write hold their streams, failing, with
    // the collector's words, until the settings are mended.
    let off = client.create_log_stream(&stream(&collector.url, None, "off")).await.unwrap();
    let failing = in_state(&client, &off, LogStreamState::Failing).await;
    assert!(failing.last_error.unwrap().message.contains("Token disabled"));
    let mended = json!({"destination": {"token": "plain"}});
    client.update_log_stream(off.id, &mended).await.unwrap();
    in_state(&client, &off, LogStreamState::Active).await;
    let wrong = stream(&collector.url, Some("main"), "acked");
    let wrong = client.create_log_stream(&wrong).await.unwrap();
    let failing = in_state(&client, &wrong, LogStreamState::Failing).await;
    assert!(failing.last_error.unwrap().message.contains("Incorrect index"));
    let patch = json!({"destination": {"index": "audit"}});
    client.update_log_stream(wrong.id, &patch).await.unwrap();
    in_state(&client, &wrong, LogStreamState::Active).await;
    let caught_up = client.log_stream(wrong.id).await.unwrap();
    assert_eq!(caught_up.lag_entries, 0);
    let refused = collector.received().await["refused"].clone();
    assert!(
        refused.as_array().unwrap().iter().all(|r| [1, 7].contains(&r["code"].as_i64().unwrap())),
        "only what the settings caused is refused: {refused}"
    );
}

/// A stream asked to compress sends every batch gzipped, as the collector reads it, and shows
/// that it does.
#[tokio::test(flavor = "multi_thread")]
async fn batches_go_compressed_when_the_stream_asks() {
    let collector = Peer::start(Path::new("python3"), "hec_collector.py");
    collector.control("__config", json!({"tokens": {"plain": {}}})).await;
    let world = World::sqlite();
    let server = world.serve(&["--outbound-allow", "127.0.0.1"]);
    let client = world.client(&server);
    let recorded = record(&client, 40).await;
    let made = client.create_log_stream(&gzipped(&collector.url, None, "plain", true)).await;
    let shown = serde_json::to_value(made.unwrap()).unwrap();
    assert_eq!(shown["destination"]["gzip"], true, "{shown}");
    chained(&collector.indexed(None, recorded).await);
    let received = collector.received().await;
    let gzipped = &received["gzipped"];
    assert_eq!(gzipped["requests"], received["requests"], "every batch compressed: {received}");
    let (sent, inflated) =
        (gzipped["bytes"].as_u64().unwrap(), gzipped["inflated"].as_u64().unwrap());
    assert!(sent * 4 < inflated, "{sent} bytes sent for {inflated}");
}
