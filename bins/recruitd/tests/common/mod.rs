//! What the binary's end-to-end tests share: the CLI, a served `recruitd` and HTTP/1.1 by hand.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use std::path::PathBuf;

use std::collections::BTreeMap;

use recruit_client::Client;
use recruit_domain::Timestamp;
use recruit_domain::chain::{ChainPoint, ExportLine, Ledger};
use recruit_domain::model::Role;
use recruit_domain::model::{LogStream, LogStreamState};
use recruit_ports::testkit::{ORG_A, user_id, world};
use serde_json::{Value, json};

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

/// The scopes of the world's owner token.
pub(crate) const SCOPES: &str = "audit_logs:read,audit_logs:write,audit_logs:review,jobs:read,\
                      organization:read,organization:admin,log_streams:admin,users:read,users:write";

/// A database holding the test world, a checkpoint key, and a way to run raw SQL on it with
/// the ledgers' append-only triggers off.
pub(crate) struct World {
    pub(crate) url: String,
    pub(crate) key: PathBuf,
    pub(crate) secret: String,
    pub(crate) tamper: Box<dyn Fn(&str)>,
    _dir: tempfile::TempDir,
}

impl World {
    pub(crate) fn new(url: String, dir: tempfile::TempDir, tamper: Box<dyn Fn(&str)>) -> Self {
        let document = dir.path().join("world.json");
        std::fs::write(&document, serde_json::to_string(&world()).unwrap()).unwrap();
        cli(&url, &["import", document.to_str().unwrap()]);
        let key = dir.path().join("checkpoint.pem");
        cli(&url, &["audit", "keygen", key.to_str().unwrap()]);
        let secret = token(&url, ORG_A, Role::Owner, SCOPES);
        Self { url, key, secret, tamper, _dir: dir }
    }

    pub(crate) fn sqlite() -> Self {
        use diesel::Connection;
        use diesel::connection::SimpleConnection;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recruitd.db");
        let url = format!("sqlite://{}", path.display());
        let tamper = Box::new(move |sql: &str| {
            let mut c = diesel::SqliteConnection::establish(&path.to_string_lossy()).unwrap();
            c.batch_execute(
                "DROP TRIGGER IF EXISTS privacy_audit_logs_no_update; \
                 DROP TRIGGER IF EXISTS privacy_audit_logs_no_delete;",
            )
            .unwrap();
            c.batch_execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        });
        Self::new(url, dir, tamper)
    }

    pub(crate) async fn postgres() -> Self {
        let db = recruit_adapters_pg::testkit::TestDatabase::fresh().await;
        let url = db.url().to_owned();
        let handle = tokio::runtime::Handle::current();
        let tamper = Box::new(move |sql: &str| {
            let sql = format!("ALTER TABLE privacy_audit_logs DISABLE TRIGGER USER; {sql}");
            tokio::task::block_in_place(|| handle.block_on(db.batch_execute(&sql)));
        });
        tokio::task::block_in_place(|| Self::new(url, tempfile::tempdir().unwrap(), tamper))
    }

    /// `recruitd serve` on this world, signing checkpoints, with `args` besides.
    pub(crate) fn serve(&self, args: &[&str]) -> Server {
        let args = [&["--checkpoint-key", self.key.to_str().unwrap()], args].concat();
        Server::spawn(&self.url, &args, "error", Stdio::inherit())
    }

    pub(crate) fn client(&self, server: &Server) -> Client {
        Client::builder(server.url(), &self.secret).build().unwrap()
    }
}

/// Accesses of organization A's member, recorded now, of `category`.
pub(crate) fn accesses(n: usize, category: &str, menu: &str) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({
                "access_time": Timestamp::now().to_string(),
                "account_id": format!("{:032x}", 0xC11E_0000 + i),
                "ip_addresses": ["198.51.100.7"],
                "data_subject": {"type": "EMPLOYEE", "user": user_id(ORG_A, Role::Member).to_string()},
                "access_data": ["NAME"],
                "access_menu": menu,
                "access_menu_path": "/people",
                "activity_category": category
            })
        })
        .collect()
}

