//! The server loop: accept on a listener, serve HTTP/1.1 and HTTP/2 with keep-alive, limit
//! request heads, and shut down gracefully: stop accepting, let in-flight requests finish
//! within the grace period, then return.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use crate::api::Api;

/// Serves `api` on `listener` until `shutdown` completes, then drains in-flight requests for
/// at most the configured grace period.
pub async fn serve(
    listener: TcpListener,
    api: Arc<Api>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let config = api.config().clone();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout)
        .max_buf_size(config.max_header_bytes.max(8192))
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(config.max_header_bytes).unwrap_or(u32::MAX));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        // Out of file descriptors and the like: keep serving the others.
                        tracing::warn!(error = %e, "accepting a connection failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let api = Arc::clone(&api);
                let service = service_fn(move |request| {
                    let api = Arc::clone(&api);
                    async move { Ok::<_, Infallible>(api.handle(request, Some(peer.ip())).await) }
                });
                let connection = builder.serve_connection(TokioIo::new(stream), service).into_owned();
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    if let Err(e) = connection.await {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    tracing::info!(
        grace_s = config.shutdown_grace.as_secs_f64(),
        "shutting down: finishing in-flight requests"
    );
    if tokio::time::timeout(config.shutdown_grace, graceful.shutdown()).await.is_err() {
        tracing::warn!("the grace period ended with requests still in flight");
    }
    Ok(())
}
