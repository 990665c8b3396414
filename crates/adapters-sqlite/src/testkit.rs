//! Throwaway SQLite stores for tests: a fresh, migrated file in a temporary directory of its
//! own, empty or holding the contract suite's world, removed when the store is dropped.

use std::ops::Deref;

use recruit_ports::Import;

use crate::{SqliteBackend, SqliteConfig, SqliteStore};

/// A migrated store in a temporary directory, which lives as long as it does.
#[derive(Debug)]
pub struct TestStore {
    /// The store.
    pub store: SqliteStore,
    /// The directory holding its file.
    pub dir: tempfile::TempDir,
}

impl TestStore {
    /// An empty, migrated store.
    pub async fn fresh() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = SqliteBackend::open(&SqliteConfig::new(dir.path().join("recruitd.db")))
            .await
            .expect("the store opens");
        store.migrate().await.expect("the store migrates");
        Self { store, dir }
    }

    /// A migrated store holding the contract suite's world (`recruit_ports::testkit::world`).
    pub async fn world() -> Self {
        let this = Self::fresh().await;
        this.store.import(&recruit_ports::testkit::world()).await.expect("the world imports");
        this
    }

    /// The store opened again on the same file, as after a restart.
    pub async fn reopened(&self) -> SqliteStore {
        let config = SqliteConfig::new(self.dir.path().join("recruitd.db"));
        SqliteBackend::open(&config).await.expect("the store opens again")
    }
}

impl Deref for TestStore {
    type Target = SqliteStore;

    fn deref(&self) -> &SqliteStore {
        &self.store
    }
}
