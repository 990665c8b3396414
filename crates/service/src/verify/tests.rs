//! Tests of the chains' verification ([`super`]): every kind of tampering named where it is.

use recruit_ports::chain::ChainEntry;

use super::*;

fn org() -> OrganizationId {
    OrganizationId::from_uuid(Uuid::from_u128(0xA))
}

/// Links entries to `entries` as a store writes them, up to position `to`, each holding
/// the JSON `content` gives for its position; returns the new head's hash.
fn extend(entries: &mut Vec<ChainEntry>, to: i64, content: impl Fn(i64) -> String) -> Digest {
    let mut prev =
        entries.last().and_then(|e| e.hash.as_deref()).map_or(GENESIS, |h| h.try_into().unwrap());
    for p in entries.len() as i64 + 1..=to {
        let canonical = content(p).into_bytes();
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
    prev
}

/// A chain of `n` entries as a store writes it, and its head.
fn chain(n: i64) -> (Vec<ChainEntry>, (i64, Digest)) {
    let mut entries = vec![];
    let head = extend(&mut entries, n, |p| format!("{{\"n\":{p}}}"));
    (entries, (n, head))
}

fn findings(entries: Vec<ChainEntry>, head: (i64, Digest)) -> Vec<(FindingKind, Option<i64>)> {
    let mut chain = Chain::new(Ledger::Api, org(), head.0, head.1);
    for e in entries {
        chain.push(CheckedEntry::checked(Ledger::Api, org(), e));
    }
    chain.finish().findings.into_iter().map(|f| (f.kind, f.position)).collect()
}

/// The findings of `entries` under `head`, with retention cuts at `cuts` (position, hash).
fn findings_after_cuts(
    entries: Vec<ChainEntry>,
    head: (i64, Digest),
    cuts: &[(u64, Digest)],
) -> Vec<(FindingKind, Option<i64>)> {
    let mut chain = Chain::new(Ledger::Api, org(), head.0, head.1);
    for (position, hash) in cuts {
        chain.cut(*position, *hash);
    }
    for e in entries {
        chain.push(CheckedEntry::checked(Ledger::Api, org(), e));
    }
    chain.finish().findings.into_iter().map(|f| (f.kind, f.position)).collect()
}

#[test]
fn a_chain_begins_after_a_retention_cut_and_only_there() {
    let (entries, head) = chain(8);
    let hash_at =
        |p: usize| -> Digest { entries[p - 1].hash.as_deref().unwrap().try_into().unwrap() };
    let (c3, c5) = ((3, hash_at(3)), (5, hash_at(5)));
    // Removed up to a cut, or up to the later of two, or not yet removed: intact.
    assert_eq!(findings_after_cuts(entries[3..].to_vec(), head, &[c3]), []);
    assert_eq!(findings_after_cuts(entries[5..].to_vec(), head, &[c3, c5]), []);
    assert_eq!(findings_after_cuts(entries.clone(), head, &[c3]), []);
    assert_eq!(findings_after_cuts(vec![], head, &[(8, head.1)]), []);
    // More removed than the cut says: the rest is deleted.
    assert_eq!(
        findings_after_cuts(entries[4..].to_vec(), head, &[c3]),
        [(FindingKind::Deleted, Some(4))]
    );
    // Removed without a cut.
    assert_eq!(
        findings_after_cuts(entries[3..].to_vec(), head, &[]),
        [
            (FindingKind::Deleted, Some(1)),
            (FindingKind::Deleted, Some(2)),
            (FindingKind::Deleted, Some(3))
        ]
    );
    // A cut whose hash is not the removed entry's: the first entry left does not link.
    assert_eq!(
        findings_after_cuts(entries[3..].to_vec(), head, &[(3, [1; 32])]),
        [(FindingKind::Modified, Some(3))]
    );
    // Everything removed, but the chain's head is beyond the cut.
    assert_eq!(findings_after_cuts(vec![], head, &[c5]), [(FindingKind::Truncated, Some(6))]);
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

#[test]
fn a_consistent_forgery_at_a_position_already_held_is_inserted_whichever_comes_first() {
    let (entries, head) = chain(5);
    let mut forged = entries[2].clone();
    forged.id = Uuid::from_u128(0xF);
    forged.canonical = b"{\"n\":\"forged\"}".to_vec();
    let prev: Digest = forged.prev_hash.as_deref().unwrap().try_into().unwrap();
    forged.hash = Some(entry_hash(Ledger::Api, org(), 3, &prev, &forged.canonical).to_vec());
    for forged_first in [true, false] {
        let mut stored = entries.clone();
        stored.insert(if forged_first { 2 } else { 3 }, forged.clone());
        let mut chain = Chain::new(Ledger::Api, org(), head.0, head.1);
        for e in stored {
            chain.push(CheckedEntry::checked(Ledger::Api, org(), e));
        }
        let found: Vec<_> =
            chain.finish().findings.into_iter().map(|f| (f.kind, f.position, f.id)).collect();
        assert_eq!(
            found,
            [(FindingKind::Inserted, Some(3), Some(Uuid::from_u128(0xF).to_string()))],
            "forged entry first: {forged_first}"
        );
    }
}

#[test]
fn an_entry_moved_onto_a_position_held_is_reordered_not_inserted() {
    let (mut entries, head) = chain(8);
    let mut moved = entries.remove(4);
    moved.position = Some(3);
    for moved_first in [true, false] {
        let mut stored = entries.clone();
        stored.insert(if moved_first { 2 } else { 3 }, moved.clone());
        let mut chain = Chain::new(Ledger::Api, org(), head.0, head.1);
        for e in stored {
            chain.push(CheckedEntry::checked(Ledger::Api, org(), e));
        }
        let found: Vec<_> = chain
            .finish()
            .findings
            .into_iter()
            .map(|f| (f.kind, f.position, f.expected_position))
            .collect();
        assert_eq!(
            found,
            [(FindingKind::Reordered, Some(3), Some(5)), (FindingKind::Deleted, Some(5), None)],
            "moved entry first: {moved_first}"
        );
    }
}

#[test]
fn a_rewritten_chain_shows_at_a_checkpoint_and_a_cut_below_one_is_a_truncation() {
    let (entries, head) = chain(5);
    let signed: Digest = entries[2].hash.as_deref().unwrap().try_into().unwrap();
    // The whole chain written again from a forged third entry: every hash consistent,
    // the head moved with it.
    let mut forged = entries[..2].to_vec();
    let prev = extend(&mut forged, 5, |p| format!("{{\"n\":\"forged {p}\"}}"));
    let run = |entries: Vec<ChainEntry>, head: (i64, Digest)| {
        let mut chain = Chain::new(Ledger::Api, org(), head.0, head.1);
        chain.anchor(3, signed);
        for e in entries {
            chain.push(CheckedEntry::checked(Ledger::Api, org(), e));
        }
        chain.finish().findings.into_iter().map(|f| (f.kind, f.position, f.expected_position))
    };
    assert_eq!(findings(forged.clone(), (5, prev)), [], "without a checkpoint it is unseen");
    assert_eq!(
        run(forged, (5, prev)).collect::<Vec<_>>(),
        [(FindingKind::Rewritten, Some(3), None)]
    );
    // Cut after the second entry, the head moved back with it.
    let cut = entries[..2].to_vec();
    let at: Digest = cut[1].hash.as_deref().unwrap().try_into().unwrap();
    assert_eq!(run(cut, (2, at)).collect::<Vec<_>>(), [(FindingKind::Truncated, Some(3), Some(3))]);
    assert_eq!(run(entries, head).count(), 0);
}
