//! `recruitd backup` and `recruitd restore` on the embedded SQLite store: a copy taken while
//! writers record, put back after the database is lost, holds every entry acknowledged before
//! the copy began and proves its chains against a checkpoint kept outside the database.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;

/// What a run of `recruitd` said: whether it succeeded, its stdout and its stderr.
fn run(url: &str, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(BIN)
        .arg("--database-url")
        .arg(url)
        .args(args)
        .output()
        .expect("runs");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8");
    (out.status.success(), text(out.stdout), text(out.stderr))
}

#[test]
fn a_backup_taken_under_writes_restores_every_entry_acknowledged_before_it() {
    let world = World::sqlite();
    let dir = tempfile::tempdir().unwrap();
    let database = world.url.strip_prefix("sqlite://").unwrap().to_owned();
    let key = world.key.to_str().unwrap();
    let server = world.serve(&["--rate-limit-writes", "off"]);

    // Writers record batches of ten throughout, each keeping the ids acknowledged (201) with
    // the time of the answer.
    let stop = AtomicBool::new(false);
    let acknowledged = std::sync::Mutex::new(Vec::<(Instant, Vec<String>)>::new());
    let wait_for = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while acknowledged.lock().unwrap().len() < n {
            assert!(Instant::now() < deadline, "the writers did not get {n} batches in");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let copy = dir.path().join("copy.db");
    let copy = copy.to_str().unwrap();
    let kept_file = dir.path().join("kept.ndjson");
    let (began, ended) = std::thread::scope(|s| {
        for w in 0..2 {
            let (server, stop, acknowledged) = (&server, &stop, &acknowledged);
            let secret = world.secret.as_str();
            s.spawn(move || {
                let body = json!({ "entries": accesses(10, "READ", "People") }).to_string();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let key = format!("backup-{w}-{n}");
                    let ids = record_batch(server, secret, &key, &body);
                    acknowledged.lock().unwrap().push((Instant::now(), ids));
                }
            });
        }
        wait_for(20);
        // A checkpoint kept outside, then the copy, taken while the writers go on.
        let (ok, kept, said) = run(&world.url, &["--checkpoint-key", key, "audit", "checkpoint"]);
        assert!(ok, "{said}");
        std::fs::write(&kept_file, &kept).unwrap();
        let began = Instant::now();
        let (ok, said, errors) = run(&world.url, &["backup", copy]);
        let ended = Instant::now();
        assert!(ok, "{errors}");
        assert!(said.contains(copy), "{said}");
        let (again, _, refused) = run(&world.url, &["backup", copy]);
        assert!(!again && refused.contains("exists"), "a backup never overwrites: {refused}");
        let before = acknowledged.lock().unwrap().len();
        wait_for(before + 20);
        stop.store(true, Ordering::Relaxed);
        (began, ended)
    });

    // The database lost; while the server still runs, a restore in its place is refused.
    let restore = |replace: bool| {
        let args: &[&str] =
            if replace { &["restore", copy, "--replace"] } else { &["restore", copy] };
        run(&world.url, args)
    };
    let (ok, _, refused) = restore(false);
    assert!(!ok && refused.contains("--replace"), "{refused}");
    let (ok, _, refused) = restore(true);
    assert!(!ok && refused.contains("in use"), "a running server's database: {refused}");
    server.stop();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{database}{suffix}"));
    }
    let (ok, said, errors) = restore(false);
    assert!(ok, "{errors}");
    assert!(said.contains("privacy"), "what the restored database holds: {said}");

    // Every entry acknowledged before the copy began is there, nothing acknowledged after it
    // ended is, and the chains prove themselves against the checkpoint kept outside.
    let held = stored_ids(&world.url, &dir.path().join("restored.ndjson"));
    let batches = acknowledged.into_inner().unwrap();
    let (mut before, mut after) = (0, 0);
    for (at, ids) in batches.iter() {
        if *at < began {
            before += 1;
            assert!(ids.iter().all(|id| held.contains(id)), "acknowledged before the backup");
        } else if *at > ended && ids.iter().any(|id| held.contains(id)) {
            after += 1;
        }
    }
    assert!(before >= 20 && after == 0, "{before} before, {after} after held");
    let kept_file = kept_file.to_str().unwrap();
    let verify = ["--checkpoint-key", key, "audit", "verify", "--checkpoint", kept_file];
    let (ok, said, errors) = run(&world.url, &verify);
    assert!(ok, "{said}{errors}");

    // A damaged copy is refused before anything is touched.
    let damaged = dir.path().join("damaged.db");
    let mut bytes = std::fs::read(copy).unwrap();
    bytes[..16].copy_from_slice(b"not a database!\0");
    std::fs::write(&damaged, bytes).unwrap();
    let (ok, _, refused) = run(&world.url, &["restore", damaged.to_str().unwrap(), "--replace"]);
    assert!(!ok, "{refused}");
    assert_eq!(stored_ids(&world.url, &dir.path().join("still.ndjson")).len(), held.len());
}
