//! Importing data (`docs/import-format.md`): whole JSON documents, all or nothing, and large
//! privacy ledgers as NDJSON, in batches with progress.
//!
//! Every error names where it is: a JSON path (`jobs[3].hiring_team[0].user_id`) in a document,
//! a line number in an NDJSON file.

use std::collections::HashSet;
use std::io::BufRead;

use recruit_domain::{OrganizationId, PrivacyAuditLogId};
use recruit_ports::{
    ImportDocument, ImportError, ImportProblem, ImportSummary, LedgerEntry, ResumedBatch, Store,
    StoreError,
};

/// Why an import wrote nothing (or, for NDJSON, stopped: see [`import_ndjson`]).
#[derive(Debug, thiserror::Error)]
pub enum ImportFailure {
    /// The input is not valid; `at` says where: a JSON path, or `line N` and a path.
    #[error("{at}: {reason}")]
    Invalid {
        /// Where: `jobs[3].hiring_team[0].user_id`, or `line 7: data_subject.user`.
        at: String,
        /// What is wrong there.
        reason: String,
    },
    /// The input could not be read.
    #[error("cannot read the input: {0}")]
    Read(#[from] std::io::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The import itself failed (a task of it panicked): a bug, not a problem of the input.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<ImportProblem> for ImportFailure {
    fn from(p: ImportProblem) -> Self {
        Self::Invalid { at: p.path, reason: p.reason }
    }
}

impl From<ImportError> for ImportFailure {
    fn from(e: ImportError) -> Self {
        match e {
            ImportError::Invalid(p) => p.into(),
            ImportError::Store(e) => Self::Store(e),
        }
    }
}

/// Parses one JSON value that must fill `json` entirely; an error is placed by `at`, given
/// the path inside the value (`None` at its root).
fn parse_whole<T: serde::de::DeserializeOwned>(
    json: &str,
    at: impl Fn(Option<&str>) -> String,
) -> Result<T, ImportFailure> {
    let mut de = serde_json::Deserializer::from_str(json);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let at = at((path != ".").then_some(path.as_str()));
        ImportFailure::Invalid { at, reason: first_sentence(e.inner()) }
    })?;
    de.end().map_err(|e| ImportFailure::Invalid { at: at(None), reason: first_sentence(&e) })?;
    Ok(value)
}

/// Parses a JSON import document; a bad field is named by its path.
pub fn parse_document(json: &str) -> Result<ImportDocument, ImportFailure> {
    parse_whole(json, |path| path.map_or_else(|| "the document".to_owned(), str::to_owned))
}

/// A serde error's message without serde's "at line N column M" suffix, which the path
/// replaces.
fn first_sentence(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// Imports a JSON document, all or nothing.
pub async fn import_document(
    store: &dyn Store,
    json: &str,
) -> Result<ImportSummary, ImportFailure> {
    let document = parse_document(json)?;
    let latest = latest_access_time();
    for (i, e) in document.privacy_audit_logs.iter().enumerate() {
        recorded_when_it_happened(e, latest, || format!("privacy_audit_logs[{i}].access_time"))?;
    }
    Ok(store.import(&document).await?)
}

/// The latest `access_time` an entry recorded now may have.
fn latest_access_time() -> recruit_domain::Timestamp {
    recruit_domain::Timestamp::now()
        .checked_add_duration(crate::accesses::FUTURE_TOLERANCE)
        .unwrap_or(recruit_domain::Timestamp::MAX)
}

/// Refuses an entry whose access is later than `latest`: an access is recorded when it
/// happens, as through the API ([`crate::accesses::FUTURE_TOLERANCE`]).
fn recorded_when_it_happened(
    e: &LedgerEntry,
    latest: recruit_domain::Timestamp,
    at: impl FnOnce() -> String,
) -> Result<(), ImportFailure> {
    if e.entry.access_time <= latest {
        return Ok(());
    }
    Err(ImportFailure::Invalid {
        at: at(),
        reason: format!(
            "is more than {} minutes in the future ({}); an access is recorded when it happens",
            crate::accesses::FUTURE_TOLERANCE.as_secs() / 60,
            e.entry.access_time
        ),
    })
}

/// Parses one NDJSON line: a privacy ledger entry with its `organization_id`, recorded no
/// later than it happened.
pub fn parse_ledger_line(line_number: usize, line: &str) -> Result<LedgerEntry, ImportFailure> {
    let entry = parse_whole(line, |path| match path {
        Some(path) => format!("line {line_number}: {path}"),
        None => format!("line {line_number}"),
    })?;
    recorded_when_it_happened(&entry, latest_access_time(), || {
        format!("line {line_number}: access_time")
    })?;
    Ok(entry)
}

/// Where an NDJSON import is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Entries written so far.
    pub written: usize,
    /// Entries found already stored, identical, so far: left by an earlier run of the same
    /// import that stopped part-way.
    pub already_stored: usize,
    /// Entries in the file.
    pub total: usize,
}

