//! Contract cases of the ledgers: reading the privacy ledger, recording every read,
//! idempotency keys with the accesses they record, and the audit list.

use recruit_domain::{Candidate, IdFilter, PrivacyAuditLog, TimeWindow, Timestamp, Uuid};

use crate::{
    AccessesWrite, AuditEntry, AuditListQuery, Claim, ImportDocument, Interface, KeyClaim,
    LedgerEntry, LedgerPosition, PrivacyLogQuery, Store, StoreError, StoredResponse,
    ToolAuditEntry,
};

use super::{
    ORG_A, ORG_B, candidate_id, entry_id, expected_order, futures_join_all, ids_of, ledger_entry,
    loaded, org_id, query, read, read_page, record, t,
};

/// Newest first; entries with equal `access_time` ordered by id, descending.
pub async fn the_ledger_is_newest_first_with_equal_times_ordered_by_id(store: &dyn Store) {
    loaded(store).await;
    let page = read(store, &query(ORG_A, 100), 1).await;
    assert_eq!(ids_of(&page), ids_of(&expected_order(ORG_A)));
    let limited = read(store, &query(ORG_A, 5), 2).await;
    assert_eq!(ids_of(&limited), ids_of(&expected_order(ORG_A)[..5]));
}

/// `gte` is inclusive and `lt` exclusive.
pub async fn the_window_includes_gte_and_excludes_lt(store: &dyn Store) {
    loaded(store).await;
    // Entries 4..=7 are at t(400), 8 at t(800), 9 and 10 at t(900).
    let q =
        PrivacyLogQuery { window: TimeWindow::new(t(400), t(900)).unwrap(), ..query(ORG_A, 100) };
    let mut got = ids_of(&read(store, &q, 1).await);
    got.sort();
    assert_eq!(got, [4, 5, 6, 7, 8].map(|n| entry_id(ORG_A, n)));
    let just_after = Timestamp::from_unix_micros(t(400).unix_micros() + 1).unwrap();
    let q = PrivacyLogQuery { window: TimeWindow::new(just_after, t(900)).unwrap(), ..q };
    assert_eq!(ids_of(&read(store, &q, 2).await), [entry_id(ORG_A, 8)]);
    let q = PrivacyLogQuery { window: TimeWindow::new(t(0), t(100)).unwrap(), ..q };
    assert!(read(store, &q, 3).await.is_empty());
}

/// With an id filter, only those entries of the organization come back, in ledger order.
pub async fn the_id_filter_returns_only_those_entries(store: &dyn Store) {
    loaded(store).await;
    let wanted = [12, 5, 6, 1].map(|n| entry_id(ORG_A, n));
    let filter = IdFilter::new(wanted.iter().copied().chain([entry_id(ORG_A, 404)])).unwrap();
    let q = PrivacyLogQuery { ids: Some(filter), ..query(ORG_A, 100) };
    let expected: Vec<_> =
        ids_of(&expected_order(ORG_A)).into_iter().filter(|id| wanted.contains(id)).collect();
    assert_eq!(ids_of(&read(store, &q, 1).await), expected);
}

/// Walking pages of any size after the last position seen visits every entry once, in order,
/// across equal timestamps; `more` is true exactly when entries follow.
pub async fn pages_continue_after_a_position_without_repeats_or_gaps(store: &dyn Store) {
    loaded(store).await;
    let expected = ids_of(&expected_order(ORG_A));
    for size in [1, 2, 3, 5, 11, 12, 13] {
        let mut seen = vec![];
        let mut after = None;
        for n in 0.. {
            let q = PrivacyLogQuery { after, ..query(ORG_A, size) };
            let page = read_page(store, &q, u128::from(size) * 1000 + n).await;
            seen.extend(ids_of(&page.entries));
            assert!(page.entries.len() <= size as usize);
            assert_eq!(page.more, seen.len() < expected.len(), "page size {size}, page {n}");
            match page.entries.last() {
                Some(last) if page.more => after = Some(LedgerPosition::of(last)),
                _ => break,
            }
        }
        assert_eq!(seen, expected, "page size {size}");
    }
    // Continuing after the last entry finds nothing.
    let last = expected_order(ORG_A).pop().unwrap();
    let q = PrivacyLogQuery { after: Some(LedgerPosition::of(&last)), ..query(ORG_A, 100) };
    assert!(read(store, &q, 1).await.is_empty());
}

