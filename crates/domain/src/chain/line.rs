//! Checking an export line by line, as whoever receives one does: each line's hash computed
//! again from its entry, and its link to the line before, in the chain's order.

use super::{Digest, GENESIS, Ledger, entry_hash, hex, parse_hex};
use crate::OrganizationId;

/// One line of an export of a ledger, as the API and `recruitd audit export` write it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExportLine {
    /// The ledger.
    pub ledger: Ledger,
    /// The organization whose chain the entry is in.
    pub organization_id: OrganizationId,
    /// The entry's position in its chain (the first entry is at 1); none for an entry stored
    /// before the ledgers were chained and not linked since.
    pub position: Option<u64>,
    /// The hash of the entry before, in lowercase hexadecimal.
    pub prev_hash: Option<String>,
    /// The entry's hash, in lowercase hexadecimal.
    pub hash: Option<String>,
    /// The entry, as the ledger's list shows it.
    pub entry: serde_json::Value,
}

/// Where a chain being read in its order stands: the position of the last entry checked and
/// its hash. [`ChainPoint::START`] is before the first entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainPoint {
    /// The position of the last entry checked (0: none).
    pub position: u64,
    /// Its hash ([`GENESIS`] before the first entry).
    pub hash: Digest,
}

/// Why a line does not continue the chain, named by the position where it breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChainBreak {
    /// The line's hash is not the hash of its contents: the entry was altered.
    #[error("the entry at position {position} was altered: its hash does not match its contents")]
    Altered {
        /// The line's position.
        position: u64,
    },
    /// The line is not at the next position: entries were removed (a higher position) or
    /// inserted (a lower one), or the export was cut and resumed elsewhere.
    #[error("position {expected} was expected and {found} found: an entry was removed or inserted")]
    Gap {
        /// The position the chain continues at.
        expected: u64,
        /// The position the line has.
        found: u64,
    },
    /// The line's `prev_hash` is not the hash of the entry before it.
    #[error("the entry at position {position} does not link to the entry before it")]
    Unlinked {
        /// The line's position.
        position: u64,
    },
    /// The line is of another ledger or organization than the chain.
    #[error("the line at position {position} belongs to another chain")]
    Foreign {
        /// The line's position (0 when it has none).
        position: u64,
    },
    /// The line has no position or no hashes.
    #[error("a line after position {after} has no position or hashes: it is not chained")]
    Unchained {
        /// The position of the last entry checked.
        after: u64,
    },
}

impl ChainPoint {
    /// Before the first entry of a chain.
    pub const START: Self = Self { position: 0, hash: GENESIS };

    /// The point after `line`, if `line` is the next entry of the chain of `ledger` in
    /// `organization`: at the next position, linked to this point's hash, and hashed from
    /// its own contents.
    pub fn next(
        &self,
        ledger: Ledger,
        organization: OrganizationId,
        line: &ExportLine,
    ) -> Result<Self, ChainBreak> {
        let (Some(position), Some(prev), Some(hash)) = (
            line.position,
            line.prev_hash.as_deref().and_then(parse_hex),
            line.hash.as_deref().and_then(parse_hex),
        ) else {
            return Err(ChainBreak::Unchained { after: self.position });
        };
        if line.ledger != ledger || line.organization_id != organization {
            return Err(ChainBreak::Foreign { position });
        }
        if position != self.position + 1 {
            return Err(ChainBreak::Gap { expected: self.position + 1, found: position });
        }
        if prev != self.hash {
            return Err(ChainBreak::Unlinked { position });
        }
        let canonical =
            super::canonical_json(&line.entry).map_err(|_| ChainBreak::Altered { position })?;
        if entry_hash(ledger, organization, position, &prev, &canonical) != hash {
            return Err(ChainBreak::Altered { position });
        }
        Ok(Self { position, hash })
    }

    /// The hash in lowercase hexadecimal, as lines and checkpoints show it.
    pub fn hash_hex(&self) -> String {
        hex(&self.hash)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A chain of `n` entries of an organization's privacy ledger, from its start.
    pub(in crate::chain) fn chain(n: u64) -> (OrganizationId, Vec<ExportLine>) {
        let org = OrganizationId::from_uuid(crate::Uuid::from_u128(9));
        let mut prev = GENESIS;
        let lines = (1..=n)
            .map(|position| {
                let entry = serde_json::json!({"id": format!("e{position}"), "n": position});
                let canonical = crate::chain::canonical_json(&entry).unwrap();
                let hash = entry_hash(Ledger::Privacy, org, position, &prev, &canonical);
                let line = ExportLine {
                    ledger: Ledger::Privacy,
                    organization_id: org,
                    position: Some(position),
                    prev_hash: Some(hex(&prev)),
                    hash: Some(hex(&hash)),
                    entry,
                };
                prev = hash;
                line
            })
            .collect();
        (org, lines)
    }

    fn check(org: OrganizationId, lines: &[ExportLine]) -> Result<ChainPoint, ChainBreak> {
        lines.iter().try_fold(ChainPoint::START, |p, l| p.next(Ledger::Privacy, org, l))
    }

    #[test]
    fn an_intact_chain_is_followed_to_its_head() {
        let (org, lines) = chain(4);
        let head = check(org, &lines).unwrap();
        assert_eq!(head.position, 4);
        assert_eq!(Some(head.hash_hex()), lines[3].hash);
    }

    #[test]
    fn every_kind_of_break_is_named_by_its_position() {
        let (org, lines) = chain(5);
        let mut altered = lines.clone();
        altered[2].entry["n"] = serde_json::json!(99);
        assert_eq!(check(org, &altered), Err(ChainBreak::Altered { position: 3 }));
        let mut removed = lines.clone();
        removed.remove(1);
        assert_eq!(check(org, &removed), Err(ChainBreak::Gap { expected: 2, found: 3 }));
        let mut inserted = lines.clone();
        inserted.insert(2, lines[0].clone());
        assert_eq!(check(org, &inserted), Err(ChainBreak::Gap { expected: 3, found: 1 }));
        let mut relinked = lines.clone();
        relinked[3].prev_hash = relinked[4].hash.clone();
        assert_eq!(check(org, &relinked), Err(ChainBreak::Unlinked { position: 4 }));
        let other = OrganizationId::from_uuid(crate::Uuid::from_u128(10));
        assert_eq!(check(other, &lines), Err(ChainBreak::Foreign { position: 1 }));
        let mut unchained = lines;
        unchained[1].hash = None;
        assert_eq!(check(org, &unchained), Err(ChainBreak::Unchained { after: 1 }));
    }
}
