//! The server loop: accept on a listener, serve HTTP/1.1 and HTTP/2 with keep-alive, limit
//! request heads, close idle connections, cap how many are open (in all and per client address),
//! and shut down gracefully: stop
//! accepting, let in-flight requests finish within the grace period, then return.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::api::Api;

/// File descriptors kept for everything but client connections: database connections, the
/// listener, log and data files.
const RESERVED_FILES: u64 = 64;

/// How often, at most, a refused connection is logged as a warning.
const REFUSAL_WARNING_INTERVAL: Duration = Duration::from_secs(10);

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
    let max_connections = connection_cap(config.max_connections);
    let slots = Arc::new(Semaphore::new(max_connections));
    let per_address = config.max_connections_per_address.unwrap_or(max_connections / 4).max(1);
    let addresses = Arc::new(PerAddress { cap: per_address, open: Mutex::default() });
    let graceful = GracefulShutdown::new();
    let mut last_refusal_warning: Option<Instant> = None;
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
                // Past the cap a connection is closed at once: the ones already open keep
                // being served, and the process keeps file descriptors for its database.
                let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                    api.metrics().connection_refused();
                    if last_refusal_warning.is_none_or(|at| at.elapsed() >= REFUSAL_WARNING_INTERVAL) {
                        last_refusal_warning = Some(Instant::now());
                        tracing::warn!(
                            max_connections,
                            client.ip = %peer.ip(),
                            "refusing connections: the most allowed are open"
                        );
                    }
                    drop(stream);
                    continue;
                };
                // One client's idle sockets must not hold every slot: past its own cap a
                // client's new connection is closed at once. Proxies speak for many clients.
                let ip = peer.ip().to_canonical();
                let trusted = config.trusted_proxies.iter().any(|net| net.contains(&ip));
                let address_slot = if trusted { None } else {
                    let Some(address_slot) = addresses.admit(ip) else {
                        api.metrics().connection_refused();
                        if last_refusal_warning.is_none_or(|at| at.elapsed() >= REFUSAL_WARNING_INTERVAL) {
                            last_refusal_warning = Some(Instant::now());
                            tracing::warn!(
                                max_connections_per_address = per_address,
                                client.ip = %ip,
                                "refusing connections of one address: the most it may open are open"
                            );
                        }
                        drop(stream);
                        continue;
                    };
                    Some(address_slot)
                };
                let activity = Arc::new(Activity::new());
                let api = Arc::clone(&api);
                let service = {
                    let activity = Arc::clone(&activity);
                    let api = Arc::clone(&api);
                    service_fn(move |request| {
                        let api = Arc::clone(&api);
                        let busy = activity.request_started();
                        async move {
                            let response = api.handle(request, Some(peer.ip())).await;
                            drop(busy);
                            Ok::<_, Infallible>(response)
                        }
                    })
                };
                let io = TokioIo::new(Tracked::new(stream, Arc::clone(&activity), Arc::clone(&api)));
                let connection = builder.serve_connection(io, service).into_owned();
                let connection = graceful.watch(connection);
                let idle_timeout = config.idle_timeout;
                api.metrics().connection_opened();
                tokio::spawn(async move {
                    tokio::select! {
                        ended = connection => {
                            if let Err(e) = ended {
                                tracing::debug!(error = %e, "connection ended with an error");
                            }
                        }
                        () = activity.idle_for(idle_timeout) => {
                            // Dropping the connection closes it; no request is in flight.
                            api.metrics().connection_idle_closed();
                        }
                    }
                    api.metrics().connection_closed();
                    drop(address_slot);
                    drop(slot);
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

/// How many connections each client address has open.
#[derive(Debug)]
struct PerAddress {
    /// The most one address may have open.
    cap: usize,
    /// Addresses with connections open, and how many.
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl PerAddress {
    /// A slot for one more connection of `ip`, unless it has its most open.
    fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<AddressSlot> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(ip).or_insert(0);
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(AddressSlot { table: Arc::clone(self), ip })
    }
}

/// One open connection of an address, given back when dropped.
#[derive(Debug)]
struct AddressSlot {
    table: Arc<PerAddress>,
    ip: IpAddr,
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut open = self.table.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.ip) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// `configured`, lowered to what the process's limit of open files leaves for clients.
fn connection_cap(configured: usize) -> usize {
    let Some(files) = open_files_limit() else { return configured.max(1) };
    let room = usize::try_from(files.saturating_sub(RESERVED_FILES)).unwrap_or(usize::MAX).max(1);
    if configured > room {
        tracing::warn!(
            max_connections = configured,
            open_files_limit = files,
            lowered_to = room,
            "the limit of open files is too low for --max-connections; raise `ulimit -n`"
        );
        room
    } else {
        configured.max(1)
    }
}

/// The soft limit of open files of this process, where the system tells it (Linux).
fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..].split_whitespace().next()?.parse().ok()
}

