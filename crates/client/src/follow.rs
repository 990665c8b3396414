//! Following the privacy ledger into an NDJSON file, as a SIEM forwarder does: each run
//! appends the entries recorded since the file's last line, every one verified
//! ([`Client::export`]), so that the file stays equal to the ledger, an entry never skipped
//! nor repeated, whatever stopped the run before.
//!
//! ```no_run
//! # async fn run(client: recruit_client::Client) -> Result<(), recruit_client::Error> {
//! let path = std::path::Path::new("privacy-ledger.ndjson");
//! loop {
//!     let appended = recruit_client::follow::append_new(&client, path).await?;
//!     println!("{} new entries, at position {}", appended.written, appended.point.position);
//!     tokio::time::sleep(std::time::Duration::from_secs(30)).await;
//! }
//! # }
//! ```

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use futures_util::StreamExt;
use recruit_domain::chain::{ChainPoint, ExportLine, Ledger, parse_hex};
use tokio::io::AsyncWriteExt;

use crate::{Client, Error};

/// What a run appended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended {
    /// The entries appended.
    pub written: u64,
    /// Where the chain stands at the file's last line.
    pub point: ChainPoint,
}

/// Appends to the NDJSON file at `path` (created when missing) every entry of the client's
/// organization's privacy ledger after the file's last line, each a verified export line.
///
/// The file's last line tells where the chain stands; a line cut by a crash mid-write is
/// removed first, and the last whole one is checked again. Lines are written as they are
/// verified and synced to disk before this returns. On an error, the file holds the lines
/// verified before it, whole, and the next run continues from them.
pub async fn append_new(client: &Client, path: &Path) -> Result<Appended, Error> {
    let owned = path.to_owned();
    let point = tokio::task::spawn_blocking(move || resume(&owned))
        .await
        .map_err(|e| Error::Io(std::io::Error::other(e)))??;
    let mut export = client.export(point).await?;
    let file = tokio::fs::OpenOptions::new().create(true).append(true).open(path).await?;
    let mut out = tokio::io::BufWriter::new(file);
    let mut appended = Appended { written: 0, point };
    let mut failure = None;
    while let Some(line) = export.lines.next().await {
        match line {
            Ok(line) => {
                let mut bytes = serde_json::to_vec(&line.line)
                    .map_err(|e| Error::Decode(format!("a line cannot be written: {e}")))?;
                bytes.push(b'\n');
                out.write_all(&bytes).await?;
                appended.written += 1;
                appended.point = line.point;
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    out.flush().await?;
    out.into_inner().sync_all().await?;
    match failure {
        Some(e) => Err(e),
        None => Ok(appended),
    }
}

/// Where the chain stands at the last whole line of the file at `path` (the start when
/// there is none), after removing a last line that is not whole.
fn resume(path: &Path) -> Result<ChainPoint, Error> {
    let mut file = match std::fs::OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ChainPoint::START),
        Err(e) => return Err(e.into()),
    };
    let (whole, last) = last_line(&mut file)?;
    if whole < file.metadata()?.len() {
        file.set_len(whole)?;
        file.sync_all()?;
    }
    let Some(last) = last else { return Ok(ChainPoint::START) };
    let corrupt = |why: &str| {
        Error::Decode(format!("{}: its last line {why}", PathBuf::from(path).display()))
    };
    let line: ExportLine = serde_json::from_slice(&last).map_err(|_| corrupt("is not JSON"))?;
    let (Some(position), Some(prev)) =
        (line.position, line.prev_hash.as_deref().and_then(parse_hex))
    else {
        return Err(corrupt("is not a chained export line"));
    };
    let before = ChainPoint { position: position.saturating_sub(1), hash: prev };
    before.next(Ledger::Privacy, line.organization_id, &line).map_err(Error::Chain)
}

/// The length of the file's whole lines, and the last whole line, read from the end.
fn last_line(file: &mut std::fs::File) -> std::io::Result<(u64, Option<Vec<u8>>)> {
    const STEP: u64 = 64 * 1024;
    let len = file.metadata()?.len();
    let mut start = len;
    let mut tail: Vec<u8> = vec![];
    loop {
        let from = start.saturating_sub(STEP);
        let mut chunk = vec![0; usize::try_from(start - from).unwrap_or(0)];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut chunk)?;
        chunk.extend_from_slice(&tail);
        tail = chunk;
        start = from;
        match tail.iter().rposition(|b| *b == b'\n') {
            Some(end) => {
                let whole = start + end as u64 + 1;
                match tail[..end].iter().rposition(|b| *b == b'\n') {
                    Some(begin) => return Ok((whole, Some(tail[begin + 1..end].to_vec()))),
                    None if start == 0 => return Ok((whole, Some(tail[..end].to_vec()))),
                    None => {}
                }
            }
            None if start == 0 => return Ok((0, None)),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_whole_line_is_found_and_a_cut_one_dropped() {
        let dir = std::env::temp_dir().join(format!("recruit-client-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lines");
        let long = "x".repeat(150_000);
        for (content, whole, last) in [
            ("", 0, None),
            ("a\n", 2, Some("a")),
            ("a\nbc\n", 5, Some("bc")),
            ("a\nbc\nde", 5, Some("bc")),
            ("partial", 0, None),
        ] {
            std::fs::write(&path, content).unwrap();
            let mut file = std::fs::File::open(&path).unwrap();
            let found = last_line(&mut file).unwrap();
            assert_eq!(found, (whole, last.map(|l: &str| l.as_bytes().to_vec())), "{content:?}");
        }
        std::fs::write(&path, format!("a\n{long}\n{long}")).unwrap();
        let found = last_line(&mut std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(found, (150_003, Some(long.into_bytes())));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
