//! Contract cases of the ledger chains: checkpoints, retention and exports.

use recruit_domain::{Timestamp, Uuid};

use crate::chain::{ChainFrom, ChainPage};
use crate::{AuditListQuery, ImportDocument, Store, StoreError};

use super::{ORG_A, ORG_B, expected_order, ledger_entry, loaded, org_id, record, t};

/// Checkpoints are stored once each (saving one again changes nothing), listed by
/// organization, ledger and position, and the latest of a chain is the one at its highest
/// position.
pub async fn checkpoints_are_kept_once_and_the_latest_is_the_highest(store: &dyn Store) {
    use recruit_domain::chain::{Checkpoint, Ledger};
    loaded(store).await;
    let key = recruit_domain::chain::SigningKey::from_bytes(&[4; 32]);
    let sign = |org, ledger, position, at| {
        Checkpoint::sign(&key, ledger, org_id(org), position, &[position as u8; 32], t(at))
    };
    assert_eq!(store.latest_checkpoint(org_id(ORG_A), Ledger::Privacy).await.unwrap(), None);
    let (a3, a7, b2) = (
        sign(ORG_A, Ledger::Privacy, 3, 10),
        sign(ORG_A, Ledger::Privacy, 7, 20),
        sign(ORG_B, Ledger::Privacy, 2, 30),
    );
    let a_api = sign(ORG_A, Ledger::Api, 9, 40);
    store.save_checkpoints(&[a7.clone(), b2.clone(), a3.clone()]).await.unwrap();
    store.save_checkpoints(&[a_api.clone(), a7.clone()]).await.unwrap();
    store.save_checkpoints(&[]).await.unwrap();
    assert_eq!(
        store.latest_checkpoint(org_id(ORG_A), Ledger::Privacy).await.unwrap(),
        Some(a7.clone())
    );
    assert_eq!(store.latest_checkpoint(org_id(ORG_B), Ledger::Api).await.unwrap(), None);
    let a = store.checkpoints(Some(org_id(ORG_A)), None).await.unwrap();
    assert_eq!(a, [a_api.clone(), a3.clone(), a7.clone()]);
    assert_eq!(store.checkpoints(None, Some(Ledger::Privacy)).await.unwrap().len(), 3);
    assert_eq!(store.checkpoints(None, None).await.unwrap().len(), 4);
    for c in store.checkpoints(None, None).await.unwrap() {
        assert!(c.verify(&key.verifying_key()).is_ok(), "{c:?} is stored as signed");
    }
}