/// When a connection last did something, and how many of its requests are being answered.
#[derive(Debug)]
struct Activity {
    started: Instant,
    /// Milliseconds from `started` to the last byte read or written, or the last answer.
    last_ms: AtomicU64,
    in_flight: AtomicUsize,
}

/// A request being answered; dropping it marks the end.
struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Activity {
    fn new() -> Self {
        Self { started: Instant::now(), last_ms: AtomicU64::new(0), in_flight: AtomicUsize::new(0) }
    }

    fn touch(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.fetch_max(now, Ordering::Relaxed);
    }

    fn request_started(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.touch();
        Busy(Arc::clone(self))
    }

    /// Completes once the connection has had no request in flight and moved no byte for
    /// `timeout`.
    async fn idle_for(&self, timeout: Duration) {
        loop {
            let last = self.started + Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            let due = last + timeout;
            if Instant::now() < due {
                tokio::time::sleep_until(due.into()).await;
            } else if self.in_flight.load(Ordering::Acquire) == 0 {
                return;
            } else {
                // Answering takes as long as it takes (the request deadline bounds it).
                tokio::time::sleep(timeout.min(Duration::from_secs(1))).await;
            }
        }
    }
}

/// How long a connection whose request was refused unparsed is drained before it closes, so
/// that what the client still sends does not reset the connection before it reads the answer.
const LINGER: Duration = Duration::from_secs(1);

/// The most bytes drained from such a connection.
const LINGER_BYTES: usize = 1 << 20;

/// The status of the answer hyper writes by itself to a request it cannot parse (400, 414,
/// 431: an empty body, no `Content-Type`), if `written` is one. Every response of the API has
/// a `Content-Type`.
fn automatic_refusal(written: &[u8]) -> Option<u16> {
    let rest = written.strip_prefix(b"HTTP/1.1 ").or_else(|| written.strip_prefix(b"HTTP/1.0 "))?;
    let status: u16 = std::str::from_utf8(rest.get(..3)?).ok()?.parse().ok()?;
    if !matches!(status, 400 | 414 | 431) {
        return None;
    }
    let end = written.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = written[..end].to_ascii_lowercase();
    let typed = head.windows(15).any(|w| w == b"\r\ncontent-type:");
    (!typed).then_some(status)
}

/// A client connection that notes its activity, and that puts the error envelope in place of
/// hyper's empty answer to a request it could not parse.
struct Tracked {
    inner: TcpStream,
    activity: Arc<Activity>,
    api: Arc<Api>,
    /// The envelope being written in place of hyper's answer, and how much of it is out.
    replacing: Option<(Vec<u8>, usize)>,
    /// Set once an envelope replaced hyper's answer: the connection then lingers at close.
    lingering: Option<Lingering>,
}

struct Lingering {
    until: Pin<Box<tokio::time::Sleep>>,
    drained: usize,
    closed_write: bool,
}

impl Tracked {
    fn new(inner: TcpStream, activity: Arc<Activity>, api: Arc<Api>) -> Self {
        Self { inner, activity, api, replacing: None, lingering: None }
    }

    /// Writes the replacement; once it is all out, tells hyper its `claimed` bytes are written.
    fn poll_replacing(&mut self, cx: &mut Context<'_>, claimed: usize) -> Poll<io::Result<usize>> {
        loop {
            let Some((bytes, written)) = &mut self.replacing else {
                return Poll::Ready(Ok(claimed));
            };
            if *written == bytes.len() {
                self.replacing = None;
                self.lingering = Some(Lingering {
                    until: Box::pin(tokio::time::sleep(LINGER)),
                    drained: 0,
                    closed_write: false,
                });
                return Poll::Ready(Ok(claimed));
            }
            match Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Sees whether `first` (the start of what hyper writes) is its own refusal, and if so puts
    /// the envelope in its place.
    fn intercept(&mut self, first: &[u8]) {
        if self.replacing.is_none()
            && self.lingering.is_none()
            && let Some(status) = automatic_refusal(first)
        {
            self.replacing = Some((self.api.protocol_refusal(status), 0));
        }
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.intercept(buf);
        if self.replacing.is_some() {
            return self.poll_replacing(cx, buf.len());
        }
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(first) = bufs.iter().find(|b| !b.is_empty()) {
            self.intercept(first);
        }
        if self.replacing.is_some() {
            let claimed = bufs.iter().map(|b| b.len()).sum();
            return self.poll_replacing(cx, claimed);
        }
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.replacing.is_some() {
            std::task::ready!(self.poll_replacing(cx, 0))?;
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    /// After a replaced refusal: close the sending side, then read and drop what the client
    /// still sends, for at most [`LINGER`], before the connection is dropped.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let Some(linger) = &mut this.lingering else {
            return Pin::new(&mut this.inner).poll_shutdown(cx);
        };
        if !linger.closed_write {
            std::task::ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            linger.closed_write = true;
        }
        let mut scratch = [0u8; 8192];
        loop {
            if linger.until.as_mut().poll(cx).is_ready() || linger.drained >= LINGER_BYTES {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => linger.drained += buf.filled().len(),
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}
