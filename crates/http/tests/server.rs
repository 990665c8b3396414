//! The server loop over real TCP: graceful shutdown lets in-flight requests finish and refuses
//! new connections; slow or oversized request heads are cut off; idle connections are closed
//! and the number open is capped; a body that stops arriving is cut off at the deadline, and
//! bodies wait for room in the memory they may hold.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use recruit_adapters_sqlite::SqliteStore;
use recruit_domain::model::Role;
use recruit_domain::{OrganizationId, Scope, Uuid};
use recruit_http::{Api, HttpConfig};
use recruit_ports::faulty::{Fault, Faulty};
use recruit_ports::testkit::{ORG_A, user_id};

struct Running {
    port: u16,
    store: Arc<Faulty<SqliteStore>>,
    secret: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
    _dir: tempfile::TempDir,
}

async fn start(configure: impl FnOnce(&mut HttpConfig)) -> Running {
    let crate::common::World { service, store, dir } =
        crate::common::world_service(recruit_service::limits::RateLimitConfig::DEFAULT, None).await;
    let org = OrganizationId::from_uuid(Uuid::from_u128(ORG_A));
    let (_, secret) = service
        .create_token(org, user_id(ORG_A, Role::Owner), "t".into(), Scope::ALL.to_vec(), None)
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut http = HttpConfig::new(format!("http://127.0.0.1:{port}"));
    configure(&mut http);
    let api = Arc::new(Api::new(service, http));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(recruit_http::serve(listener, api, async move {
        let _ = stopped.await;
    }));
    Running { port, store, secret, stop: Some(stop), done, _dir: dir }
}

/// One request over a new connection; the status line, or what went wrong.
fn get(port: u16, secret: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "GET /v1/organization HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response.lines().next().unwrap_or_default().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_requests_in_flight_finish_and_refuses_new_ones() {
    let mut server = start(|c| c.shutdown_grace = Duration::from_secs(5)).await;
    server.store.set(Fault::Slow(Duration::from_millis(800)));
    let (port, secret) = (server.port, server.secret.clone());
    let in_flight = tokio::task::spawn_blocking(move || get(port, &secret));
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.stop.take().unwrap().send(()).unwrap();
    let status = in_flight.await.unwrap().unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK", "the request in flight finishes");
    server.done.await.unwrap().unwrap();
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "no new connections after shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_still_running_when_the_grace_period_ends_does_not_hold_the_server() {
    let mut server = start(|c| {
        c.shutdown_grace = Duration::from_millis(300);
        c.request_deadline = Duration::from_secs(30);
    })
    .await;
    server.store.set(Fault::Slow(Duration::from_secs(20)));
    let (port, secret) = (server.port, server.secret.clone());
    let _in_flight = tokio::task::spawn_blocking(move || get(port, &secret));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    server.stop.take().unwrap().send(()).unwrap();
    server.done.await.unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(3), "stopped after the grace period");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_oversized_request_heads_are_cut_off() {
    let server = start(|c| {
        c.header_read_timeout = Duration::from_millis(300);
        c.max_header_bytes = 8192;
    })
    .await;
    let port = server.port;
    let outcome = tokio::task::spawn_blocking(move || {
        // A head that never ends: the connection is closed once the timeout passes.
        let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
        slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        slow.write_all(b"GET /v1/organization HTTP/1.1\r\nHost: x\r\n").unwrap();
        let started = Instant::now();
        let mut buf = Vec::new();
        let _ = slow.read_to_end(&mut buf);
        let slow_closed_after = started.elapsed();

        // A head larger than allowed is refused.
        let mut big = TcpStream::connect(("127.0.0.1", port)).unwrap();
        big.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let filler = "a".repeat(20_000);
        let _ =
            write!(big, "GET /v1/organization HTTP/1.1\r\nHost: x\r\nX-Filler: {filler}\r\n\r\n");
        let mut response = String::new();
        let _ = big.read_to_string(&mut response);
        (slow_closed_after, response)
    })
    .await
    .unwrap();
    assert!(
        outcome.0 < Duration::from_secs(3),
        "the slow client was cut off after {:?}",
        outcome.0
    );
    let (head, body) = outcome.1.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{}", outcome.1));
    assert!(head.starts_with("HTTP/1.1 431 "), "{head}");
    assert!(head.contains("content-type: application/json"), "{head}");
    let json: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(json["error"]["code"], "PAYLOAD_TOO_LARGE", "{json}");
    assert!(json["error"]["message"].as_str().unwrap().contains("8192 bytes"), "{json}");
}

