//! What the deliveries of one process read, shared: runs of an organization's chain, each
//! entry checked against the one before it and written as its export line once. The
//! organization's streams that stand at the same position deliver from the same run, which is
//! kept only while a delivery still holds it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use recruit_domain::OrganizationId;
use recruit_domain::chain::{Digest, Ledger, entry_hash};
use recruit_ports::chain::ExportedEntry;
use recruit_ports::streams::StreamRecord;

use super::deliver::digest;

/// An entry as it is sent: the entry, and its export line, written when a delivery first
/// asks for it and shared by every run, and every stream, that holds the entry.
#[derive(Debug)]
pub(super) struct Prepared {
    pub(super) exported: ExportedEntry,
    line: std::sync::OnceLock<Vec<u8>>,
}

impl Prepared {
    pub(super) fn new(exported: ExportedEntry) -> Arc<Self> {
        Arc::new(Self { exported, line: std::sync::OnceLock::new() })
    }

    /// Its export line, with its line feed.
    pub(super) fn line(&self) -> &[u8] {
        self.line.get_or_init(|| crate::export::line(Ledger::Privacy, &self.exported))
    }
}

/// A run of a chain: the entries after position `after`, the first linking to the hash
/// `prev`, each to the one before it.
#[derive(Debug)]
pub(super) struct Run {
    after: u64,
    prev: Digest,
    entries: Vec<Arc<Prepared>>,
}

impl Run {
    /// The run of `entries`, checked already to follow `(after, prev)` link by link.
    pub(super) fn new(after: u64, prev: Digest, entries: Vec<Arc<Prepared>>) -> Self {
        Self { after, prev, entries }
    }

    /// Its entries after `position`, when it holds the next one and continues the hash
    /// `hash` there (what a stream that delivered up to `position` sends next).
    pub(super) fn after(&self, position: u64, hash: &Digest) -> Option<&[Arc<Prepared>]> {
        let i = usize::try_from(position.checked_sub(self.after)?).ok()?;
        let before = match i {
            0 => self.prev,
            _ => digest(&self.entries.get(i - 1)?.exported.entry.hash),
        };
        (i < self.entries.len() && before == *hash).then(|| &self.entries[i..])
    }

    /// The position of its last entry.
    pub(super) fn last(&self) -> u64 {
        self.after + self.entries.len() as u64
    }
}

/// The run each organization's streams read last, held while a delivery holds it, behind a
/// lock of the organization's so that its streams read each run once.
#[derive(Debug, Default)]
pub(super) struct Runs(Mutex<HashMap<OrganizationId, Arc<tokio::sync::Mutex<Weak<Run>>>>>);

impl Runs {
    /// The organization's last run, behind its lock.
    pub(super) fn of(&self, organization: OrganizationId) -> Arc<tokio::sync::Mutex<Weak<Run>>> {
        let mut runs = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(runs.entry(organization).or_default())
    }
}

/// What [`linked`] checks of each entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Checked {
    /// Its position and the hash before it: of entries this process hashed as it recorded them.
    Links,
    /// Those, and that its hash is that of its contents: of entries read back from the store.
    Hashes,
}

/// How many of `read` continue `stream`'s chain from the position it holds, each linking to
/// the one before it and, checking `Hashes`, proving itself (its hash that of its contents and
/// of the hash before it); or why the first does not.
pub(super) fn linked<'a>(
    stream: &StreamRecord,
    read: impl IntoIterator<Item = &'a ExportedEntry>,
    checked: Checked,
) -> Result<usize, String> {
    let (mut position, mut hash) = (stream.delivery.position, stream.delivery.hash);
    let mut count = 0;
    for (i, e) in read.into_iter().enumerate() {
        let at = u64::try_from(e.entry.position.unwrap_or_default()).unwrap_or_default();
        let prev = digest(&e.entry.prev_hash);
        let expected = match checked {
            Checked::Links => digest(&e.entry.hash),
            Checked::Hashes => {
                entry_hash(Ledger::Privacy, e.organization_id, at, &prev, &e.entry.canonical)
            }
        };
        let why = if at != position + 1 {
            format!(
                "the entries after position {position} up to {} are no longer stored \
                 (removed by retention before they were delivered)",
                at.saturating_sub(1)
            )
        } else if prev != hash {
            format!("the entry at position {at} does not link to the one before it")
        } else if digest(&e.entry.hash) != expected {
            format!("the entry at position {at} was altered: its hash does not match it")
        } else {
            (position, hash, count) = (at, expected, i + 1);
            continue;
        };
        return match i {
            0 => Err(why),
            _ => Ok(i),
        };
    }
    Ok(count)
}
