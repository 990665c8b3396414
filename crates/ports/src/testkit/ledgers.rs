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
    assert_eq!(store.record_privacy_accesses(&write).await.unwrap(), Claim::Granted);

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
        Claim::Completed(write.response.clone())
    );
    let reused = accesses(&other, vec![ledger_entry(ORG_A, 45, t(90))], 3);
    assert_eq!(store.record_privacy_accesses(&reused).await.unwrap(), Claim::OtherRequest);

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
    assert_eq!(store.record_privacy_accesses(&write).await.unwrap(), Claim::Granted);
    let next_day = key_claim(ORG_A, "key-2", 2, 100 + 86_400);
    assert_eq!(store.idempotency_key(&next_day).await.unwrap(), Claim::Granted);
    let anew = accesses(&next_day, vec![ledger_entry(ORG_A, 42, t(90))], 4);
    assert_eq!(store.record_privacy_accesses(&anew).await.unwrap(), Claim::Granted);
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
    assert_eq!(store.record_privacy_accesses(&write).await.unwrap(), Claim::Granted);
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

/// A month's review facts: the month's entries counted per account, slot, category and kind
/// of subject, from its first instant and up to the next month's; the distinct people per
/// account; each address with whether the month and the month before used it; the month's
/// downloads, and its exports of the ledger from the API audit ledger. Nothing of another
/// organization.
pub async fn a_months_review_counts_its_entries_by_account_and_slot(store: &dyn Store) {
    use crate::review::{AddressSeen, ReviewQuery, SlotCount};
    use recruit_domain::model::{ActivityCategory, DataSubject};
    use recruit_domain::{AccountId, Id};
    loaded(store).await;
    let at = |s: &str| s.parse::<Timestamp>().unwrap();
    let (x, y) = (Uuid::from_u128(0x51), Uuid::from_u128(0x52));
    let member =
        DataSubject::Employee { user: super::user_id(ORG_B, recruit_domain::Role::Member) };
    let candidate = DataSubject::Candidate { candidate: candidate_id(ORG_B, 1) };
    let bulk = DataSubject::Bulk {
        bulk_count: Some(5),
        query: recruit_domain::model::BulkQuery::Scope {
            scope: recruit_domain::model::BulkScope::AllOrgCandidates,
        },
    };
    let entry =
        |n: u128, time: &str, account, category: &str, subject: &DataSubject, ips: &[&str]| {
            let mut e = ledger_entry(ORG_B, 100 + n, at(time));
            e.entry.account_id = AccountId::from_uuid(account);
            e.entry.activity_category = ActivityCategory::from(category);
            e.entry.data_subject = subject.clone();
            e.entry.ip_addresses = ips.iter().map(|s| (*s).to_owned()).collect();
            e
        };
    let download =
        entry(4, "2026-02-03T23:00:00Z", y, "DOWNLOAD", &candidate, &["10.0.0.2", "10.0.0.3"]);
    let doc = ImportDocument {
        privacy_audit_logs: vec![
            entry(1, "2026-02-02T10:05:00Z", x, "READ", &member, &["10.0.0.1"]),
            entry(2, "2026-02-02T10:14:59Z", x, "READ", &member, &["10.0.0.1"]),
            entry(3, "2026-02-02T10:15:00Z", x, "BULK_READ", &bulk, &["10.0.0.1"]),
            download.clone(),
            entry(5, "2026-01-20T08:00:00Z", y, "READ", &member, &["10.0.0.2", "10.0.0.9"]),
            entry(6, "2026-03-01T00:00:00Z", x, "READ", &member, &["10.0.0.8"]),
            entry(7, "2026-02-01T00:00:00Z", y, "READ", &member, &["10.0.0.2"]),
        ],
        ..ImportDocument::default()
    };
    store.import(&doc).await.unwrap();
    let mut export = record(ORG_B, 60);
    export.api.at = at("2026-02-10T12:00:00Z");
    export.api.operation = "exportPrivacyAuditLogs".into();
    store.record_read(&export, 7).await.unwrap();
    let mut list = record(ORG_B, 61);
    list.api.at = at("2026-02-11T12:00:00Z");
    store.record_read(&list, 0).await.unwrap();
    let mut elsewhere = record(ORG_A, 62);
    elsewhere.api.at = at("2026-02-12T12:00:00Z");
    elsewhere.api.operation = "exportPrivacyAuditLogs".into();
    store.record_read(&elsewhere, 1).await.unwrap();

    let query = ReviewQuery {
        organization: Id::from_uuid(Uuid::from_u128(ORG_B)),
        month: "2026-02".into(),
        from: at("2026-02-01T00:00:00Z"),
        to: at("2026-03-01T00:00:00Z"),
        // After the world's own entries, all on 2026-01-01.
        previous_from: at("2026-01-10T00:00:00Z"),
        slot_micros: 900_000_000,
        download: "DOWNLOAD",
        ledger_export: "exportPrivacyAuditLogs",
    };
    let mut facts = store.review_facts(&query).await.unwrap();
    let slot = |time: &str| at(time).unix_micros() / 900_000_000;
    let count = |account, time, category: &str, bulk, entries, records| {
        SlotCount::new(account, slot(time), category.into(), bulk, entries, records)
    };
    facts.slots.sort_by_key(|s| (s.account, s.slot));
    assert_eq!(
        facts.slots,
        [
            count(x, "2026-02-02T10:00:00Z", "READ", "EMPLOYEE", 2, 0),
            count(x, "2026-02-02T10:15:00Z", "BULK_READ", "BULK", 1, 5),
            count(y, "2026-02-01T00:00:00Z", "READ", "EMPLOYEE", 1, 0),
            count(y, "2026-02-03T23:00:00Z", "DOWNLOAD", "CANDIDATE", 1, 0),
        ]
    );
    assert!(facts.slots[1].bulk_subject && !facts.slots[3].bulk_subject);
    facts.subjects.sort();
    assert_eq!(facts.subjects, [(x, 1), (y, 2)], "a bulk subject names no one person");
    facts.addresses.sort_by(|a, b| (a.account, &a.address).cmp(&(b.account, &b.address)));
    let seen = |account, address: &str, in_month, before| AddressSeen {
        account,
        address: address.into(),
        in_month,
        before,
    };
    assert_eq!(
        facts.addresses,
        [
            seen(x, "10.0.0.1", true, false),
            seen(y, "10.0.0.2", true, true),
            seen(y, "10.0.0.3", true, false),
            seen(y, "10.0.0.9", false, true),
        ]
    );
    assert_eq!(facts.downloads, [download.entry]);
    export.api.entries_returned = 7;
    assert_eq!(facts.ledger_exports, [export.api]);
    // The month's first linked entry, whichever was recorded first.
    let chain = crate::chain::ChainPage {
        ledger: recruit_domain::chain::Ledger::Privacy,
        organization: Id::from_uuid(Uuid::from_u128(ORG_B)),
        from: crate::chain::ChainFrom::Linked(None),
        limit: 1000,
    };
    let month: Vec<Uuid> = doc.privacy_audit_logs[..4]
        .iter()
        .chain([&doc.privacy_audit_logs[6]])
        .map(|e| e.entry.id.uuid())
        .collect();
    let first =
        store.chain_entries(chain).await.unwrap().into_iter().find(|e| month.contains(&e.id));
    assert_eq!(facts.first_position, first.and_then(|e| e.position));
    assert!(facts.first_position.is_some());
    assert_eq!((facts.decisions, facts.sign_off), (vec![], None), "nothing decided yet");
}

