//! Verifying the ledgers' chains ([`recruit_domain::chain`]): every stored entry's hash is
//! computed again from what is stored, and every finding is named by ledger, organization,
//! position and id.
//!
//! What each kind of tampering leaves, and how it is named:
//! - an entry whose stored fields changed: its hash no longer matches its own fields
//!   ([`FindingKind::Modified`]);
//! - a removed entry: a position missing below the chain's head ([`FindingKind::Deleted`]);
//! - an entry that was never recorded: one without a position, or beyond the chain's head
//!   ([`FindingKind::Inserted`]);
//! - entries that changed places: each matches its own fields only at another's place, or at a
//!   gap ([`FindingKind::Reordered`]);
//! - a removed tail: the chain's head names a position no entry holds any more
//!   ([`FindingKind::Truncated`]);
//! - an entry replaced by another with a correct hash of its own: the next entry names a
//!   different hash before it, or, for the last entry, the chain's head does
//!   ([`FindingKind::Modified`] of the replaced one).

use recruit_domain::chain::{Digest, GENESIS, Ledger, entry_hash, hex};
use recruit_domain::{OrganizationId, PrivacyAuditLogId, Uuid};
use recruit_ports::chain::ChainEntry;
use recruit_ports::{Store, StoreError};
use serde::Serialize;

/// How many entries one read of a chain takes.
const PAGE: u32 = 10_000;

/// What is wrong with an entry, or a part of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FindingKind {
    /// Its stored fields are not those it was recorded with.
    Modified,
    /// The entry at this position is gone.
    Deleted,
    /// It was not recorded by the server.
    Inserted,
    /// It was recorded at another position (`expected_position`).
    Reordered,
    /// The chain's entries from this position to `expected_position` are gone.
    Truncated,
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The ledger.
    pub ledger: Ledger,
    /// The organization whose chain it is.
    pub organization_id: OrganizationId,
    /// What is wrong.
    pub kind: FindingKind,
    /// The position it is at (for a truncation, the first position gone); none for an entry
    /// stored without one.
    pub position: Option<i64>,
    /// The entry's id, when there is an entry: `pal_…` in the privacy ledger, a UUID in the
    /// others, as each ledger shows its ids.
    pub id: Option<String>,
    /// For a reordered entry, the position it was recorded at; for a truncation, the last
    /// position gone.
    pub expected_position: Option<i64>,
}

/// What verifying found in one chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChainReport {
    /// The ledger.
    pub ledger: Ledger,
    /// The organization.
    pub organization_id: OrganizationId,
    /// How many entries were read.
    pub entries: u64,
    /// The position of the chain's head as stored.
    pub head_position: i64,
    /// The hash of the chain's head as stored.
    pub head_hash: String,
    /// Everything found, in the order of positions.
    pub findings: Vec<Finding>,
}

impl ChainReport {
    /// Whether nothing was found.
    pub fn is_intact(&self) -> bool {
        self.findings.is_empty()
    }
}

/// Verifies every chain of `ledgers` (of `organization`, or of every organization with a
/// chain), reading each from the store in pages.
pub async fn verify(
    store: &dyn Store,
    ledgers: &[Ledger],
    organization: Option<OrganizationId>,
) -> Result<Vec<ChainReport>, StoreError> {
    let mut reports = vec![];
    for head in store.chain_heads().await? {
        let org = OrganizationId::from_uuid(head.organization_id);
        let Some(ledger) = Ledger::from_name(&head.ledger) else { continue };
        if !ledgers.contains(&ledger) || organization.is_some_and(|o| o != org) {
            continue;
        }
        let head_hash: Digest = head.hash.as_slice().try_into().unwrap_or(GENESIS);
        let mut chain = Chain::new(ledger, org, head.position, head_hash);
        // From the lowest position there can be: a forged entry may carry any.
        let mut after = i64::MIN;
        loop {
            let page = store.chain_entries(ledger, org, Some(after), PAGE).await?;
            let Some(last) = page.last().and_then(|e| e.position) else { break };
            after = last;
            for entry in page {
                chain.push(entry);
            }
        }
        for entry in store.chain_entries(ledger, org, None, u32::MAX).await? {
            chain.push(entry);
        }
        reports.push(chain.finish());
    }
    Ok(reports)
}

