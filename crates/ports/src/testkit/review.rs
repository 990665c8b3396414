//! Contract cases of the monthly review's facts and records: what a month's entries count,
//! whichever way a store counts them, and the reviewer's decisions and sign-off.

use recruit_domain::{Timestamp, Uuid};

use crate::{AuditListQuery, ImportDocument, Store, StoreError};

use super::{ORG_A, ORG_B, candidate_id, ledger_entry, loaded, record};

/// A month's review facts: the month's entries counted per account, slot, category and kind
/// of subject, from its first instant and up to the next month's; the distinct people per
/// account; the addresses the month used and the month before did not; the month's
/// downloads, and its exports of the ledger from the API audit ledger. Nothing of another
/// organization.
pub async fn a_months_review_counts_its_entries_by_account_and_slot(store: &dyn Store) {
    use crate::review::SlotCount;
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

    // The addresses seen from after the world's own entries, all on 2026-01-01.
    let query = month_query(
        Id::from_uuid(Uuid::from_u128(ORG_B)),
        "2026-02",
        (at("2026-01-10T00:00:00Z"), at("2026-02-01T00:00:00Z"), at("2026-03-01T00:00:00Z")),
        900_000_000,
    );
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
    facts.new_addresses.sort();
    let new = |account, address: &str| (account, address.to_owned());
    // 10.0.0.2 was used the month before, 10.0.0.9 only then.
    assert_eq!(facts.new_addresses, [new(x, "10.0.0.1"), new(y, "10.0.0.3")]);
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
        Author, Decided, DecisionWrite, DownloadDecision, ReviewQuery, RulesWrite, SignOffRecord,
        SignOffWrite, SignedOff,
    };
    use recruit_domain::Id;
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
            author: Author::Reviewer,
        }
    };
    // The organization's rules, replaced with their record; an unknown organization's are not.
    let before = super::api_head(store, ORG_B).await;
    let rules = recruit_domain::model::ReviewRules {
        downloads: 2,
        holidays: vec!["2026-02-16".parse().unwrap()],
        ..recruit_domain::model::ReviewRules::DEFAULT
    };
    let write = RulesWrite { organization: org, rules: rules.clone(), record: record(ORG_B, 60) };
    store.set_review_rules(&write).await.unwrap();
    assert_eq!(store.organization(org).await.unwrap().review_rules, rules);
    assert_eq!(super::api_head(store, ORG_B).await, before + 1, "the change is on the record");
    let nowhere = RulesWrite { organization: Id::from_uuid(Uuid::from_u128(0xdead)), ..write };
    let refused = store.set_review_rules(&nowhere).await;
    assert!(matches!(refused, Err(StoreError::NotFound)), "{refused:?}");
    assert_eq!(super::api_head(store, ORG_B).await, before + 1);
    // Each account's accesses over a window: February holds the download and the read.
    let february = (at("2026-02-01T00:00:00Z"), at("2026-03-01T00:00:00Z"));
    let mut volumes = store.account_volumes(org, february.0, february.1).await.unwrap();
    volumes.sort();
    let mut expected =
        vec![(download.entry.account_id.uuid(), 1), (read.entry.account_id.uuid(), 1)];
    expected.sort();
    assert_eq!(volumes, expected, "the window's accounts alone, of the organization alone");
    let head = super::api_head(store, ORG_B).await;
    // An explanation before anyone asked for one is refused.
    let downloader: recruit_domain::UserId = Id::from_uuid(download.entry.account_id.uuid());
    let explained = |n: u128, text: &str| {
        let mut w = decision(n, &download, "EXPLAINED", text);
        w.decision.user_id = downloader;
        w.author = Author::Downloader { asked: "EXPLANATION_REQUESTED" };
        w
    };
    assert_eq!(store.decide_download(&explained(10, "Early.")).await.unwrap(), Decided::NotAsked);
    let asked = decision(1, &download, "EXPLANATION_REQUESTED", "Why a whole file?");
    assert_eq!(store.decide_download(&asked).await.unwrap(), Decided::Written);
    assert_eq!(
        super::api_head(store, ORG_B).await,
        head + 1,
        "the decision's record is linked in the API ledger"
    );
    // Only the person who downloaded explains.
    let mut stranger = explained(11, "Not mine.");
    stranger.decision.user_id = record(ORG_B, 99).api.user_id;
    assert_eq!(store.decide_download(&stranger).await.unwrap(), Decided::NotAsked);
    let answer = explained(12, "The committee asked for the whole file.");
    assert_eq!(store.decide_download(&answer).await.unwrap(), Decided::Written);
    assert_eq!(
        store.decide_download(&explained(13, "Again.")).await.unwrap(),
        Decided::NotAsked,
        "once explained, the request is answered"
    );
    let retried = explained(15, "The committee asked for the whole file.");
    assert_eq!(
        store.decide_download(&retried).await.unwrap(),
        Decided::Unchanged(answer.decision.clone()),
        "the same explanation again is the one kept"
    );
    let asked_again = decision(14, &download, "EXPLANATION_REQUESTED", "Which committee?");
    assert_eq!(store.decide_download(&asked_again).await.unwrap(), Decided::Written);
    assert_eq!(super::api_head(store, ORG_B).await, head + 3);
    let again = decision(2, &download, "EXPLANATION_REQUESTED", "Which committee?");
    assert_eq!(
        store.decide_download(&again).await.unwrap(),
        Decided::Unchanged(asked_again.decision.clone())
    );
    assert_eq!(
        super::api_head(store, ORG_B).await,
        head + 3,
        "an unchanged decision writes nothing"
    );
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
    // The decider's own download: another owner decides on it, and nothing is written.
    let mut own = decision(7, &download, "CONFIRMED", "My own export.");
    own.decision.user_id = Id::from_uuid(download.entry.account_id.uuid());
    assert_eq!(store.decide_download(&own).await.unwrap(), Decided::OwnDownload);
    assert_eq!(super::api_head(store, ORG_B).await, head + 4);
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
    assert_eq!(
        super::api_head(store, ORG_B).await,
        head + 5,
        "only the first sign-off is recorded"
    );

    let query = month_query(
        org,
        "2026-02",
        (at("2026-01-10T00:00:00Z"), at("2026-02-01T00:00:00Z"), at("2026-03-01T00:00:00Z")),
        3_600_000_000,
    );
    let facts = store.review_facts(&query).await.unwrap();
    // In the order they were made (by time: `decision(n, …)` is made n seconds after 09:00).
    let decisions = [asked.decision, confirmed.decision, answer.decision, asked_again.decision];
    assert_eq!(facts.decisions, decisions);
    assert_eq!(facts.sign_off, Some(first.sign_off));
    let other =
        store.review_facts(&ReviewQuery { month: "2026-03".into(), ..query }).await.unwrap();
    assert_eq!((other.decisions, other.sign_off), (vec![], None));
}

