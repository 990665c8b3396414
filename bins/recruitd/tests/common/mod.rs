//! What the binary's end-to-end tests share: the CLI, a served `recruitd` and HTTP/1.1 by hand.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use recruit_domain::model::Role;
use recruit_ports::testkit::user_id;
use serde_json::Value;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_recruitd");

/// Runs a CLI command against the database; returns stdout, or panics with stderr.
pub(crate) fn cli(database_url: &str, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("--database-url")
        .arg(database_url)
        .args(args)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "recruitd {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Creates a token with the CLI; returns its id and its secret.
pub(crate) fn token_with_id(
    database_url: &str,
    org: u128,
    role: Role,
    scopes: &str,
) -> (String, String) {
    let user = user_id(org, role).to_string();
    let out =
        cli(database_url, &["token", "create", "--user", &user, "--scopes", scopes, "--json"]);
    let json: Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(json["user_id"], user);
    (
        json["id"].as_str().expect("an id").to_owned(),
        json["token"].as_str().expect("a secret").to_owned(),
    )
}

pub(crate) fn token(database_url: &str, org: u128, role: Role, scopes: &str) -> String {
    token_with_id(database_url, org, role, scopes).1
}

/// The organization `n` of the test world.
pub(crate) fn org_id(n: u128) -> recruit_domain::OrganizationId {
    recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(n))
}

/// A running server, stopped (SIGTERM) when dropped if the test did not stop it.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) port: u16,
}

impl Server {
    pub(crate) fn start(database_url: &str) -> Self {
        Self::spawn(database_url, &[], "warn", Stdio::inherit())
    }

    /// `recruitd serve` with `serve_args`, logging at `log_level` to `stderr`; returns once it
    /// listens.
    pub(crate) fn spawn(
        database_url: &str,
        serve_args: &[&str],
        log_level: &str,
        stderr: Stdio,
    ) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        Self::spawn_at(port, database_url, serve_args, log_level, stderr)
    }

    /// [`Server::spawn`] on `port`.
    pub(crate) fn spawn_at(
        port: u16,
        database_url: &str,
        serve_args: &[&str],
        log_level: &str,
        stderr: Stdio,
    ) -> Self {
        let child = Command::new(BIN)
            .args(["--database-url", database_url, "serve", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .args(serve_args)
            .env("RUST_LOG", log_level)
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("the server starts");
        let mut server = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(server.child.try_wait().unwrap().is_none(), "the server exited at start");
            assert!(Instant::now() < deadline, "the server did not listen within 30 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// One HTTP/1.1 request; returns the status, the headers (lowercased names) and the JSON.
    pub(crate) fn request(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
    ) -> (u16, Vec<(String, String)>, Value) {
        let (status, headers, body) = self.request_raw(method, path, token);
        (status, headers, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// [`Server::request`], the body as it came (chunks and all).
    pub(crate) fn request_raw(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
    ) -> (u16, Vec<(String, String)>, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connects");
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n"
        )
        .unwrap();
        response(stream)
    }

    /// A POST of a JSON `body` with an `Idempotency-Key` when given; returns the status, the
    /// headers and the body as sent.
    pub(crate) fn post(
        &self,
        path: &str,
        token: &str,
        key: Option<&str>,
        body: &str,
    ) -> (u16, Vec<(String, String)>, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connects");
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let key = key.map(|k| format!("Idempotency-Key: {k}\r\n")).unwrap_or_default();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n{key}\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        response(stream)
    }

    /// A PATCH of a merge patch `body`, with `If-Match` when given; returns the status, the
    /// headers and the JSON.
    pub(crate) fn patch(
        &self,
        path: &str,
        token: &str,
        if_match: Option<&str>,
        body: &str,
    ) -> (u16, Vec<(String, String)>, Value) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connects");
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let if_match = if_match.map(|t| format!("If-Match: {t}\r\n")).unwrap_or_default();
        write!(
            stream,
            "PATCH {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\
             {if_match}Content-Type: application/merge-patch+json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let (status, headers, body) = response(stream);
        (status, headers, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    pub(crate) fn get(&self, path: &str, token: &str) -> (u16, Value) {
        let (status, _, json) = self.request("GET", path, Some(token));
        (status, json)
    }

    /// The server's base URL.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Kills the server at once (SIGKILL), as a crash does.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub(crate) fn stop(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
        let status = self.child.wait().expect("the server exits");
        std::mem::forget(self);
        status
    }
}

/// Reads a whole HTTP/1.1 response (the server closes the connection after it): the status,
/// the headers (lowercased names) and the body.
pub(crate) fn response(mut stream: TcpStream) -> (u16, Vec<(String, String)>, String) {
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("a response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head and a body");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn code(json: &Value) -> &str {
    json["error"]["code"].as_str().unwrap_or_else(|| panic!("not an error envelope: {json}"))
}

/// The value of the header `name`.
pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
}

/// The value of an unlabelled counter in the server's metrics.
pub(crate) fn counter(server: &Server, name: &str) -> f64 {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in the metrics: {text}"))
}

/// The body of a chunked HTTP/1.1 response, if it ends with its last chunk.
pub(crate) fn dechunk(mut raw: &str) -> Option<String> {
    let mut body = String::new();
    loop {
        let (size, rest) = raw.split_once("\r\n")?;
        let size = usize::from_str_radix(size.trim(), 16).ok()?;
        if size == 0 {
            return Some(body);
        }
        body.push_str(rest.get(..size)?);
        raw = rest.get(size..)?.strip_prefix("\r\n")?;
    }
}

/// One HTTP/1.1 request with `headers` and `body`; the status, headers and body.
pub(crate) fn send(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let headers: String = headers.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{headers}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    response(stream)
}

/// `pairs` as a form's body.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    let encode = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    pairs.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect::<Vec<_>>().join("&")
}
