//! A connection of either store as the shared code sees it ([`Db`]): its dialect, its row
//! types, and a way to load a [`Statement`]'s rows. Code written once against it (the month's
//! review, [`crate::review::facts`]) runs on PostgreSQL's async connections and, driven to
//! completion at once, on SQLite's synchronous ones.

use std::future::Future;

use diesel::QueryableByName;
use recruit_ports::StoreError;
use recruit_ports::rows as neutral;

use crate::Row;
use crate::review::Dialect;
use crate::statement::Statement;

/// A stored row of backend `B` whose neutral form is `N`, as a statement's rows load it.
pub trait Stored<B: diesel::backend::Backend, N>:
    QueryableByName<B> + Row<Neutral = N> + Send + 'static
{
}

impl<B: diesel::backend::Backend, N, R> Stored<B, N> for R where
    R: QueryableByName<B> + Row<Neutral = N> + Send + 'static
{
}

/// A connection of a store, to the shared statements.
pub trait Db: Send {
    /// The diesel backend.
    type Backend: diesel::backend::Backend;
    /// The store's row of the privacy ledger.
    type Ledger: Stored<Self::Backend, neutral::LedgerRow>;
    /// The store's row of the API audit ledger.
    type Audit: Stored<Self::Backend, neutral::AuditRow>;
    /// The store's row of the tool audit ledger.
    type Tool: Stored<Self::Backend, neutral::ToolAuditRow>;
    /// The store's row of a chain's head.
    type Head: Stored<Self::Backend, neutral::LedgerHeadRow>;
    /// The store's row of a decision on a download.
    type Decision: Stored<Self::Backend, neutral::DownloadDecisionRow>;
    /// The store's row of a job's scheduling settings.
    type JobSettings: Stored<Self::Backend, neutral::JobSettingsRow>;
    /// The store's row of an organization's scheduling defaults.
    type Defaults: Stored<Self::Backend, neutral::SchedulingDefaultsRow>;
    /// The store's row of a user.
    type User: Stored<Self::Backend, neutral::UserRow>;
    /// The store's row of an API token.
    type Token: Stored<Self::Backend, neutral::TokenRow>;
    /// The store's row of an idempotency key.
    type Idempotency: Stored<Self::Backend, neutral::IdempotencyRow>;
    /// The store's row of a log stream.
    type Stream: Stored<Self::Backend, neutral::LogStreamRow>;
    /// The store's row of a month's sign-off.
    type SignOff: Stored<Self::Backend, neutral::SignOffRow>;
    /// The store's row of a checkpoint.
    type Checkpoint: Stored<Self::Backend, neutral::CheckpointRow>;
    /// The store's row of a retention cut.
    type RetentionCut: Stored<Self::Backend, neutral::RetentionCutRow>;

    /// How the store spells what it spells its own way.
    const DIALECT: Dialect;

    /// The rows of `statement`.
    fn load<R: QueryableByName<Self::Backend> + Send + 'static>(
        &mut self,
        statement: Statement<'_>,
    ) -> impl Future<Output = Result<Vec<R>, StoreError>> + Send;

    /// Runs `statement`; how many rows it changed.
    fn execute(
        &mut self,
        statement: Statement<'_>,
    ) -> impl Future<Output = Result<usize, StoreError>> + Send;

    /// Links the audit rows of `page` (the record of a write) into their chains and appends
    /// them, in the caller's transaction.
    fn append_record(
        &mut self,
        page: neutral::RecordedPage<()>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Links privacy ledger rows into their chains and appends them, in the caller's
    /// transaction.
    fn append_entries(
        &mut self,
        rows: Vec<neutral::LedgerRow>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Inserts jobs' resolved scheduling settings.
    fn insert_resolved(
        &mut self,
        rows: Vec<neutral::ResolvedSettingsRow>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Appends a decision on a download.
    fn insert_decision(
        &mut self,
        row: neutral::DownloadDecisionRow,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Inserts a month's sign-off unless one is stored for the month: whether it did.
    fn insert_sign_off(
        &mut self,
        row: neutral::SignOffRow,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
