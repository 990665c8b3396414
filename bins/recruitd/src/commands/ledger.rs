//! `recruitd ledger`: keeping the ledgers, by retention.

use std::path::PathBuf;

use recruit_domain::Timestamp;
use recruit_ports::Store;
use recruit_service::checkpoint::CheckpointKey;

use crate::Failure;
use crate::output::{print, print_json};

/// `recruitd ledger retention`: the plan, then unless `dry_run` the run.
pub(crate) async fn retention(
    store: &dyn Store,
    period: recruit_domain::Retention,
    key: Option<&CheckpointKey>,
    export_dir: Option<PathBuf>,
    dry_run: bool,
    json: bool,
) -> Result<(), Failure> {
    use recruit_service::retention;
    let now = Timestamp::now();
    let plan = retention::plan(store, period, now).await?;
    if dry_run {
        if json {
            print_json(&plan)?;
        } else {
            print(&format!(
                "retention {period}: {} entries recorded before {} would be exported and removed",
                plan.entries(),
                plan.before
            ));
            for c in &plan.cuts {
                print(&format!(
                    "  {} {}: {} entries, up to position {}",
                    c.organization_id, c.ledger, c.entries, c.position
                ));
            }
        }
        return Ok(());
    }
    let key = key.ok_or_else(|| {
        Failure(
            "ledger retention needs the signing key (--checkpoint-key FILE): the cut it records \
             must be signed for audit verify to prove the chains that remain"
                .into(),
        )
    })?;
    let dir =
        export_dir.ok_or_else(|| Failure("ledger retention needs --export-dir DIR".into()))?;
    let applied = retention::apply(store, key, &plan, &dir, now)
        .await
        .map_err(|e| Failure(format!("ledger retention stopped: {e}")))?;
    if json {
        print_json(&applied)?;
    } else {
        print(&format!(
            "retention {period}: removed {} entries recorded before {}",
            applied.removed, applied.before
        ));
        for (ledger, file, n) in &applied.exports {
            print(&format!("  exported {n} {ledger} ledger entries to {}", file.display()));
        }
        for c in &applied.cuts {
            print(&format!(
                "  cut {} {} at position {} (signed by {})",
                c.organization_id, c.ledger, c.position, c.key_id
            ));
        }
    }
    Ok(())
}
