//! Retention of the ledgers: entries are kept for the retention period
//! ([`recruit_domain::Retention`], two years unless configured, never under one), then
//! removed a whole calendar month at a time, in an order that loses nothing and keeps every
//! chain provable:
//!
//! 1. **Plan.** The boundary is the first instant of the month (UTC) in which the retention
//!    period's horizon falls: everything recorded before it is older than the period. Each
//!    chain's entries recorded before it are a prefix of the chain (positions are given in
//!    the order of recording), up to a last position and its hash.
//! 2. **Verify, then export.** Every chain to cut must verify (a cut signed over a chain
//!    changed behind the server's back would hide the change for good). What will be removed is exported, one NDJSON file a ledger in the export
//!    directory, with the chain fields that prove it ([`crate::export`]), written whole and
//!    synced before anything else happens; its count must be the plan's.
//! 3. **Cut.** Each chain's cut ([`RetentionCut`]: the last position removed, its hash, the
//!    boundary) is signed with the checkpoint key and stored. Verification then takes the
//!    chain as beginning after it ([`crate::verify`]).
//! 4. **Remove.** The store removes every entry recorded before the boundary in one
//!    transaction, and refuses to remove any that no stored cut covers.
//!
//! A run stopped at any step is finished by the next run: the plan is the same, a cut stored
//! already is kept as it was, and the export of a new run is a new file.

use std::path::{Path, PathBuf};

use chrono::Datelike;
use recruit_domain::chain::{Ledger, RetentionCut};
use recruit_domain::{Retention, Timestamp};
use recruit_ports::chain::{ExportQuery, PlannedCut};
use recruit_ports::{Store, StoreError};
use serde::Serialize;

use crate::checkpoint::CheckpointKey;
use crate::export::ExportError;

/// What a retention run removes: everything recorded before `before`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The boundary: the first instant of a month, at least the retention period ago.
    pub before: Timestamp,
    /// Each chain's part to remove.
    #[serde(serialize_with = "planned")]
    pub cuts: Vec<PlannedCut>,
}

fn planned<S: serde::Serializer>(cuts: &[PlannedCut], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(cuts.len()))?;
    for c in cuts {
        seq.serialize_element(&serde_json::json!({
            "organization_id": c.organization_id,
            "ledger": c.ledger,
            "position": c.position,
            "hash": recruit_domain::chain::hex(&c.hash),
            "entries": c.entries,
        }))?;
    }
    seq.end()
}

impl Plan {
    /// How many entries the run removes.
    pub fn entries(&self) -> u64 {
        self.cuts.iter().map(|c| c.entries).sum()
    }

    /// How many entries of `ledger` it removes.
    pub fn entries_of(&self, ledger: Ledger) -> u64 {
        self.cuts.iter().filter(|c| c.ledger == ledger).map(|c| c.entries).sum()
    }
}

/// What a run did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// The boundary.
    pub before: Timestamp,
    /// The exports written, one a ledger with entries to remove: the file and its entries.
    pub exports: Vec<(Ledger, PathBuf, u64)>,
    /// The cuts signed and stored.
    pub cuts: Vec<RetentionCut>,
    /// How many entries were removed.
    pub removed: u64,
}

/// Why a run stopped; nothing after the failed step was done.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An export could not be written.
    #[error(transparent)]
    Export(#[from] ExportError),
    /// A chain to cut does not verify: a cut signed over it would hide what was done to it.
    #[error(
        "{findings} findings in {chains} of the chains to cut: retention signs no cut over a \
         chain that does not verify (run `recruitd audit verify`)"
    )]
    Unverified {
        /// Chains with findings.
        chains: usize,
        /// Their findings.
        findings: usize,
    },
    /// An export holds another number of entries than planned.
    #[error("the export of the {ledger} ledger holds {exported} entries, the plan {planned}")]
    Miscounted {
        /// The ledger.
        ledger: Ledger,
        /// Entries exported.
        exported: u64,
        /// Entries planned.
        planned: u64,
    },
}

/// The boundary of a run at `now`: the first instant (UTC) of the month in which `now` less
/// the retention period falls.
pub fn boundary(retention: Retention, now: Timestamp) -> Timestamp {
    let horizon = retention.horizon(now).as_datetime();
    horizon
        .date_naive()
        .with_day(1)
        .and_then(|first| first.and_hms_opt(0, 0, 0))
        .and_then(|first| Timestamp::from_datetime(first.and_utc()).ok())
        .unwrap_or(Timestamp::MIN)
}

