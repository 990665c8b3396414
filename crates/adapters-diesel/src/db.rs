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

/// A connection of a store, to the shared statements.
pub trait Db: Send {
    /// The diesel backend.
    type Backend: diesel::backend::Backend;
    /// The store's row of the privacy ledger.
    type Ledger: QueryableByName<Self::Backend> + Row<Neutral = neutral::LedgerRow> + Send + 'static;
    /// The store's row of the API audit ledger.
    type Audit: QueryableByName<Self::Backend> + Row<Neutral = neutral::AuditRow> + Send + 'static;
    /// The store's row of a decision on a download.
    type Decision: QueryableByName<Self::Backend>
        + Row<Neutral = neutral::DownloadDecisionRow>
        + Send
        + 'static;
    /// The store's row of a job's scheduling settings.
    type JobSettings: QueryableByName<Self::Backend>
        + Row<Neutral = neutral::JobSettingsRow>
        + Send
        + 'static;
    /// The store's row of an organization's scheduling defaults.
    type Defaults: QueryableByName<Self::Backend>
        + Row<Neutral = neutral::SchedulingDefaultsRow>
        + Send
        + 'static;
    /// The store's row of a user.
    type User: QueryableByName<Self::Backend> + Row<Neutral = neutral::UserRow> + Send + 'static;
    /// The store's row of a log stream.
    type Stream: QueryableByName<Self::Backend>
        + Row<Neutral = neutral::LogStreamRow>
        + Send
        + 'static;
    /// The store's row of a month's sign-off.
    type SignOff: QueryableByName<Self::Backend>
        + Row<Neutral = neutral::SignOffRow>
        + Send
        + 'static;

    /// The store's row of a checkpoint.
    type Checkpoint: QueryableByName<Self::Backend>
        + Row<Neutral = neutral::CheckpointRow>
        + Send
        + 'static;
    /// The store's row of a retention cut.
    type RetentionCut: QueryableByName<Self::Backend>
        + Row<Neutral = neutral::RetentionCutRow>
        + Send
        + 'static;

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
