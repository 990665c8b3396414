//! Exports of the ledgers as NDJSON, one entry a line with its place in its chain, so that
//! whoever receives an export can check every entry without the database:
//!
//! ```text
//! {"ledger":"privacy","organization_id":"org_…","position":41,"prev_hash":"…","hash":"…","entry":{…}}
//! ```
//!
//! `entry` is the entry's canonical JSON ([`recruit_domain::chain::canonical_json`]: its
//! object as the API shows it, keys sorted); `hash` is SHA-256 over the chain's version tag,
//! `ledger`, the organization, `position`, `prev_hash` and `entry`
//! ([`recruit_domain::chain::entry_hash`]). Lines come in the order of organization, time and
//! id; sorted by position, each organization's lines link up, the first `prev_hash` being the
//! hash of the entry before the export (or 64 zeros for the chain's first).
//!
//! An export of the privacy ledger may also be CSV ([`Format::Csv`]) for a spreadsheet: one
//! row an entry under a header row, its position and hash beside its fields, lists joined with
//! spaces. A cell that a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, a tab or a
//! carriage return first) is written with a `'` before it; NDJSON is the exact record.

use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use recruit_domain::chain::{Ledger, hex};
use recruit_ports::StoreError;
use recruit_ports::chain::{Export, ExportStream, ExportedEntry};

use crate::ServiceError;

/// The media type of an export: newline-delimited JSON.
pub const MEDIA_TYPE: &str = "application/x-ndjson";

/// The format of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A line of JSON an entry, with its place in its chain: the exact record.
    Ndjson,
    /// A row an entry of the privacy ledger, for a spreadsheet.
    Csv,
}

impl Format {
    /// Its name, which is also its file name's extension.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ndjson => "ndjson",
            Self::Csv => "csv",
        }
    }

    /// Its media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Self::Ndjson => MEDIA_TYPE,
            Self::Csv => "text/csv; charset=utf-8; header=present",
        }
    }
}

/// The columns of a CSV export, in order.
pub const CSV_COLUMNS: [&str; 15] = [
    "position",
    "hash",
    "id",
    "access_time",
    "account_id",
    "ip_addresses",
    "data_subject_type",
    "data_subject_id",
    "bulk_count",
    "bulk_query",
    "access_data",
    "access_menu",
    "access_menu_path",
    "activity_category",
    "purpose",
];

/// What a CSV export starts with: the UTF-8 byte-order mark, by which spreadsheets (Excel
/// above all) read Korean and every other non-ASCII text as UTF-8.
pub const CSV_BOM: &str = "\u{feff}";

/// The most bytes of lines gathered into one chunk of a download.
const CHUNK_BYTES: usize = 64 * 1024;

/// An export handed to a transport, already recorded: how many entries follow, a name for
/// the file, and the lines, in chunks, as the store reads them. A chunk fails if the store
/// fails mid-way or hands over fewer or more entries than it counted: the transport must then
/// end the response as cut short, never as complete.
pub struct Download {
    /// How many entries (lines) follow.
    pub count: u64,
    /// A file name for the download, such as `privacy-audit-logs-org_….ndjson`.
    pub file_name: String,
    /// Its media type.
    pub media_type: &'static str,
    /// The lines, a chunk at a time.
    pub chunks: Chunks,
}

impl Download {
    /// The `Content-Disposition` of the download (RFC 6266): an attachment named
    /// [`Download::file_name`], in ASCII (other characters as `_`) for old clients and in
    /// full, percent-encoded UTF-8, as `filename*`.
    pub fn content_disposition(&self) -> String {
        let ascii: String = self
            .file_name
            .chars()
            .map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' { c } else { '_' })
            .collect();
        let utf8 = percent_encoding::utf8_percent_encode(&self.file_name, FILE_NAME_RESERVED);
        format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{utf8}")
    }
}

/// What `filename*` percent-encodes: all but RFC 5987's attribute characters.
const FILE_NAME_RESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

/// A file name for an export of `organization` (named `name`) over `[from, to)` read in
/// `zone`, under `filters`: `privacy-audit-logs_<name>_<first day>_<last day>[_<filter>-<value>…]
/// .<ext>`, each part made of letters, digits and `-` (the name keeps its own script).
pub fn file_name(
    name: &str,
    (from, to): (Option<recruit_domain::Timestamp>, Option<recruit_domain::Timestamp>),
    zone: chrono_tz::Tz,
    filters: &serde_json::Map<String, serde_json::Value>,
    format: Format,
) -> String {
    let part = |s: &str, most: usize| {
        let cleaned: String =
            s.chars().map(|c| if c.is_alphanumeric() { c } else { '-' }).take(most).collect();
        let parts: Vec<&str> = cleaned.split('-').filter(|p| !p.is_empty()).collect();
        parts.join("-")
    };
    let day = |t: recruit_domain::Timestamp| {
        t.as_datetime().with_timezone(&zone).format("%Y-%m-%d").to_string()
    };
    let mut name = format!("privacy-audit-logs_{}", part(name, 60));
    // The first and the last day of the window (the last one it includes), `all` for a bound
    // left out.
    let last = to
        .map(|to| recruit_domain::Timestamp::from_unix_micros(to.unix_micros() - 1).unwrap_or(to));
    for bound in [from, last] {
        name.push('_');
        name.push_str(&bound.map_or_else(|| "all".to_owned(), day));
    }
    for (key, value) in filters {
        let value = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        name.push_str(&format!("_{}-{}", part(key, 30), part(&value, 40)));
    }
    format!("{name}.{}", format.name())
}

