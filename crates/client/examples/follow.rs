//! A forwarder of the privacy ledger, for a SIEM team: every `--every` seconds it appends the
//! entries recorded since the file's last line, each verified against the chain and a signed
//! checkpoint, to an NDJSON file the SIEM reads. Stopped and started again, it resumes from
//! the file's last line: no entry skipped, none repeated.
//!
//! ```text
//! RECRUITD_TOKEN=rtk_… cargo run -p recruit-client --example follow -- \
//!     https://recruitd.example.com privacy-ledger.ndjson [--every 30] [--once]
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use recruit_client::{Client, Error};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(url), Some(path)) = (args.first(), args.get(1)) else {
        say("usage: follow URL FILE [--every SECONDS] [--once]  (token in RECRUITD_TOKEN)");
        return std::process::ExitCode::FAILURE;
    };
    let every = args
        .iter()
        .position(|a| a == "--every")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .map_or(Duration::from_secs(30), Duration::from_secs);
    let once = args.iter().any(|a| a == "--once");
    let token = std::env::var("RECRUITD_TOKEN").unwrap_or_default();
    match follow(url, &PathBuf::from(path), &token, every, once).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            say(&format!("follow: {e}"));
            std::process::ExitCode::FAILURE
        }
    }
}

async fn follow(
    url: &str,
    path: &std::path::Path,
    token: &str,
    every: Duration,
    once: bool,
) -> Result<(), Error> {
    let client = Client::builder(url, token).user_agent("recruitd-follow/1").build()?;
    loop {
        let appended = recruit_client::follow::append_new(&client, path).await?;
        say(&format!(
            "follow: {} new entries; the file ends at position {}",
            appended.written, appended.point.position
        ));
        if once {
            return Ok(());
        }
        tokio::time::sleep(every).await;
    }
}

/// A line on standard error; one that cannot be written is not worth stopping for.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}
