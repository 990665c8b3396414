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
//!   ([`FindingKind::Modified`] of the replaced one);
//! - entries replaced and every hash after them computed again, head included: the entry at a
//!   signed checkpoint's position no longer has the hash the checkpoint holds
//!   ([`FindingKind::Rewritten`]), and a chain cut below a checkpoint's position is truncated
//!   up to it whatever its head says;
//! - a stored checkpoint whose signature does not verify with the key
//!   ([`FindingKind::BadCheckpoint`]).
//!
//! Entries removed by retention are not findings: a chain may begin after a signed retention
//! cut (`recruit_domain::chain::RetentionCut`), its first entry linked to the hash the cut
//! holds. With keys, a cut that does not verify is a [`FindingKind::BadCheckpoint`] and does
//! not count, so the entries it claims to have removed are [`FindingKind::Deleted`].

use std::collections::BTreeMap;

use ed25519_dalek::VerifyingKey;
use futures_util::{StreamExt as _, TryStreamExt as _};
use recruit_domain::chain::{Checkpoint, Digest, GENESIS, Ledger, entry_hash, hex};
pub use recruit_domain::chain::{Finding, FindingKind};
use recruit_domain::{OrganizationId, PrivacyAuditLogId, Uuid};
use recruit_ports::chain::{ChainFrom, ChainPage, CheckedEntry};
use recruit_ports::{Store, StoreError};
use serde::Serialize;

/// How many entries one read of a chain takes.
const PAGE: u32 = 10_000;

/// How many chains are verified at once.
const CHAINS_AT_ONCE: usize = 2;

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
    /// How many signed checkpoints the chain was checked against.
    pub checkpoints: u64,
    /// How many retention cuts of the chain were read: it may begin after the last.
    pub cuts: u64,
    /// Everything found, in the order of positions.
    pub findings: Vec<Finding>,
}

impl ChainReport {
    /// Whether nothing was found.
    pub fn is_intact(&self) -> bool {
        self.findings.is_empty()
    }
}

/// What chains are checked against besides their own hashes: signed checkpoints.
#[derive(Clone, Copy, Debug, Default)]
pub struct Anchors<'a> {
    /// The keys checkpoints may be signed with (the current one and those it replaced): with
    /// any, every stored checkpoint of a chain is checked (its signature, by the key it names,
    /// then the chain against it), and one signed by none of them is a finding; without any,
    /// stored checkpoints are not read.
    pub keys: &'a [VerifyingKey],
    /// Checkpoints kept outside the database, their signatures already checked.
    pub kept: &'a [Checkpoint],
}

/// Verifies every chain of `ledgers` (of `organization`, or of every organization with a
/// chain), reading each from the store in pages, against the checkpoints of `anchors`.
pub async fn verify(
    store: &dyn Store,
    ledgers: &[Ledger],
    organization: Option<OrganizationId>,
    anchors: Anchors<'_>,
) -> Result<Vec<ChainReport>, StoreError> {
    let wanted = |ledger: Ledger, org: OrganizationId| {
        ledgers.contains(&ledger) && organization.is_none_or(|o| o == org)
    };
    // Every chain with a head, and those kept checkpoints name even if their heads are gone.
    let mut chains = BTreeMap::new();
    for head in store.chain_heads(organization).await? {
        let org = OrganizationId::from_uuid(head.organization_id);
        let Some(ledger) = Ledger::from_name(&head.ledger) else { continue };
        let hash: Digest = head.hash.as_slice().try_into().unwrap_or(GENESIS);
        chains.insert((org.uuid(), ledger), (head.position, hash));
    }
    for kept in anchors.kept {
        chains.entry((kept.organization_id.uuid(), kept.ledger)).or_insert((0, GENESIS));
    }
    // Chains side by side: each page's canonical JSON is made and hashed off the runtime's
    // threads, so two chains keep two cores busy where one chain keeps one.
    let wanted: Vec<_> = chains
        .into_iter()
        .map(|((org, ledger), head)| (OrganizationId::from_uuid(org), ledger, head))
        .filter(|(org, ledger, _)| wanted(*ledger, *org))
        .collect();
    futures_util::stream::iter(wanted)
        .map(|(org, ledger, (position, hash))| {
            verify_chain(store, &anchors, org, ledger, position, hash)
        })
        .buffered(CHAINS_AT_ONCE)
        .try_collect()
        .await
}

