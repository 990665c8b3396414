//! The server's HTTP client for identity providers (single sign-on): reqwest over rustls,
//! following no redirect (a provider's answer is read where it was asked for), with short
//! timeouts and a bounded body.

use std::time::Duration;

use recruit_service::sso::{Fetch, FetchError, Fetched, http};

/// The largest answer read from a provider: discovery documents, key sets and token responses
/// are a few KiB.
const MAX_BODY: usize = 1024 * 1024;

/// The HTTP client for identity providers.
pub(crate) struct Providers(reqwest::Client);

impl Providers {
    pub(crate) fn new() -> Result<Self, String> {
        // reqwest is built without a crypto provider: ring's, unless the process chose one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(10))
            .user_agent(concat!("recruitd/", env!("CARGO_PKG_VERSION")))
            .build()
            .map(Self)
            .map_err(|e| format!("the HTTP client for identity providers: {e}"))
    }
}

impl Fetch for Providers {
    fn fetch(&self, request: http::Request<Vec<u8>>) -> Fetched {
        let client = self.0.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let mut response = client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await
                .map_err(|e| FetchError(e.to_string()))?;
            let mut answer = http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            let mut bytes = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| FetchError(e.to_string()))? {
                if bytes.len() + chunk.len() > MAX_BODY {
                    return Err(FetchError("the provider's answer is too large".into()));
                }
                bytes.extend_from_slice(&chunk);
            }
            answer.body(bytes).map_err(|e| FetchError(e.to_string()))
        })
    }
}
