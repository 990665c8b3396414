//! Contract cases of the filters of the privacy ledger's list and export.

use recruit_domain::{PrivacyAuditLog, Uuid};

use crate::{PrivacyLogQuery, Store};

use super::{ORG_A, expected_order, ids_of, loaded, query, read, t};

/// Each condition of a filter keeps exactly the entries that meet it, alone and together, in
/// a page and in an export alike: the account, the category, the product area, the data
/// subject (as an employee, a candidate or either), an address among an entry's, and spans of
/// time.
pub async fn field_filters_keep_only_matching_entries(store: &dyn Store) {
    use recruit_domain::model::DataSubject;

    use crate::chain::ExportQuery;
    use crate::{EntryFilter, SubjectFilter};
    loaded(store).await;
    let all = expected_order(ORG_A);
    let subject_id = |e: &PrivacyAuditLog| match &e.data_subject {
        DataSubject::Employee { user } => Some((user.uuid(), true)),
        DataSubject::Candidate { candidate } => Some((candidate.uuid(), false)),
        _ => None,
    };
    let (employee, candidate) = {
        let of = |want: bool| all.iter().find_map(|e| subject_id(e).filter(|s| s.1 == want));
        (of(true).expect("an employee").0, of(false).expect("a candidate").0)
    };
    let in_spans = |e: &PrivacyAuditLog| {
        (e.access_time >= t(100) && e.access_time < t(400))
            || (e.access_time >= t(800) && e.access_time < t(900))
    };
    type Keep = Box<dyn Fn(&PrivacyAuditLog) -> bool>;
    let third = all[2].clone();
    let cases: Vec<(EntryFilter, Keep)> = vec![
        (
            EntryFilter { account: Some(third.account_id.uuid()), ..EntryFilter::default() },
            Box::new(move |e| e.account_id == third.account_id),
        ),
        (
            EntryFilter { category: Some("READ".into()), ..EntryFilter::default() },
            Box::new(|e| e.activity_category.as_str() == "READ"),
        ),
        (
            EntryFilter { menu: Some("CANDIDATE_PROFILE".into()), ..EntryFilter::default() },
            Box::new(|_| true),
        ),
        (EntryFilter { menu: Some("candidate_profile".into()), ..EntryFilter::default() }, {
            Box::new(|_| false)
        }),
        (
            EntryFilter {
                subject: Some(SubjectFilter { id: employee, user: true, candidate: false }),
                ..EntryFilter::default()
            },
            Box::new(move |e| subject_id(e) == Some((employee, true))),
        ),
        (
            EntryFilter {
                subject: Some(SubjectFilter { id: employee, user: false, candidate: true }),
                ..EntryFilter::default()
            },
            Box::new(|_| false),
        ),
        (
            EntryFilter {
                subject: Some(SubjectFilter { id: candidate, user: true, candidate: true }),
                ..EntryFilter::default()
            },
            Box::new(move |e| subject_id(e).map(|s| s.0) == Some(candidate)),
        ),
        (
            EntryFilter { ip_address: Some("2001:db8::1".into()), ..EntryFilter::default() },
            Box::new(|e| e.ip_addresses.iter().any(|a| a == "2001:db8::1")),
        ),
        (
            EntryFilter { ip_address: Some("2001:db8::".into()), ..EntryFilter::default() },
            Box::new(|_| false),
        ),
        (
            EntryFilter {
                spans: Some(vec![(t(100), t(400)), (t(800), t(900))]),
                ..EntryFilter::default()
            },
            Box::new(in_spans),
        ),
        (EntryFilter { spans: Some(vec![]), ..EntryFilter::default() }, Box::new(|_| false)),
        (
            EntryFilter {
                category: Some("READ".into()),
                spans: Some(vec![(t(100), t(400)), (t(800), t(900))]),
                ..EntryFilter::default()
            },
            Box::new(move |e| e.activity_category.as_str() == "READ" && in_spans(e)),
        ),
    ];
    for (n, (filter, keep)) in cases.into_iter().enumerate() {
        let expected: Vec<_> = all.iter().filter(|e| keep(e)).map(|e| e.id).collect();
        let q = PrivacyLogQuery { filter: filter.clone(), ..query(ORG_A, 100) };
        let listed = ids_of(&read(store, &q, n as u128 + 1).await);
        assert_eq!(listed, expected, "listed with {filter:?}");
        let export = ExportQuery { filter: filter.clone(), ..super::privacy_export(ORG_A) };
        let exported = super::chain::drain_export(store.export(&export).await.unwrap()).await;
        // Oldest first, as an export is.
        let exported: Vec<Uuid> = exported.iter().rev().map(|e| e.entry.id).collect();
        let wanted: Vec<Uuid> = expected.iter().map(|id| id.uuid()).collect();
        assert_eq!(exported, wanted, "exported with {filter:?}");
    }
}
