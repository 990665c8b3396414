//! What the HTTP test suites share: a service over a real SQLite store loaded with the ports'
//! test world, wrapped so that it can fail on demand.

use std::sync::Arc;

use recruit_adapters_sqlite::SqliteStore;
use recruit_adapters_sqlite::testkit::TestStore;
use recruit_ports::faulty::Faulty;
use recruit_service::cursor::CursorKey;
use recruit_service::{Service, ServiceConfig};

/// The service, its store, and the directory the store lives in (removed when dropped).
pub(crate) struct World {
    pub(crate) service: Arc<Service>,
    pub(crate) store: Arc<Faulty<SqliteStore>>,
    pub(crate) dir: tempfile::TempDir,
}

/// The issuer of the OpenID provider [`Provider`] stands in for.
pub(crate) const ISSUER: &str = "https://idp.example.com";

/// An OpenID provider at [`ISSUER`] as the service reaches it when single sign-on is set: its
/// discovery document (the members OpenID Connect Discovery 1.0 §3 requires) and its key set;
/// any other URL is not found. The sign-in itself is tested against a real provider
/// (`bins/recruitd/tests/sso.rs`).
struct Provider;

impl recruit_service::outbound::Fetch for Provider {
    fn fetch(
        &self,
        request: recruit_service::outbound::http::Request<Vec<u8>>,
    ) -> recruit_service::outbound::Fetched {
        let url = request.uri().to_string();
        let document = if url == format!("{ISSUER}/.well-known/openid-configuration") {
            Some(serde_json::json!({
                "issuer": ISSUER,
                "authorization_endpoint": format!("{ISSUER}/auth"),
                "token_endpoint": format!("{ISSUER}/token"),
                "jwks_uri": format!("{ISSUER}/jwks"),
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
            }))
        } else if url == format!("{ISSUER}/jwks") {
            Some(serde_json::json!({"keys": []}))
        } else {
            None
        };
        let answer = recruit_service::outbound::http::Response::builder()
            .status(if document.is_some() { 200 } else { 404 })
            .header("content-type", "application/json")
            .body(document.map(|d| d.to_string().into_bytes()).unwrap_or_default())
            .map_err(|e| recruit_service::outbound::FetchError(e.to_string()));
        Box::pin(async move { answer })
    }

    fn admits(&self, _: &str) -> recruit_service::outbound::Admitted {
        Box::pin(async { Ok(()) })
    }

    fn syslog(
        &self,
        _: recruit_service::outbound::SyslogTarget,
        _: Vec<u8>,
    ) -> recruit_service::outbound::Admitted {
        let refused = recruit_service::outbound::FetchError("no syslog receiver here".into());
        Box::pin(async { Err(refused) })
    }
}

/// The test world behind a service with the rate limits `limits` and the checkpoint key `key`;
/// with `key`, the service reaches identity providers too ([`Provider`]): without, it is a
/// server with nothing optional configured.
pub(crate) async fn world_service(
    limits: recruit_service::limits::RateLimitConfig,
    key: Option<recruit_service::checkpoint::CheckpointKey>,
) -> World {
    let TestStore { store: sqlite, dir } = TestStore::world().await;
    let store = Arc::new(Faulty::new(sqlite));
    let mut config =
        ServiceConfig::new("https://app.example.com", CursorKey::new(&[1; 32]).unwrap());
    config.rate_limits = limits;
    if key.is_some() {
        config.outbound = Some(recruit_service::outbound::Fetcher(Arc::new(Provider)));
    }
    config.checkpoint_key = key;
    let service = Arc::new(Service::new(store.clone(), config));
    World { service, store, dir }
}

/// The API over the test world, with a short deadline and a small body limit so that the
/// limits are reachable in tests.
pub(crate) struct Fixture {
    pub(crate) api: recruit_http::Api,
    pub(crate) store: Arc<Faulty<SqliteStore>>,
    pub(crate) service: Arc<Service>,
    _dir: tempfile::TempDir,
}

