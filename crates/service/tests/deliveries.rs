//! A log stream's delivery (`log_stream::deliver::run`) on a real (SQLite) store, for what
//! only the store can bring about: a stream removed mid-delivery, the database unreachable.

use std::sync::Arc;
use std::time::Duration;

use recruit_adapters_sqlite::SqliteStore;
use recruit_adapters_sqlite::testkit::TestStore;
use recruit_domain::model::{LogStream, Role};
use recruit_domain::{Scope, Timestamp, Uuid};
use recruit_ports::Store;
use recruit_ports::faulty::{Fault, Faulty};
use recruit_ports::streams::{Lease, LogStreams};
use recruit_ports::testkit::{ORG_A, user_id};
use recruit_service::cursor::CursorKey;
use recruit_service::log_stream::deliver::{self, Ended, Settings};
use recruit_service::outbound::http::{Request, Response};
use recruit_service::outbound::{Admitted, Fetch, FetchError, Fetched, Fetcher, SyslogTarget};
use recruit_service::{
    Identity, Operation, OperationKind, Outcome, RequestContext, Service, ServiceConfig,
};

/// A network that admits every host, and takes every batch (200) or none.
struct Network {
    takes: bool,
}

impl Fetch for Network {
    fn fetch(&self, _: Request<Vec<u8>>) -> Fetched {
        let takes = self.takes;
        Box::pin(async move {
            match takes {
                true => Ok(Response::builder().status(200).body(vec![]).unwrap()),
                false => Err(FetchError("no network here".into())),
            }
        })
    }
    fn admits(&self, _: &str) -> Admitted {
        Box::pin(async { Ok(()) })
    }
    fn syslog(&self, _: SyslogTarget, _: Vec<u8>) -> Admitted {
        Box::pin(async { Err(FetchError("no network here".into())) })
    }
}

struct World {
    store: Arc<Faulty<SqliteStore>>,
    service: Service,
    network: Arc<Network>,
    _dir: tempfile::TempDir,
}

impl World {
    async fn new(takes: bool) -> Self {
        let TestStore { store, dir } = TestStore::world().await;
        let store = Arc::new(Faulty::new(store));
        let network = Arc::new(Network { takes });
        let key = CursorKey::new(&[9; 32]).unwrap();
        let mut config = ServiceConfig::new("https://app.example.com/", key);
        config.outbound = Some(Fetcher(Arc::clone(&network) as Arc<dyn Fetch>));
        let service = Service::new(Arc::clone(&store) as Arc<dyn Store>, config);
        Self { store, service, network, _dir: dir }
    }

    /// Runs `kind` on the stream `id` with `body` as organization A's owner.
    async fn run(&self, kind: OperationKind, id: Option<String>, body: Option<&str>) -> Outcome {
        let owner = user_id(ORG_A, Role::Owner);
        let scopes = vec![Scope::LogStreamsAdmin];
        let caller = recruit_service::auth::operator(self.store.as_ref(), owner, scopes);
        let path: Vec<_> = id.map(|id| ("streamId", id)).into_iter().collect();
        let body = body.map(|b| b.as_bytes().to_vec());
        let arguments = recruit_service::input::Arguments::rest_call(kind, &path, body);
        let operation = Operation::parse(kind, arguments).unwrap();
        let identity = Identity::Authenticated(Box::new(caller.await.unwrap()));
        let context = RequestContext::rest("req-1", None);
        self.service.execute(identity, &context, operation).await.unwrap().outcome
    }

    /// A stream from the chain's start, and its delivery claimed.
    async fn claimed(&self) -> (LogStream, Lease) {
        let body = r#"{"name": "SIEM", "after_position": 0,
            "destination": {"type": "https", "url": "https://siem.example.com/in"}}"#;
        let Outcome::LogStream(made) =
            self.run(OperationKind::CreateLogStream, None, Some(body)).await
        else {
            panic!("a stream");
        };
        let now = Timestamp::now();
        let until = Timestamp::from_unix_micros(now.unix_micros() + 60_000_000).unwrap();
        let leases = self.store.claim_streams(Uuid::now_v7(), now, until, 10).await.unwrap();
        assert_eq!(leases.len(), 1);
        (*made, leases[0])
    }

    fn parts(&self) -> (Arc<dyn Store>, Arc<dyn Fetch>, Arc<deliver::Deliveries>) {
        let network = Arc::clone(&self.network) as Arc<dyn Fetch>;
        (Arc::clone(&self.store) as Arc<dyn Store>, network, self.service.deliveries())
    }
}

/// A stream removed after its delivery was claimed ends that delivery as a lease lost, not as
/// a failure of the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_removed_while_claimed_ends_its_delivery_quietly() {
    let w = World::new(false).await;
    let (made, lease) = w.claimed().await;
    w.run(OperationKind::DeleteLogStream, Some(made.id.to_string()), None).await;
    let (_stop, stop) = tokio::sync::watch::channel(false);
    let ended = deliver::run(w.parts(), lease, Settings::default(), stop).await;
    assert_eq!(ended.unwrap(), Ended::LeaseLost);
}

/// A database that cannot be reached for a while is waited out with the lease kept: once it
/// answers, the same delivery goes on and delivers everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_outlives_an_outage_of_the_database() {
    let w = World::new(true).await;
    let (made, lease) = w.claimed().await;
    assert!(made.lag_entries > 0, "entries to deliver");
    let settings = Settings { backoff_initial: Duration::from_millis(50), ..Settings::default() };
    w.store.set(Fault::Unavailable);
    let (stop_it, stop) = tokio::sync::watch::channel(false);
    let delivery = tokio::spawn(deliver::run(w.parts(), lease, settings, stop));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!delivery.is_finished(), "waiting for the database");
    w.store.set(Fault::None);
    let id = made.id.to_string();
    let mut lag = made.lag_entries;
    for _ in 0..100 {
        let Outcome::LogStream(now) =
            w.run(OperationKind::GetLogStream, Some(id.clone()), None).await
        else {
            panic!("a stream");
        };
        lag = now.lag_entries;
        if lag == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(lag, 0, "everything delivered once the database answered");
    stop_it.send(true).unwrap();
    assert_eq!(delivery.await.unwrap().unwrap(), Ended::Shutdown);
}
