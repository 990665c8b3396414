//! Exports of the ledgers as NDJSON, one entry a line with its place in its chain, so that
//! whoever receives an export can check every entry without the database:
//!
//! ```text
//! {"ledger":"privacy","organization_id":"org_…","position":41,"prev_hash":"…","hash":"…","entry":{…}}
//! ```
//!
//! `entry` is the entry's canonical JSON ([`recruit_domain::chain::canonical_json`]: its
//! object as the API shows it, keys sorted); `hash` is SHA-256 over the chain's version tag,
//! `ledger`, the organization, `position`, `prev_hash` and `entry`
//! ([`recruit_domain::chain::entry_hash`]). Lines come in the order of organization, time and
//! id; sorted by position, each organization's lines link up, the first `prev_hash` being the
//! hash of the entry before the export (or 64 zeros for the chain's first).

use std::io::Write;

use recruit_domain::chain::{Ledger, hex};
use recruit_ports::chain::{ExportQuery, ExportedEntry};
use recruit_ports::{Store, StoreError};

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The output could not be written.
    #[error("cannot write the export: {0}")]
    Write(#[from] std::io::Error),
}

/// One line of an export, with its line feed.
pub fn line(ledger: Ledger, exported: &ExportedEntry) -> Vec<u8> {
    let e = &exported.entry;
    let digest = |bytes: &Option<Vec<u8>>| {
        bytes
            .as_deref()
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .map_or_else(|| "null".to_owned(), |d| format!("\"{}\"", hex(&d)))
    };
    let position = e.position.map_or_else(|| "null".to_owned(), |p| p.to_string());
    let mut out = format!(
        "{{\"ledger\":\"{ledger}\",\"organization_id\":\"{}\",\"position\":{position},\
         \"prev_hash\":{},\"hash\":{},\"entry\":",
        exported.organization_id,
        digest(&e.prev_hash),
        digest(&e.hash),
    )
    .into_bytes();
    out.extend_from_slice(&e.canonical);
    out.extend_from_slice(b"}\n");
    out
}

/// Writes the export `query` names to `out`, one line an entry; returns how many were
/// written. Memory stays flat whatever the size: entries are read as they are written.
pub async fn write(
    store: &dyn Store,
    query: &ExportQuery,
    out: &mut impl Write,
) -> Result<u64, ExportError> {
    let mut export = store.export(query, None).await?;
    let mut written = 0;
    while let Some(entry) = std::future::poll_fn(|cx| export.entries.as_mut().poll_next(cx)).await {
        out.write_all(&line(query.ledger, &entry?))?;
        written += 1;
    }
    out.flush()?;
    if written != export.count {
        return Err(StoreError::other(format!(
            "the export counted {} entries and read {written}",
            export.count
        ))
        .into());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use recruit_domain::chain::{GENESIS, canonical_json, entry_hash, parse_hex};
    use recruit_domain::{OrganizationId, Timestamp, Uuid};
    use recruit_ports::chain::ChainEntry;

    #[test]
    fn a_line_carries_what_proves_its_entry() {
        let org = OrganizationId::from_uuid(Uuid::from_u128(0xA));
        let entry = serde_json::json!({"id": "x", "b": [1, 2], "a": null});
        let canonical = canonical_json(&entry).unwrap();
        let hash = entry_hash(Ledger::Api, org, 1, &GENESIS, &canonical);
        let exported = ExportedEntry {
            organization_id: org,
            time: Timestamp::parse("2026-11-24T00:00:00Z").unwrap(),
            entry: ChainEntry {
                id: Uuid::from_u128(1),
                position: Some(1),
                prev_hash: Some(GENESIS.to_vec()),
                hash: Some(hash.to_vec()),
                canonical,
            },
        };
        let text = String::from_utf8(line(Ledger::Api, &exported)).unwrap();
        assert!(text.ends_with('\n') && !text.trim_end().contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["ledger"], "api");
        assert_eq!(v["organization_id"], org.to_string());
        assert_eq!(v["entry"], entry);
        // What a receiver does: the hash again, from the line alone.
        let prev = parse_hex(v["prev_hash"].as_str().unwrap()).unwrap();
        let again = entry_hash(
            Ledger::Api,
            org,
            v["position"].as_u64().unwrap(),
            &prev,
            &canonical_json(&v["entry"]).unwrap(),
        );
        assert_eq!(v["hash"], hex(&again));
    }
}
