//! The ports of recruitd: repository traits over domain types, which storage adapters implement
//! and the service layer calls.
//!
//! No database type appears here; adapters translate their driver's errors into [`StoreError`]
//! at the seam. This crate depends only on `recruit-domain` (with its `chain` feature) and serde (for the
//! import format);
//! it must never depend on an adapter, a driver, an HTTP stack or the service.
//!
//! Reading the privacy audit ledger and recording that read are one method,
//! [`Ledgers::read_privacy_audit_logs`]: there is no way to read the ledger through a port
//! without the read's record committed first.
//!
//! With the `testkit` feature, the `testkit` module holds the contract suite every adapter
//! must pass, word for word the same, through the `store_contract_tests!` macro.

pub mod chain;
mod columns;
mod error;
mod idempotency;
mod import;
mod records;
pub mod review;
pub mod rows;
pub mod streams;
mod traits;

#[cfg(feature = "testkit")]
pub mod faulty;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use error::{ImportError, ImportProblem, StoreError};
pub use idempotency::{Claim, IN_FLIGHT_RETRY, KeyClaim, StoredKey, StoredResponse};
pub use import::{
    ExistingIds, ImportDocument, ImportSummary, Lookups, NewHiringTeamMember, NewJob, NewJobStage,
    ResumedBatch,
};
pub use records::{
    AccessesWrite, AccessesWritten, ApiToken, AuditEntry, AuditListQuery, ConsoleSession,
    EntryFilter, Interface, JobRecord, LedgerEntry, LedgerPage, LedgerPosition, NewApiToken,
    OrganizationRecord, PoolStatus, PrivacyLogQuery, ProfileUpdate, Provisioning, ReadRecord,
    SecretHash, SessionHolder, SsoSettings, SubjectFilter, TokenHolder, ToolAuditEntry, UserLookup,
};
pub use traits::{Directory, Import, Ledgers, Maintenance, Replica, Store, Tokens};