impl Progress {
    /// Entries dealt with so far, written or found stored.
    pub fn done(&self) -> usize {
        self.written + self.already_stored
    }
}

/// Imports an NDJSON privacy ledger: one entry (with `organization_id`) per line; blank lines
/// are skipped.
///
/// The whole input is checked before anything is written: every line must parse, and no
/// entry may appear twice. Then it is written in batches of `batch_size`, each batch in one
/// transaction (all of it or none), calling `progress` after each. `open` is called twice, once
/// per pass, so the file is never held in memory whole. While a batch is written, a blocking
/// thread parses the next.
///
/// Running the same import again finishes what a stopped run (a crash, a kill) left: an entry
/// already stored exactly as in the file is skipped and counted in
/// [`Progress::already_stored`]; one stored with other values, or of a missing organization,
/// stops the import at its line, and the batches before it stay written.
pub async fn import_ndjson<R: BufRead + Send + 'static>(
    store: &dyn Store,
    mut open: impl FnMut() -> std::io::Result<R>,
    batch_size: usize,
    mut progress: impl FnMut(Progress),
) -> Result<Progress, ImportFailure> {
    // First pass: every line parses, no entry twice.
    let reader = open()?;
    let total = joined(tokio::task::spawn_blocking(move || check_ndjson(reader)).await)??;

    // Second pass: parsed a batch ahead, written in batches; the store checks against what it
    // holds.
    let batch_size = batch_size.max(1);
    let reader = open()?;
    let (tx, mut batches) = tokio::sync::mpsc::channel(1);
    let parser = tokio::task::spawn_blocking(move || parse_batches(reader, batch_size, &tx));
    let mut done = Progress { written: 0, already_stored: 0, total };
    progress(done);
    while let Some(batch) = batches.recv().await {
        let (batch, lines) = batch?;
        let resumed = write_batch(store, &batch, &lines).await?;
        done.written += resumed.written;
        done.already_stored += resumed.already_stored;
        progress(done);
    }
    joined(parser.await)?;
    Ok(done)
}

/// The result of a blocking task; a task that panicked fails the import as an internal error,
/// never as a problem of the input.
fn joined<T>(result: Result<T, tokio::task::JoinError>) -> Result<T, ImportFailure> {
    result.map_err(task_failed)
}

/// A task or thread of the import that panicked: an internal error, with what it said.
fn task_failed(why: impl std::fmt::Display) -> ImportFailure {
    ImportFailure::Internal(format!("a task of the import failed: {why}"))
}

/// What a panicked thread said, when it said it in words.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(said), _) => said,
        (_, Some(said)) => said,
        _ => "a panic",
    }
}

/// The first pass of [`import_ndjson`]: the number of entries, or the first problem.
///
/// The lines are read in chunks, and the chunks of a round are parsed side by side, one per
/// core, while nothing else runs yet: the pass took as long as a twentieth of the whole
/// import on one thread. Each chunk's result is taken in the file's order, so the problem
/// reported is still the first in the file.
fn check_ndjson(reader: impl BufRead) -> Result<usize, ImportFailure> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let mut seen: HashSet<(OrganizationId, PrivacyAuditLogId)> = HashSet::new();
    let mut lines = reader.lines().enumerate();
    loop {
        let (mut chunks, mut ended) = (vec![], false);
        while !ended && chunks.len() < cores {
            let chunk = read_chunk(&mut lines);
            ended = chunk.1.is_some() || chunk.0.len() < CHECKED_AT_A_TIME;
            chunks.push(chunk);
        }
        let checked: Vec<Checked> = std::thread::scope(|scope| {
            let others: Vec<_> =
                chunks[1..].iter().map(|c| scope.spawn(|| check_chunk(&c.0))).collect();
            let first = check_chunk(&chunks[0].0);
            std::iter::once(Ok(first))
                .chain(others.into_iter().map(|t| t.join()))
                .collect::<Vec<_>>()
        })
        .into_iter()
        .map(|checked| {
            checked.unwrap_or_else(|panic| (vec![], Some(task_failed(panic_message(&*panic)))))
        })
        .collect();
        for ((keys, problem), (_, unread)) in checked.into_iter().zip(chunks) {
            for (line, key) in keys {
                if !seen.insert(key) {
                    return Err(ImportFailure::Invalid {
                        at: format!("line {line}: id"),
                        reason: "the entry appears twice in the file".into(),
                    });
                }
            }
            if let Some(problem) = problem {
                return Err(problem);
            }
            if let Some(e) = unread {
                return Err(e.into());
            }
        }
        if ended {
            return Ok(seen.len());
        }
    }
}

