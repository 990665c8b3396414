//! `recruitd audit verify`: every chain recomputed, checked against the checkpoints, and what
//! was found reported.

use std::path::Path;

use recruit_domain::OrganizationId;
use recruit_domain::chain::Checkpoint;
use recruit_service::checkpoint::VerifyingKey;
use recruit_service::replica::HeavyReads;

use crate::Failure;
use crate::cli::ChainedLedger;
use crate::output::{print, print_json};

/// The checkpoints of a file: one JSON object, or one per line.
fn read_checkpoints(path: &Path) -> Result<Vec<Checkpoint>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?;
    if let Ok(one) = serde_json::from_str::<Checkpoint>(&text) {
        return Ok(vec![one]);
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l).map_err(|e| {
                Failure(format!("{} line {}: not a checkpoint: {e}", path.display(), n + 1))
            })
        })
        .collect()
}

/// The checkpoints of the file at `path`, each signed by one of `keys`.
fn verified_checkpoints(path: &Path, keys: &[VerifyingKey]) -> Result<Vec<Checkpoint>, Failure> {
    if keys.is_empty() {
        return Err(Failure(
            "verify --checkpoint needs the public key: --public-key FILE or \
             --checkpoint-key FILE"
                .into(),
        ));
    }
    let kept = read_checkpoints(path)?;
    for c in &kept {
        let key = recruit_service::verify::signer(keys, &c.key_id).ok_or_else(|| {
            Failure(format!(
                "{}: the checkpoint of {} {} at position {} is signed by key {}, which \
                 is none of the public keys given (--public-key, --checkpoint-key)",
                path.display(),
                c.ledger,
                c.organization_id,
                c.position,
                c.key_id
            ))
        })?;
        c.verify(key).map_err(|e| {
            Failure(format!(
                "{}: the checkpoint of {} {} at position {} proves nothing: {e}",
                path.display(),
                c.ledger,
                c.organization_id,
                c.position
            ))
        })?;
    }
    Ok(kept)
}

pub(crate) async fn audit_verify(
    heavy: &HeavyReads,
    ledger: Option<ChainedLedger>,
    org: Option<OrganizationId>,
    checkpoint: Option<&Path>,
    keys: &[VerifyingKey],
    json: bool,
) -> Result<(), Failure> {
    use recruit_domain::chain::Ledger;
    use recruit_service::verify::{Anchors, FindingKind};
    let ledgers = ledger.map_or(Ledger::ALL.to_vec(), |l| vec![l.into()]);
    let kept = match checkpoint {
        None => vec![],
        Some(path) => verified_checkpoints(path, keys)?,
    };
    let anchors = Anchors { keys, kept: &kept };
    let ledgers = &ledgers;
    let reports = heavy
        .run("verification", |store| async move {
            recruit_service::verify::verify(store.as_ref(), ledgers, org, anchors).await
        })
        .await?;
    let mut found = 0;
    for report in &reports {
        found += report.findings.len();
        if json {
            print_json(report)?;
            continue;
        }
        let state = if report.is_intact() { "intact" } else { "TAMPERED" };
        let checked = match report.checkpoints {
            0 => String::new(),
            1 => ", 1 checkpoint".to_owned(),
            n => format!(", {n} checkpoints"),
        };
        // Without a key a cut is taken as stored: say so, since it excuses missing entries.
        let cuts = match (report.cuts, keys.is_empty()) {
            (0, _) => String::new(),
            (n, false) => format!(", begins after the last of {n} retention cuts"),
            (n, true) => format!(
                ", begins after the last of {n} retention cuts (not checked: give \
                 --public-key or --checkpoint-key)"
            ),
        };
        print(&format!(
            "{}  {}  {} entries, head at {} ({}){checked}{cuts}: {state}",
            report.ledger,
            report.organization_id,
            report.entries,
            report.head_position,
            report.head_hash
        ));
        for f in &report.findings {
            let at = f.position.map_or("no position".to_owned(), |p| format!("position {p}"));
            let id = f.id.as_ref().map(|id| format!(" id {id}")).unwrap_or_default();
            let expected = match (&f.kind, f.expected_position) {
                (FindingKind::Reordered, Some(p)) => format!(" (recorded at position {p})"),
                (FindingKind::Truncated, Some(p)) => format!(" to {p}"),
                _ => String::new(),
            };
            print(&format!("  {} {at}{expected}{id}", f.kind));
        }
    }
    if found > 0 {
        return Err(Failure(format!("{found} findings in the ledgers' chains")));
    }
    if !json {
        print(&format!("{} chains verified, nothing found.", reports.len()));
    }
    Ok(())
}