/// Another organization's entries never come back: not by window, not by id filter, not by
/// a position taken from them.
pub async fn nothing_of_another_organization_is_ever_returned(store: &dyn Store) {
    loaded(store).await;
    let b = read(store, &query(ORG_B, 100), 1).await;
    assert_eq!(ids_of(&b), ids_of(&expected_order(ORG_B)));
    let filter = IdFilter::new((1..=4).map(|n| entry_id(ORG_A, n))).unwrap();
    let q = PrivacyLogQuery { ids: Some(filter), ..query(ORG_B, 100) };
    assert!(read(store, &q, 2).await.is_empty());
    let q = PrivacyLogQuery { organization_id: org_id(0xC), ..query(ORG_A, 100) };
    let err = store.read_privacy_audit_logs(&q, &record(0xC, 3)).await;
    // A missing organization has no ledger: either nothing or NotFound, never data.
    assert!(
        matches!(&err, Ok(p) if p.entries.is_empty()) || matches!(err, Err(StoreError::NotFound)),
        "{err:?}"
    );
}

/// Every field of every variant comes back as it was appended.
pub async fn ledger_entries_round_trip_exactly(store: &dyn Store) {
    loaded(store).await;
    let page = read(store, &query(ORG_A, 100), 1).await;
    assert_eq!(page, expected_order(ORG_A));
}

/// A large batch (stores may write it otherwise than a few rows) round-trips exactly too:
/// every data subject and query variant, every nullable column empty and filled.
pub async fn a_large_batch_round_trips_exactly(store: &dyn Store) {
    loaded(store).await;
    let entries: Vec<LedgerEntry> = (100..250)
        .map(|n| ledger_entry(ORG_B, n, t(2000 + i64::try_from(n).unwrap_or(0))))
        .collect();
    // With another entity, so that the document is not a ledger batch only.
    let candidate = Candidate {
        id: candidate_id(ORG_B, 77),
        organization_id: org_id(ORG_B),
        name: "Batch".into(),
        email: "batch@mail.example".into(),
        phone: String::new(),
    };
    let doc = ImportDocument {
        candidates: vec![candidate],
        privacy_audit_logs: entries.clone(),
        ..Default::default()
    };
    store.import(&doc).await.unwrap();
    let mut expected: Vec<PrivacyAuditLog> = entries.into_iter().map(|e| e.entry).collect();
    expected.reverse();
    let mut q = query(ORG_B, 100);
    q.window = TimeWindow::new(t(2000), t(3000)).unwrap();
    let first = read_page(store, &q, 1).await;
    q.after = first.entries.last().map(LedgerPosition::of);
    let second = read_page(store, &q, 2).await;
    let read: Vec<PrivacyAuditLog> = first.entries.into_iter().chain(second.entries).collect();
    assert_eq!(read, expected);
}

/// Every read writes one API audit entry with the number of entries returned; a read through
/// the tool interface writes a tool-interface entry too.
pub async fn every_read_is_recorded_with_its_count(store: &dyn Store) {
    loaded(store).await;
    let all = AuditListQuery { organization_id: None, limit: 100 };
    assert!(store.api_audit_entries(&all).await.unwrap().is_empty());
    let got = store.read_privacy_audit_logs(&query(ORG_A, 5), &record(ORG_A, 1)).await.unwrap();
    assert_eq!((got.entries.len(), got.more), (5, true));
    let mut tool_record = record(ORG_A, 2);
    tool_record.api.interface = Interface::Tool;
    tool_record.api.tool_name = Some("list_privacy_audit_logs".into());
    tool_record.tool = Some(ToolAuditEntry {
        id: Uuid::from_u128(0x7001),
        at: tool_record.api.at,
        organization_id: org_id(ORG_A),
        token_id: tool_record.api.token_id,
        user_id: tool_record.api.user_id,
        tool_name: "list_privacy_audit_logs".into(),
        arguments: serde_json::json!({"limit": 100, "ids": ["pal_1"]}),
        entries_returned: 0,
        request_id: "req-2".into(),
    });
    let got = store.read_privacy_audit_logs(&query(ORG_A, 100), &tool_record).await.unwrap();
    assert_eq!((got.entries.len(), got.more), (12, false));

    let api = store.api_audit_entries(&all).await.unwrap();
    let mut first = record(ORG_A, 1).api;
    first.entries_returned = 5;
    let mut second = tool_record.api.clone();
    second.entries_returned = 12;
    assert_eq!(api, [second, first]);
    let tool = store.tool_audit_entries(&all).await.unwrap();
    let mut expected = tool_record.tool.clone().unwrap();
    expected.entries_returned = 12;
    assert_eq!(tool, [expected]);
}