/// What verifying a part of a chain found ([`verify_since`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartReport {
    /// The position after which the part was verified: that of the latest signed checkpoint
    /// below the part's first entry, whose hash the part is checked against; 0 when the chain
    /// was verified from its start.
    pub anchored_at: i64,
    /// What was found, from the position after `anchored_at` to the chain's head.
    #[serde(flatten)]
    pub report: ChainReport,
}

/// Verifies the part of `organization`'s chain of `ledger` from the entry at position `from`
/// to the chain's head, against `anchors`: from the latest checkpoint below `from` signed by
/// one of `anchors.keys` (its hash trusted as the entries before it), or from the chain's
/// start when there is none. What is found is what [`verify`] finds in that part.
pub async fn verify_since(
    store: &dyn Store,
    ledger: Ledger,
    organization: OrganizationId,
    from: i64,
    anchors: Anchors<'_>,
) -> Result<PartReport, StoreError> {
    let head = store
        .chain_heads(Some(organization))
        .await?
        .into_iter()
        .find(|h| h.ledger == ledger.as_str() && h.organization_id == organization.uuid());
    let (position, hash) = head
        .map_or((0, GENESIS), |h| (h.position, h.hash.as_slice().try_into().unwrap_or(GENESIS)));
    let report =
        verify_chain_from(store, &anchors, organization, ledger, (position, hash), from).await?;
    Ok(report)
}

/// Verifies one chain, whose head is at `position` with `hash`.
async fn verify_chain(
    store: &dyn Store,
    anchors: &Anchors<'_>,
    org: OrganizationId,
    ledger: Ledger,
    position: i64,
    hash: Digest,
) -> Result<ChainReport, StoreError> {
    let part = verify_chain_from(store, anchors, org, ledger, (position, hash), 1).await?;
    Ok(part.report)
}

/// Verifies one chain, whose head is at `head`, from the latest signed checkpoint below the
/// position `from` (from the start when there is none, or when `from` is 1).
async fn verify_chain_from(
    store: &dyn Store,
    anchors: &Anchors<'_>,
    org: OrganizationId,
    ledger: Ledger,
    (position, hash): (i64, Digest),
    from: i64,
) -> Result<PartReport, StoreError> {
    let mut chain = Chain::new(ledger, org, position, hash);
    if !anchors.keys.is_empty() {
        for c in store.checkpoints(Some(org), Some(ledger)).await? {
            match signer(anchors.keys, &c.key_id).map(|key| c.verify(key)) {
                Some(Ok(digest)) => chain.anchor(c.position, digest),
                _ => {
                    chain.finding(FindingKind::BadCheckpoint, i64::try_from(c.position).ok(), None)
                }
            }
        }
    }
    for cut in store.retention_cuts(Some(org), Some(ledger)).await? {
        let hash = if anchors.keys.is_empty() {
            recruit_domain::chain::parse_hex(&cut.hash)
        } else {
            signer(anchors.keys, &cut.key_id).and_then(|key| cut.verify(key).ok())
        };
        match hash {
            Some(hash) => chain.cut(cut.position, hash),
            None => {
                chain.finding(FindingKind::BadCheckpoint, i64::try_from(cut.position).ok(), None)
            }
        }
    }
    for kept in anchors.kept.iter().filter(|k| k.organization_id == org && k.ledger == ledger) {
        if let Some(digest) = recruit_domain::chain::parse_hex(&kept.head_hash) {
            chain.anchor(kept.position, digest);
        }
    }
    // The part begins after the latest checkpoint (signed, and so an anchor) below `from`.
    let start = chain.anchors.range(..from).next_back().map(|(p, h)| (*p, *h));
    let linked = match start {
        Some((at, hash)) => {
            chain.previous = Some((at, hash.to_vec(), false));
            ChainFrom::Linked(Some((at, Uuid::max())))
        }
        None => ChainFrom::Linked(None),
    };
    // Every stored entry, linked ones by (position, id) from the lowest position there can
    // be (a forged entry may carry any), then those without a position.
    for from in [linked, ChainFrom::Unlinked(None)] {
        let first = ChainPage { ledger, organization: org, from, limit: PAGE };
        read_chain(store, first, &mut chain).await?;
    }
    Ok(PartReport { anchored_at: start.map_or(0, |(at, _)| at), report: chain.finish() })
}