impl std::fmt::Debug for Download {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Download")
            .field("count", &self.count)
            .field("file_name", &self.file_name)
            .finish_non_exhaustive()
    }
}

/// The lines of an export in chunks of up to 64 KiB: every line ready when the transport asks
/// goes into one chunk, so that a fast store fills large chunks and a slow one is not waited
/// for. It holds whatever must live as long as the download (a slot of the limit on
/// concurrent exports).
pub struct Chunks {
    ledger: Ledger,
    format: Format,
    entries: ExportStream,
    expected: u64,
    sent: u64,
    header_sent: bool,
    done: bool,
    _held: Box<dyn std::any::Any + Send>,
}

impl std::fmt::Debug for Chunks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chunks")
            .field("expected", &self.expected)
            .field("sent", &self.sent)
            .finish_non_exhaustive()
    }
}

impl Chunks {
    /// The lines of `export`, of `ledger`, in `format`, holding `held` until they end.
    pub fn new(
        ledger: Ledger,
        format: Format,
        export: Export,
        held: Box<dyn std::any::Any + Send>,
    ) -> Self {
        Self {
            ledger,
            format,
            entries: export.entries,
            expected: export.count,
            sent: 0,
            header_sent: false,
            done: false,
            _held: held,
        }
    }

    fn failed(&mut self, cause: String) -> Poll<Option<Result<Vec<u8>, ServiceError>>> {
        self.done = true;
        tracing::error!(error = %cause, "an export stopped before its end");
        Poll::Ready(Some(Err(ServiceError::internal_because(cause))))
    }
}

impl Stream for Chunks {
    type Item = Result<Vec<u8>, ServiceError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        let mut chunk = Vec::new();
        if this.format == Format::Csv && this.sent == 0 && !this.header_sent {
            this.header_sent = true;
            chunk.extend_from_slice(CSV_BOM.as_bytes());
            chunk.extend_from_slice(&csv_row(CSV_COLUMNS.iter().map(|c| (*c).to_owned())));
        }
        loop {
            match this.entries.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(entry))) => {
                    // Room for a full chunk and the line that passes it, made once an entry
                    // has come, so that a chunk is not copied as it grows.
                    if chunk.capacity() < CHUNK_BYTES {
                        chunk.reserve(CHUNK_BYTES + 4 * 1024);
                    }
                    this.sent += 1;
                    if this.sent > this.expected {
                        return this.failed(format!(
                            "the export counted {} entries and read more",
                            this.expected
                        ));
                    }
                    match this.format {
                        Format::Ndjson => write_line(&mut chunk, this.ledger, &entry),
                        Format::Csv => chunk.extend_from_slice(&csv_line(&entry)),
                    }
                    if chunk.len() >= CHUNK_BYTES {
                        return Poll::Ready(Some(Ok(chunk)));
                    }
                }
                Poll::Ready(Some(Err(e))) => return this.failed(e.to_string()),
                Poll::Ready(None) => {
                    if this.sent != this.expected {
                        return this.failed(format!(
                            "the export counted {} entries and read {}",
                            this.expected, this.sent
                        ));
                    }
                    this.done = true;
                    return Poll::Ready((!chunk.is_empty()).then_some(Ok(chunk)));
                }
                Poll::Pending if chunk.is_empty() => return Poll::Pending,
                Poll::Pending => return Poll::Ready(Some(Ok(chunk))),
            }
        }
    }
}

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The output could not be written.
    #[error("cannot write the export: {0}")]
    Write(#[from] std::io::Error),
    /// The file exists: an export never overwrites one.
    #[error("{0} exists: an export never overwrites a file")]
    Exists(std::path::PathBuf),
}

/// One line of an export, with its line feed.
pub fn line(ledger: Ledger, exported: &ExportedEntry) -> Vec<u8> {
    let mut out = Vec::with_capacity(exported.entry.canonical.len() + 256);
    write_line(&mut out, ledger, exported);
    out
}

