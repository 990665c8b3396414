//! Log streams to a real syslog receiver over TLS: rsyslog from Debian's packages (`rsyslog`,
//! `rsyslog-gnutls`, installed here when missing), with certificates made by `openssl`. Every
//! entry arrives as an RFC 5424 message in an RFC 5425 frame, checked in the receiver's file
//! entry by entry (header, structured data, the chain); a receiver that asks for a client
//! certificate refuses a stream without one until it has one; a receiver whose certificate does
//! not chain to the stream's CA is refused; settings that are not certificates are named.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use recruit_client::ErrorCode;
use recruit_domain::chain::ExportLine;
use recruit_domain::model::{LogStreamDestination, LogStreamSettings, LogStreamState};
use serde_json::json;

use crate::common::*;

/// The loadable module rsyslog's TLS needs (`rsyslog-gnutls`).
fn gtls_installed() -> bool {
    let found = Command::new("sh")
        .args(["-c", "ls /usr/lib/*/rsyslog/lmnsd_gtls.so /usr/lib/rsyslog/lmnsd_gtls.so"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    found.is_ok_and(|s| s.success())
}

/// rsyslog with its TLS driver, installed from Debian's packages when missing.
fn install_rsyslog() {
    let present = Command::new("rsyslogd").arg("-v").stdout(Stdio::null()).status();
    if present.is_ok_and(|s| s.success()) && gtls_installed() {
        return;
    }
    apt_install(&["rsyslog", "rsyslog-gnutls"]);
}

fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl").args(args).current_dir(dir).stderr(Stdio::null()).status();
    assert!(status.is_ok_and(|s| s.success()), "openssl {args:?}");
}

/// A CA named `ca` in `dir` (`ca.pem`, `ca.key`).
fn ca(dir: &Path, ca: &str) {
    let (key, pem, subject) = (format!("{ca}.key"), format!("{ca}.pem"), format!("/CN={ca}"));
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &pem,
            "-days",
            "2",
            "-subj",
            &subject,
        ],
    );
}

/// A certificate `name` signed by `ca.pem`, with `extensions` (SAN, key usage).
fn signed(dir: &Path, name: &str, extensions: &str) {
    let (key, csr, pem) = (format!("{name}.key"), format!("{name}.csr"), format!("{name}.pem"));
    let ext = format!("{name}.ext");
    std::fs::write(dir.join(&ext), extensions).unwrap();
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &csr,
            "-subj",
            &format!("/CN={name}"),
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            &pem,
            "-days",
            "2",
            "-extfile",
            &ext,
        ],
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// rsyslog on two TLS inputs: `anon` (no client certificate asked) and `mutual` (a client
/// certificate signed by the CA required), each writing what it receives to its own file.
struct Rsyslog {
    child: Child,
    dir: PathBuf,
    anon: u16,
    mutual: u16,
}