/// A read that returns no ledger entry (a checkpoint's) is recorded with a count of 0, as the
/// next entry of the organization's API ledger chain; one of another organization's chain
/// leaves it alone. The heads of one organization are found without the others'.
pub async fn a_read_without_entries_is_recorded_and_extends_the_chain(store: &dyn Store) {
    loaded(store).await;
    let heads = |org| async move {
        store
            .chain_heads(Some(org_id(org)))
            .await
            .unwrap()
            .into_iter()
            .map(|h| (h.ledger, h.position))
            .collect::<Vec<_>>()
    };
    let before = heads(ORG_A).await;
    assert!(before.iter().all(|(l, _)| l == "privacy"), "{before:?}");
    let b_before = heads(ORG_B).await;
    store.record_read(&record(ORG_A, 1), 0).await.unwrap();
    let mut expected = record(ORG_A, 1).api;
    expected.entries_returned = 0;
    let all = AuditListQuery { organization_id: None, limit: 100 };
    assert_eq!(store.api_audit_entries(&all).await.unwrap(), [expected]);
    let mut after = before.clone();
    after.insert(0, ("api".to_owned(), 1));
    assert_eq!(heads(ORG_A).await, after);
    assert_eq!(heads(ORG_B).await, b_before);
    assert_eq!(store.chain_heads(None).await.unwrap().len(), after.len() + b_before.len());
    // A record the store refuses (of an organization it does not hold) writes nothing.
    let mut refused = record(ORG_A, 2);
    refused.api.organization_id = org_id(0xDEAD);
    assert!(store.record_read(&refused, 0).await.is_err());
    assert_eq!(store.api_audit_entries(&all).await.unwrap().len(), 1);
    assert_eq!(heads(ORG_A).await, after);
}

/// When the record cannot be written, the read fails, returns no entries, and writes nothing.
pub async fn a_read_that_cannot_be_recorded_returns_nothing_and_writes_nothing(store: &dyn Store) {
    loaded(store).await;
    store.read_privacy_audit_logs(&query(ORG_A, 5), &record(ORG_A, 1)).await.unwrap();
    // A record the store refuses (of an organization it does not hold): the read fails whole.
    let mut refused = record(ORG_A, 2);
    refused.api.organization_id = org_id(0xDEAD);
    let result = store.read_privacy_audit_logs(&query(ORG_A, 5), &refused).await;
    assert!(result.is_err(), "{result:?}");
    // A tool record refused fails the read too, and its API entry is not kept.
    let mut again = record(ORG_A, 3);
    again.tool = Some(ToolAuditEntry {
        id: Uuid::from_u128(0x7002),
        at: t(1),
        organization_id: org_id(0xDEAD),
        token_id: again.api.token_id,
        user_id: again.api.user_id,
        tool_name: "list_privacy_audit_logs".into(),
        arguments: serde_json::json!({}),
        entries_returned: 0,
        request_id: "req".into(),
    });
    let result = store.read_privacy_audit_logs(&query(ORG_A, 1), &again).await;
    assert!(result.is_err(), "{result:?}");
    let all = AuditListQuery { organization_id: None, limit: 100 };
    let api: Vec<Uuid> =
        store.api_audit_entries(&all).await.unwrap().iter().map(|e| e.id).collect();
    assert_eq!(api, [record(ORG_A, 1).api.id]);
    assert!(store.tool_audit_entries(&all).await.unwrap().is_empty());
}

/// An entry's id is unique within its organization's ledger only: the same id in another
/// organization's ledger is another entry.
pub async fn a_ledger_entry_id_is_unique_within_its_organization(store: &dyn Store) {
    loaded(store).await;
    let fresh = ledger_entry(ORG_A, 50, t(5000));
    let mut elsewhere = ledger_entry(ORG_A, 1, t(5000));
    elsewhere.organization_id = org_id(ORG_B);
    let doc = ImportDocument { privacy_audit_logs: vec![fresh, elsewhere], ..Default::default() };
    store.import(&doc).await.unwrap();
    assert_eq!(read(store, &query(ORG_A, 100), 1).await.len(), 13);
    assert_eq!(read(store, &query(ORG_B, 100), 2).await.len(), 5);
}

