//! Chaining ledger rows as they are written: each row of an organization's ledger gets the next
//! position, the hash of the row before and its own hash ([`recruit_domain::chain`]).
//!
//! A store writing ledger rows, in the transaction that writes them: names the chains they
//! extend ([`ChainKeys`]), locks those chains' heads in one statement (creating a missing head
//! at the start), links the rows ([`Heads::link`]), writes them, and saves the heads that moved
//! ([`Heads::moved`]). Holding the heads locked until the commit gives every chain one order,
//! whatever runs concurrently.

use std::collections::{BTreeMap, BTreeSet};

use recruit_domain::chain::{
    Checkpoint, Digest, GENESIS, Ledger, RetentionCut, canonical_json, entry_hash,
};
use recruit_domain::{Id, Uuid};

use crate::StoreError;
use crate::rows::{AuditRow, LedgerHeadRow, LedgerRow, ToolAuditRow, corrupt};

/// A row of one of the three ledgers.
pub trait Chained {
    /// Its ledger.
    const LEDGER: Ledger;
    /// The ledger's table.
    const TABLE: &'static str;
    /// The column of its time (the order in which entries stored before ledgers were chained
    /// are linked, with the id).
    const TIME: &'static str;
    /// The organization whose chain it belongs to.
    fn organization(&self) -> Uuid;
    /// The entry's canonical JSON: what its hash covers besides its place in the chain.
    fn canonical(&self) -> Result<Vec<u8>, StoreError>;
    /// [`Chained::canonical`] of a row no longer needed, without copying it first.
    fn into_canonical(self) -> Result<Vec<u8>, StoreError>;
    /// Its position, the hash before it and its hash, as stored (none for a row stored before
    /// ledgers were chained and not yet linked).
    fn link(&self) -> (Option<i64>, Option<&[u8]>, Option<&[u8]>);
    /// Sets its position, the hash before it and its hash.
    fn set_link(&mut self, position: i64, prev: Digest, hash: Digest);
    /// Its time (`access_time` or `at`) and id: the order in which entries stored before
    /// ledgers were chained are linked.
    fn time_and_id(&self) -> (recruit_domain::Timestamp, Uuid);
}

macro_rules! chained {
    ($row:ty, $ledger:expr, $table:literal, $time:ident, |$r:ident| $entry:expr) => {
        impl Chained for $row {
            const LEDGER: Ledger = $ledger;
            const TABLE: &'static str = $table;
            const TIME: &'static str = stringify!($time);
            fn organization(&self) -> Uuid {
                self.organization_id
            }
            fn canonical(&self) -> Result<Vec<u8>, StoreError> {
                self.clone().into_canonical()
            }
            fn into_canonical(self) -> Result<Vec<u8>, StoreError> {
                let $r = self;
                canonical_json(&$entry).map_err(|e| corrupt(format!("an entry's JSON: {e}")))
            }
            fn link(&self) -> (Option<i64>, Option<&[u8]>, Option<&[u8]>) {
                (self.position, self.prev_hash.as_deref(), self.hash.as_deref())
            }
            fn set_link(&mut self, position: i64, prev: Digest, hash: Digest) {
                self.position = Some(position);
                self.prev_hash = Some(prev.to_vec());
                self.hash = Some(hash.to_vec());
            }
            fn time_and_id(&self) -> (recruit_domain::Timestamp, Uuid) {
                (self.$time, self.id)
            }
        }
    };
}

chained!(LedgerRow, Ledger::Privacy, "privacy_audit_logs", access_time, |r| r
    .into_ledger_entry()?);
chained!(AuditRow, Ledger::Api, "api_audit_log", at, |r| r.into_entry()?);
chained!(ToolAuditRow, Ledger::Tool, "tool_audit_log", at, |r| r.into_entry()?);

/// The chains a write extends: (organization, ledger), in the order their heads are locked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChainKeys(BTreeSet<(Uuid, Ledger)>);

