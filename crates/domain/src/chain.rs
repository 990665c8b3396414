//! Tamper evidence of the ledgers: every entry of an organization's ledger has a position and a
//! hash that chains it to the entry before, so that a change, a removal, an insertion or a
//! reordering of stored entries shows when the chain is computed again.
//!
//! The hash of the entry at `position` of `ledger` in `organization` is SHA-256 over, in order:
//!
//! 1. the tag `recruitd-ledger-v1` and a line feed (the encoding's version),
//! 2. the ledger's name (`privacy`, `api` or `tool`) and a line feed,
//! 3. the organization's UUID, 16 bytes,
//! 4. the position, 8 bytes big-endian (the first entry is at 1),
//! 5. the hash of the entry before (32 zero bytes for the first, [`GENESIS`]),
//! 6. the entry's canonical JSON ([`canonical_json`]): its object as the export shows it,
//!    without `position`, `prev_hash` and `hash`, keys sorted, no insignificant whitespace
//!    (RFC 8785 for the values entries hold: strings, integers, booleans, nulls, arrays and
//!    objects).
//!
//! Anyone holding an export can therefore recompute every hash with a JSON canonicalizer and
//! SHA-256, and compare the last one with a checkpoint kept outside the database.

use std::fmt;

use sha2::{Digest as _, Sha256};

use crate::OrganizationId;

/// A SHA-256 digest: an entry's hash.
pub type Digest = [u8; 32];

/// The hash "before" the first entry of every chain.
pub const GENESIS: Digest = [0; 32];

/// One of the three ledgers, each chained per organization.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Ledger {
    /// The privacy audit ledger: who accessed whose personal data.
    Privacy,
    /// The API audit ledger: reads of the privacy ledger through the REST API.
    Api,
    /// The tool-interface audit ledger: reads of the privacy ledger through tools.
    Tool,
}

impl Ledger {
    /// Every ledger, in the order of their names.
    pub const ALL: [Ledger; 3] = [Ledger::Api, Ledger::Privacy, Ledger::Tool];

    /// The ledger's name: `privacy`, `api` or `tool`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Ledger::Privacy => "privacy",
            Ledger::Api => "api",
            Ledger::Tool => "tool",
        }
    }

    /// The ledger of this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl fmt::Display for Ledger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The hash of an entry: see the [module](self) for what it covers.
pub fn entry_hash(
    ledger: Ledger,
    organization: OrganizationId,
    position: u64,
    prev: &Digest,
    canonical_entry: &[u8],
) -> Digest {
    let mut hash = Sha256::new();
    hash.update(b"recruitd-ledger-v1\n");
    hash.update(ledger.as_str().as_bytes());
    hash.update(b"\n");
    hash.update(organization.uuid().as_bytes());
    hash.update(position.to_be_bytes());
    hash.update(prev);
    hash.update(canonical_entry);
    hash.finalize().into()
}

/// The canonical JSON of `entry`: keys sorted, no insignificant whitespace. Fails only for a
/// value JSON cannot hold (a map with keys that are not strings).
pub fn canonical_json<T: serde::Serialize>(entry: &T) -> Result<Vec<u8>, serde_json::Error> {
    // `serde_json::Value` keeps an object's keys sorted; writing it back out is compact.
    serde_json::to_vec(&serde_json::to_value(entry)?)
}

/// A digest in lowercase hexadecimal, as exports and checkpoints show it.
pub fn hex(digest: &Digest) -> String {
    use fmt::Write;
    digest.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The digest a string of 64 hexadecimal digits spells.
pub fn parse_hex(text: &str) -> Option<Digest> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = GENESIS;
    for (i, pair) in bytes.chunks(2).enumerate() {
        let digit = |c: u8| (c as char).to_digit(16);
        out[i] = u8::try_from(digit(pair[0])? * 16 + digit(pair[1])?).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_anywhere_changes_the_hash() {
        let org = OrganizationId::from_uuid(crate::Uuid::from_u128(7));
        let base = entry_hash(Ledger::Privacy, org, 1, &GENESIS, b"{}");
        assert_ne!(base, entry_hash(Ledger::Api, org, 1, &GENESIS, b"{}"));
        assert_ne!(base, entry_hash(Ledger::Privacy, org, 2, &GENESIS, b"{}"));
        assert_ne!(base, entry_hash(Ledger::Privacy, org, 1, &[1; 32], b"{}"));
        assert_ne!(base, entry_hash(Ledger::Privacy, org, 1, &GENESIS, b"{ }"));
        let other = OrganizationId::from_uuid(crate::Uuid::from_u128(8));
        assert_ne!(base, entry_hash(Ledger::Privacy, other, 1, &GENESIS, b"{}"));
    }

    #[test]
    fn canonical_json_sorts_keys_and_drops_whitespace() {
        #[derive(serde::Serialize)]
        struct E {
            zeta: u32,
            alpha: Vec<&'static str>,
        }
        let json = canonical_json(&E { zeta: 1, alpha: vec!["a b"] }).unwrap();
        assert_eq!(json, br#"{"alpha":["a b"],"zeta":1}"#);
    }

    #[test]
    fn hex_round_trips() {
        let d: Digest = std::array::from_fn(|i| u8::try_from(i * 7).unwrap());
        assert_eq!(parse_hex(&hex(&d)), Some(d));
        assert_eq!(parse_hex("zz"), None);
        assert_eq!(parse_hex(&"g".repeat(64)), None);
    }
}
