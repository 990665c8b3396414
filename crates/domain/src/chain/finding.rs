//! What verifying a chain finds: the kind of tampering, and where.

use crate::OrganizationId;
use crate::chain::Ledger;
use crate::open_enum::open_enum;

open_enum! {
    /// What is wrong with an entry, or a part of a chain.
    pub enum FindingKind {
        /// Its stored fields are not those it was recorded with.
        Modified = "MODIFIED",
        /// The entry at this position is gone.
        Deleted = "DELETED",
        /// It was not recorded by the server.
        Inserted = "INSERTED",
        /// It was recorded at another position (`expected_position`).
        Reordered = "REORDERED",
        /// The chain's entries from this position to `expected_position` are gone.
        Truncated = "TRUNCATED",
        /// The entry at this position is not the one a signed checkpoint vouches for: the chain was
        /// replaced at or below it, its hashes computed again.
        Rewritten = "REWRITTEN",
        /// A stored checkpoint at this position whose signature does not verify, or that names a
        /// key none of those given is.
        BadCheckpoint = "BAD_CHECKPOINT",
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Finding {
    /// The ledger.
    pub ledger: Ledger,
    /// The organization whose chain it is.
    pub organization_id: OrganizationId,
    /// What is wrong.
    pub kind: FindingKind,
    /// The position it is at (for a truncation, the first position gone); none for an entry
    /// stored without one.
    pub position: Option<i64>,
    /// The entry's id, when there is an entry: `pal_…` in the privacy ledger, a UUID in the
    /// others, as each ledger shows its ids.
    pub id: Option<String>,
    /// For a reordered entry, the position it was recorded at; for a truncation, the last
    /// position gone.
    pub expected_position: Option<i64>,
}