impl ChainKeys {
    /// Adds the chains of `rows`.
    pub fn add<R: Chained>(&mut self, rows: &[R]) -> &mut Self {
        self.0.extend(rows.iter().map(|r| (r.organization(), R::LEDGER)));
        self
    }

    /// The chains of `rows`.
    pub fn of<R: Chained>(rows: &[R]) -> Self {
        let mut keys = Self::default();
        keys.add(rows);
        keys
    }

    /// Whether no chain is named.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A head at the start of each chain, in locking order (organization, then ledger name):
    /// what a store inserts for a chain that has no head yet.
    pub fn genesis(&self) -> Vec<LedgerHeadRow> {
        let mut rows: Vec<_> = self
            .0
            .iter()
            .map(|(org, ledger)| LedgerHeadRow {
                organization_id: *org,
                ledger: ledger.as_str().to_owned(),
                position: 0,
                hash: GENESIS.to_vec(),
            })
            .collect();
        rows.sort_by(|a, b| (a.organization_id, &a.ledger).cmp(&(b.organization_id, &b.ledger)));
        rows
    }
}

/// The heads of the chains a write extends, as locked, and where the write moves them.
#[derive(Clone, Debug, Default)]
pub struct Heads {
    heads: BTreeMap<(Uuid, Ledger), (i64, Digest)>,
    moved: BTreeSet<(Uuid, Ledger)>,
}

impl Heads {
    /// The heads a store read (locked).
    pub fn new(rows: impl IntoIterator<Item = LedgerHeadRow>) -> Result<Self, StoreError> {
        let mut heads = BTreeMap::new();
        for row in rows {
            let ledger =
                Ledger::from_name(&row.ledger).ok_or_else(|| corrupt("an unknown ledger"))?;
            let hash: Digest =
                row.hash.as_slice().try_into().map_err(|_| corrupt("a chain's head hash"))?;
            heads.insert((row.organization_id, ledger), (row.position, hash));
        }
        Ok(Self { heads, moved: BTreeSet::new() })
    }

    /// Gives each of `rows`, in order, the next position of its chain and its hashes, taking
    /// each row's canonical JSON from `contents` ([`ChainedRows::contents`], computed before
    /// the heads were locked, so that the lock is held for the hashing only).
    pub fn link<'c, R: Chained>(
        &mut self,
        rows: &mut [R],
        contents: &mut impl Iterator<Item = &'c Vec<u8>>,
    ) -> Result<(), StoreError> {
        for row in rows {
            let key = (row.organization(), R::LEDGER);
            let (position, prev) = self
                .heads
                .get(&key)
                .copied()
                .ok_or_else(|| StoreError::other("a ledger row's chain head was not locked"))?;
            let content = contents
                .next()
                .ok_or_else(|| StoreError::other("a ledger row's JSON was not computed"))?;
            let next = position + 1;
            let at = u64::try_from(next).map_err(|_| corrupt("a negative chain position"))?;
            let hash = entry_hash(R::LEDGER, Id::from_uuid(key.0), at, &prev, content);
            row.set_link(next, prev, hash);
            self.heads.insert(key, (next, hash));
            self.moved.insert(key);
        }
        Ok(())
    }

    /// The heads the links moved, to save.
    pub fn moved(&self) -> Vec<LedgerHeadRow> {
        self.moved
            .iter()
            .map(|key| {
                let (position, hash) = self.heads[key];
                LedgerHeadRow {
                    organization_id: key.0,
                    ledger: key.1.as_str().to_owned(),
                    position,
                    hash: hash.to_vec(),
                }
            })
            .collect()
    }
}

/// The ledger rows of one write, linked together.
pub trait ChainedRows {
    /// The chains the rows extend.
    fn chain_keys(&self) -> ChainKeys;
    /// Every ledger row's canonical JSON, in the order they are linked.
    fn contents(&self) -> Result<Vec<Vec<u8>>, StoreError>;
    /// Links every ledger row of the write, in the order they are written, with their
    /// [`ChainedRows::contents`].
    fn link(&mut self, heads: &mut Heads, contents: &[Vec<u8>]) -> Result<(), StoreError>;
}