/// What a log stream's receiver holds, by position, once it holds every position up to
/// `last`: `read` returns the lines it holds now (a line held twice must be the same line) and
/// what to say if they never get there. Panics after 60 s.
pub(crate) async fn held_up_to<F, R>(last: u64, mut read: F) -> BTreeMap<u64, ExportLine>
where
    F: FnMut() -> R,
    R: std::future::Future<Output = (Vec<ExportLine>, String)>,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (held, context) = read().await;
        let mut lines = BTreeMap::new();
        for line in held {
            let position = line.position.expect("a chained line");
            if let Some(seen) = lines.insert(position, line.clone()) {
                assert_eq!(seen, line, "position {position} received twice, differently");
            }
        }
        if lines.keys().next_back() >= Some(&last) {
            return lines;
        }
        let positions: Vec<_> = lines.keys().collect();
        assert!(Instant::now() < deadline, "not up to {last}: {positions:?}; {context}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `lines` are a chain from its start, each linked to the one before, with no gap.
pub(crate) fn chained(lines: &BTreeMap<u64, ExportLine>) {
    let mut point = ChainPoint::START;
    for line in lines.values() {
        point = point.next(Ledger::Privacy, line.organization_id, line).unwrap();
    }
    assert_eq!(point.position, *lines.keys().next_back().unwrap(), "no gap");
}

/// The log stream `stream` once it is in `state`; panics after 30 s.
pub(crate) async fn in_state(
    client: &Client,
    stream: &LogStream,
    state: LogStreamState,
) -> LogStream {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = client.log_stream(stream.id).await.unwrap();
        if now.state == state {
            return now;
        }
        assert!(Instant::now() < deadline, "never {state:?}: {now:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A receiver or collector of the log streams' tests: a Python script serving on 127.0.0.1
/// that prints `listening on PORT` once ready, steered over HTTP (`POST /__…`), reporting what
/// it took at `GET /__received`; stopped when dropped.
pub(crate) struct Peer {
    child: Child,
    /// Where it serves.
    pub(crate) url: String,
    http: reqwest::Client,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    /// `script` (in `bins/recruitd/tests`) run by `python`, once it listens.
    pub(crate) fn start(python: &std::path::Path, script: &str) -> Self {
        use std::io::{BufRead, BufReader};
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(script);
        let mut child = Command::new(python)
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().strip_prefix("listening on ").expect("the ready line").to_owned();
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self { child, url: format!("http://127.0.0.1:{port}"), http: reqwest::Client::new() }
    }

    /// Steers it: `POST /{path}` with `body`.
    pub(crate) async fn control(&self, path: &str, body: Value) {
        let answer = self.http.post(format!("{}/{path}", self.url)).json(&body).send().await;
        assert!(answer.unwrap().status().is_success(), "{path}");
    }

    /// What it took.
    pub(crate) async fn received(&self) -> Value {
        let answer = self.http.get(format!("{}/__received", self.url)).send().await.unwrap();
        answer.json().await.unwrap()
    }
}

/// Debian's `packages`, installed with apt-get (waiting for another test's install to finish,
/// and reading the package lists first when they are missing).
pub(crate) fn apt_install(packages: &[&str]) {
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-q", "--no-install-recommends"])
            .args(["-o", "DPkg::Lock::Timeout=120"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success())
    };
    if !install() {
        let update = ["update", "-q", "-o", "DPkg::Lock::Timeout=120"];
        let updated = Command::new("apt-get").args(update).status();
        assert!(updated.is_ok_and(|s| s.success()), "apt-get update");
        assert!(install(), "apt-get install {packages:?}");
    }
}

/// Records a batch of `body` through `server` with the idempotency key `key`: the ids of its
/// entries, once acknowledged (any other answer panics).
pub(crate) fn record_batch(server: &Server, secret: &str, key: &str, body: &str) -> Vec<String> {
    let (status, _, said) = server.post("/v1/audit-logs/privacy", secret, Some(key), body);
    assert_eq!(status, 201, "{said}");
    entry_ids(&said)
}

/// The ids of the entries of a recording's answer.
pub(crate) fn entry_ids(answer: &str) -> Vec<String> {
    let stored: Value = serde_json::from_str(answer).unwrap();
    let entries = stored["entries"].as_array().expect("entries").iter();
    entries.map(|e| e["id"].as_str().unwrap().to_owned()).collect()
}

/// The ids of organization A's privacy entries in the database at `url`, through
/// `audit export` to `file`.
pub(crate) fn stored_ids(url: &str, file: &std::path::Path) -> std::collections::HashSet<String> {
    let _ = std::fs::remove_file(file);
    let org = org_id(ORG_A).to_string();
    cli(url, &["audit", "export", "--ledger", "privacy", "--org", &org, file.to_str().unwrap()]);
    let lines = std::fs::read_to_string(file).unwrap();
    lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["entry"]["id"].as_str().unwrap().into())
        .collect()
}
