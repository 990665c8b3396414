//! What the HTTP test suites share: a service over a real SQLite store loaded with the ports'
//! test world, wrapped so that it can fail on demand.

use std::sync::Arc;

use recruit_adapters_sqlite::{SqliteConfig, SqliteStore};
use recruit_ports::Import;
use recruit_ports::faulty::Faulty;
use recruit_ports::testkit::world;
use recruit_service::cursor::CursorKey;
use recruit_service::{Service, ServiceConfig};

/// The service, its store, and the directory the store lives in (removed when dropped).
pub(crate) struct World {
    pub(crate) service: Arc<Service>,
    pub(crate) store: Arc<Faulty<SqliteStore>>,
    pub(crate) dir: tempfile::TempDir,
}

pub(crate) async fn world_service() -> World {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqliteStore::open(&SqliteConfig::new(dir.path().join("db"))).await.unwrap();
    sqlite.migrate().await.unwrap();
    sqlite.import(&world()).await.unwrap();
    let store = Arc::new(Faulty::new(sqlite));
    let config = ServiceConfig {
        app_base_url: "https://app.example.com".into(),
        cursor_key: CursorKey::new(&[1; 32]).unwrap(),
    };
    let service = Arc::new(Service::new(store.clone(), config));
    World { service, store, dir }
}