fn contents_of<R: Chained>(rows: &[R], out: &mut Vec<Vec<u8>>) -> Result<(), StoreError> {
    for row in rows {
        out.push(row.canonical()?);
    }
    Ok(())
}

/// Implements [`ChainedRows`] for a write made of the listed parts, each a slice of rows
/// (`|w| expr` giving `&[R]`, `|w| expr` giving `&mut [R]`), linked in the order listed.
macro_rules! chained_rows {
    ($ty:ty $(, $T:ident)?; $(|$w:ident| $part:expr, |$m:ident| $part_mut:expr);+ $(;)?) => {
        impl$(<$T>)? ChainedRows for $ty {
            fn chain_keys(&self) -> ChainKeys {
                let mut keys = ChainKeys::default();
                $({ let $w = self; keys.add($part); })+
                keys
            }
            fn contents(&self) -> Result<Vec<Vec<u8>>, StoreError> {
                let mut out = vec![];
                $({ let $w = self; contents_of($part, &mut out)?; })+
                Ok(out)
            }
            fn link(&mut self, heads: &mut Heads, contents: &[Vec<u8>]) -> Result<(), StoreError> {
                let mut contents = contents.iter();
                $({ let $m = &mut *self; heads.link($part_mut, &mut contents)?; })+
                Ok(())
            }
        }
    };
}

impl<R: Chained> ChainedRows for Vec<R> {
    fn chain_keys(&self) -> ChainKeys {
        ChainKeys::of(self)
    }
    fn contents(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        let mut out = Vec::with_capacity(self.len());
        contents_of(self, &mut out)?;
        Ok(out)
    }
    fn link(&mut self, heads: &mut Heads, contents: &[Vec<u8>]) -> Result<(), StoreError> {
        heads.link(self, &mut contents.iter())
    }
}

chained_rows!(crate::rows::RecordedPage<T>, T;
    |w| std::slice::from_ref(&w.api), |m| std::slice::from_mut(&mut m.api);
    |w| w.tool.as_slice(), |m| m.tool.as_mut_slice();
);

chained_rows!(crate::rows::AccessRows;
    |w| &w.privacy_audit_logs, |m| &mut m.privacy_audit_logs;
    |w| std::slice::from_ref(&w.api), |m| std::slice::from_mut(&mut m.api);
    |w| w.tool.as_slice(), |m| m.tool.as_mut_slice();
);

chained_rows!(crate::rows::ReadRecords;
    |w| &w.api, |m| &mut m.api;
    |w| &w.tool, |m| &mut m.tool;
);

chained_rows!(crate::rows::DocumentRows;
    |w| &w.privacy_audit_logs, |m| &mut m.privacy_audit_logs;
);

/// A page of a chain's stored entries to read: see `Ledgers::chain_entries`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainPage {
    /// The chain's ledger.
    pub ledger: Ledger,
    /// The chain's organization.
    pub organization: recruit_domain::OrganizationId,
    /// Where the page begins.
    pub from: ChainFrom,
    /// The most entries the page holds.
    pub limit: u32,
}

impl ChainPage {
    /// The page after this one, which ended with `last`.
    pub fn after(self, last: &CheckedEntry) -> Self {
        Self { from: self.from.after(last), ..self }
    }
}

/// Where a page of a chain's stored entries begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainFrom {
    /// Entries with a position, in the order of their positions, then ids: those after this
    /// (position, id), or from the first.
    Linked(Option<(i64, Uuid)>),
    /// Entries stored without a position, in id order: those after this id, or from the first.
    Unlinked(Option<Uuid>),
}