pub(super) fn key_claim(org: u128, key: &str, fingerprint: u8, now: i64) -> KeyClaim {
    KeyClaim {
        organization_id: org_id(org),
        key: key.into(),
        fingerprint: [fingerprint; 32],
        now: t(now),
        expires_at: t(now + 86_400),
    }
}

pub(super) fn accesses(claim: &KeyClaim, entries: Vec<LedgerEntry>, n: u128) -> AccessesWrite {
    let org = claim.organization_id.uuid().as_u128();
    let mut record = record(org, n);
    record.api.operation = "recordPrivacyAccesses".into();
    AccessesWrite {
        entries,
        record,
        claim: claim.clone(),
        response: StoredResponse { status: 201, body: format!("{{\"n\":{n}}}").into_bytes() },
    }
}

/// A key is free until the accesses of its request are recorded, which stores it with the
/// response: then the same request finds the response to replay, another request with the key
/// finds it used, and a write with it writes nothing; keys are per organization.
pub async fn an_idempotency_key_is_granted_once_then_replayed(store: &dyn Store) {
    loaded(store).await;
    let claim = key_claim(ORG_A, "key-1", 1, 100);
    assert_eq!(store.idempotency_key(&claim).await.unwrap(), Claim::Granted);
    assert_eq!(
        store.idempotency_key(&claim).await.unwrap(),
        Claim::Granted,
        "a look writes nothing"
    );
    let write = accesses(&claim, vec![ledger_entry(ORG_A, 40, t(90))], 1);
    assert_eq!(store.record_privacy_accesses(&write).await.unwrap().claim, Claim::Granted);

    let again = key_claim(ORG_A, "key-1", 1, 101);
    assert_eq!(
        store.idempotency_key(&again).await.unwrap(),
        Claim::Completed(write.response.clone())
    );
    let other = key_claim(ORG_A, "key-1", 2, 101);
    assert_eq!(store.idempotency_key(&other).await.unwrap(), Claim::OtherRequest);
    let elsewhere = key_claim(ORG_B, "key-1", 2, 101);
    assert_eq!(store.idempotency_key(&elsewhere).await.unwrap(), Claim::Granted);
    // Writing again with the key writes nothing and says what the key holds.
    let twice = accesses(&again, vec![ledger_entry(ORG_A, 44, t(90))], 2);
    assert_eq!(
        store.record_privacy_accesses(&twice).await.unwrap(),
        crate::AccessesWritten::refused(Claim::Completed(write.response.clone())),
        "nothing written"
    );
    let reused = accesses(&other, vec![ledger_entry(ORG_A, 45, t(90))], 3);
    assert_eq!(store.record_privacy_accesses(&reused).await.unwrap().claim, Claim::OtherRequest);

    let entries = read(store, &query(ORG_A, 100), 4).await;
    assert_eq!(entries.len(), 13);
    assert!(entries.iter().any(|e| e.id == entry_id(ORG_A, 40)));
    let all = AuditListQuery { organization_id: Some(org_id(ORG_A)), limit: 10 };
    let recorded = store.api_audit_entries(&all).await.unwrap();
    let writes: Vec<_> =
        recorded.iter().filter(|e| e.operation == "recordPrivacyAccesses").collect();
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].entries_returned, 1);
}

/// An expired key is free again: written anew over the old, and purged once expired.
pub async fn idempotency_keys_expire_and_are_purged(store: &dyn Store) {
    loaded(store).await;
    let claim = key_claim(ORG_A, "key-2", 1, 100);
    let write = accesses(&claim, vec![ledger_entry(ORG_A, 41, t(90))], 3);
    assert_eq!(store.record_privacy_accesses(&write).await.unwrap().claim, Claim::Granted);
    let next_day = key_claim(ORG_A, "key-2", 2, 100 + 86_400);
    assert_eq!(store.idempotency_key(&next_day).await.unwrap(), Claim::Granted);
    let anew = accesses(&next_day, vec![ledger_entry(ORG_A, 42, t(90))], 4);
    assert_eq!(store.record_privacy_accesses(&anew).await.unwrap().claim, Claim::Granted);
    let after = key_claim(ORG_A, "key-2", 2, 101 + 86_400);
    assert_eq!(store.idempotency_key(&after).await.unwrap(), Claim::Completed(anew.response));
    assert_eq!(read(store, &query(ORG_A, 100), 5).await.len(), 14);

    assert_eq!(store.purge_idempotency_keys(t(100 + 2 * 86_400 - 1)).await.unwrap(), 0);
    assert_eq!(store.purge_idempotency_keys(t(100 + 2 * 86_400)).await.unwrap(), 1);
    let later = key_claim(ORG_A, "key-2", 3, 100 + 2 * 86_400);
    assert_eq!(store.idempotency_key(&later).await.unwrap(), Claim::Granted);
}

