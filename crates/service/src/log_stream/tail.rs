//! The entries this process has just recorded, kept for its deliveries: an organization's
//! privacy-ledger entries as committed, by chain position, while a delivery of one of its
//! streams runs here. A delivery that has caught up sends them without reading them back from
//! the store; one that finds a gap (another replica's entries, a write that has not published
//! yet, entries dropped for room) reads the store as before.
//!
//! Bounded: at most [`KEPT_ENTRIES`] entries and [`KEPT_BYTES`] bytes of canonical JSON an
//! organization, the oldest dropped first; entries every delivery here has passed are dropped
//! at once.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use recruit_domain::OrganizationId;
use recruit_domain::chain::Digest;
use recruit_ports::chain::ExportedEntry;

use super::deliver::digest;
use super::runs::Prepared;

/// The most entries kept for an organization.
pub(super) const KEPT_ENTRIES: usize = 20_000;
/// The most bytes of canonical JSON kept for an organization.
pub(super) const KEPT_BYTES: usize = 16 * 1024 * 1024;

/// What is kept for one organization.
#[derive(Debug, Default)]
struct Kept {
    /// The position each delivery here last asked after, by stream.
    readers: HashMap<uuid::Uuid, u64>,
    entries: BTreeMap<u64, Arc<Prepared>>,
    bytes: usize,
    arrived: Arc<tokio::sync::Notify>,
}

impl Kept {
    /// Drops what every reader has passed, then the oldest beyond the bounds.
    fn trim(&mut self) {
        let passed = self.readers.values().copied().min().unwrap_or(u64::MAX);
        loop {
            let beyond = self.entries.len() > KEPT_ENTRIES || self.bytes > KEPT_BYTES;
            let Some(entry) = self.entries.first_entry() else { break };
            if *entry.key() > passed && !beyond {
                break;
            }
            self.bytes -= entry.remove().exported.entry.canonical.len();
        }
    }

    /// How many entries follow `position` without a gap.
    fn following(&self, position: u64) -> usize {
        self.entries
            .range(position + 1..)
            .enumerate()
            .take_while(|(i, (at, _))| **at == position + 1 + *i as u64)
            .count()
    }

    /// How far the chain has gone past `position`, as far as the entries kept show: to the
    /// newest, kept or not (a gap before it was committed by another writer).
    fn advanced(&self, position: u64) -> u64 {
        self.entries.last_key_value().map_or(0, |(at, _)| at.saturating_sub(position))
    }
}

/// The entries kept, by organization.
#[derive(Debug, Default)]
pub(super) struct Tail(Mutex<HashMap<OrganizationId, Kept>>);