impl ChainFrom {
    /// Where the page after one that ended with `last` begins.
    pub fn after(self, last: &CheckedEntry) -> Self {
        match (self, last.position) {
            (Self::Linked(_), Some(position)) => Self::Linked(Some((position, last.id))),
            _ => Self::Unlinked(Some(last.id)),
        }
    }
}

/// A stored entry as its chain shows it: what verification needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainEntry {
    /// The entry's id.
    pub id: Uuid,
    /// Its position; none for an entry stored unlinked.
    pub position: Option<i64>,
    /// The hash before it, as stored.
    pub prev_hash: Option<Vec<u8>>,
    /// Its hash, as stored.
    pub hash: Option<Vec<u8>>,
    /// Its canonical JSON, computed from what is stored.
    pub canonical: Vec<u8>,
}

impl ChainEntry {
    /// The chain's view of a stored row.
    pub fn of<R: Chained>(row: R) -> Result<Self, StoreError> {
        let (position, prev, hash) = row.link();
        let (prev_hash, hash) = (prev.map(<[u8]>::to_vec), hash.map(<[u8]>::to_vec));
        Ok(Self {
            id: row.time_and_id().1,
            position,
            prev_hash,
            hash,
            canonical: row.into_canonical()?,
        })
    }
}

/// A stored entry as verification reads it: its link as stored, and whether its hash is that
/// of its fields there, decided by the thread that read it (the hashing is most of the work,
/// and pages are read and checked side by side), so that the chain's own order is followed
/// with it done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedEntry {
    /// The entry's id.
    pub id: Uuid,
    /// Its position; none for an entry stored unlinked.
    pub position: Option<i64>,
    /// The hash before it, as stored.
    pub prev_hash: Option<Vec<u8>>,
    /// Its hash, as stored.
    pub hash: Option<Vec<u8>>,
    /// Its canonical JSON, computed from what is stored, kept only when its hash is not that
    /// of its fields at its position after the hash before it, as stored: verification then
    /// looks for the place it was recorded at. `None` when it is: without a collision of
    /// SHA-256 it matches no other place.
    pub misfit: Option<Vec<u8>>,
}

impl CheckedEntry {
    /// A stored row, checked.
    pub fn of<R: Chained>(row: R) -> Result<Self, StoreError> {
        let organization = recruit_domain::OrganizationId::from_uuid(row.organization());
        Ok(Self::checked(R::LEDGER, organization, ChainEntry::of(row)?))
    }

    /// `entry` of `organization`'s chain of `ledger`, checked against its own link.
    pub fn checked(
        ledger: Ledger,
        organization: recruit_domain::OrganizationId,
        entry: ChainEntry,
    ) -> Self {
        let ChainEntry { id, position, prev_hash, hash, canonical } = entry;
        let fits = match (position.map(u64::try_from), prev_hash.as_deref(), hash.as_deref()) {
            (Some(Ok(at)), Some(prev), Some(stored)) => {
                <Digest>::try_from(prev).is_ok_and(|prev| {
                    entry_hash(ledger, organization, at, &prev, &canonical) == stored
                })
            }
            _ => false,
        };
        Self { id, position, prev_hash, hash, misfit: (!fits).then_some(canonical) }
    }

    /// Whether its stored hash is that of its fields at its stored position after its stored
    /// previous hash.
    pub fn fits(&self) -> bool {
        self.misfit.is_none()
    }
}

impl crate::rows::CheckpointRow {
    /// The row of a checkpoint. Fails for a head hash that is not 64 hexadecimal digits or a
    /// position beyond what a store holds.
    pub fn new(c: &Checkpoint) -> Result<Self, StoreError> {
        let head = recruit_domain::chain::parse_hex(&c.head_hash)
            .ok_or_else(|| StoreError::other("a checkpoint's head hash is not 64 hex digits"))?;
        Ok(Self {
            organization_id: c.organization_id.uuid(),
            ledger: c.ledger.as_str().to_owned(),
            position: i64::try_from(c.position)
                .map_err(|_| StoreError::other("a checkpoint's position is out of range"))?,
            head_hash: head.to_vec(),
            signed_at: c.signed_at,
            key_id: c.key_id.clone(),
            signature: c.signature.clone(),
        })
    }