/// A reviewer's decisions on a month's downloads: written with the request's record, only for
/// a download of the organization within the month, not again when the latest decision says
/// the same; listed in the month's facts in the order made. A month's sign-off: written once
/// with its record; a second is not written, and the first is returned.
pub async fn a_reviews_decisions_and_sign_off_are_kept_with_their_records(store: &dyn Store) {
    use crate::review::{
        Decided, DecisionWrite, DownloadDecision, ReviewQuery, SignOffRecord, SignOffWrite,
        SignedOff,
    };
    use recruit_domain::Id;
    use recruit_domain::chain::Ledger;
    use recruit_domain::model::ActivityCategory;
    loaded(store).await;
    let at = |s: &str| s.parse::<Timestamp>().unwrap();
    let entry = |n: u128, time: &str, category: &str| {
        let mut e = ledger_entry(ORG_B, 200 + n, at(time));
        e.entry.activity_category = ActivityCategory::from(category);
        e
    };
    let download = entry(1, "2026-02-03T23:00:00Z", "DOWNLOAD");
    let read = entry(2, "2026-02-04T09:00:00Z", "READ");
    let later = entry(3, "2026-03-01T00:00:00Z", "DOWNLOAD");
    let elsewhere = {
        let mut e = ledger_entry(ORG_A, 204, at("2026-02-05T00:00:00Z"));
        e.entry.activity_category = ActivityCategory::Download;
        e
    };
    let doc = ImportDocument {
        privacy_audit_logs: vec![download.clone(), read.clone(), later.clone(), elsewhere.clone()],
        ..ImportDocument::default()
    };
    store.import(&doc).await.unwrap();
    let org = Id::from_uuid(Uuid::from_u128(ORG_B));
    let api_head = async || {
        let heads = store.chain_heads(Some(org)).await.unwrap();
        heads.into_iter().find(|h| h.ledger == Ledger::Api.as_str()).map_or(0, |h| h.position)
    };
    let decision = |n: u128, entry: &crate::LedgerEntry, status: &str, reason: &str| {
        let record = record(ORG_B, 70 + n);
        DecisionWrite {
            decision: DownloadDecision {
                id: Uuid::from_u128(ORG_B << 64 | 0x900 | n),
                organization_id: org,
                month: "2026-02".into(),
                entry_id: entry.entry.id,
                status: status.into(),
                reason: reason.into(),
                user_id: record.api.user_id,
                token_id: record.api.token_id,
                at: at("2026-03-02T09:00:00Z")
                    .checked_add_duration(std::time::Duration::from_secs(n as u64))
                    .unwrap(),
                request_id: format!("req-{n}"),
            },
            record,
            from: at("2026-02-01T00:00:00Z"),
            to: at("2026-03-01T00:00:00Z"),
            download: "DOWNLOAD",
        }
    };
    let head = api_head().await;
    let asked = decision(1, &download, "EXPLANATION_REQUESTED", "Why a whole file?");
    assert_eq!(store.decide_download(&asked).await.unwrap(), Decided::Written);
    assert_eq!(api_head().await, head + 1, "the decision's record is linked in the API ledger");
    let again = decision(2, &download, "EXPLANATION_REQUESTED", "Why a whole file?");
    assert_eq!(
        store.decide_download(&again).await.unwrap(),
        Decided::Unchanged(asked.decision.clone())
    );
    assert_eq!(api_head().await, head + 1, "an unchanged decision writes nothing");
    let confirmed = decision(3, &download, "CONFIRMED", "The hiring committee's packet.");
    assert_eq!(store.decide_download(&confirmed).await.unwrap(), Decided::Written);
    for (n, other, why) in [
        (4, &read, "not a download"),
        (5, &later, "a download of the next month"),
        (6, &elsewhere, "another organization's download"),
    ] {
        let wrong = decision(n, other, "CONFIRMED", "ok");
        let refused = store.decide_download(&wrong).await;
        assert!(matches!(refused, Err(StoreError::NotFound)), "{why}: {refused:?}");
    }
    assert_eq!(api_head().await, head + 2);
    let entries = store
        .api_audit_entries(&AuditListQuery { organization_id: Some(org), limit: 100 })
        .await
        .unwrap();
    let recorded: Vec<Uuid> = entries.iter().map(|e| e.id).collect();
    assert!(recorded.contains(&asked.record.api.id) && recorded.contains(&confirmed.record.api.id));
    assert!(!recorded.contains(&again.record.api.id));

    let signed = |n: u128, note: &str| {
        let record = record(ORG_B, 80 + n);
        SignOffWrite {
            sign_off: SignOffRecord {
                organization_id: org,
                month: "2026-02".into(),
                user_id: record.api.user_id,
                at: at("2026-03-03T09:00:00Z"),
                note: Some(note.into()),
                body: serde_json::json!({ "note": note, "figures": { "downloads": 1 } }),
            },
            record,
        }
    };
    let first = signed(1, "All confirmed.");
    assert_eq!(store.sign_off(&first).await.unwrap(), SignedOff::Written);
    let second = signed(2, "Once more.");
    assert_eq!(store.sign_off(&second).await.unwrap(), SignedOff::Existing(first.sign_off.clone()));
    assert_eq!(api_head().await, head + 3, "only the first sign-off is recorded");

    let query = ReviewQuery {
        organization: org,
        month: "2026-02".into(),
        from: at("2026-02-01T00:00:00Z"),
        to: at("2026-03-01T00:00:00Z"),
        previous_from: at("2026-01-10T00:00:00Z"),
        slot_micros: 3_600_000_000,
        download: "DOWNLOAD",
        ledger_export: "exportPrivacyAuditLogs",
    };
    let facts = store.review_facts(&query).await.unwrap();
    assert_eq!(facts.decisions, [asked.decision, confirmed.decision]);
    assert_eq!(facts.sign_off, Some(first.sign_off));
    let other =
        store.review_facts(&ReviewQuery { month: "2026-03".into(), ..query }).await.unwrap();
    assert_eq!((other.decisions, other.sign_off), (vec![], None));
}

