//! The demo's ledger reviewed as a privacy officer would: most staff keep office hours from
//! the office's addresses and go unflagged; the two accounts that misbehave are flagged, each
//! by the rules it broke, in every complete month of the year.

use std::collections::BTreeMap;

use recruit_adapters_sqlite::testkit::TestStore;
use recruit_domain::review::Flag;
use recruit_domain::{AccountId, Month, Timestamp};
use recruit_service::demo::{self, Behaviour, DemoConfig};
use recruit_service::review::{MonthWindow, month_at, review};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_flags_exactly_the_two_accounts_that_misbehave() {
    let TestStore { store, dir: _dir } = TestStore::fresh().await;
    let config = DemoConfig::quick_start(Timestamp::now());
    demo::load(&store, &config, |_| {}).await.unwrap().expect("an empty store is loaded");
    let directory = demo::directory(&config);
    let org = &directory.organizations[0];
    let users: Vec<_> = directory.users.iter().filter(|u| u.organization_id == org.id).collect();
    let expected: BTreeMap<String, (Behaviour, String)> = users
        .iter()
        .enumerate()
        .map(|(n, u)| (Behaviour::of_user(n, users.len()), u))
        .filter(|(b, _)| *b != Behaviour::Staff)
        .map(|(b, u)| (AccountId::from_uuid(u.id.uuid()).to_string(), (b, u.name.clone())))
        .collect();
    assert_eq!(expected.len(), 2);

    // Every complete month after the first (whose addresses are all new), up to the last.
    let running = month_at(Timestamp::now(), org.time_zone).unwrap();
    let mut month: Month = running;
    for _ in 0..10 {
        month = month.previous().unwrap();
        assert!(month.window(org.time_zone).is_some());
        let review = review(&store, org.id, month).await.unwrap();
        let flagged: BTreeMap<&str, &Vec<Flag>> = review
            .accounts
            .iter()
            .filter(|a| !a.flags.is_empty())
            .map(|a| (a.account_id.as_str(), &a.flags))
            .collect();
        assert_eq!(
            flagged.keys().copied().collect::<Vec<_>>(),
            expected.keys().map(String::as_str).collect::<Vec<_>>(),
            "{month}: {:#?}",
            review.accounts
        );
        for (account, (behaviour, name)) in &expected {
            let flags = flagged[account.as_str()];
            let wanted: &[Flag] = match behaviour {
                Behaviour::NightOwl => &[Flag::OutsideWorkHours, Flag::NewIpAddresses],
                _ => &[Flag::Bulk, Flag::Downloads],
            };
            assert_eq!(flags.as_slice(), wanted, "{month}: {name} ({behaviour:?})");
            assert_eq!(review.account_person(account).map(|p| &p.name), Some(name));
        }
        assert!(review.accounts.len() >= 6, "{month}: the staff are at work");
        // Each account's usual day comes from the three months before, which the demo holds.
        let usual: Vec<u64> = review.accounts.iter().map(|a| a.usual_day.unwrap_or(0)).collect();
        assert!(usual.iter().all(|n| *n > 0), "{month}: usual days {usual:?}");
        assert!(!review.downloads.is_empty(), "{month}: downloads to confirm");
    }
}