/// Bulk counts are what clients say: a month's review adds them up to the largest count a
/// store keeps, never failing on two of the largest.
pub async fn a_months_bulk_counts_add_up_to_the_largest_without_failing(store: &dyn Store) {
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
    let query = month_query(
        Id::from_uuid(Uuid::from_u128(ORG_B)),
        "2026-04",
        (at("2026-03-01T00:00:00Z"), at("2026-04-01T00:00:00Z"), at("2026-05-01T00:00:00Z")),
        3_600_000_000,
    );
    let facts = store.review_facts(&query).await.unwrap();
    assert_eq!(facts.slots.len(), 1);
    assert_eq!((facts.slots[0].entries, facts.slots[0].bulk_records), (2, i64::MAX as u64));
}

/// A month's facts are those of its entries whichever way a store counts them (a store may
/// keep counts as entries are recorded): in any zone's month (whole, half and quarter hour
/// offsets, east and west), across UTC months, at any slot width, for entries at and around
/// every edge, written in several statements; and for windows no kept count serves (slots not
/// on quarter hours, a window inside one UTC month).
pub async fn a_months_facts_are_those_of_its_entries_in_every_zone(store: &dyn Store) {
    use crate::review::SlotCount;
    use recruit_domain::model::DataSubject;
    use recruit_domain::{AccountId, Id};
    use std::collections::{BTreeMap, BTreeSet};
    loaded(store).await;
    let at = |s: &str| s.parse::<Timestamp>().unwrap();
    let micros = |t: Timestamp| t.unix_micros();
    let from_micros = |m: i64| Timestamp::from_unix_micros(m).unwrap();
    const HOUR: i64 = 3_600_000_000;
    let offsets = [0, 9 * HOUR, 5 * HOUR + HOUR * 3 / 4, -4 * HOUR];
    let months = ["2026-05-01", "2026-06-01", "2026-07-01", "2026-08-01"]
        .map(|d| micros(at(&format!("{d}T00:00:00Z"))));
    // Entries at every month's edge in every zone, a microsecond either side, and minutes
    // and hours into it; and spread over the months between.
    let mut times = vec![];
    for month in months {
        for offset in offsets {
            for delta in [-1, 0, 1, -420_000_000, 780_000_000, 3 * HOUR] {
                times.push(month - offset + delta);
            }
        }
    }
    let mut seed: u64 = 0x5EED;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let span = u64::try_from(months[3] - months[0]).unwrap();
    for _ in 0..160 {
        times.push(months[0] - 12 * HOUR + i64::try_from(next(span)).unwrap());
    }
    let addresses = ["10.1.0.1", "10.1.0.2", "10.1.0.3", "2001:db8::a", "2001:db8::b"];
    let entries: Vec<crate::LedgerEntry> = times
        .iter()
        .enumerate()
        .map(|(i, &time)| {
            let n = u128::try_from(i).unwrap();
            let mut e = ledger_entry(ORG_B, n, from_micros(time));
            e.entry.id = Id::from_uuid(Uuid::from_u128(ORG_B << 64 | 0x7_0000 | n));
            e.entry.account_id =
                AccountId::from_uuid(Uuid::from_u128(0xACC0 + u128::from(next(3))));
            let first = usize::try_from(next(5)).unwrap();
            e.entry.ip_addresses =
                addresses[first..(first + 2).min(5)].iter().map(|a| (*a).to_owned()).collect();
            e
        })
        .collect();
    // In three statements: the later ones add to what the earlier ones counted.
    for part in entries.chunks(entries.len() / 3 + 1) {
        let doc = ImportDocument { privacy_audit_logs: part.to_vec(), ..Default::default() };
        store.import(&doc).await.unwrap();
    }

    let check = async |from: i64, to: i64, previous: i64, width: i64| {
        let query = month_query(
            Id::from_uuid(Uuid::from_u128(ORG_B)),
            "2026-06",
            (from_micros(previous), from_micros(from), from_micros(to)),
            width,
        );
        let facts = store.review_facts(&query).await.unwrap();
        let within =
            |e: &&crate::LedgerEntry, a: i64, b: i64| (a..b).contains(&micros(e.entry.access_time));
        let month: Vec<&crate::LedgerEntry> =
            entries.iter().filter(|e| within(e, from, to)).collect();
        let mut slots: BTreeMap<(Uuid, i64, String, &str), (u64, u64)> = BTreeMap::new();
        let mut subjects: BTreeMap<Uuid, BTreeSet<Uuid>> = BTreeMap::new();
        for e in &month {
            let (kind, person, records) = match &e.entry.data_subject {
                DataSubject::Employee { user } => ("EMPLOYEE", Some(user.uuid()), 0),
                DataSubject::Candidate { candidate } => ("CANDIDATE", Some(candidate.uuid()), 0),
                DataSubject::Bulk { bulk_count, .. } => ("BULK", None, bulk_count.unwrap_or(0)),
            };
            let account = e.entry.account_id.uuid();
            let key = (
                account,
                micros(e.entry.access_time) / width,
                e.entry.activity_category.to_string(),
                kind,
            );
            let slot = slots.entry(key).or_default();
            *slot = (slot.0 + 1, slot.1 + records);
            if let Some(person) = person {
                subjects.entry(account).or_default().insert(person);
            }
        }
        // What the service reads: the sums per account, slot, category and bulk or not, as
        // a store may count a slot in several parts.
        let sums = |counts: Vec<SlotCount>| {
            let mut sums: BTreeMap<(Uuid, i64, String, bool), (u64, u64)> = BTreeMap::new();
            for c in counts {
                let sum = sums.entry((c.account, c.slot, c.category, c.bulk_subject)).or_default();
                *sum = (sum.0 + c.entries, sum.1.saturating_add(c.bulk_records));
            }
            sums
        };
        let expected = sums(
            slots
                .into_iter()
                .map(|((account, slot, category, kind), (n, records))| {
                    SlotCount::new(account, slot, category, kind, n, records)
                })
                .collect(),
        );
        let got = sums(facts.slots.clone());
        let window =
            format!("[{}, {}) after {} by {width}", query.from, query.to, query.previous_from);
        assert_eq!(got, expected, "slots of {window}");
        let mut got = facts.subjects.clone();
        got.sort();
        let expected: Vec<(Uuid, u64)> =
            subjects.into_iter().map(|(a, s)| (a, s.len() as u64)).collect();
        assert_eq!(got, expected, "subjects of {window}");
        let used = |a: i64, b: i64| -> BTreeSet<(Uuid, String)> {
            entries
                .iter()
                .filter(|e| within(e, a, b))
                .flat_map(|e| {
                    e.entry.ip_addresses.iter().map(|ip| (e.entry.account_id.uuid(), ip.clone()))
                })
                .collect()
        };
        let before = used(previous, from);
        let expected: Vec<(Uuid, String)> =
            used(from, to).into_iter().filter(|a| !before.contains(a)).collect();
        let got: Vec<(Uuid, String)> =
            facts.new_addresses.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
        assert_eq!(got, expected, "new addresses of {window}");
        assert!(!expected.is_empty() || previous < from, "{window} tells something");
    };
    for offset in offsets {
        for m in 1..3 {
            let (previous, from, to) =
                (months[m - 1] - offset, months[m] - offset, months[m + 1] - offset);
            for width in [900_000_000, HOUR, 24 * HOUR] {
                check(from, to, previous, width).await;
            }
            check(from, to, from, HOUR).await;
        }
    }
    // Slots of ten minutes, a month from ten past midnight; and a window inside one UTC month.
    let ten = 600_000_000;
    check(months[1] + ten, months[2] + ten, months[0] + ten, ten).await;
    let day = 24 * HOUR;
    check(months[1] + 4 * day, months[1] + 24 * day, months[0] + 4 * day, HOUR).await;
    check(months[1] + 4 * day, months[1] + 24 * day, months[1] + 2 * day, 900_000_000).await;
}