/// A chain being checked, entry by entry in the order of positions.
struct Chain {
    ledger: Ledger,
    organization: OrganizationId,
    head: (i64, Digest),
    entries: u64,
    /// The last entry at or below the head, its hash, and whether it was found wrong.
    previous: Option<(i64, Vec<u8>, bool)>,
    /// Entries that match their fields at no position yet: resolved when the chain is read.
    suspects: Vec<(ChainEntry, i64)>,
    findings: Vec<Finding>,
}

impl Chain {
    fn new(ledger: Ledger, organization: OrganizationId, position: i64, hash: Digest) -> Self {
        Self {
            ledger,
            organization,
            head: (position, hash),
            entries: 0,
            previous: None,
            suspects: vec![],
            findings: vec![],
        }
    }

    /// An entry's id as its ledger shows it.
    fn spell(&self, id: Uuid) -> String {
        match self.ledger {
            Ledger::Privacy => PrivacyAuditLogId::from_uuid(id).to_string(),
            Ledger::Api | Ledger::Tool => id.to_string(),
        }
    }

    fn finding(&mut self, kind: FindingKind, position: Option<i64>, id: Option<Uuid>) {
        let id = id.map(|id| self.spell(id));
        self.findings.push(Finding {
            ledger: self.ledger,
            organization_id: self.organization,
            kind,
            position,
            id,
            expected_position: None,
        });
    }

    /// Whether `entry`'s hash is that of its fields at `position` after `prev`.
    fn matches(&self, entry: &ChainEntry, position: i64, prev: &[u8]) -> bool {
        let (Ok(at), Ok(prev)) = (u64::try_from(position), <Digest>::try_from(prev)) else {
            return false;
        };
        let hash = entry_hash(self.ledger, self.organization, at, &prev, &entry.canonical);
        entry.hash.as_deref() == Some(hash.as_slice())
    }

    fn push(&mut self, entry: ChainEntry) {
        self.entries += 1;
        let Some(position) = entry.position.filter(|p| *p >= 1 && *p <= self.head.0) else {
            // Never written by a store: without a position, or beyond the head.
            self.finding(FindingKind::Inserted, entry.position, Some(entry.id));
            return;
        };
        let expected = self.previous.as_ref().map_or(1, |p| p.0 + 1);
        for gone in expected..position {
            self.finding(FindingKind::Deleted, Some(gone), None);
        }
        let prev = entry.prev_hash.clone().unwrap_or_default();
        let fits = self.matches(&entry, position, &prev);
        let linked = match &self.previous {
            Some((p, hash, _)) if *p == position - 1 => *hash == prev,
            None if position == 1 => prev == GENESIS,
            // The entry before it is gone: already reported.
            _ => true,
        };
        let hash = entry.hash.clone().unwrap_or_default();
        if !fits {
            self.suspects.push((entry, position));
        } else if !linked {
            // Intact itself, but the entry before it is not the one it was recorded after.
            if let Some((p, _, false)) = self.previous {
                self.finding(FindingKind::Modified, Some(p), None);
            }
        }
        self.previous = Some((position, hash, !fits));
    }