/// Reads the entries of a chain from `page` on into `chain`, a page at a time; the next page
/// is read while this one is checked.
async fn read_chain(
    store: &dyn Store,
    mut page: ChainPage,
    chain: &mut Chain,
) -> Result<(), StoreError> {
    let mut entries = store.chain_entries(page).await?;
    loop {
        let next = match entries.last() {
            Some(last) if entries.len() == PAGE as usize => Some(page.after(last)),
            _ => None,
        };
        let check = async {
            for entry in entries {
                chain.push(entry);
            }
        };
        let Some(next) = next else {
            check.await;
            return Ok(());
        };
        page = next;
        let (read, ()) = futures_util::future::join(store.chain_entries(page), check).await;
        entries = read?;
    }
}

/// The key among `keys` whose id is `key_id` (the key a checkpoint or a cut names).
pub fn signer<'k>(keys: &'k [VerifyingKey], key_id: &str) -> Option<&'k VerifyingKey> {
    keys.iter().find(|k| recruit_domain::chain::key_id(k) == key_id)
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
    suspects: Vec<(CheckedEntry, i64)>,
    /// The entries read at the latest position, more than one if a forged entry claims it:
    /// the chain's is the one the next entry (or the head) links to.
    held: Vec<CheckedEntry>,
    /// The hash each signed checkpoint holds, by position.
    anchors: BTreeMap<i64, Digest>,
    checkpoints: u64,
    /// The hash of the last entry each retention cut removed, by position.
    cuts: BTreeMap<i64, Digest>,
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
            held: vec![],
            anchors: BTreeMap::new(),
            checkpoints: 0,
            cuts: BTreeMap::new(),
            findings: vec![],
        }
    }

    /// A retention cut: the entries up to `position` may be gone, the last of them hashed
    /// `hash`.
    fn cut(&mut self, position: u64, hash: Digest) {
        if let Ok(position) = i64::try_from(position) {
            self.cuts.insert(position, hash);
        }
    }

    /// Where a chain whose first entry stored is at `first` begins: after the last cut below
    /// it, as if that cut's entry were stored and intact.
    fn begin(&mut self, first: i64) {
        if self.previous.is_none()
            && let Some((position, hash)) = self.cuts.range(..first).next_back()
        {
            self.previous = Some((*position, hash.to_vec(), false));
        }
    }

    /// A signed checkpoint: the entry at `position` had `hash`.
    fn anchor(&mut self, position: u64, hash: Digest) {
        self.checkpoints += 1;
        if let Ok(position) = i64::try_from(position) {
            self.anchors.insert(position, hash);
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

    /// Whether `entry`'s hash is that of its fields at `position` after `prev`. At its own
    /// place, as checked when it was read; elsewhere, only an entry that does not fit its own
    /// place can (another would need a collision of SHA-256).
    fn matches(&self, entry: &CheckedEntry, position: i64, prev: &[u8]) -> bool {
        if entry.position == Some(position) && entry.prev_hash.as_deref() == Some(prev) {
            return entry.fits();
        }
        let (Some(canonical), Ok(at), Ok(prev)) =
            (&entry.misfit, u64::try_from(position), <Digest>::try_from(prev))
        else {
            return false;
        };
        let hash = entry_hash(self.ledger, self.organization, at, &prev, canonical);
        entry.hash.as_deref() == Some(hash.as_slice())
    }

    fn push(&mut self, entry: CheckedEntry) {
        self.entries += 1;
        let Some(position) = entry.position.filter(|p| *p >= 1 && *p <= self.head.0) else {
            // Never written by a store: without a position, or beyond the head.
            self.finding(FindingKind::Inserted, entry.position, Some(entry.id));
            return;
        };
        if self.held.first().is_some_and(|held| held.position == Some(position)) {
            self.held.push(entry);
            return;
        }
        let next = entry.prev_hash.clone();
        self.settle(next.as_deref());
        self.held.push(entry);
    }

    /// Takes the entries held at one position into the chain, now that `next`, the hash the
    /// entry after them links to, is known. Of two or more, the one it links to is the chain's
    /// (else the first whose hash is its fields', else the first). Every other one whose hash is
    /// its fields' at that position was inserted; one whose hash is not is a suspect like any
    /// other (an entry moved there, or changed).
    fn settle(&mut self, next: Option<&[u8]>) {
        let mut held = std::mem::take(&mut self.held);
        if held.len() > 1 {
            let chosen = held
                .iter()
                .position(|e| next.is_some() && e.hash.as_deref() == next)
                .or_else(|| held.iter().position(CheckedEntry::fits))
                .unwrap_or(0);
            let entry = held.remove(chosen);
            for other in held {
                match other.position {
                    Some(position) if !other.fits() => self.suspects.push((other, position)),
                    _ => self.finding(FindingKind::Inserted, other.position, Some(other.id)),
                }
            }
            self.take(entry);
        } else if let Some(entry) = held.pop() {
            self.take(entry);
        }
    }

    /// Checks the entry the chain holds at its position.
    fn take(&mut self, entry: CheckedEntry) {
        let Some(position) = entry.position else { return };
        self.begin(position);
        let expected = self.previous.as_ref().map_or(1, |p| p.0 + 1);
        for gone in expected..position {
            self.finding(FindingKind::Deleted, Some(gone), None);
        }
        let prev = entry.prev_hash.clone().unwrap_or_default();
        let fits = entry.fits();
        let linked = match &self.previous {
            Some((p, hash, _)) if *p == position - 1 => *hash == prev,
            None if position == 1 => prev == GENESIS,
            // The entry before it is gone: already reported.
            _ => true,
        };
        let hash = entry.hash.clone().unwrap_or_default();
        if self.anchors.get(&position).is_some_and(|a| a.as_slice() != hash.as_slice()) {
            self.finding(FindingKind::Rewritten, Some(position), Some(entry.id));
        }
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
        let head = self.head;
        let at_head = self.held.first().is_some_and(|e| e.position == Some(head.0));
        self.settle(at_head.then_some(head.1.as_slice()));
        // Every entry gone, and cut: the chain ends where the last cut does.
        self.begin(i64::MAX);
        let last = self.previous.as_ref().map_or(0, |p| p.0);
        // The last entry, intact itself, is not the one the head was moved to.
        if let Some((p, hash, false)) = &self.previous
            && *p == self.head.0
            && hash.as_slice() != self.head.1.as_slice()
        {
            let position = *p;
            self.finding(FindingKind::Modified, Some(position), None);
        }
        // The chain reached its head, and every checkpoint's position, once.
        let end = self.anchors.keys().next_back().map_or(self.head.0, |a| (*a).max(self.head.0));
        if last < end {
            self.findings.push(Finding {
                ledger: self.ledger,
                organization_id: self.organization,
                kind: FindingKind::Truncated,
                position: Some(last + 1),
                id: None,
                expected_position: Some(end),
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
        self.findings.sort_by_key(|f| (f.position.is_none(), f.position, f.kind.clone()));
        ChainReport {
            ledger: self.ledger,
            organization_id: self.organization,
            entries: self.entries,
            head_position: self.head.0,
            head_hash: hex(&self.head.1),
            checkpoints: self.checkpoints,
            cuts: self.cuts.len() as u64,
            findings: self.findings,
        }
    }
}

#[cfg(test)]
mod tests;