/// `audit verify --stream`: what a receiver of a log stream stored (`path`, `-` for standard
/// input), checked chain by chain from the position after `from` (or its first line) against
/// the checkpoints at `checkpoint`, each signed by one of `keys`.
pub(crate) fn audit_verify_stream(
    path: &Path,
    checkpoint: Option<&Path>,
    keys: &[VerifyingKey],
    from: Option<u64>,
    json: bool,
) -> Result<(), Failure> {
    use recruit_domain::chain::{ExportLine, Problem, check_received};
    let kept = match checkpoint {
        None => vec![],
        Some(path) => verified_checkpoints(path, keys)?,
    };
    let text = if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    }
    .map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?;
    let mut lines = vec![];
    let mut unreadable = vec![];
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        // A JSON array is a batch as the JSON_ARRAY format delivers it.
        let read = serde_json::from_str::<Vec<ExportLine>>(line)
            .or_else(|_| serde_json::from_str::<ExportLine>(line).map(|l| vec![l]));
        match read {
            Ok(read) => lines.extend(read.into_iter().map(|l| (n + 1, l))),
            Err(_) => unreadable.push(Problem::Unchained { line: n + 1 }),
        }
    }
    let (chains, unchained) = check_received(lines, &kept, from);
    unreadable.extend(unchained);
    let mut found = unreadable.len();
    for chain in &chains {
        found += chain.problems.len();
        if json {
            print_json(chain)?;
            continue;
        }
        let state = if chain.is_complete() { "complete" } else { "INCOMPLETE" };
        let checked = chain.checkpoint.map(|p| format!(", checkpoint at {p}")).unwrap_or_default();
        print(&format!(
            "{}  {}  {} lines, {} entries ({} duplicates), positions {} to {}{checked}: {state}",
            chain.ledger,
            chain.organization_id,
            chain.lines,
            chain.entries,
            chain.duplicates,
            chain.first,
            chain.last
        ));
        for problem in &chain.problems {
            print(&format!("  {}", describe(problem)));
        }
    }
    for problem in &unreadable {
        if json {
            print_json(problem)?;
        } else {
            print(&describe(problem));
        }
    }
    if found > 0 {
        return Err(Failure(format!("{found} problems in what the receiver holds")));
    }
    if !json {
        print(&format!("{} chains complete, every line proves itself.", chains.len()));
    }
    Ok(())
}

/// A problem in words.
fn describe(problem: &recruit_domain::chain::Problem) -> String {
    use recruit_domain::chain::Problem;
    match problem {
        Problem::Missing { first, last } if first == last => format!("MISSING position {first}"),
        Problem::Missing { first, last } => format!("MISSING positions {first} to {last}"),
        Problem::Altered { position } => {
            format!("ALTERED position {position}: its hash is not that of its contents")
        }
        Problem::Unlinked { position } => {
            format!("UNLINKED position {position}: it does not follow the line before it")
        }
        Problem::Conflicting { position } => {
            format!("CONFLICTING position {position}: two different lines were received")
        }
        Problem::NotCheckpointed { position } => {
            format!("NOT CHECKPOINTED position {position}: not the entry the checkpoint signs")
        }
        Problem::Unchained { line } => format!("line {line}: not an export line of a chain"),
    }
}