/// What a run at `now` would remove.
pub async fn plan(
    store: &dyn Store,
    retention: Retention,
    now: Timestamp,
) -> Result<Plan, StoreError> {
    let before = boundary(retention, now);
    Ok(Plan { before, cuts: store.retention_plan(before).await? })
}

/// Carries out `plan`: exports what it removes into `export_dir`, signs and stores the cuts
/// with `key`, then removes the entries.
pub async fn apply(
    store: &dyn Store,
    key: &CheckpointKey,
    plan: &Plan,
    export_dir: &Path,
    now: Timestamp,
) -> Result<Applied, RunError> {
    let mut applied = Applied { before: plan.before, exports: vec![], cuts: vec![], removed: 0 };
    if plan.cuts.is_empty() {
        return Ok(applied);
    }
    // Only a chain that verifies is cut: once its prefix is removed and the cut signed, what
    // was done to that prefix could no longer be seen.
    let ledgers: Vec<Ledger> =
        Ledger::ALL.into_iter().filter(|l| plan.cuts.iter().any(|c| c.ledger == *l)).collect();
    let reports = crate::verify::verify(store, &ledgers, None, Default::default()).await?;
    let planned = |r: &crate::verify::ChainReport| {
        plan.cuts.iter().any(|c| c.organization_id == r.organization_id && c.ledger == r.ledger)
    };
    let failing: Vec<_> = reports.iter().filter(|r| planned(r) && !r.is_intact()).collect();
    if !failing.is_empty() {
        let findings = failing.iter().map(|r| r.findings.len()).sum();
        return Err(RunError::Unverified { chains: failing.len(), findings });
    }
    for ledger in Ledger::ALL {
        let planned = plan.entries_of(ledger);
        if planned == 0 {
            continue;
        }
        let query = ExportQuery {
            ledger,
            organization: None,
            from: None,
            to: None,
            ids: None,
            recorded_before: Some(plan.before),
            after_position: None,
            filter: Default::default(),
        };
        let stamp = |t: Timestamp| t.to_string().replace([':', '-'], "").replace('.', "_");
        let file = export_dir.join(format!(
            "recruitd-{ledger}-recorded-before-{}-at-{}.ndjson",
            stamp(plan.before),
            stamp(now)
        ));
        let export = store.export(&query).await?;
        let exported = crate::export::write_file(export, query.ledger, &file).await?;
        if exported != planned {
            return Err(RunError::Miscounted { ledger, exported, planned });
        }
        applied.exports.push((ledger, file, exported));
    }
    applied.cuts = plan
        .cuts
        .iter()
        .map(|c| {
            let at = (c.position, &c.hash);
            key.sign_cut(c.ledger, c.organization_id, at, plan.before, now)
        })
        .collect();
    store.save_retention_cuts(&applied.cuts).await?;
    applied.removed = store.remove_retained(plan.before).await?;
    Ok(applied)
}

/// A whole run at `now`: [`plan`], then [`apply`].
pub async fn run(
    store: &dyn Store,
    key: &CheckpointKey,
    retention: Retention,
    export_dir: &Path,
    now: Timestamp,
) -> Result<Applied, RunError> {
    let plan = plan(store, retention, now).await?;
    apply(store, key, &plan, export_dir, now).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn the_boundary_is_the_first_of_the_month_the_period_reaches_back_to() {
        let two = Retention::DEFAULT;
        assert_eq!(boundary(two, t("2026-11-24T10:00:00Z")), t("2024-11-01T00:00:00Z"));
        assert_eq!(boundary(two, t("2026-12-01T00:00:00Z")), t("2024-12-01T00:00:00Z"));
        let year = Retention::MIN;
        assert_eq!(boundary(year, t("2026-03-31T23:59:59Z")), t("2025-03-01T00:00:00Z"));
        // Nothing younger than the period is ever before the boundary.
        for now in ["2026-01-01T00:00:00Z", "2026-02-28T12:00:00Z", "2028-02-29T00:00:00Z"] {
            let now = t(now);
            assert!(boundary(year, now) <= year.horizon(now));
        }
    }
}
