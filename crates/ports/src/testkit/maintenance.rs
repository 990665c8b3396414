//! Contract cases of maintenance: server secrets and a fresh store.

use crate::Store;

use super::loaded;

/// The first secret stored under a name is the one every later caller gets.
pub async fn server_secrets_keep_the_first_value(store: &dyn Store) {
    assert_eq!(store.server_secret("cursor", b"first").await.unwrap(), b"first");
    assert_eq!(store.server_secret("cursor", b"second").await.unwrap(), b"first");
    assert_eq!(store.server_secret("other", b"second").await.unwrap(), b"second");
}

/// A fresh store answers and holds nothing; after an import it is not empty.
pub async fn a_fresh_store_is_empty_and_answers(store: &dyn Store) {
    store.ping().await.unwrap();
    assert!(store.is_empty().await.unwrap());
    loaded(store).await;
    assert!(!store.is_empty().await.unwrap());
}

/// A database with a clock of its own tells it, within a second of this process's (both run
/// on this machine here); one on the process's clock tells none.
pub async fn the_database_tells_its_clock_or_that_it_has_none(store: &dyn Store) {
    let before = recruit_domain::Timestamp::now().unix_micros();
    let told = store.database_clock().await.unwrap();
    let after = recruit_domain::Timestamp::now().unix_micros();
    if let Some(clock) = told {
        let at = clock.unix_micros();
        assert!(before - 1_000_000 <= at && at <= after + 1_000_000, "{before} {at} {after}");
        assert!(store.database_clock().await.unwrap().is_some(), "it always tells");
    }
}