/// Entries removed by retention leave the review of their month: it counts what stays, and
/// what is recorded after.
pub async fn retention_takes_its_entries_out_of_their_months_review(store: &dyn Store) {
    use recruit_domain::Id;
    use recruit_domain::chain::RetentionCut;
    loaded(store).await;
    let at = |s: &str| s.parse::<Timestamp>().unwrap();
    // The world's entries are all on 2026-01-01.
    let january = month_query(
        Id::from_uuid(Uuid::from_u128(ORG_A)),
        "2026-01",
        (at("2025-12-01T00:00:00Z"), at("2026-01-01T00:00:00Z"), at("2026-02-01T00:00:00Z")),
        3_600_000_000,
    );
    let accesses = async || {
        let facts = store.review_facts(&january).await.unwrap();
        (facts.slots.iter().map(|s| s.entries).sum::<u64>(), facts.subjects, facts.new_addresses)
    };
    assert_eq!(accesses().await.0, 12);
    let now = Timestamp::now();
    let before = Timestamp::from_unix_micros(now.unix_micros() + 1_000).unwrap();
    while Timestamp::now() <= before {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let key = recruit_domain::chain::SigningKey::from_bytes(&[6; 32]);
    let cuts: Vec<RetentionCut> = store
        .retention_plan(before)
        .await
        .unwrap()
        .iter()
        .map(|p| {
            let (ledger, org) = (p.ledger, p.organization_id);
            RetentionCut::sign(&key, ledger, org, (p.position, &p.hash), before, now)
        })
        .collect();
    store.save_retention_cuts(&cuts).await.unwrap();
    assert!(store.remove_retained(before).await.unwrap() >= 12);
    assert_eq!(accesses().await, (0, vec![], vec![]), "nothing of what went is counted");

    let mut later = ledger_entry(ORG_A, 90, at("2026-01-20T10:00:00Z"));
    later.entry.ip_addresses = vec!["10.9.0.1".into()];
    let doc = ImportDocument { privacy_audit_logs: vec![later.clone()], ..Default::default() };
    store.import(&doc).await.unwrap();
    let (n, _, new) = accesses().await;
    assert_eq!((n, new), (1, vec![(later.entry.account_id.uuid(), "10.9.0.1".to_owned())]));
}

/// The review query of `organization`'s month named `month` over `[from, to)`, with addresses
/// seen from `previous`, by slots of `slot_micros`.
fn month_query(
    organization: recruit_domain::OrganizationId,
    month: &str,
    (previous, from, to): (Timestamp, Timestamp, Timestamp),
    slot_micros: i64,
) -> crate::review::ReviewQuery {
    crate::review::ReviewQuery {
        organization,
        month: month.into(),
        from,
        to,
        previous_from: previous,
        slot_micros,
        download: "DOWNLOAD",
        ledger_export: "exportPrivacyAuditLogs",
    }
}

/// A category or an address of any length is written and counted like any other.
pub async fn a_months_review_counts_texts_of_any_length(store: &dyn Store) {
    use recruit_domain::Id;
    use recruit_domain::model::ActivityCategory;
    loaded(store).await;
    let at = |s: &str| s.parse::<Timestamp>().unwrap();
    // Texts that do not compress: an index keeps a compressed text in its row.
    let mut seed: u64 = 7;
    let mut noise = |n: usize| -> String {
        (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                format!("{:016x}", seed)
            })
            .collect()
    };
    let (category, address) = (noise(250), noise(250));
    let mut long = ledger_entry(ORG_B, 80, at("2026-07-10T10:00:00Z"));
    long.entry.activity_category = ActivityCategory::from(category.as_str());
    long.entry.ip_addresses = vec![address.clone()];
    let doc = ImportDocument { privacy_audit_logs: vec![long.clone()], ..Default::default() };
    store.import(&doc).await.unwrap();
    let window =
        (at("2026-06-01T00:00:00Z"), at("2026-07-01T00:00:00Z"), at("2026-08-01T00:00:00Z"));
    let query =
        month_query(Id::from_uuid(Uuid::from_u128(ORG_B)), "2026-07", window, 3_600_000_000);
    let facts = store.review_facts(&query).await.unwrap();
    let categories: Vec<(&str, u64)> =
        facts.slots.iter().map(|s| (s.category.as_str(), s.entries)).collect();
    assert_eq!(categories, [(category.as_str(), 1)]);
    assert_eq!(facts.new_addresses, [(long.entry.account_id.uuid(), address.clone())]);

    // An address is found by the whole of it, where an index keeps only its beginning.
    let mut twin = ledger_entry(ORG_B, 81, at("2026-07-10T11:00:00Z"));
    twin.entry.ip_addresses = vec![format!("{}.", &address[..3000])];
    let doc = ImportDocument { privacy_audit_logs: vec![twin.clone()], ..Default::default() };
    store.import(&doc).await.unwrap();
    let twin_address = twin.entry.ip_addresses[0].clone();
    for (n, (address, found)) in
        [(address, long.entry.id), (twin_address, twin.entry.id)].into_iter().enumerate()
    {
        let filter = crate::EntryFilter { ip_address: Some(address), ..Default::default() };
        let july = recruit_domain::TimeWindow::new(window.1, window.2).unwrap();
        let q = crate::PrivacyLogQuery { filter, window: july, ..super::query(ORG_B, 100) };
        assert_eq!(super::ids_of(&super::read(store, &q, 90 + n as u128).await), [found]);
    }
}
