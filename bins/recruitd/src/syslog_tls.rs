//! Syslog over TLS (RFC 5425, updated by RFC 9662): a batch of frames written on a connection
//! of its own, to an address the outbound policy allows, the receiver's certificate verified
//! against the stream's CA (or the system's roots) and its name, with the stream's client
//! certificate when it has one.
//!
//! RFC 5425 has no acknowledgement of its own, so a batch counts as delivered only once the
//! receiver has read all of it: the server sends its TLS close after the frames, and a
//! receiver closes its side only after reading up to it. A receiver that refuses the client's
//! certificate does so after a TLS 1.3 handshake has completed on the client's side, by closing
//! at once: a short read after the handshake tells a refusal from a receiver that waits.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use recruit_service::outbound::{Destinations, FetchError, SyslogTarget};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long connecting, the handshake, and the receiver's close may each take.
const STEP: Duration = Duration::from_secs(10);

/// How long writing a batch may take.
const WRITE: Duration = Duration::from_secs(30);

/// How long a receiver that refuses the client's certificate takes to close, at most.
const PROBE: Duration = Duration::from_millis(300);

fn failed(what: &str, e: impl std::fmt::Display) -> FetchError {
    FetchError(format!("{what}: {e}"))
}

/// The TLS settings of a connection to `to`.
fn config(to: &SyslogTarget) -> Result<rustls::ClientConfig, FetchError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions = [&rustls::version::TLS13, &rustls::version::TLS12];
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| failed("TLS", e))?;
    let mut roots = rustls::RootCertStore::empty();
    match &to.ca_certificate {
        Some(pem) => {
            for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                let cert = cert.map_err(|e| failed("the CA certificate", e))?;
                roots.add(cert).map_err(|e| failed("the CA certificate", e))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(FetchError("the system has no trusted roots; give a CA".into()));
            }
        }
    }
    let builder = builder.with_root_certificates(roots);
    match &to.client {
        Some((chain, key)) => {
            let chain: Result<Vec<_>, _> =
                CertificateDer::pem_slice_iter(chain.as_bytes()).collect();
            let chain = chain.map_err(|e| failed("the client certificate", e))?;
            let key = PrivateKeyDer::from_pem_slice(key.as_bytes())
                .map_err(|e| failed("the client key", e))?;
            builder.with_client_auth_cert(chain, key).map_err(|e| failed("the client key", e))
        }
        None => Ok(builder.with_no_client_auth()),
    }
}

/// Delivers `frames` to `to`, reaching only what `destinations` allows.
pub(crate) async fn deliver(
    destinations: &Destinations,
    to: SyslogTarget,
    frames: Vec<u8>,
) -> Result<(), FetchError> {
    let config = config(&to)?;
    let name = ServerName::try_from(to.host.clone()).map_err(|e| failed("the host", e))?;
    let found: Vec<SocketAddr> = tokio::net::lookup_host((to.host.as_str(), to.port))
        .await
        .map_err(|e| failed(&format!("{} does not resolve", to.host), e))?
        .collect();
    let ips: Vec<_> = found.iter().map(SocketAddr::ip).collect();
    destinations.check_all(&ips).map_err(|e| FetchError(e.to_string()))?;
    let tcp = tokio::time::timeout(STEP, tokio::net::TcpStream::connect(&found[..]))
        .await
        .map_err(|_| FetchError(format!("connecting to {}:{} timed out", to.host, to.port)))?
        .map_err(|e| failed(&format!("connecting to {}:{}", to.host, to.port), e))?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let mut tls = tokio::time::timeout(STEP, connector.connect(name, tcp))
        .await
        .map_err(|_| FetchError("the TLS handshake timed out".into()))?
        .map_err(|e| failed("the TLS handshake", e))?;
    let mut byte = [0u8; 1];
    match tokio::time::timeout(PROBE, tls.read(&mut byte)).await {
        Err(_) => {} // The receiver waits for messages: it took the connection.
        Ok(Ok(0) | Err(_)) => {
            return Err(FetchError(
                "the receiver closed the connection after the handshake: it refused this \
                 server's client certificate (or its lack of one)"
                    .into(),
            ));
        }
        Ok(Ok(_)) => return Err(FetchError("the receiver sent data; syslog sends none".into())),
    }
    tokio::time::timeout(WRITE, tls.write_all(&frames))
        .await
        .map_err(|_| FetchError("writing the batch timed out".into()))?
        .map_err(|e| failed("writing the batch", e))?;
    // The TLS close after the frames; the receiver closes once it has read up to it.
    tokio::time::timeout(STEP, tls.shutdown())
        .await
        .map_err(|_| FetchError("closing timed out".into()))?
        .map_err(|e| failed("closing", e))?;
    let mut rest = Vec::new();
    match tokio::time::timeout(STEP, tls.read_to_end(&mut rest)).await {
        Err(_) => Err(FetchError("the receiver did not close after the batch".into())),
        // rsyslog closes without a TLS close of its own: an unexpected end is its answer.
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(()),
        Ok(Err(e)) => Err(failed("awaiting the receiver's close", e)),
    }
}