impl Fixture {
    /// The fixture with its HTTP settings changed by `configure`.
    pub(crate) async fn with(configure: impl FnOnce(&mut recruit_http::HttpConfig)) -> Self {
        Self::limited(recruit_service::limits::RateLimitConfig::DEFAULT, configure).await
    }

    /// The fixture with the rate limits `limits` and its HTTP settings changed by `configure`.
    pub(crate) async fn limited(
        limits: recruit_service::limits::RateLimitConfig,
        configure: impl FnOnce(&mut recruit_http::HttpConfig),
    ) -> Self {
        let key = Some(recruit_service::checkpoint::CheckpointKey::generate());
        Self::keyed(limits, key, configure).await
    }

    /// The fixture with the rate limits `limits`, the checkpoint key `key` (none: the server
    /// signs no checkpoints) and its HTTP settings changed by `configure`.
    pub(crate) async fn keyed(
        limits: recruit_service::limits::RateLimitConfig,
        key: Option<recruit_service::checkpoint::CheckpointKey>,
        configure: impl FnOnce(&mut recruit_http::HttpConfig),
    ) -> Self {
        quiet_injected_panics();
        let World { service, store, dir } = world_service(limits, key).await;
        let mut http = recruit_http::HttpConfig::new("http://127.0.0.1:8080");
        http.request_deadline = std::time::Duration::from_millis(500);
        configure(&mut http);
        Self { api: recruit_http::Api::new(service.clone(), http), store, service, _dir: dir }
    }

    /// A token of a user of `org` with `role`, holding `scopes`.
    pub(crate) async fn token(
        &self,
        org: u128,
        role: recruit_domain::model::Role,
        scopes: &[recruit_domain::Scope],
    ) -> String {
        let org_id =
            recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(org));
        let user = recruit_ports::testkit::user_id(org, role);
        let (_, secret) = self
            .service
            .create_token(org_id, user, "t".into(), scopes.to_vec(), None)
            .await
            .unwrap();
        secret
    }

    /// A GET of `uri`, with `token` as the bearer credential when given.
    pub(crate) async fn get(
        &self,
        uri: &str,
        token: Option<&str>,
    ) -> (hyper::StatusCode, hyper::Response<recruit_http::Body>, serde_json::Value) {
        let mut request = hyper::Request::get(uri);
        if let Some(t) = token {
            request = request.header("authorization", format!("Bearer {t}"));
        }
        self.send(request.body(http_body_util::Empty::<bytes::Bytes>::new()).unwrap()).await
    }

    /// Sends `request`; returns the status, the response (its body read whole) and the body
    /// as JSON (null when it is not JSON).
    pub(crate) async fn send<B>(
        &self,
        request: hyper::Request<B>,
    ) -> (hyper::StatusCode, hyper::Response<recruit_http::Body>, serde_json::Value)
    where
        B: hyper::body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.send_from("127.0.0.1".parse().unwrap(), request).await
    }

    /// Sends `request` as a client at `ip`; like [`Fixture::send`].
    pub(crate) async fn send_from<B>(
        &self,
        ip: std::net::IpAddr,
        request: hyper::Request<B>,
    ) -> (hyper::StatusCode, hyper::Response<recruit_http::Body>, serde_json::Value)
    where
        B: hyper::body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        use http_body_util::BodyExt;
        let response = self.api.handle(request, Some(ip)).await;
        let status = response.status();
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
        (status, hyper::Response::from_parts(parts, recruit_http::Body::from(bytes)), json)
    }
}

/// Keeps the panics that tests inject into the store (`Fault::Panic`) from printing a
/// backtrace: with `RUST_BACKTRACE` set, writing one takes longer than the fixture's 500 ms
/// deadline on a loaded machine, and the request would time out before its panic is seen.
/// Every other panic is reported as usual.
fn quiet_injected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&"the test set the store to panic") {
                report(info);
            }
        }));
    });
}