/// Recorded accesses are written whole or not at all: an entry whose id is taken, or that
/// appears twice, writes nothing (no entry, no audit record, no key), and the key is free for
/// the request's retry at once.
pub async fn recorded_accesses_are_written_whole_or_not_at_all(store: &dyn Store) {
    loaded(store).await;
    let claim = key_claim(ORG_A, "key-3", 1, 100);
    let fresh = ledger_entry(ORG_A, 43, t(90));
    let taken = ledger_entry(ORG_A, 1, t(90));
    for entries in [vec![fresh.clone(), taken], vec![fresh.clone(), fresh.clone()]] {
        let result = store.record_privacy_accesses(&accesses(&claim, entries, 6)).await;
        assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
    }
    assert_eq!(read(store, &query(ORG_A, 100), 7).await.len(), 12);
    let all = AuditListQuery { organization_id: Some(org_id(ORG_A)), limit: 100 };
    let recorded = store.api_audit_entries(&all).await.unwrap();
    assert!(recorded.iter().all(|e| e.operation != "recordPrivacyAccesses"));
    let again = key_claim(ORG_A, "key-3", 1, 101);
    assert_eq!(store.idempotency_key(&again).await.unwrap(), Claim::Granted, "nothing sticks");
    let write = accesses(&again, vec![fresh], 8);
    assert_eq!(store.record_privacy_accesses(&write).await.unwrap().claim, Claim::Granted);
}

/// Of concurrent writes with one key, exactly one writes; the others find it being written or
/// written, and write nothing.
pub async fn concurrent_writes_with_a_key_write_once(store: &dyn Store) {
    loaded(store).await;
    let claim = key_claim(ORG_A, "key-4", 1, 100);
    let writes: Vec<_> = (0..8u128)
        .map(|n| accesses(&claim, vec![ledger_entry(ORG_A, 50 + n, t(90))], 10 + n))
        .collect();
    let results = futures_join_all(writes.iter().map(|w| store.record_privacy_accesses(w))).await;
    let results: Vec<_> = results.into_iter().map(|r| r.map(|w| w.claim)).collect();
    let granted = results.iter().filter(|r| matches!(r, Ok(Claim::Granted))).count();
    assert_eq!(granted, 1, "{results:?}");
    assert!(
        results.iter().all(|r| matches!(
            r,
            Ok(Claim::Granted | Claim::InFlight { .. } | Claim::Completed(_))
        )),
        "{results:?}"
    );
    assert_eq!(read(store, &query(ORG_A, 100), 20).await.len(), 13, "one batch written");
}

/// Operators list audit entries newest first, of one organization or all, up to a limit.
pub async fn audit_entries_are_listed_newest_first_by_organization(store: &dyn Store) {
    loaded(store).await;
    for n in 1..=3 {
        read(store, &query(ORG_A, 1), n).await;
    }
    read(store, &query(ORG_B, 1), 4).await;
    let list =
        |org: Option<u128>, limit| AuditListQuery { organization_id: org.map(org_id), limit };
    let ids = |entries: Vec<AuditEntry>| entries.into_iter().map(|e| e.id).collect::<Vec<_>>();
    let a: Vec<Uuid> = [3, 2, 1].map(|n| record(ORG_A, n).api.id).to_vec();
    assert_eq!(ids(store.api_audit_entries(&list(Some(ORG_A), 100)).await.unwrap()), a);
    assert_eq!(ids(store.api_audit_entries(&list(Some(ORG_A), 2)).await.unwrap()), a[..2]);
    assert_eq!(
        ids(store.api_audit_entries(&list(Some(ORG_B), 100)).await.unwrap()),
        [record(ORG_B, 4).api.id]
    );
    assert_eq!(store.api_audit_entries(&list(None, 100)).await.unwrap().len(), 4);
}
