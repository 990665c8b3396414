//! The restore drill on PostgreSQL with pgBackRest (Debian's package, installed when missing):
//! WAL archived and a full backup taken while writers record, the data directory destroyed,
//! then restored to the latest point and to a named time. Every entry acknowledged before the
//! restore point is there, none requested after a named time is, and the chains prove
//! themselves against a checkpoint kept outside the cluster. It prints the recovery point and
//! how long each restore took.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use recruit_adapters_pg::testkit::DedicatedCluster;
use serde_json::json;

use crate::common::*;

/// pgBackRest, installed from Debian's packages when missing.
fn install_pgbackrest() {
    let present = Command::new("pgbackrest").arg("version").output();
    if present.is_ok_and(|o| o.status.success()) {
        return;
    }
    apt_install(&["pgbackrest"]);
}

/// Runs `pgbackrest` with the drill's configuration, as the `postgres` user.
fn pgbackrest(config: &Path, args: &[&str]) {
    let out = Command::new("runuser")
        .args(["-u", "postgres", "--", "pgbackrest"])
        .arg(format!("--config={}", config.display()))
        .arg("--stanza=drill")
        .args(args)
        .output()
        .expect("pgbackrest runs");
    assert!(
        out.status.success(),
        "pgbackrest {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A batch written: when it was sent, when it was acknowledged, and its entries' ids.
struct Written {
    sent: SystemTime,
    acknowledged: SystemTime,
    ids: Vec<String>,
}

/// Destroys the cluster's data directory (the server stopped as a crash would), restores it
/// with `restore` and starts it; returns how long until it took writes again.
fn destroyed_and_restored(cluster: &DedicatedCluster, config: &Path, restore: &[&str]) -> f64 {
    cluster.crash();
    let data = cluster.data_dir();
    std::fs::remove_dir_all(data).unwrap();
    std::fs::create_dir(data).unwrap();
    let owned = Command::new("chown").arg("postgres:postgres").arg(data).status();
    assert!(owned.is_ok_and(|s| s.success()));
    let started = Instant::now();
    pgbackrest(config, &[&["restore"], restore].concat());
    cluster.start_again();
    let url = cluster.url("postgres");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let out = Command::new("psql").args([&url, "-XAtc", "SELECT pg_is_in_recovery()"]).output();
        if out.is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"f")) {
            break;
        }
        assert!(Instant::now() < deadline, "the restored cluster did not take writes");
        std::thread::sleep(Duration::from_millis(100));
    }
    started.elapsed().as_secs_f64()
}

