//! The server's own HTTP client (identity providers, log destinations): reqwest over rustls, following no
//! redirect (an answer is read where it was asked for) and no proxy, with short timeouts and a
//! bounded body, reaching only the addresses `recruit_service::outbound` allows. The policy is
//! applied where the connection is made: every address a name resolves to is checked by the
//! client's resolver, on every new connection (so a name that rebinds is checked again), and an
//! address written in the URL, which reqwest connects to without resolving, before sending.

use std::error::Error as _;
use std::net::SocketAddr;
use std::time::Duration;

use recruit_service::outbound::{Admitted, Fetch, FetchError, Fetched, SyslogTarget, http};
use recruit_service::outbound::{Destinations, Refused};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The largest answer read: discovery documents, key sets and token responses are a few KiB.
const MAX_BODY: usize = 1024 * 1024;

/// The server's HTTP client.
pub(crate) struct Outbound {
    client: reqwest::Client,
    destinations: Destinations,
}

impl Outbound {
    /// The client that reaches `destinations` only.
    pub(crate) fn new(destinations: Destinations) -> Result<Self, String> {
        // reqwest is built without a crypto provider: ring's, unless the process chose one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve the destination itself, out of the policy's sight.
            .no_proxy()
            .dns_resolver(Policed(destinations.clone()))
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(10))
            .user_agent(concat!("recruitd/", env!("CARGO_PKG_VERSION")))
            .build()
            .map(|client| Self { client, destinations })
            .map_err(|e| format!("the server's HTTP client: {e}"))
    }
}

/// The resolver that refuses a name any of whose addresses the policy refuses.
struct Policed(Destinations);

impl Resolve for Policed {
    fn resolve(&self, name: Name) -> Resolving {
        let destinations = self.0.clone();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            let ips: Vec<_> = found.iter().map(SocketAddr::ip).collect();
            destinations.check_all(&ips)?;
            Ok(Box::new(found.into_iter()) as Addrs)
        })
    }
}

/// Why a request failed: the policy's words when it refused the destination (reqwest's own
/// message names neither the address nor the reason).
fn why(e: &reqwest::Error) -> String {
    let mut source = e.source();
    while let Some(s) = source {
        if let Some(refused) = s.downcast_ref::<Refused>() {
            return refused.to_string();
        }
        source = s.source();
    }
    e.to_string()
}

impl Fetch for Outbound {
    fn fetch(&self, request: http::Request<Vec<u8>>) -> Fetched {
        let client = self.client.clone();
        let destinations = self.destinations.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let request = client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .build()
                .map_err(|e| FetchError(e.to_string()))?;
            // An address as the host is connected to without resolving: checked here.
            destinations
                .check_host(request.url().host_str().unwrap_or_default())
                .map_err(|e| FetchError(e.to_string()))?;
            let mut response = client.execute(request).await.map_err(|e| FetchError(why(&e)))?;
            let mut answer = http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            let mut bytes = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| FetchError(why(&e)))? {
                if bytes.len() + chunk.len() > MAX_BODY {
                    return Err(FetchError("the answer is too large".into()));
                }
                bytes.extend_from_slice(&chunk);
            }
            answer.body(bytes).map_err(|e| FetchError(e.to_string()))
        })
    }

    fn admits(&self, host: &str) -> Admitted {
        let (host, destinations) = (host.to_owned(), self.destinations.clone());
        Box::pin(async move {
            let bare = host.trim_start_matches('[').trim_end_matches(']');
            if bare.parse::<std::net::IpAddr>().is_ok() {
                return destinations.check_host(bare).map_err(|e| FetchError(e.to_string()));
            }
            let found: Vec<SocketAddr> = tokio::net::lookup_host((bare, 0))
                .await
                .map_err(|e| FetchError(format!("{bare} does not resolve: {e}")))?
                .collect();
            let ips: Vec<_> = found.iter().map(SocketAddr::ip).collect();
            destinations.check_all(&ips).map_err(|e| FetchError(e.to_string()))
        })
    }

    fn syslog(&self, to: SyslogTarget, frames: Vec<u8>) -> Admitted {
        let destinations = self.destinations.clone();
        Box::pin(async move { crate::syslog_tls::deliver(&destinations, to, frames).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends a GET to `url` through a client with the default policy.
    async fn refusal(url: &str) -> String {
        let outbound = Outbound::new(Destinations::default()).unwrap();
        let request = http::Request::get(url).body(Vec::new()).unwrap();
        outbound.fetch(request).await.unwrap_err().0
    }

    #[tokio::test]
    async fn names_and_addresses_of_the_local_host_are_refused_before_connecting() {
        // Something listens, so that a refusal is the policy's and not a failed connection.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        for url in [
            format!("http://localhost:{port}/"),
            format!("http://127.0.0.1:{port}/"),
            format!("http://2130706433:{port}/"),
            format!("http://0x7f000001:{port}/"),
            format!("http://[::ffff:127.0.0.1]:{port}/"),
            "http://169.254.169.254/latest/meta-data/".to_owned(),
        ] {
            let why = refusal(&url).await;
            assert!(why.contains("which this server"), "{url}: {why}");
        }
    }

    #[tokio::test]
    async fn an_allowed_block_is_reached() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0; 1024];
            let _ = socket.read(&mut request).await.unwrap();
            let answer = b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n";
            socket.write_all(answer).await.unwrap();
        });
        let outbound = Outbound::new(Destinations::new(vec!["127.0.0.0/8".parse().unwrap()]));
        let request = http::Request::get(format!("http://127.0.0.1:{port}/")).body(Vec::new());
        let answer = outbound.unwrap().fetch(request.unwrap()).await.unwrap();
        assert_eq!(answer.status(), 204);
    }
}
