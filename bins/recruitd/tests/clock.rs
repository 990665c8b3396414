//! A replica whose clock is off the database's, by libfaketime (Debian's `faketime`, installed
//! when missing) preloaded into a second `recruitd serve` on the same PostgreSQL database: it
//! refuses requests with 503 until the clocks agree, and meanwhile purges none of the
//! idempotency keys its clock, a day ahead, would call expired; the other replica's retry is
//! still answered from its key, and the chain verifies.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;

/// libfaketime's preloaded library, installed from Debian's packages when missing.
fn libfaketime() -> PathBuf {
    let found = || {
        let out = Command::new("sh")
            .args(["-c", "ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -1"])
            .output()
            .expect("sh runs");
        Some(String::from_utf8_lossy(&out.stdout).trim().to_owned()).filter(|p| !p.is_empty())
    };
    if let Some(path) = found() {
        return PathBuf::from(path);
    }
    apt_install(&["libfaketime"]);
    PathBuf::from(found().expect("libfaketime installed"))
}

/// `recruitd serve` on `url` whose clock is shifted by what `offset_file` says (libfaketime's
/// `+25h`, `+0`), read anew at every reading of the clock; its monotonic clock is left alone.
fn skewed_server(url: &str, key: &Path, offset_file: &Path) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(BIN)
        .args(["--database-url", url, "--checkpoint-key"])
        .arg(key)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("RUST_LOG", "error")
        .env("LD_PRELOAD", libfaketime())
        .env("FAKETIME_TIMESTAMP_FILE", offset_file)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .stdout(Stdio::null())
        .spawn()
        .expect("the server starts");
    let server = Server { child, port };
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the skewed server did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_off_the_databases_clock_refuses_requests_and_purges_nothing() {
    let world = World::postgres().await;
    tokio::task::block_in_place(|| {
        let dir = tempfile::tempdir().unwrap();
        let server = world.serve(&[]);
        let body = json!({ "entries": accesses(3, "READ", "People") }).to_string();
        let (status, _, first) =
            server.post("/v1/audit-logs/privacy", &world.secret, Some("clock-1"), &body);
        assert_eq!(status, 201, "{first}");

        // A second replica a day and an hour ahead: past the keys' 24 hours.
        let offset = dir.path().join("offset");
        std::fs::write(&offset, "+25h\n").unwrap();
        let skewed = skewed_server(&world.url, &world.key, &offset);
        let (status, headers, said) =
            skewed.request("GET", "/v1/organization", Some(&world.secret));
        assert_eq!((status, code(&said)), (503, "UNAVAILABLE"), "{said}");
        assert!(said["error"]["message"].as_str().unwrap().contains("clock"), "{said}");
        assert_eq!(header(&headers, "retry-after"), "5");
        let (status, _, said) = skewed.request("GET", "/readyz", None);
        assert_eq!(status, 503, "not ready: {said}");
        let (status, _, said) =
            skewed.post("/v1/audit-logs/privacy", &world.secret, Some("clock-2"), &body);
        assert_eq!(status, 503, "no write either: {said}");
        // Nor a single sign-on, whose sign-in age and ID token times it could not check.
        let (status, _, page) =
            skewed.request_raw("GET", "/console/sso/callback?state=s&code=c", None);
        assert_eq!(status, 503, "no sign-in either: {page}");
        assert!(page.contains("clock disagrees"), "{page}");
        // Its purge at start has had its chance: the key is still there, so the first
        // replica's retry is answered from it, not written again.
        std::thread::sleep(Duration::from_secs(2));
        let (status, headers, again) =
            server.post("/v1/audit-logs/privacy", &world.secret, Some("clock-1"), &body);
        assert_eq!(status, 201, "{again}");
        assert_eq!(header(&headers, "idempotent-replayed"), "true", "{headers:?}");
        assert_eq!(again, first, "the same entries");

        // The clocks agree again: within a check's period, it serves.
        std::fs::write(&offset, "+0\n").unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (status, _, said) = skewed.request("GET", "/v1/organization", Some(&world.secret));
            if status == 200 {
                break;
            }
            assert!(Instant::now() < deadline, "still refused once the clocks agree: {said}");
            std::thread::sleep(Duration::from_millis(200));
        }
        let (status, _, said) =
            skewed.post("/v1/audit-logs/privacy", &world.secret, Some("clock-3"), &body);
        assert_eq!(status, 201, "{said}");
        let stored: Value = serde_json::from_str(&said).unwrap();
        assert_eq!(stored["entries"].as_array().unwrap().len(), 3);
        skewed.stop();
        server.stop();
        cli(&world.url, &["audit", "verify"]);
    });
}