/// How many lines the first pass reads into one chunk.
const CHECKED_AT_A_TIME: usize = 8_192;

/// Up to [`CHECKED_AT_A_TIME`] numbered lines, blank ones left out, and the error that ended
/// the reading early, if one did.
type Chunk = (Vec<(usize, String)>, Option<std::io::Error>);

/// The keys of a chunk's entries with their lines, up to its first problem, and that problem.
type Checked = (Vec<(usize, (OrganizationId, PrivacyAuditLogId))>, Option<ImportFailure>);

fn read_chunk(lines: &mut impl Iterator<Item = (usize, std::io::Result<String>)>) -> Chunk {
    let mut chunk = Vec::with_capacity(CHECKED_AT_A_TIME);
    while chunk.len() < CHECKED_AT_A_TIME {
        match lines.next() {
            None => break,
            Some((_, Ok(line))) if line.trim().is_empty() => {}
            Some((index, Ok(line))) => chunk.push((index + 1, line)),
            Some((_, Err(e))) => return (chunk, Some(e)),
        }
    }
    (chunk, None)
}

fn check_chunk(lines: &[(usize, String)]) -> Checked {
    let mut keys = Vec::with_capacity(lines.len());
    for (number, line) in lines {
        match parse_ledger_line(*number, line) {
            Ok(entry) => keys.push((*number, (entry.organization_id, entry.entry.id))),
            Err(problem) => return (keys, Some(problem)),
        }
    }
    (keys, None)
}

/// A batch of entries and the line each came from.
type Batch = (ImportDocument, Vec<usize>);

/// Parses `reader` into batches of `batch_size` and sends them, then a problem if one is met.
/// Stops when the receiver is gone.
fn parse_batches(
    reader: impl BufRead,
    batch_size: usize,
    tx: &tokio::sync::mpsc::Sender<Result<Batch, ImportFailure>>,
) {
    let mut batch = ImportDocument::default();
    let mut lines = Vec::with_capacity(batch_size);
    for (index, line) in reader.lines().enumerate() {
        let entry = match line {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => parse_ledger_line(index + 1, &line),
            Err(e) => Err(e.into()),
        };
        match entry {
            Ok(entry) => {
                batch.privacy_audit_logs.push(entry);
                lines.push(index + 1);
            }
            Err(e) => {
                let _ = tx.blocking_send(Err(e));
                return;
            }
        }
        if batch.privacy_audit_logs.len() == batch_size {
            let full = (std::mem::take(&mut batch), std::mem::take(&mut lines));
            if tx.blocking_send(Ok(full)).is_err() {
                return;
            }
        }
    }
    if !batch.privacy_audit_logs.is_empty() {
        let _ = tx.blocking_send(Ok((batch, lines)));
    }
}

/// Writes one batch; a problem at `privacy_audit_logs[i]` is reported at its line, `lines[i]`.
/// A batch the store refuses (as it refuses one holding entries already stored) is written
/// again as a re-run, which leaves out what is stored identically and names any other problem.
async fn write_batch(
    store: &dyn Store,
    batch: &ImportDocument,
    lines: &[usize],
) -> Result<ResumedBatch, ImportFailure> {
    match store.import(batch).await {
        Ok(summary) => {
            return Ok(ResumedBatch { written: summary.privacy_audit_logs, already_stored: 0 });
        }
        // Not reported: the re-run names the problem if there still is one.
        Err(ImportError::Invalid(_)) => {}
        Err(ImportError::Store(e)) => return Err(e.into()),
    }
    match store.resume_ledger(batch).await {
        Ok(resumed) => Ok(resumed),
        Err(ImportError::Invalid(p)) => Err(at_line(&p, lines).unwrap_or_else(|| p.into())),
        Err(ImportError::Store(e)) => Err(e.into()),
    }
}

/// Turns `privacy_audit_logs[i].rest` into `line N: rest`.
fn at_line(p: &ImportProblem, lines: &[usize]) -> Option<ImportFailure> {
    let rest = p.path.strip_prefix("privacy_audit_logs[")?;
    let (index, field) = rest.split_once(']')?;
    let line = lines.get(index.parse::<usize>().ok()?)?;
    let field = field.strip_prefix('.').unwrap_or(field);
    Some(ImportFailure::Invalid { at: format!("line {line}: {field}"), reason: p.reason.clone() })
}