impl Drop for Rsyslog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Rsyslog {
    fn start(dir: &Path) -> Self {
        let (anon, mutual) = (free_port(), free_port());
        let d = dir.display();
        let conf = format!(
            r#"global(
  workDirectory="{d}"
  maxMessageSize="64k"
  defaultNetstreamDriver="gtls"
  defaultNetstreamDriverCAFile="{d}/ca.pem"
  defaultNetstreamDriverCertFile="{d}/server.pem"
  defaultNetstreamDriverKeyFile="{d}/server.key"
)
module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")
input(type="imtcp" port="{anon}" address="127.0.0.1" ruleset="anon")
input(type="imtcp" port="{mutual}" address="127.0.0.1" ruleset="mutual" streamDriver.authMode="x509/certvalid")
template(name="raw" type="string" string="%rawmsg%\n")
ruleset(name="anon") {{ action(type="omfile" file="{d}/anon.log" template="raw") }}
ruleset(name="mutual") {{ action(type="omfile" file="{d}/mutual.log" template="raw") }}
"#
        );
        std::fs::write(dir.join("rsyslog.conf"), conf).unwrap();
        let child = Command::new("rsyslogd")
            .args(["-n", "-f"])
            .arg(dir.join("rsyslog.conf"))
            .arg("-i")
            .arg(dir.join("rsyslogd.pid"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rsyslogd starts");
        let mut rsyslog = Self { child, dir: dir.to_owned(), anon, mutual };
        let deadline = Instant::now() + Duration::from_secs(20);
        for port in [anon, mutual] {
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                assert!(rsyslog.child.try_wait().unwrap().is_none(), "rsyslogd exited");
                assert!(Instant::now() < deadline, "rsyslogd did not listen");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        rsyslog
    }

    /// The messages `file` holds, by position, once it holds every one up to `last`; each
    /// checked as an RFC 5424 message carrying its entry's coordinates.
    async fn until(&self, file: &str, last: u64) -> BTreeMap<u64, ExportLine> {
        held_up_to(last, || async {
            let text = std::fs::read_to_string(self.dir.join(file)).unwrap_or_default();
            let mut lines = vec![];
            for message in text.lines() {
                let (header, line) = message.split_once('\u{feff}').expect("a UTF-8 MSG");
                let line: ExportLine = serde_json::from_str(line).unwrap();
                let position = line.position.unwrap();
                assert!(header.starts_with("<110>1 "), "{header}");
                assert!(header.contains(" recruitd - privacy [recruitd@32473 "), "{header}");
                let id = line.entry["id"].as_str().unwrap();
                let coordinates = format!(
                    "id=\"{id}\" org=\"{}\" pos=\"{position}\" hash=\"{}\" prev=\"{}\"]",
                    line.organization_id,
                    line.hash.as_deref().unwrap(),
                    line.prev_hash.as_deref().unwrap()
                );
                assert!(header.contains(&coordinates), "{header}");
                let time = line.entry["access_time"].as_str().unwrap();
                assert!(header.starts_with(&format!("<110>1 {time} ")), "{header} {time}");
                lines.push(line);
            }
            (lines, format!("{file}: {text}"))
        })
        .await
    }
}

fn syslog(port: u16, ca: &str) -> LogStreamDestination {
    LogStreamDestination::SyslogTls {
        host: "127.0.0.1".into(),
        port,
        ca_certificate: Some(ca.into()),
        client_certificate: None,
        client_key: None,
        hostname: Some("recruitd.test".into()),
        app_name: "recruitd".into(),
        facility: 13,
    }
}

fn settings(name: &str, destination: LogStreamDestination) -> LogStreamSettings {
    LogStreamSettings { name: name.into(), destination, after_position: Some(0), after_time: None }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_entry_reaches_rsyslog_over_tls_as_a_5424_message() {
    install_rsyslog();
    let certs = tempfile::tempdir().unwrap();
    let dir = certs.path();
    ca(dir, "other");
    ca(dir, "ca");
    signed(dir, "server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
    signed(dir, "client", "extendedKeyUsage=clientAuth\n");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let rsyslog = Rsyslog::start(dir);

    let world = World::sqlite();
    let server = world.serve(&["--outbound-allow", "127.0.0.1", "--log-stream-lease", "3s"]);
    let client = world.client(&server);
    let korean = vec![json!({
        "access_time": recruit_domain::Timestamp::now().to_string(),
        "account_id": format!("{:032x}", 0x5151),
        "ip_addresses": ["198.51.100.7"],
        "data_subject": {"type": "EMPLOYEE", "user": recruit_ports::testkit::user_id(recruit_ports::testkit::ORG_A, recruit_domain::model::Role::Member).to_string()},
        "access_data": ["NAME"],
        "access_menu": "인사 관리",
        "access_menu_path": "/직원/목록",
        "activity_category": "READ"
    })];
    client.record_privacy_accesses(&korean, None).await.unwrap();
    client.record_privacy_accesses(&accesses(3, "READ", "Syslog"), None).await.unwrap();
    let export = client.export(recruit_client::ChainPoint::START).await.unwrap();
    let exported: Vec<_> = futures_util::TryStreamExt::try_collect(export.lines).await.unwrap();
    let last = exported.len() as u64;

    // Settings that are not certificates, a certificate without its key, and a receiver on a
    // network the server may not reach are named.
    let ca_pem = read("ca.pem");
    let with = |extra: serde_json::Value| {
        let mut d = serde_json::to_value(syslog(1, &ca_pem)).unwrap();
        for (k, v) in extra.as_object().unwrap() {
            d[k] = v.clone();
        }
        serde_json::from_value::<LogStreamDestination>(d).unwrap()
    };
    let refusals = [
        (with(json!({"ca_certificate": "not a PEM"})), "destination.ca_certificate"),
        (with(json!({"client_certificate": read("client.pem")})), "destination.client_key"),
        (with(json!({"client_key": "no key"})), "destination.client_key"),
        (with(json!({"host": "10.1.2.3"})), "destination.host"),
        (with(json!({"app_name": "two words"})), "destination.app_name"),
    ];
    for (destination, field) in refusals {
        let refused = client.create_log_stream(&settings("bad", destination)).await.unwrap_err();
        assert_eq!(refused.code(), Some(&ErrorCode::ValidationFailed), "{refused}");
        assert!(refused.to_string().contains(field), "{field}: {refused}");
    }

    // The whole chain, entry by entry, to the input that asks for no client certificate.
    let anon = settings("rsyslog", syslog(rsyslog.anon, &ca_pem));
    let anon = client.create_log_stream(&anon).await.unwrap();
    assert_eq!(anon.signing_secret, None, "syslog signs nothing");
    chained(&rsyslog.until("anon.log", last).await);
    let caught_up = client.log_stream(anon.id).await.unwrap();
    assert_eq!((caught_up.delivered_position, caught_up.lag_entries), (last, 0));

    // A receiver whose certificate does not chain to the stream's CA is refused.
    let wrong = settings("wrong CA", syslog(rsyslog.anon, &read("other.pem")));
    let wrong = client.create_log_stream(&wrong).await.unwrap();
    let failing = in_state(&client, &wrong, LogStreamState::Failing).await;
    let why = failing.last_error.unwrap().message;
    assert!(why.contains("certificate"), "{why}");
    client.delete_log_stream(wrong.id).await.unwrap();

    // The input that asks for a client certificate refuses the stream until it has one; the
    // key given is never shown.
    let mutual = settings("rsyslog mutual", syslog(rsyslog.mutual, &read("ca.pem")));
    let mutual = client.create_log_stream(&mutual).await.unwrap();
    let failing = in_state(&client, &mutual, LogStreamState::Failing).await;
    let why = failing.last_error.unwrap().message;
    assert!(why.contains("client certificate"), "{why}");
    let patch = json!({"destination": {
        "client_certificate": read("client.pem"),
        "client_key": read("client.key"),
    }});
    let changed = client.update_log_stream(mutual.id, &patch).await.unwrap();
    let shown = serde_json::to_string(&changed).unwrap();
    assert!(!shown.contains("PRIVATE KEY"), "{shown}");
    chained(&rsyslog.until("mutual.log", last).await);
    let more = client.record_privacy_accesses(&accesses(2, "READ", "Syslog"), None).await;
    more.unwrap();
    let both = last + 2;
    chained(&rsyslog.until("anon.log", both).await);
    chained(&rsyslog.until("mutual.log", both).await);
}