impl Tail {
    fn kept<T>(&self, change: impl FnOnce(&mut HashMap<OrganizationId, Kept>) -> T) -> T {
        change(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Keeps the organization's entries from now on, for `stream`'s delivery, until what this
    /// returns is dropped.
    pub(super) fn watch(&self, organization: OrganizationId, stream: uuid::Uuid) -> Watching<'_> {
        self.kept(|orgs| orgs.entry(organization).or_default().readers.insert(stream, 0));
        Watching { tail: self, organization, stream }
    }

    /// `stream`'s delivery no longer reads them; the last one's going drops them.
    fn unwatch(&self, organization: OrganizationId, stream: uuid::Uuid) {
        self.kept(|orgs| {
            if let Some(kept) = orgs.get_mut(&organization) {
                kept.readers.remove(&stream);
                match kept.readers.is_empty() {
                    true => drop(orgs.remove(&organization)),
                    false => kept.trim(),
                }
            }
        });
    }

    /// Keeps `entries`, committed, of organizations a delivery here watches; wakes those
    /// waiting for them.
    pub(super) fn publish(&self, entries: Vec<ExportedEntry>) {
        self.kept(|orgs| {
            let mut touched = std::collections::BTreeSet::new();
            for entry in entries {
                let Some(kept) = orgs.get_mut(&entry.organization_id) else { continue };
                let Some(at) = entry.entry.position.and_then(|p| u64::try_from(p).ok()) else {
                    continue;
                };
                touched.insert(entry.organization_id);
                kept.bytes += entry.entry.canonical.len();
                if let Some(old) = kept.entries.insert(at, Prepared::new(entry)) {
                    kept.bytes -= old.exported.entry.canonical.len();
                }
            }
            for org in touched {
                if let Some(kept) = orgs.get_mut(&org) {
                    kept.trim();
                    kept.arrived.notify_waiters();
                }
            }
        });
    }

    /// Up to `limit` entries of the organization after `position`, the first linking to
    /// `hash`, without a gap; none when the next entry is not kept or does not link there.
    /// Records that `stream` stands at `position` (what it has passed is dropped).
    pub(super) fn after(
        &self,
        organization: OrganizationId,
        stream: uuid::Uuid,
        (position, hash): (u64, &Digest),
        limit: usize,
    ) -> Option<Vec<Arc<Prepared>>> {
        self.kept(|orgs| {
            let kept = orgs.get_mut(&organization)?;
            kept.readers.insert(stream, position);
            kept.trim();
            let first = kept.entries.get(&(position + 1))?;
            if digest(&first.exported.entry.prev_hash) != *hash {
                // Not the chain the store holds (a restore, a retention cut): not kept.
                (kept.entries, kept.bytes) = (BTreeMap::new(), 0);
                return None;
            }
            let count = kept.following(position).min(limit);
            Some(
                kept.entries
                    .range(position + 1..)
                    .take(count)
                    .map(|(_, e)| Arc::clone(e))
                    .collect(),
            )
        })
    }

    /// Waits until the chain has gone at least `want` entries past `position` (those this
    /// process recorded kept, any between them written elsewhere), or `most` has passed (all
    /// of it for an organization not watched).
    pub(super) async fn wait(
        &self,
        organization: OrganizationId,
        position: u64,
        want: usize,
        most: Duration,
    ) {
        let deadline = tokio::time::Instant::now() + most;
        let want = u64::try_from(want).unwrap_or(u64::MAX);
        loop {
            let arrived = self.kept(|orgs| {
                let kept = orgs.get(&organization)?;
                Some((kept.advanced(position) < want).then(|| Arc::clone(&kept.arrived)))
            });
            let arrived = match arrived {
                None => return tokio::time::sleep_until(deadline).await,
                Some(None) => return,
                Some(Some(arrived)) => arrived,
            };
            let notified = arrived.notified();
            tokio::pin!(notified);
            // Enabled before looking again, so that no publication between is missed.
            notified.as_mut().enable();
            let enough = self.kept(|orgs| {
                orgs.get(&organization).is_none_or(|kept| kept.advanced(position) >= want)
            });
            if enough {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return;
            }
        }
    }
}

/// A delivery's watch of its organization's entries ([`Tail::watch`]), ended when dropped.
#[derive(Debug)]
pub(super) struct Watching<'a> {
    tail: &'a Tail,
    organization: OrganizationId,
    stream: uuid::Uuid,
}

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        self.tail.unwatch(self.organization, self.stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recruit_domain::chain::{GENESIS, Ledger, entry_hash};
    use recruit_ports::chain::ChainEntry;

    const ORG: u128 = 7;

    fn org() -> OrganizationId {
        OrganizationId::from_uuid(uuid::Uuid::from_u128(ORG))
    }

    /// A chain of `n` linked entries of the organization, from position 1.
    fn chain(n: u64) -> Vec<ExportedEntry> {
        let mut prev = GENESIS;
        (1..=n)
            .map(|at| {
                let canonical = format!("{{\"n\":{at}}}").into_bytes();
                let hash = entry_hash(Ledger::Privacy, org(), at, &prev, &canonical);
                let entry = ChainEntry {
                    id: uuid::Uuid::from_u128(u128::from(at)),
                    position: Some(i64::try_from(at).unwrap()),
                    prev_hash: Some(prev.to_vec()),
                    hash: Some(hash.to_vec()),
                    canonical,
                };
                prev = hash;
                ExportedEntry {
                    organization_id: org(),
                    time: recruit_domain::Timestamp::now(),
                    entry,
                }
            })
            .collect()
    }

    fn positions(entries: Option<Vec<Arc<Prepared>>>) -> Option<Vec<i64>> {
        entries.map(|e| e.iter().map(|e| e.exported.entry.position.unwrap()).collect())
    }

    fn hash_at(entries: &[ExportedEntry], at: usize) -> Digest {
        match at {
            0 => GENESIS,
            _ => digest(&entries[at - 1].entry.hash),
        }
    }

    #[test]
    fn keeps_only_what_a_delivery_here_watches() {
        let (tail, entries) = (Tail::default(), chain(3));
        let stream = uuid::Uuid::from_u128(1);
        tail.publish(entries.clone());
        assert!(tail.after(org(), stream, (0, &GENESIS), 10).is_none(), "not watched");
        let watching = tail.watch(org(), stream);
        tail.publish(entries.clone());
        assert_eq!(positions(tail.after(org(), stream, (0, &GENESIS), 10)), Some(vec![1, 2, 3]));
        drop(watching);
        assert!(tail.after(org(), stream, (0, &GENESIS), 10).is_none(), "dropped with the watch");
    }

    #[test]
    fn gives_entries_that_follow_without_a_gap_and_link() {
        let (tail, entries) = (Tail::default(), chain(6));
        let stream = uuid::Uuid::from_u128(1);
        let _watching = tail.watch(org(), stream);
        // Published out of order (writes commit in order, their publications need not).
        tail.publish(entries[2..4].to_vec());
        assert!(tail.after(org(), stream, (0, &GENESIS), 10).is_none(), "the first is missing");
        tail.publish(entries[..2].to_vec());
        tail.publish(entries[5..].to_vec());
        let got = tail.after(org(), stream, (0, &GENESIS), 10);
        assert_eq!(positions(got), Some(vec![1, 2, 3, 4]), "up to the gap");
        let got = tail.after(org(), stream, (0, &GENESIS), 3);
        assert_eq!(positions(got), Some(vec![1, 2, 3]), "up to the limit");
        let other = hash_at(&entries, 3);
        assert!(tail.after(org(), stream, (2, &other), 10).is_none(), "a hash not of the chain");
        assert!(tail.after(org(), stream, (2, &hash_at(&entries, 2)), 10).is_none(), "dropped");
    }

    #[test]
    fn drops_what_every_delivery_passed_and_the_oldest_beyond_its_bounds() {
        let (tail, entries) = (Tail::default(), chain(KEPT_ENTRIES as u64 + 5));
        let (one, two) = (uuid::Uuid::from_u128(1), uuid::Uuid::from_u128(2));
        let (_one, _two) = (tail.watch(org(), one), tail.watch(org(), two));
        tail.publish(entries[..10].to_vec());
        assert!(tail.after(org(), one, (4, &hash_at(&entries, 4)), 10).is_some());
        assert!(tail.after(org(), two, (2, &hash_at(&entries, 2)), 10).is_some(), "kept for two");
        assert!(tail.after(org(), one, (6, &hash_at(&entries, 6)), 10).is_some());
        assert!(tail.after(org(), two, (1, &hash_at(&entries, 1)), 10).is_none(), "two passed 2");
        tail.publish(entries[10..].to_vec());
        // The newest KEPT_ENTRIES kept: from position 6 of 20 005.
        let before_oldest = entries.len() - KEPT_ENTRIES;
        let at = |n: usize| (n as u64, hash_at(&entries, n));
        let (n, hash) = at(before_oldest - 1);
        assert!(tail.after(org(), one, (n, &hash), 10).is_none(), "beyond bounds");
        let (n, hash) = at(before_oldest);
        let kept = positions(tail.after(org(), one, (n, &hash), usize::MAX)).unwrap();
        assert_eq!(kept.len(), KEPT_ENTRIES, "the newest kept");
    }

    #[tokio::test]
    async fn a_wait_ends_when_enough_follow() {
        let tail = Arc::new(Tail::default());
        let stream = uuid::Uuid::from_u128(1);
        let entries = chain(4);
        let _watching = tail.watch(org(), stream);
        let started = tokio::time::Instant::now();
        let waiting = {
            let tail = Arc::clone(&tail);
            tokio::spawn(async move { tail.wait(org(), 0, 4, Duration::from_secs(30)).await })
        };
        tail.publish(entries[..2].to_vec());
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "two of four");
        tail.publish(entries[2..].to_vec());
        waiting.await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        let started = tokio::time::Instant::now();
        tail.wait(org(), 4, 1, Duration::from_millis(100)).await;
        assert!(started.elapsed() >= Duration::from_millis(100), "nothing more: the whole wait");
    }

    #[test]
    fn streams_share_each_entry_kept_and_its_export_line() {
        let tail = Tail::default();
        let (one, two) = (uuid::Uuid::from_u128(1), uuid::Uuid::from_u128(2));
        let (_a, _b) = (tail.watch(org(), one), tail.watch(org(), two));
        tail.publish(chain(2));
        let first = tail.after(org(), one, (0, &GENESIS), 10).unwrap();
        let second = tail.after(org(), two, (0, &GENESIS), 10).unwrap();
        let line = first[0].line().as_ptr();
        assert!(Arc::ptr_eq(&first[1], &second[1]), "one entry for both streams");
        assert_eq!(second[0].line().as_ptr(), line, "its line written once");
    }

    #[tokio::test]
    async fn a_gap_counts_toward_the_wait() {
        let tail = Tail::default();
        let stream = uuid::Uuid::from_u128(1);
        let entries = chain(6);
        let _watching = tail.watch(org(), stream);
        // Positions 1 to 4 written elsewhere; 5 and 6 here.
        tail.publish(entries[4..].to_vec());
        let started = tokio::time::Instant::now();
        tail.wait(org(), 0, 6, Duration::from_secs(30)).await;
        assert!(started.elapsed() < Duration::from_secs(5), "six past 0, four of them elsewhere");
        let started = tokio::time::Instant::now();
        tail.wait(org(), 0, 7, Duration::from_millis(100)).await;
        assert!(started.elapsed() >= Duration::from_millis(100), "not seven");
    }
}
