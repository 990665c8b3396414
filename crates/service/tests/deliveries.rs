//! A log stream's delivery (`log_stream::deliver::run`) on a real (SQLite) store, for what
//! only the store can bring about.

use std::sync::Arc;

use recruit_adapters_sqlite::testkit::TestStore;
use recruit_domain::model::Role;
use recruit_domain::{Scope, Timestamp, Uuid};
use recruit_ports::Store;
use recruit_ports::testkit::{ORG_A, user_id};
use recruit_service::cursor::CursorKey;
use recruit_service::log_stream::deliver::{self, Ended, Settings};
use recruit_service::outbound::{Admitted, Fetch, FetchError, Fetched, Fetcher, SyslogTarget};
use recruit_service::{
    Identity, Operation, OperationKind, Outcome, RequestContext, Service, ServiceConfig,
};

/// A network that admits every host and refuses every request.
struct Nowhere;

impl Fetch for Nowhere {
    fn fetch(&self, _: recruit_service::outbound::http::Request<Vec<u8>>) -> Fetched {
        Box::pin(async { Err(FetchError("no network here".into())) })
    }
    fn admits(&self, _: &str) -> Admitted {
        Box::pin(async { Ok(()) })
    }
    fn syslog(&self, _: SyslogTarget, _: Vec<u8>) -> Admitted {
        Box::pin(async { Err(FetchError("no network here".into())) })
    }
}

/// A stream removed after its delivery was claimed ends that delivery as a lease lost, not as
/// a failure of the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_removed_while_claimed_ends_its_delivery_quietly() {
    let TestStore { store, dir: _dir } = TestStore::world().await;
    let store: Arc<dyn Store> = Arc::new(store);
    let mut config =
        ServiceConfig::new("https://app.example.com/", CursorKey::new(&[9; 32]).unwrap());
    config.outbound = Some(Fetcher(Arc::new(Nowhere)));
    let service = Service::new(Arc::clone(&store), config);
    let user = user_id(ORG_A, Role::Owner);
    let caller =
        recruit_service::auth::operator(store.as_ref(), user, vec![Scope::LogStreamsAdmin])
            .await
            .unwrap();
    let run = async |kind: OperationKind, id: Option<String>, body: Option<&str>| {
        let mut arguments = recruit_service::input::Arguments::rest(kind);
        if let Some(id) = id {
            arguments.path("streamId", id);
        }
        if let Some(body) = body {
            arguments.body(body.as_bytes().to_vec());
        }
        let operation = Operation::parse(kind, arguments).unwrap();
        let identity = Identity::Authenticated(Box::new(caller.clone()));
        service.execute(identity, &RequestContext::rest("req-1", None), operation).await.unwrap()
    };
    let body = r#"{"name": "SIEM", "destination": {"type": "https", "url": "https://siem.example.com/in"}}"#;
    let Outcome::LogStream(made) =
        run(OperationKind::CreateLogStream, None, Some(body)).await.outcome
    else {
        panic!("a stream");
    };
    let now = Timestamp::now();
    let until = Timestamp::from_unix_micros(now.unix_micros() + 60_000_000).unwrap();
    let leases = store.claim_streams(Uuid::now_v7(), now, until, 10).await.unwrap();
    assert_eq!(leases.len(), 1);
    run(OperationKind::DeleteLogStream, Some(made.id.to_string()), None).await;

    let (_stop, stop) = tokio::sync::watch::channel(false);
    let parts = (Arc::clone(&store), Arc::new(Nowhere) as Arc<dyn Fetch>, service.deliveries());
    let ended = deliver::run(parts, leases[0], Settings::default(), stop).await;
    assert_eq!(ended.unwrap(), Ended::LeaseLost);
}
