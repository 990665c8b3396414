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

/// A network that admits every host, and takes every batch (200, the bodies kept) or none.
struct Network {
    takes: bool,
    sent: std::sync::Mutex<Vec<Vec<u8>>>,
}

impl Network {
    /// The chain positions of every entry taken, in the order they were sent.
    fn positions(&self) -> Vec<u64> {
        let sent = self.sent.lock().unwrap();
        let lines = sent.iter().flat_map(|body| body.split(|b| *b == b'\n'));
        let lines = lines.filter(|line| !line.is_empty());
        let entry = |line: &[u8]| serde_json::from_slice::<serde_json::Value>(line).unwrap();
        lines.map(|line| entry(line)["position"].as_u64().unwrap()).collect()
    }
}

impl Fetch for Network {
    fn fetch(&self, request: Request<Vec<u8>>) -> Fetched {
        let takes = self.takes;
        if takes {
            self.sent.lock().unwrap().push(request.into_body());
        }
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

fn config(network: &Arc<Network>) -> ServiceConfig {
    let key = CursorKey::new(&[9; 32]).unwrap();
    let mut config = ServiceConfig::new("https://app.example.com/", key);
    config.outbound = Some(Fetcher(Arc::clone(network) as Arc<dyn Fetch>));
    config
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
        let network = Arc::new(Network { takes, sent: Default::default() });
        let service = Service::new(Arc::clone(&store) as Arc<dyn Store>, config(&network));
        Self { store, service, network, _dir: dir }
    }

    /// A configuration of a replica sending through the world's network.
    fn config(&self) -> ServiceConfig {
        config(&self.network)
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

/// Entries this replica records are delivered from memory once the delivery has caught up;
/// entries another replica writes between them are read back from the store. Either way every
/// entry is sent once, in chain order. The poll is far longer than the test: the delivery
/// wakes only for what this replica records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_recorded_here_are_delivered_without_reading_them_back() {
    let w = World::new(true).await;
    let (made, lease) = w.claimed().await;
    let poll = Duration::from_secs(600);
    let settings = Settings { poll, batch_entries: 1, ..Settings::default() };
    let (stop_it, stop) = tokio::sync::watch::channel(false);
    let delivery = tokio::spawn(deliver::run(w.parts(), lease, settings, stop));
    let id = made.id.to_string();
    // Nothing left to deliver, and the delivery waiting for more (its own figure of the lag
    // is set to 0 only then): a write from now on is published to it before it looks again.
    let caught_up = async || {
        for _ in 0..100 {
            let Outcome::LogStream(now) =
                w.run(OperationKind::GetLogStream, Some(id.clone()), None).await
            else {
                panic!("a stream");
            };
            let figures = w.service.deliveries().figures();
            let waiting =
                figures.iter().any(|(s, f)| *s == made.id.uuid() && f.held && f.lag_entries == 0);
            if now.lag_entries == 0 && waiting {
                return now.delivered_position;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the stream did not catch up");
    };
    let at_start = caught_up().await;
    // A second replica on the same store, whose writes this one never sees.
    let other = Service::new(Arc::clone(&w.store) as Arc<dyn Store>, w.config());
    let owner = user_id(ORG_A, Role::Owner);
    let org = recruit_domain::OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let scopes = vec![Scope::AuditLogsWrite];
    let (_, secret) = w.service.create_token(org, owner, "t".into(), scopes, None).await.unwrap();
    let caller = w.service.authenticate(Some(&secret), None).await.unwrap();
    let record = async |replica: &Service, key: &str, n: usize| {
        let entries: Vec<_> =
            (0..n).map(|k| recruit_ports::testkit::access_entry(&format!("menu {k}"))).collect();
        let operation = Operation::RecordPrivacyAccesses(recruit_service::RecordParams {
            idempotency_key: Some(key.into()),
            body: Some(serde_json::json!({ "entries": entries }).to_string().into_bytes()),
            problems: vec![],
        });
        let identity = Identity::Authenticated(Box::new(caller.clone()));
        let context = RequestContext::rest("req-2", None);
        replica.execute(identity, &context, operation).await.unwrap();
    };
    let read_before = w.store.entries_read_after();
    record(&w.service, "here-1", 5).await;
    assert_eq!(caught_up().await, at_start + 5);
    assert_eq!(w.store.entries_read_after(), read_before, "recorded here: sent from memory");
    // Not seen here until this replica records again: then the gap is read back, with what
    // follows it (a read-ahead from the store, as other replicas' entries interleave).
    record(&other, "elsewhere", 3).await;
    record(&w.service, "here-2", 4).await;
    assert_eq!(caught_up().await, at_start + 12);
    assert_eq!(w.store.entries_read_after(), read_before + 7, "read back from the gap on");
    let expected: Vec<u64> = (1..=at_start + 12).collect();
    assert_eq!(w.network.positions(), expected, "every entry once, in chain order");
    stop_it.send(true).unwrap();
    assert_eq!(delivery.await.unwrap().unwrap(), Ended::Shutdown);
}