    /// The checkpoint the row holds, as signed.
    pub fn into_checkpoint(self) -> Result<Checkpoint, StoreError> {
        let head: Digest = self
            .head_hash
            .as_slice()
            .try_into()
            .map_err(|_| corrupt("a checkpoint's head hash is not 32 bytes"))?;
        Ok(Checkpoint {
            organization_id: Id::from_uuid(self.organization_id),
            ledger: Ledger::from_name(&self.ledger)
                .ok_or_else(|| corrupt("a checkpoint of an unknown ledger"))?,
            position: u64::try_from(self.position)
                .map_err(|_| corrupt("a checkpoint at a negative position"))?,
            head_hash: recruit_domain::chain::hex(&head),
            signed_at: self.signed_at,
            key_id: self.key_id,
            algorithm: recruit_domain::chain::CHECKPOINT_ALGORITHM.to_owned(),
            signature: self.signature,
        })
    }
}

impl crate::rows::RetentionCutRow {
    /// The row of a cut. Fails for a hash that is not 64 hexadecimal digits or a position
    /// beyond what a store holds.
    pub fn new(c: &RetentionCut) -> Result<Self, StoreError> {
        let hash = recruit_domain::chain::parse_hex(&c.hash)
            .ok_or_else(|| StoreError::other("a cut's hash is not 64 hex digits"))?;
        Ok(Self {
            organization_id: c.organization_id.uuid(),
            ledger: c.ledger.as_str().to_owned(),
            position: i64::try_from(c.position)
                .map_err(|_| StoreError::other("a cut's position is out of range"))?,
            hash: hash.to_vec(),
            recorded_before: c.recorded_before,
            signed_at: c.signed_at,
            key_id: c.key_id.clone(),
            signature: c.signature.clone(),
        })
    }

    /// The cut the row holds, as signed.
    pub fn into_cut(self) -> Result<RetentionCut, StoreError> {
        let hash: Digest =
            self.hash.as_slice().try_into().map_err(|_| corrupt("a cut's hash is not 32 bytes"))?;
        Ok(RetentionCut {
            organization_id: Id::from_uuid(self.organization_id),
            ledger: Ledger::from_name(&self.ledger)
                .ok_or_else(|| corrupt("a cut of an unknown ledger"))?,
            position: u64::try_from(self.position)
                .map_err(|_| corrupt("a cut at a negative position"))?,
            hash: recruit_domain::chain::hex(&hash),
            recorded_before: self.recorded_before,
            signed_at: self.signed_at,
            key_id: self.key_id,
            algorithm: recruit_domain::chain::CHECKPOINT_ALGORITHM.to_owned(),
            signature: self.signature,
        })
    }
}

/// What a retention at an instant removes of one chain: the entries recorded before it, a
/// prefix of the chain up to `position`, whose entry is hashed `hash`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedCut {
    /// The organization whose chain it is.
    pub organization_id: recruit_domain::OrganizationId,
    /// The ledger.
    pub ledger: Ledger,
    /// The position of the last entry removed.
    pub position: u64,
    /// Its hash.
    pub hash: Digest,
    /// How many entries are removed (those still stored).
    pub entries: u64,
}

impl PlannedCut {
    /// The cut of what a store's retention plan query selected of `ledger`'s table: the
    /// last position recorded before the boundary, how many entries, and that entry's hash.
    pub fn from_stored(
        ledger: Ledger,
        organization: Uuid,
        position: i64,
        entries: i64,
        hash: &[u8],
    ) -> Result<Self, StoreError> {
        Ok(Self {
            organization_id: Id::from_uuid(organization),
            ledger,
            position: u64::try_from(position)
                .map_err(|_| corrupt("an entry without a position"))?,
            hash: hash.try_into().map_err(|_| corrupt("an entry's hash is not 32 bytes"))?,
            entries: u64::try_from(entries).unwrap_or_default(),
        })
    }
}