/// What hyper refuses before there is a request (a byte not allowed in the target or in a
/// header, a malformed request line) is answered in the error envelope too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_that_cannot_be_parsed_get_the_envelope() {
    let server = start(|_| {}).await;
    let port = server.port;
    let heads: [&[u8]; 4] = [
        b"GET /v1/organ\x01ization HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /v1/organization HTTP/1.1\r\nHost: x\r\nX-Bad\x7f: 1\r\n\r\n",
        b"GET /v1/organization HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
        b"GET\x00/ HTTP/1.1\r\n\r\n",
    ];
    let answers = tokio::task::spawn_blocking(move || {
        heads
            .iter()
            .map(|head| {
                let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
                stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                stream.write_all(head).unwrap();
                let mut response = String::new();
                let _ = stream.read_to_string(&mut response);
                (String::from_utf8_lossy(head).into_owned(), response)
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (head, response) in answers {
        let (status, body) =
            response.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{head:?}: {response:?}"));
        assert!(status.starts_with("HTTP/1.1 400 "), "{head:?}: {status}");
        assert!(status.contains("x-request-id: "), "{head:?}: {status}");
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(json["error"]["code"], "VALIDATION_FAILED", "{head:?}: {json}");
    }
    // The server goes on serving.
    let secret = server.secret.clone();
    let status = tokio::task::spawn_blocking(move || get(port, &secret)).await.unwrap().unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_clients_are_served_on_the_same_port() {
    use http_body_util::{BodyExt, Empty};
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let server = start(|_| {}).await;
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    for _ in 0..3 {
        let request =
            hyper::Request::get(format!("http://127.0.0.1:{}/v1/organization", server.port))
                .header("authorization", format!("Bearer {}", server.secret))
                .body(Empty::<bytes::Bytes>::new())
                .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(
            (response.version(), response.status()),
            (hyper::Version::HTTP_2, hyper::StatusCode::OK)
        );
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert!(serde_json::from_slice::<serde_json::Value>(&body).unwrap()["id"].is_string());
    }
}

/// Reads until the server closes the connection; how long that took, or `None` if it was
/// still open after `within`.
fn closed_within(stream: &mut TcpStream, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    stream.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Some(started.elapsed()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Some(started.elapsed());
            }
            Err(_) => return None,
        }
    }
}

/// The value of a metric without labels, as `GET /metrics` reports it. A connection closed on
/// arrival (the server has not yet seen a slot free up under a connection cap) is tried again.
fn metric(port: u16, name: &str) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    let text = loop {
        let scrape = || -> std::io::Result<String> {
            let mut stream = TcpStream::connect(("127.0.0.1", port))?;
            stream.set_read_timeout(Some(Duration::from_secs(10)))?;
            write!(stream, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
            let mut text = String::new();
            stream.read_to_string(&mut text)?;
            Ok(text)
        };
        match scrape() {
            Ok(text) if !text.is_empty() => break text,
            other => assert!(Instant::now() < deadline, "no metrics within 5 s: {other:?}"),
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in the metrics: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_send_nothing_or_sit_idle_are_closed() {
    let server = start(|c| c.idle_timeout = Duration::from_millis(500)).await;
    let (port, secret) = (server.port, server.secret.clone());
    tokio::task::spawn_blocking(move || {
        // Connections that never send a byte.
        let mut silent: Vec<TcpStream> =
            (0..20).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
        // A keep-alive connection that asks once, then sits idle.
        let mut idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            idle,
            "GET /v1/organization HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\n\r\n"
        )
        .unwrap();
        let mut head = [0u8; 12];
        idle.read_exact(&mut head).unwrap();
        assert_eq!(&head, b"HTTP/1.1 200");
        for stream in silent.iter_mut().chain([&mut idle]) {
            let closed = closed_within(stream, Duration::from_secs(5));
            assert!(closed.is_some_and(|d| d < Duration::from_secs(3)), "closed after {closed:?}");
        }
        // The server counts a connection once it has closed it: the count may trail the
        // close the client saw by a moment.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let closed = metric(port, "recruitd_http_connections_idle_closed_total");
            if closed >= 21.0 {
                break;
            }
            assert!(Instant::now() < deadline, "{closed} idle connections counted within 5 s");
            std::thread::sleep(Duration::from_millis(50));
        }
    })
    .await
    .unwrap();
    // A connection waiting for its answer is not idle, however long the answer takes.
    server.store.set(Fault::Slow(Duration::from_millis(1500)));
    let (port, secret) = (server.port, server.secret.clone());
    let status = tokio::task::spawn_blocking(move || get(port, &secret)).await.unwrap().unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_cap_are_closed_on_arrival_and_the_others_served() {
    // One address may take every slot here: this is about the cap of all connections.
    let server = start(|c| {
        c.max_connections = 4;
        c.max_connections_per_address = Some(4);
    })
    .await;
    let (port, secret) = (server.port, server.secret.clone());
    tokio::task::spawn_blocking(move || {
        let mut open: Vec<TcpStream> =
            (0..4).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
        // Let the server take all four before the fifth arrives.
        std::thread::sleep(Duration::from_millis(200));
        let mut fifth = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let closed = closed_within(&mut fifth, Duration::from_secs(5));
        assert!(closed.is_some_and(|d| d < Duration::from_secs(1)), "closed after {closed:?}");
        // The connections already open are served.
        write!(
            open[0],
            "GET /v1/organization HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        open[0].read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        // Its slot is free again once the server has seen it close.
        let deadline = Instant::now() + Duration::from_secs(5);
        while get(port, &secret).unwrap_or_default() != "HTTP/1.1 200 OK" {
            assert!(Instant::now() < deadline, "no connection was served after one closed");
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(metric(port, "recruitd_http_connections_refused_total") >= 1.0);
        assert!(metric(port, "recruitd_http_connections_open") >= 3.0, "the idle three");
        drop(open);
    })
    .await
    .unwrap();
}

/// A connection from `ip` (an address of the loopback range) to the server's port.
fn connect_from(ip: [u8; 4], port: u16) -> TcpStream {
    let connected = tokio::runtime::Handle::current().block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(std::net::SocketAddr::from((ip, 0)))?;
        socket.connect(std::net::SocketAddr::from(([127, 0, 0, 1], port))).await
    });
    let stream = connected.unwrap().into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

/// One client's idle sockets hold at most its own share of the slots: past it, that client's
/// new connections are closed on arrival, while another client is still served; a trusted
/// proxy, which speaks for many clients, is not held to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_holds_at_most_its_share_of_the_connections() {
    let server = start(|c| c.max_connections = 8).await;
    let (port, secret) = (server.port, server.secret.clone());
    tokio::task::spawn_blocking(move || {
        // A quarter of 8 by default: two idle sockets of 127.0.0.2.
        let _idle: Vec<TcpStream> = (0..2).map(|_| connect_from([127, 0, 0, 2], port)).collect();
        std::thread::sleep(Duration::from_millis(200));
        let mut third = connect_from([127, 0, 0, 2], port);
        let closed = closed_within(&mut third, Duration::from_secs(5));
        assert!(closed.is_some_and(|d| d < Duration::from_secs(1)), "closed after {closed:?}");
        // Another client is served meanwhile.
        assert_eq!(get(port, &secret).unwrap(), "HTTP/1.1 200 OK");
        assert!(metric(port, "recruitd_http_connections_refused_total") >= 1.0);
    })
    .await
    .unwrap();

    let proxy = start(|c| {
        c.max_connections = 8;
        c.trusted_proxies = vec!["127.0.0.3/32".parse().unwrap()];
    })
    .await;
    let port = proxy.port;
    tokio::task::spawn_blocking(move || {
        let mut open: Vec<TcpStream> = (0..4).map(|_| connect_from([127, 0, 0, 3], port)).collect();
        std::thread::sleep(Duration::from_millis(200));
        for stream in &mut open {
            assert_eq!(closed_within(stream, Duration::from_millis(300)), None, "a proxy's");
        }
    })
    .await
    .unwrap();
}

/// A batch's head and the start of its body, declaring `length` bytes in all.
fn post_head(stream: &mut TcpStream, secret: &str, length: usize, start: &str) {
    write!(
        stream,
        "POST /v1/audit-logs/privacy HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\n\
         Content-Type: application/json\r\nIdempotency-Key: \"k-1\"\r\n\
         Content-Length: {length}\r\nConnection: close\r\n\r\n{start}"
    )
    .unwrap();
}

/// A whole request's answer over a new connection, and how long it took.
fn answered(port: u16, send: impl FnOnce(&mut TcpStream)) -> (String, Duration) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let started = Instant::now();
    send(&mut stream);
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    (response, started.elapsed())
}

/// A client that stops sending its body is answered at the request deadline and its
/// connection closed; while it held the room for bodies, another body waited for room (a
/// request without one did not), and was read once the stalled one let go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stops_arriving_is_cut_off_at_the_deadline_and_bodies_wait_for_room() {
    let deadline = Duration::from_millis(1500);
    let server = start(|c| {
        c.request_deadline = deadline;
        c.max_body_memory = 4096;
    })
    .await;
    let (port, secret) = (server.port, server.secret.clone());
    let outcome = tokio::task::spawn_blocking(move || {
        let stalled = {
            let secret = secret.clone();
            // Declares all the room there is, sends a few bytes of it, then nothing.
            std::thread::spawn(move || {
                answered(port, |s| post_head(s, &secret, 4096, r#"{"entries""#))
            })
        };
        std::thread::sleep(Duration::from_millis(300));
        let started = Instant::now();
        let read = (get(port, &secret).unwrap(), started.elapsed());
        let waiting = answered(port, |s| post_head(s, &secret, 2, "{}"));
        (stalled.join().unwrap(), read, waiting)
    })
    .await
    .unwrap();
    let ((stalled, stalled_after), (read, read_after), (waiting, waiting_after)) = outcome;
    assert!(stalled.starts_with("HTTP/1.1 504 "), "{stalled}");
    assert!(stalled.contains("did not arrive whole"), "{stalled}");
    assert!(
        stalled_after >= deadline && stalled_after < deadline + Duration::from_secs(1),
        "the stalled body was answered after {stalled_after:?}"
    );
    assert!(read.starts_with("HTTP/1.1 200 "), "{read}");
    assert!(read_after < Duration::from_millis(500), "a read waited {read_after:?}");
    // Read only once the stalled body let go of the room, about 1.2 s after it was sent.
    assert!(waiting.starts_with("HTTP/1.1 400 "), "{waiting}");
    assert!(waiting.contains("VALIDATION_FAILED"), "{waiting}");
    assert!(waiting_after >= Duration::from_millis(900), "read after {waiting_after:?}");
}