#[test]
fn a_destroyed_cluster_is_restored_to_the_latest_point_and_to_a_named_time() {
    install_pgbackrest();
    let work = tempfile::tempdir().unwrap();
    let owned = Command::new("chown").arg("postgres:postgres").arg(work.path()).status();
    assert!(owned.is_ok_and(|s| s.success()), "the drill's directory is handed over");
    let cluster = DedicatedCluster::start();
    let config = work.path().join("pgbackrest.conf");
    let w = work.path().display();
    std::fs::write(
        &config,
        format!(
            "[global]\nrepo1-path={w}/repo\nlock-path={w}/lock\nlog-path={w}/log\n\
             log-level-console=warn\nlog-level-file=off\nspool-path={w}/spool\nstart-fast=y\n\
             [drill]\npg1-path={}\npg1-port={}\npg1-socket-path={}\npg1-user=postgres\n",
            cluster.data_dir().display(),
            cluster.port(),
            cluster.socket_dir().display()
        ),
    )
    .unwrap();
    let push = format!("pgbackrest --config={} --stanza=drill archive-push %p", config.display());
    cluster.execute("postgres", "ALTER SYSTEM SET archive_mode = 'on'");
    cluster.execute("postgres", &format!("ALTER SYSTEM SET archive_command = '{push}'"));
    cluster.stop();
    cluster.start_again();
    pgbackrest(&config, &["stanza-create"]);
    cluster.create_database("recruitd");
    let world = World::new(cluster.url("recruitd"), tempfile::tempdir().unwrap(), Box::new(|_| {}));
    let key = world.key.to_str().unwrap();
    let server = world.serve(&["--rate-limit-writes", "off"]);

    let (stop, written) = (AtomicBool::new(false), Mutex::new(Vec::<Written>::new()));
    let wait_for = |more: usize| {
        let n = written.lock().unwrap().len() + more;
        let deadline = Instant::now() + Duration::from_secs(60);
        while written.lock().unwrap().len() < n {
            assert!(Instant::now() < deadline, "the writers did not get {n} batches in");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let kept = work.path().join("kept.ndjson");
    let named = std::thread::scope(|s| {
        for w in 0..2 {
            let (server, stop, written, secret) = (&server, &stop, &written, &world.secret);
            s.spawn(move || {
                let body = json!({ "entries": accesses(10, "READ", "People") }).to_string();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let sent = SystemTime::now();
                    let key = format!("drill-{w}-{n}");
                    let ids = record_batch(server, secret, &key, &body);
                    let acknowledged = SystemTime::now();
                    written.lock().unwrap().push(Written { sent, acknowledged, ids });
                }
            });
        }
        wait_for(20);
        pgbackrest(&config, &["--type=full", "backup"]);
        // pgBackRest keeps a backup's stop time in whole seconds: a time named within that
        // second finds no backup that ended before it.
        std::thread::sleep(Duration::from_millis(1100));
        wait_for(20);
        let checkpoint = ["--checkpoint-key", key, "audit", "checkpoint"];
        std::fs::write(&kept, cli(&world.url, &checkpoint)).unwrap();
        wait_for(20);
        std::thread::sleep(Duration::from_millis(100));
        let named = SystemTime::now();
        std::thread::sleep(Duration::from_millis(100));
        wait_for(20);
        stop.store(true, Ordering::Relaxed);
        named
    });
    server.stop();
    // The last segment archived, as `check` does: what a disaster after it loses is nothing.
    pgbackrest(&config, &["check"]);
    let written = written.into_inner().unwrap();
    let kept = kept.to_str().unwrap();
    let verify = ["--checkpoint-key", key, "audit", "verify", "--checkpoint", kept];
    let export = work.path().join("restored.ndjson");

    let took = destroyed_and_restored(&cluster, &config, &[]);
    let held = stored_ids(&world.url, &export);
    let lost: Vec<_> =
        written.iter().flat_map(|b| &b.ids).filter(|id| !held.contains(*id)).collect();
    assert!(lost.is_empty(), "{} acknowledged entries lost at the latest point", lost.len());
    cli(&world.url, &verify);
    let entries = written.iter().map(|b| b.ids.len()).sum::<usize>();

    let target = chrono::DateTime::<chrono::Utc>::from(named);
    let target = format!("--target={}", target.format("%Y-%m-%d %H:%M:%S%.6f+00"));
    let pitr = ["--type=time", target.as_str(), "--target-action=promote"];
    let took_to_time = destroyed_and_restored(&cluster, &config, &pitr);
    let held = stored_ids(&world.url, &export);
    let (mut before, mut after) = (0, 0);
    for batch in &written {
        if batch.acknowledged < named {
            before += 1;
            assert!(batch.ids.iter().all(|id| held.contains(id)), "acknowledged before the time");
        } else if batch.sent > named {
            after += 1;
            assert!(batch.ids.iter().all(|id| !held.contains(id)), "sent after the time");
        }
    }
    assert!(before >= 60 && after >= 20, "{before} batches before the time, {after} after");
    cli(&world.url, &verify);
    let _ = writeln!(
        std::io::stderr(),
        "restore drill: latest point: all {entries} acknowledged entries back, {took:.1} s to \
         restore and start; named time: {before} batches before it back, {after} after it \
         absent, {took_to_time:.1} s"
    );
}
