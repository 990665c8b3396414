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
        Some(path) => {
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
            kept
        }
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