/// Appends [`line()`] to `out`, written in place.
pub fn write_line(out: &mut Vec<u8>, ledger: Ledger, exported: &ExportedEntry) {
    use std::io::Write as _;
    let e = &exported.entry;
    let digest = |out: &mut Vec<u8>, bytes: &Option<Vec<u8>>| match bytes
        .as_deref()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
    {
        Some(d) => {
            out.push(b'"');
            out.extend_from_slice(hex(&d).as_bytes());
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    };
    // Writing into a vector cannot fail.
    let _ = write!(
        out,
        "{{\"ledger\":\"{ledger}\",\"organization_id\":\"{}\",\"position\":",
        exported.organization_id
    );
    let _ = match e.position {
        Some(p) => write!(out, "{p}"),
        None => out.write_all(b"null"),
    };
    out.extend_from_slice(b",\"prev_hash\":");
    digest(out, &e.prev_hash);
    out.extend_from_slice(b",\"hash\":");
    digest(out, &e.hash);
    out.extend_from_slice(b",\"entry\":");
    out.extend_from_slice(&e.canonical);
    out.extend_from_slice(b"}\n");
}

/// One row of a CSV export of the privacy ledger, with its line end: the entry's position,
/// hash and fields in the order of [`CSV_COLUMNS`].
pub fn csv_line(exported: &ExportedEntry) -> Vec<u8> {
    let e = &exported.entry;
    let entry: serde_json::Value = serde_json::from_slice(&e.canonical).unwrap_or_default();
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let joined = |v: &serde_json::Value| {
        v.as_array().map(|a| a.iter().map(text).collect::<Vec<_>>().join(" ")).unwrap_or_default()
    };
    let subject = &entry["data_subject"];
    let subject_id = match (&subject["user"], &subject["candidate"]) {
        (serde_json::Value::Null, c) => text(c),
        (u, _) => text(u),
    };
    let hash = e.hash.as_deref().and_then(|b| <[u8; 32]>::try_from(b).ok()).map(|d| hex(&d));
    csv_row([
        e.position.map(|p| p.to_string()).unwrap_or_default(),
        hash.unwrap_or_default(),
        text(&entry["id"]),
        text(&entry["access_time"]),
        text(&entry["account_id"]),
        joined(&entry["ip_addresses"]),
        text(&subject["type"]),
        subject_id,
        text(&subject["bulk_count"]),
        text(&subject["query"]),
        joined(&entry["access_data"]),
        text(&entry["access_menu"]),
        text(&entry["access_menu_path"]),
        text(&entry["activity_category"]),
        text(&entry["purpose"]),
    ])
}

/// A CSV row of `cells`, quoted where needed (RFC 4180), each cell a spreadsheet would read
/// as a formula written with a `'` first.
fn csv_row(cells: impl IntoIterator<Item = String>) -> Vec<u8> {
    let mut writer =
        csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(vec![]);
    let cells = cells.into_iter().map(|cell| {
        if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{cell}") } else { cell }
    });
    // Writing into memory does not fail.
    let _ = writer.write_record(cells);
    writer.into_inner().unwrap_or_default()
}

/// Writes `export`, of `ledger`, to `out`, one line an entry; returns how many were written.
/// Memory stays flat whatever the size: entries are read as they are written.
pub async fn write(
    mut export: Export,
    ledger: Ledger,
    out: &mut impl Write,
) -> Result<u64, ExportError> {
    let mut written = 0;
    while let Some(entry) = std::future::poll_fn(|cx| export.entries.as_mut().poll_next(cx)).await {
        out.write_all(&line(ledger, &entry?))?;
        written += 1;
    }
    out.flush()?;
    if written != export.count {
        return Err(StoreError::other(format!(
            "the export counted {} entries and read {written}",
            export.count
        ))
        .into());
    }
    Ok(written)
}

/// Writes `export`, of `ledger`, to the file `path`, which must not exist: to
/// `path.partial` first, renamed to `path` once whole and on disk, so that a file with the
/// final name is always a whole export. Returns how many entries were written.
pub async fn write_file(
    export: Export,
    ledger: Ledger,
    path: &std::path::Path,
) -> Result<u64, ExportError> {
    if path.exists() {
        return Err(ExportError::Exists(path.to_owned()));
    }
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    // Readable by its owner only: an export holds personal data.
    let handle = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&partial)?
    };
    let mut out = std::io::BufWriter::new(handle);
    let written = match write(export, ledger, &mut out).await {
        Ok(n) => n,
        Err(e) => {
            drop(out);
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    let handle = out.into_inner().map_err(std::io::IntoInnerError::into_error)?;
    handle.sync_all()?;
    std::fs::rename(&partial, path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use recruit_domain::chain::{GENESIS, canonical_json, entry_hash, parse_hex};
    use recruit_domain::{OrganizationId, Timestamp, Uuid};
    use recruit_ports::chain::ChainEntry;

    /// An export of `n` entries that claims `count`, its stream failing after `fail_after`
    /// when given.
    fn export_of(n: u64, count: u64, fail_after: Option<u64>) -> Export {
        struct Entries(u64, u64, Option<u64>);
        impl Stream for Entries {
            type Item = Result<ExportedEntry, StoreError>;
            fn poll_next(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
            ) -> Poll<Option<Self::Item>> {
                let Self(sent, n, fail_after) = &mut *self;
                if Some(*sent) == *fail_after {
                    *fail_after = None;
                    return Poll::Ready(Some(Err(StoreError::other("the connection was lost"))));
                }
                if *sent == *n {
                    return Poll::Ready(None);
                }
                *sent += 1;
                let canonical = format!("{{\"n\":{sent},\"pad\":\"{}\"}}", "x".repeat(200));
                Poll::Ready(Some(Ok(ExportedEntry {
                    organization_id: OrganizationId::from_uuid(Uuid::from_u128(0xA)),
                    time: Timestamp::parse("2026-11-24T00:00:00Z").unwrap(),
                    entry: ChainEntry {
                        id: Uuid::from_u128(u128::from(*sent)),
                        position: i64::try_from(*sent).ok(),
                        prev_hash: None,
                        hash: None,
                        canonical: canonical.into_bytes(),
                    },
                })))
            }
        }
        Export { count, entries: Box::pin(Entries(0, n, fail_after)) }
    }

    /// Every chunk, and how the chunks ended: `Ok` when whole.
    fn drain(mut chunks: Chunks) -> (Vec<u8>, Result<(), ServiceError>) {
        let mut all = vec![];
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        loop {
            match Pin::new(&mut chunks).poll_next(&mut cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    assert!(!chunk.is_empty() && chunk.len() < CHUNK_BYTES + 1024);
                    all.extend(chunk);
                }
                Poll::Ready(Some(Err(e))) => {
                    assert!(matches!(Pin::new(&mut chunks).poll_next(&mut cx), Poll::Ready(None)));
                    return (all, Err(e));
                }
                Poll::Ready(None) => return (all, Ok(())),
                Poll::Pending => unreachable!("the entries are always ready"),
            }
        }
    }

    #[test]
    fn chunks_carry_every_line_and_fail_when_the_export_is_cut_or_miscounted() {
        let (bytes, end) = drain(Chunks::new(
            Ledger::Privacy,
            Format::Ndjson,
            export_of(1000, 1000, None),
            Box::new(()),
        ));
        assert!(end.is_ok());
        assert_eq!(bytes.iter().filter(|b| **b == b'\n').count(), 1000);
        // The store failing mid-way, fewer entries than counted, more: each ends in an error
        // after the lines read so far, so a transport cuts the response.
        for (n, count, fail_after) in
            [(1000, 1000, Some(400)), (999, 1000, None), (1001, 1000, None)]
        {
            let (bytes, end) = drain(Chunks::new(
                Ledger::Privacy,
                Format::Ndjson,
                export_of(n, count, fail_after),
                Box::new(()),
            ));
            assert_eq!(end.unwrap_err().code, recruit_domain::ErrorCode::Internal);
            assert!(bytes.iter().filter(|b| **b == b'\n').count() <= 1000);
        }
    }

    #[test]
    fn a_line_carries_what_proves_its_entry() {
        let org = OrganizationId::from_uuid(Uuid::from_u128(0xA));
        let entry = serde_json::json!({"id": "x", "b": [1, 2], "a": null});
        let canonical = canonical_json(&entry).unwrap();
        let hash = entry_hash(Ledger::Api, org, 1, &GENESIS, &canonical);
        let exported = ExportedEntry {
            organization_id: org,
            time: Timestamp::parse("2026-11-24T00:00:00Z").unwrap(),
            entry: ChainEntry {
                id: Uuid::from_u128(1),
                position: Some(1),
                prev_hash: Some(GENESIS.to_vec()),
                hash: Some(hash.to_vec()),
                canonical,
            },
        };
        let text = String::from_utf8(line(Ledger::Api, &exported)).unwrap();
        assert!(text.ends_with('\n') && !text.trim_end().contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["ledger"], "api");
        assert_eq!(v["organization_id"], org.to_string());
        assert_eq!(v["entry"], entry);
        // What a receiver does: the hash again, from the line alone.
        let prev = parse_hex(v["prev_hash"].as_str().unwrap()).unwrap();
        let again = entry_hash(
            Ledger::Api,
            org,
            v["position"].as_u64().unwrap(),
            &prev,
            &canonical_json(&v["entry"]).unwrap(),
        );
        assert_eq!(v["hash"], hex(&again));
    }
}