/// Bulk counts are what clients say: a month's review adds them up to the largest count a
/// store keeps, never failing on two of the largest.
pub async fn a_months_bulk_counts_add_up_to_the_largest_without_failing(store: &dyn Store) {
    use crate::review::ReviewQuery;
    use recruit_domain::Id;
    use recruit_domain::model::{ActivityCategory, BulkQuery, BulkScope, DataSubject};
    loaded(store).await;
    let at = |s: &str| s.parse::<Timestamp>().unwrap();
    let huge = |n: u128| {
        let mut e = ledger_entry(ORG_B, 300 + n, at("2026-04-02T10:00:00Z"));
        e.entry.activity_category = ActivityCategory::from("BULK_READ");
        e.entry.data_subject = DataSubject::Bulk {
            bulk_count: Some(i64::MAX as u64),
            query: BulkQuery::Scope { scope: BulkScope::AllOrgCandidates },
        };
        e.entry.account_id = recruit_domain::AccountId::from_uuid(Uuid::from_u128(0x77));
        e
    };
    let doc = ImportDocument { privacy_audit_logs: vec![huge(1), huge(2)], ..Default::default() };
    store.import(&doc).await.unwrap();
    let query = ReviewQuery {
        organization: Id::from_uuid(Uuid::from_u128(ORG_B)),
        month: "2026-04".into(),
        from: at("2026-04-01T00:00:00Z"),
        to: at("2026-05-01T00:00:00Z"),
        previous_from: at("2026-03-01T00:00:00Z"),
        slot_micros: 3_600_000_000,
        download: "DOWNLOAD",
        ledger_export: "exportPrivacyAuditLogs",
    };
    let facts = store.review_facts(&query).await.unwrap();
    assert_eq!(facts.slots.len(), 1);
    assert_eq!((facts.slots[0].entries, facts.slots[0].bulk_records), (2, i64::MAX as u64));
}
