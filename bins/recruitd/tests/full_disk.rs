//! A full disk under each store: the SQLite database, or the tablespace of PostgreSQL's
//! database, on a small filesystem of the test's own (a tmpfs of a few MiB, mounted as root),
//! filled. Writes are refused
//! with 503 `UNAVAILABLE` and `Retry-After`, never a 500; reads that write nothing go on;
//! nothing acknowledged is lost, the chains stay whole, and writing resumes by itself once
//! room is made.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;

/// A tmpfs of `mib` MiB mounted at a new directory, unmounted when dropped.
struct SmallDisk {
    at: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    /// The filesystem, or None when this process may not mount one (not root): said loudly,
    /// and a failure where `CI` is set, since CI skips nothing.
    fn mount(mib: u32) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("volume");
        std::fs::create_dir(&at).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(&at)
            .output()
            .expect("mount runs");
        if !mounted.status.success() {
            let why = String::from_utf8_lossy(&mounted.stderr);
            assert!(std::env::var_os("CI").is_none(), "CI must mount a tmpfs: {why}");
            let _ = writeln!(std::io::stderr(), "SKIPPED: a full disk needs a tmpfs: {why}");
            return None;
        }
        Some(Self { at, _dir: dir })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}

/// Fills what is left of the filesystem holding `dir` with a file; returns its path.
fn fill(dir: &Path) -> PathBuf {
    let filler = dir.join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    let block = vec![0u8; 64 * 1024];
    while file.write_all(&block).is_ok() {}
    let _ = file.sync_all();
    filler
}

#[test]
fn a_full_disk_under_sqlite_refuses_writes_with_503_loses_nothing_and_recovers() {
    let Some(disk) = SmallDisk::mount(24) else { return };
    let url = format!("sqlite://{}", disk.at.join("recruitd.db").display());
    let world = World::new(url, tempfile::tempdir().unwrap(), Box::new(|_| {}));
    refused_until_room_is_made(&world, &disk.at);
}

#[test]
fn a_full_disk_under_postgresql_refuses_writes_with_503_loses_nothing_and_recovers() {
    let Some(disk) = SmallDisk::mount(48) else { return };
    // The database's tablespace on the small disk; the write-ahead log stays on the cluster's
    // own (a separate WAL volume, as recommended; a full WAL volume stops PostgreSQL itself).
    let space = disk.at.join("tablespace");
    std::fs::create_dir(&space).unwrap();
    let owned = Command::new("chown").arg("postgres:postgres").arg(&space).status();
    assert!(owned.is_ok_and(|s| s.success()), "the tablespace's directory is handed over");
    let cluster = recruit_adapters_pg::testkit::DedicatedCluster::start();
    let location = space.display();
    cluster.execute("postgres", &format!("CREATE TABLESPACE small LOCATION '{location}'"));
    cluster.execute("postgres", "CREATE DATABASE recruitd TABLESPACE small");
    let world = World::new(cluster.url("recruitd"), tempfile::tempdir().unwrap(), Box::new(|_| {}));
    refused_until_room_is_made(&world, &disk.at);
}

/// Writers fill the disk holding `volume` under `world`'s server, then room is made again.
fn refused_until_room_is_made(world: &World, volume: &Path) {
    let server = world.serve(&["--rate-limit-writes", "off", "--rate-limit-reads", "off"]);
    let body = json!({ "entries": accesses(50, "READ", "People") }).to_string();
    let mut acknowledged: Vec<String> = Vec::new();
    let write = |n: &mut u32, acknowledged: &mut Vec<String>| {
        *n += 1;
        let key = format!("disk-{n}");
        let (status, headers, said) =
            server.post("/v1/audit-logs/privacy", &world.secret, Some(&key), &body);
        match status {
            201 => acknowledged.extend(entry_ids(&said)),
            503 => {
                assert_eq!(code(&serde_json::from_str(&said).unwrap()), "UNAVAILABLE", "{said}");
                assert!(!header(&headers, "retry-after").is_empty(), "{headers:?}");
            }
            other => panic!("a write answered {other} on a full disk: {said}"),
        }
        status
    };

    // Room for a few batches, then none: every write refused, none a 500.
    let mut n = 0;
    for _ in 0..20 {
        assert_eq!(write(&mut n, &mut acknowledged), 201, "the disk has room yet");
    }
    let filler = fill(volume);
    let mut refused = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while refused < 10 {
        assert!(Instant::now() < deadline, "the writes were never refused");
        if write(&mut n, &mut acknowledged) == 503 {
            refused += 1;
        }
    }
    let full = acknowledged.len();

    // Reads that write nothing go on.
    let (status, _, org) = server.request("GET", "/v1/organization", Some(&world.secret));
    assert_eq!(status, 200, "{org}");
    // An export to the full disk fails, says why, and leaves no file, whole or partial.
    let file = volume.join("export.ndjson");
    let out = Command::new(BIN)
        .args(["--database-url", &world.url, "audit", "export", "--ledger", "privacy"])
        .arg(&file)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("No space left"), "{said}");
    assert!(!file.exists() && !volume.join("export.ndjson.partial").exists(), "{said}");

    // Room again: writing resumes by itself.
    std::fs::remove_file(&filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while write(&mut n, &mut acknowledged) != 201 {
        assert!(Instant::now() < deadline, "writing did not resume once room was made");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(acknowledged.len() > full);
    server.stop();

    // Nothing acknowledged is lost, and the chains prove themselves.
    let held = stored_ids(&world.url, &volume.join("privacy.ndjson"));
    let lost: Vec<_> = acknowledged.iter().filter(|id| !held.contains(*id)).collect();
    assert!(lost.is_empty(), "{} acknowledged entries lost: {lost:?}", lost.len());
    cli(&world.url, &["audit", "verify"]);
}