    fn finish(mut self) -> ChainReport {
        let last = self.previous.as_ref().map_or(0, |p| p.0);
        // The last entry, intact itself, is not the one the head was moved to.
        if let Some((p, hash, false)) = &self.previous
            && *p == self.head.0
            && hash.as_slice() != self.head.1.as_slice()
        {
            let position = *p;
            self.finding(FindingKind::Modified, Some(position), None);
        }
        if last < self.head.0 {
            self.findings.push(Finding {
                ledger: self.ledger,
                organization_id: self.organization,
                kind: FindingKind::Truncated,
                position: Some(last + 1),
                id: None,
                expected_position: Some(self.head.0),
            });
        }
        // An entry moved elsewhere matches its fields at the place it left, which another
        // moved entry, or a gap, now shows.
        let suspects = std::mem::take(&mut self.suspects);
        let mut places: Vec<i64> = suspects.iter().map(|(_, p)| *p).collect();
        places.extend(
            self.findings
                .iter()
                .filter(|f| f.kind == FindingKind::Deleted)
                .filter_map(|f| f.position),
        );
        for (entry, position) in suspects {
            let prev = entry.prev_hash.clone().unwrap_or_default();
            let recorded_at = places
                .iter()
                .copied()
                .find(|at| *at != position && self.matches(&entry, *at, &prev));
            match recorded_at {
                Some(at) => self.findings.push(Finding {
                    ledger: self.ledger,
                    organization_id: self.organization,
                    kind: FindingKind::Reordered,
                    position: Some(position),
                    id: Some(self.spell(entry.id)),
                    expected_position: Some(at),
                }),
                None => self.finding(FindingKind::Modified, Some(position), Some(entry.id)),
            }
        }
        self.findings.sort_by_key(|f| (f.position.is_none(), f.position, f.kind as u8));
        ChainReport {
            ledger: self.ledger,
            organization_id: self.organization,
            entries: self.entries,
            head_position: self.head.0,
            head_hash: hex(&self.head.1),
            findings: self.findings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn org() -> OrganizationId {
        OrganizationId::from_uuid(Uuid::from_u128(0xA))
    }

    /// A chain of `n` entries as a store writes it, and its head.
    fn chain(n: i64) -> (Vec<ChainEntry>, (i64, Digest)) {
        let mut prev = GENESIS;
        let mut entries = vec![];
        for p in 1..=n {
            let canonical = format!("{{\"n\":{p}}}").into_bytes();
            let hash = entry_hash(Ledger::Api, org(), p as u64, &prev, &canonical);
            entries.push(ChainEntry {
                id: Uuid::from_u128(p as u128),
                position: Some(p),
                prev_hash: Some(prev.to_vec()),
                hash: Some(hash.to_vec()),
                canonical,
            });
            prev = hash;
        }
        (entries, (n, prev))
    }

    fn findings(entries: Vec<ChainEntry>, head: (i64, Digest)) -> Vec<(FindingKind, Option<i64>)> {
        let mut chain = Chain::new(Ledger::Api, org(), head.0, head.1);
        for e in entries {
            chain.push(e);
        }
        chain.finish().findings.into_iter().map(|f| (f.kind, f.position)).collect()
    }

    #[test]
    fn an_untouched_chain_has_no_findings() {
        let (entries, head) = chain(5);
        assert_eq!(findings(entries, head), []);
    }

    #[test]
    fn a_last_entry_replaced_with_a_consistent_forgery_shows_at_the_head() {
        let (mut entries, head) = chain(5);
        let last = entries.last_mut().unwrap();
        last.canonical = b"{\"n\":\"forged\"}".to_vec();
        let prev: Digest = last.prev_hash.as_deref().unwrap().try_into().unwrap();
        last.hash = Some(entry_hash(Ledger::Api, org(), 5, &prev, &last.canonical).to_vec());
        assert_eq!(findings(entries, head), [(FindingKind::Modified, Some(5))]);
    }

    #[test]
    fn an_entry_replaced_with_a_consistent_forgery_shows_at_the_next() {
        let (mut entries, head) = chain(5);
        let third = &mut entries[2];
        third.canonical = b"{\"n\":\"forged\"}".to_vec();
        let prev: Digest = third.prev_hash.as_deref().unwrap().try_into().unwrap();
        third.hash = Some(entry_hash(Ledger::Api, org(), 3, &prev, &third.canonical).to_vec());
        assert_eq!(findings(entries, head), [(FindingKind::Modified, Some(3))]);
    }
}