/// What to export of a ledger: its entries of one organization (of every organization when
/// none), with their time in `[from, to)` (unbounded where none), and only those of `ids` and
/// of `filter` when given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportQuery {
    /// The ledger.
    pub ledger: Ledger,
    /// Only this organization's entries.
    pub organization: Option<recruit_domain::OrganizationId>,
    /// The first instant exported.
    pub from: Option<recruit_domain::Timestamp>,
    /// The first instant not exported.
    pub to: Option<recruit_domain::Timestamp>,
    /// Only the entries with these ids.
    pub ids: Option<Vec<Uuid>>,
    /// Only the entries recorded before this instant (what a retention at it removes).
    pub recorded_before: Option<recruit_domain::Timestamp>,
    /// Only the entries after this position of their organization's chain, and in the
    /// chain's order (by position) rather than by time and id: what a reader that follows
    /// the chain has not read yet.
    pub after_position: Option<i64>,
    /// Only the entries that meet these conditions: of the privacy ledger only (empty for
    /// the others).
    pub filter: crate::EntryFilter,
}

/// An exported entry: its organization and time, and the entry as its chain shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportedEntry {
    /// The organization whose chain it is in.
    pub organization_id: recruit_domain::OrganizationId,
    /// Its time (`access_time`, or `at` in the audit ledgers).
    pub time: recruit_domain::Timestamp,
    /// Its id, position, hashes and canonical JSON.
    pub entry: ChainEntry,
}

impl ExportedEntry {
    /// A row just linked ([`Heads::link`]) as an export shows it, with `canonical` the
    /// canonical JSON it was linked with.
    pub fn linked<R: Chained>(row: &R, canonical: Vec<u8>) -> Self {
        let (position, prev, hash) = row.link();
        let (time, id) = row.time_and_id();
        Self {
            organization_id: recruit_domain::OrganizationId::from_uuid(row.organization()),
            time,
            entry: ChainEntry {
                id,
                position,
                prev_hash: prev.map(<[u8]>::to_vec),
                hash: hash.map(<[u8]>::to_vec),
                canonical,
            },
        }
    }

    /// A stored row as an export shows it.
    pub fn of<R: Chained>(row: R) -> Result<Self, StoreError> {
        Ok(Self {
            organization_id: recruit_domain::OrganizationId::from_uuid(row.organization()),
            time: row.time_and_id().0,
            entry: ChainEntry::of(row)?,
        })
    }
}

/// `rows` as just linked, with their canonical JSON the first of `contents`
/// ([`ChainedRows::contents`] of a write whose first part they are).
pub fn linked_entries<R: Chained>(rows: &[R], contents: Vec<Vec<u8>>) -> Vec<ExportedEntry> {
    rows.iter()
        .zip(contents)
        .map(|(row, canonical)| ExportedEntry::linked(row, canonical))
        .collect()
}

/// The entries of an export, as they are read.
pub type ExportStream = std::pin::Pin<
    Box<dyn futures_core::Stream<Item = Result<ExportedEntry, StoreError>> + Send + 'static>,
>;

/// An export under way: how many entries it holds, and those entries, in the order of their
/// organization, time and id, all read from one snapshot of the ledger (so that exactly
/// `count` follow, whatever is recorded meanwhile). The store reads them as they are taken:
/// an export holds a few thousand entries in memory at most, whatever its size, and one
/// connection of the store until it is read to the end or dropped.
pub struct Export {
    /// How many entries follow.
    pub count: u64,
    /// The entries.
    pub entries: ExportStream,
}

impl std::fmt::Debug for Export {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Export").field("count", &self.count).finish_non_exhaustive()
    }
}