/// A retention plan at an instant names, for each chain, what was recorded before it: the
/// last position, its hash, how many entries (all of a chain recorded before it: its head). No
/// entry is removed until a stored cut covers it, and then every planned entry goes at once;
/// the chains' heads stay, and the next entry links to the last one removed.
pub async fn retention_removes_a_chain_prefix_only_below_a_stored_cut(store: &dyn Store) {
    use crate::chain::ExportQuery;
    use recruit_domain::chain::{Ledger, RetentionCut};
    loaded(store).await;
    store.record_read(&record(ORG_A, 1), 0).await.unwrap();
    assert!(store.retention_plan(t(0)).await.unwrap().is_empty(), "all recorded since");
    let now = Timestamp::now();
    let before = Timestamp::from_unix_micros(now.unix_micros() + 1_000).unwrap();
    while Timestamp::now() <= before {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let plan = store.retention_plan(before).await.unwrap();
    let heads = store.chain_heads(None).await.unwrap();
    assert_eq!(plan.len(), heads.len(), "every chain is planned: {plan:?}");
    let mut total = 0;
    for p in &plan {
        let head = heads
            .iter()
            .find(|h| {
                h.organization_id == p.organization_id.uuid() && h.ledger == p.ledger.as_str()
            })
            .unwrap();
        assert_eq!(p.position, u64::try_from(head.position).unwrap());
        assert_eq!(p.hash.as_slice(), head.hash.as_slice());
        assert_eq!(p.entries, p.position, "{p:?}: the whole chain");
        total += p.entries;
    }
    let stored = async || {
        let mut n = 0;
        for ledger in Ledger::ALL {
            let q = ExportQuery {
                ledger,
                organization: None,
                from: None,
                to: None,
                ids: None,
                recorded_before: Some(before),
                after_position: None,
                filter: Default::default(),
            };
            n += store.export(&q).await.unwrap().count;
        }
        n
    };
    assert_eq!(stored().await, total, "an export at the boundary holds what goes");

    // Without a cut, or with cuts of some chains only, nothing is removed.
    assert!(store.remove_retained(before).await.is_err());
    let key = recruit_domain::chain::SigningKey::from_bytes(&[5; 32]);
    let cuts: Vec<RetentionCut> = plan
        .iter()
        .map(|p| {
            let (ledger, org) = (p.ledger, p.organization_id);
            RetentionCut::sign(&key, ledger, org, (p.position, &p.hash), before, now)
        })
        .collect();
    store.save_retention_cuts(&cuts[..1]).await.unwrap();
    assert!(store.remove_retained(before).await.is_err());
    assert_eq!(stored().await, total, "refused whole");

    store.save_retention_cuts(&cuts).await.unwrap();
    store.save_retention_cuts(&cuts).await.unwrap();
    let mut kept = store.retention_cuts(None, None).await.unwrap();
    let mut signed = cuts.clone();
    let order = |c: &RetentionCut| (c.organization_id, c.ledger.as_str(), c.position);
    kept.sort_by_key(order);
    signed.sort_by_key(order);
    assert_eq!(kept, signed, "kept once, as signed");
    assert_eq!(store.remove_retained(before).await.unwrap(), total);
    assert_eq!(stored().await, 0);
    assert!(store.retention_plan(before).await.unwrap().is_empty());
    assert_eq!(store.chain_heads(None).await.unwrap(), heads, "the heads stay");
    assert!(
        store
            .chain_entries(page(Ledger::Privacy, ChainFrom::Linked(None), 10))
            .await
            .unwrap()
            .is_empty()
    );

    // The next entry links to the last one removed.
    store.record_read(&record(ORG_A, 2), 0).await.unwrap();
    let api = store.chain_entries(page(Ledger::Api, ChainFrom::Linked(None), 10)).await.unwrap();
    let cut = cuts.iter().find(|c| c.ledger == Ledger::Api).unwrap();
    assert_eq!(api.len(), 1);
    assert_eq!(api[0].position, Some(i64::try_from(cut.position).unwrap() + 1));
    assert_eq!(
        api[0].prev_hash.as_deref(),
        recruit_domain::chain::parse_hex(&cut.hash).as_ref().map(|h| &h[..])
    );

    // Pages follow one another by (position, id), each up to its limit.
    let first = api[0].position.unwrap();
    for n in 3..6 {
        store.record_read(&record(ORG_A, n), 0).await.unwrap();
    }
    let positions = |page| async move {
        let entries = store.chain_entries(page).await.unwrap();
        entries.into_iter().map(|e| e.position.unwrap()).collect::<Vec<_>>()
    };
    let two = page(Ledger::Api, ChainFrom::Linked(None), 2);
    assert_eq!(positions(two).await, [first, first + 1]);
    let after = page(Ledger::Api, ChainFrom::Linked(None), 10).after(&api[0]);
    assert_eq!(positions(after).await, [first + 1, first + 2, first + 3]);
    let unlinked = store.chain_entries(page(Ledger::Api, ChainFrom::Unlinked(None), 10));
    assert!(unlinked.await.unwrap().is_empty(), "every entry is linked");
}

/// A page of the chain of `ledger` of organization A.
fn page(ledger: recruit_domain::chain::Ledger, from: ChainFrom, limit: u32) -> ChainPage {
    ChainPage { ledger, organization: org_id(ORG_A), from, limit }
}

/// The next entry of an export.
async fn next_exported(
    export: &mut crate::chain::Export,
) -> Option<Result<crate::chain::ExportedEntry, StoreError>> {
    std::future::poll_fn(|cx| export.entries.as_mut().poll_next(cx)).await
}

/// Every entry of an export.
pub(super) async fn drain_export(
    mut export: crate::chain::Export,
) -> Vec<crate::chain::ExportedEntry> {
    let mut all = vec![];
    while let Some(entry) = next_exported(&mut export).await {
        all.push(entry.expect("an exported entry"));
    }
    all
}

/// An export counts its entries; its read recorded with that count before any entry is
/// taken (as the service does), it yields exactly those entries in (organization, time, id)
/// order, each with a hash its chain fields prove; after a position, the rest of the chain in
/// its order; the window and the ids filter it; an export of every organization holds each
/// organization's entries.
pub async fn an_export_holds_its_count_in_order_with_the_chain_and_is_recorded_first(
    store: &dyn Store,
) {
    use crate::chain::ExportQuery;
    use recruit_domain::chain::{Ledger, entry_hash};
    loaded(store).await;
    let a = super::privacy_export(ORG_A);
    let export = store.export(&a).await.unwrap();
    // Recorded as the service does, once counted and before any entry is taken.
    let n = usize::try_from(export.count).unwrap();
    store.record_read(&record(ORG_A, 1), n).await.unwrap();
    let all = AuditListQuery { organization_id: None, limit: 100 };
    let recorded = store.api_audit_entries(&all).await.unwrap();
    assert_eq!(recorded.len(), 1);
    assert_eq!(u64::from(recorded[0].entries_returned), export.count);
    let count = export.count;
    let entries = drain_export(export).await;
    assert_eq!(entries.len() as u64, count);
    let expected: Vec<_> = {
        let mut e = expected_order(ORG_A);
        e.reverse();
        e.into_iter().map(|e| e.id.uuid()).collect()
    };
    assert_eq!(entries.iter().map(|e| e.entry.id).collect::<Vec<_>>(), expected);
    let mut positions: Vec<i64> = entries.iter().map(|e| e.entry.position.unwrap()).collect();
    positions.sort_unstable();
    assert_eq!(positions, (1..=i64::try_from(count).unwrap()).collect::<Vec<_>>());
    for e in &entries {
        let prev: [u8; 32] = e.entry.prev_hash.as_deref().unwrap().try_into().unwrap();
        let position = u64::try_from(e.entry.position.unwrap()).unwrap();
        let hash = entry_hash(Ledger::Privacy, org_id(ORG_A), position, &prev, &e.entry.canonical);
        assert_eq!(e.entry.hash.as_deref(), Some(&hash[..]), "the chain proves each entry");
        assert_eq!(e.organization_id, org_id(ORG_A));
    }

    // After a position: the rest of the chain, in its order.
    let rest = ExportQuery { after_position: Some(3), ..a.clone() };
    let rest = drain_export(store.export(&rest).await.unwrap()).await;
    let count = i64::try_from(count).unwrap();
    let rest: Vec<i64> = rest.iter().map(|e| e.entry.position.unwrap()).collect();
    assert_eq!(rest, (4..=count).collect::<Vec<_>>());
    // Read a chunk at a time by a follower of the chain: the same entries, in the same order.
    let org = org_id(ORG_A);
    let chunk = store.chain_after(Ledger::Privacy, org, 3, 2).await.unwrap();
    assert_eq!(chunk.iter().map(|e| e.entry.position.unwrap()).collect::<Vec<_>>(), [4, 5]);
    let followed = store.chain_after(Ledger::Privacy, org, 0, 1000).await.unwrap();
    let mut by_position = entries.clone();
    by_position.sort_by_key(|e| e.entry.position);
    assert_eq!(followed, by_position, "the whole chain, in its order");
    let past = u64::try_from(count).unwrap();
    assert_eq!(store.chain_after(Ledger::Privacy, org, past, 10).await.unwrap(), []);

    let window =
        ExportQuery { from: Some(entries[2].time), to: Some(entries[5].time), ..a.clone() };
    let windowed = drain_export(store.export(&window).await.unwrap()).await;
    assert!(windowed.iter().all(|e| e.time >= entries[2].time && e.time < entries[5].time));
    assert!(!windowed.is_empty());
    let ids = vec![entries[1].entry.id, entries[4].entry.id, Uuid::from_u128(0xDEAD)];
    let by_id =
        drain_export(store.export(&ExportQuery { ids: Some(ids), ..a.clone() }).await.unwrap())
            .await;
    assert_eq!(
        by_id.iter().map(|e| e.entry.id).collect::<Vec<_>>(),
        [entries[1].entry.id, entries[4].entry.id]
    );
    // Counted up to a bound: what an export of the same query holds, or the bound.
    let first: serde_json::Value = serde_json::from_slice(&entries[2].entry.canonical).unwrap();
    let category = first["activity_category"].as_str().map(str::to_owned);
    assert!(category.is_some(), "{first}");
    let filtered = ExportQuery {
        filter: crate::EntryFilter { category, ..Default::default() },
        ..window.clone()
    };
    let held = drain_export(store.export(&filtered).await.unwrap()).await.len() as u64;
    for (q, held) in
        [(&a, entries.len() as u64), (&window, windowed.len() as u64), (&filtered, held)]
    {
        assert_eq!(store.count_entries(q, 1000).await.unwrap(), held);
        assert_eq!(store.count_entries(q, 2).await.unwrap(), held.min(2));
    }
    let every = ExportQuery { organization: None, ..a.clone() };
    let both = drain_export(store.export(&every).await.unwrap()).await;
    let b = drain_export(
        store
            .export(&ExportQuery { organization: Some(org_id(ORG_B)), ..a.clone() })
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(both.len(), entries.len() + b.len());
    let orgs: Vec<_> = both.iter().map(|e| e.organization_id.uuid()).collect();
    assert!(orgs.windows(2).all(|w| w[0] <= w[1]), "by organization");
    let api = ExportQuery { ledger: Ledger::Api, ..every };
    let api = drain_export(store.export(&api).await.unwrap()).await;
    assert_eq!(api.iter().map(|e| e.entry.id).collect::<Vec<_>>(), [recorded[0].id]);
}

/// An export reads one snapshot: entries recorded while it is being read (here, past the
/// chunk the store holds ready) are not in it, and it yields exactly its count.
pub async fn an_export_reads_one_snapshot_whatever_is_recorded_meanwhile(store: &dyn Store) {
    use crate::chain::ExportQuery;
    loaded(store).await;
    let batch = |range: std::ops::Range<u128>| ImportDocument {
        privacy_audit_logs: range
            // Ids past the world's: `entry_id` ORs its bits with `n`'s.
            .map(|i| ledger_entry(ORG_B, i << 12, t(10_000 + i64::try_from(i).unwrap_or(0))))
            .collect(),
        ..Default::default()
    };
    store.import(&batch(1_000..4_500)).await.unwrap();
    let q = ExportQuery { from: Some(t(10_000)), ..super::privacy_export(ORG_B) };
    let mut export = store.export(&q).await.unwrap();
    assert_eq!(export.count, 3_500);
    let first = next_exported(&mut export).await.unwrap().unwrap();
    assert_eq!(first.time, t(11_000));
    // Later than everything: read in a chunk the store has not read yet.
    store.import(&batch(5_000..5_100)).await.unwrap();
    let mut n = 1;
    while let Some(entry) = next_exported(&mut export).await {
        let entry = entry.unwrap();
        assert!(entry.time < t(15_000), "an entry recorded after the export began");
        n += 1;
    }
    assert_eq!(n, 3_500);

    // In the chain's order, chunk after chunk, from a position on: every later position once.
    let q = ExportQuery { from: None, after_position: Some(10), ..q };
    let export = store.export(&q).await.unwrap();
    let count = i64::try_from(export.count).unwrap();
    let positions: Vec<i64> =
        drain_export(export).await.iter().map(|e| e.entry.position.unwrap()).collect();
    assert_eq!(positions, (11..11 + count).collect::<Vec<_>>());
    assert!(count > 3_500, "past a chunk: {count}");
}

/// Where a reader of a chain from a time starts: after the last entry recorded before it
/// (whatever the entries' own times), at the chain's start when every entry is as late, at
/// its head when none is; nowhere for a chain with no entry.
pub async fn a_chain_is_read_from_a_time_by_its_recording_order(store: &dyn Store) {
    use recruit_domain::chain::{GENESIS, Ledger};
    let org = org_id(ORG_A);
    // A time 2 ms after the last write and 2 ms before the next: a store may keep
    // `recorded_at` to the millisecond only (SQLite's clock).
    let pause = || {
        let now = Timestamp::now();
        let at = Timestamp::from_unix_micros(now.unix_micros() + 2_000).unwrap();
        while Timestamp::now().unix_micros() <= at.unix_micros() + 2_000 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        at
    };
    let before_all = pause();
    assert_eq!(store.chain_start_at(Ledger::Privacy, org, before_all).await.unwrap(), None);
    loaded(store).await;
    let loaded_at = pause();
    let base = store.chain_after(Ledger::Privacy, org, 0, 10_000).await.unwrap().len() as u64;
    // Three writes of five entries each, a pause apart; the entries' own times run backwards.
    let (mut between, mut written) = (vec![], vec![]);
    for n in 0..3u128 {
        let claim = super::ledgers::key_claim(ORG_A, &format!("from-time-{n}"), 1, 100);
        let entries =
            (0..5).map(|k| ledger_entry(ORG_A, 500 + n * 10 + k, t(900 - n as i64))).collect();
        let write = super::ledgers::accesses(&claim, entries, 0x50 + n);
        let done = store.record_privacy_accesses(&write).await.unwrap();
        assert_eq!(done.claim, crate::Claim::Granted);
        written.extend(done.chained);
        between.push(pause());
    }
    let chain = store.chain_after(Ledger::Privacy, org, 0, 10_000).await.unwrap();
    assert_eq!(chain.len() as u64, base + 15);
    // What a write returns is what the chain holds once it is read back.
    assert_eq!(written, chain[chain.len() - 15..], "the entries written, as the chain holds them");
    let link = |position: u64| {
        let e = &chain[usize::try_from(position).unwrap() - 1];
        Some((position, e.entry.hash.clone().unwrap()))
    };
    let start = |at| store.chain_start_at(Ledger::Privacy, org, at);
    assert_eq!(start(before_all).await.unwrap(), Some((0, GENESIS.to_vec())), "every entry");
    assert_eq!(start(loaded_at).await.unwrap(), link(base), "what was written since");
    assert_eq!(start(between[0]).await.unwrap(), link(base + 5), "after the first write");
    assert_eq!(start(between[1]).await.unwrap(), link(base + 10), "after the second");
    assert_eq!(start(between[2]).await.unwrap(), link(base + 15), "from now: the head");
    let lone = org_id(super::ORG_C);
    assert_eq!(store.chain_start_at(Ledger::Privacy, lone, before_all).await.unwrap(), None);
}

/// Reads (recorded together) and writes (each recording itself in its own transaction) of
/// one organization, one after another and then concurrently, extend one chain: its first entry links to the genesis
/// hash, every position from 1 is taken once, each entry links to the one before, and each
/// hash is the entry's.
pub async fn concurrent_reads_and_writes_extend_one_chain(store: &dyn Store) {
    use recruit_domain::chain::{GENESIS, Ledger};
    loaded(store).await;
    // One after another first: a read, a write that moves the chain the read extended, two
    // more reads (a store that remembers the heads it wrote finds one moved, then not).
    store.record_read(&record(ORG_A, 30), 0).await.unwrap();
    let claim = super::ledgers::key_claim(ORG_A, "chain-before", 1, 100);
    let write = super::ledgers::accesses(&claim, vec![ledger_entry(ORG_A, 70, t(90))], 0x90);
    assert_eq!(store.record_privacy_accesses(&write).await.unwrap().claim, crate::Claim::Granted);
    store.record_read(&record(ORG_A, 31), 0).await.unwrap();
    store.record_read(&record(ORG_A, 32), 0).await.unwrap();
    let writes: Vec<_> = (0..6u128)
        .map(|n| {
            let claim = super::ledgers::key_claim(ORG_A, &format!("chain-{n}"), 1, 100);
            super::ledgers::accesses(&claim, vec![ledger_entry(ORG_A, 60 + n, t(90))], 0x80 + n)
        })
        .collect();
    let reads: Vec<_> = (1..=24u128).map(|n| record(ORG_A, n)).collect();
    type Step<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = String> + Send + 'a>>;
    let mut steps: Vec<Step<'_>> = vec![];
    for (n, read) in reads.iter().enumerate() {
        steps.push(Box::pin(async move { format!("{:?}", store.record_read(read, 0).await) }));
        if n % 4 == 0 {
            let write = &writes[n / 4];
            steps.push(Box::pin(async move {
                format!("{:?}", store.record_privacy_accesses(write).await.map(|w| w.claim))
            }));
        }
    }
    for outcome in super::futures_join_all(steps.into_iter()).await {
        assert!(outcome == "Ok(())" || outcome == "Ok(Granted)", "{outcome}");
    }
    let page = ChainPage {
        ledger: Ledger::Api,
        organization: org_id(ORG_A),
        from: ChainFrom::Linked(None),
        limit: 100,
    };
    let chain = store.chain_entries(page).await.unwrap();
    assert_eq!(chain.len(), 34);
    let mut prev = GENESIS;
    for (n, entry) in (1..).zip(&chain) {
        assert_eq!(entry.position, Some(n), "{:?}", entry.id);
        assert_eq!(entry.prev_hash.as_deref(), Some(&prev[..]), "at {n}");
        assert!(entry.fits(), "at {n}: its hash is that of its fields there");
        prev = entry.hash.as_deref().and_then(|h| h.try_into().ok()).expect("a hash");
    }
    let heads = store.chain_heads(Some(org_id(ORG_A))).await.unwrap();
    let api = heads.iter().find(|h| h.ledger == "api").expect("the API chain's head");
    assert_eq!((api.position, &api.hash[..]), (34, &prev[..]));
}
