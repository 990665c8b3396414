//! One implementation of the ports over both stores: [`Diesel`] over a store's [`Backend`].
//!
//! A method written once runs the shared statements (`streams`, `sessions`, `review`, …) on
//! the backend's connection, in a transaction or not, through [`Backend::transaction`] and
//! [`Backend::connection`]. What a store does its own way (PostgreSQL's `COPY`, its prepared
//! reads, its snapshots shared by two connections; SQLite's reads on a blocking thread) it
//! implements in the `Native…` traits of [`crate::native`], one per port, and the port's
//! method hands the call to it.

use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;

use recruit_ports::StoreError;
use recruit_ports::rows::{
    CheckpointRow, ConsoleSessionRow, LogStreamRow, RetentionCutRow, TokenRow,
};

use crate::Insert;
use crate::db::Db;

/// A future of the shared code, borrowing the connection for `'c`.
pub type Pending<'c, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'c>>;

/// `future`, boxed: what a task given to [`Backend::transaction`] returns.
pub fn pending<'c, T>(
    future: impl Future<Output = Result<T, StoreError>> + Send + 'c,
) -> Pending<'c, T> {
    Box::pin(future)
}

/// What runs on a connection of `B`: code written once for both stores, given the connection
/// for `'c` and done with it when its future ends.
pub trait Task<B: Backend + ?Sized, T>:
    for<'c> FnOnce(&'c mut B::Db<'c>) -> Pending<'c, T> + Send + 'static
{
}

impl<B: Backend + ?Sized, T, F> Task<B, T> for F where
    F: for<'c> FnOnce(&'c mut B::Db<'c>) -> Pending<'c, T> + Send + 'static
{
}

/// A store's connections, as the code written once for both stores uses them.
pub trait Backend: Send + Sync + 'static {
    /// The diesel backend.
    type Sql: diesel::backend::Backend;
    /// A connection of the store, held for `'c`.
    type Db<'c>: Db<Backend = Self::Sql>
        + Insert<LogStreamRow>
        + Insert<ConsoleSessionRow>
        + Insert<TokenRow>
        + Insert<CheckpointRow>
        + Insert<RetentionCutRow>
        + Send
        + 'c;

    /// Runs `task` on a connection in one transaction (on SQLite an immediate one: the write
    /// lock taken up front), committed when the task succeeds and rolled back when it fails.
    fn transaction<T: Send + 'static>(
        &self,
        task: impl Task<Self, T>,
    ) -> impl Future<Output = Result<T, StoreError>> + Send;

    /// Runs `task` on a connection, each of its statements on its own: for a single
    /// statement, or reads and writes that hold whichever way they interleave.
    fn connection<T: Send + 'static>(
        &self,
        task: impl Task<Self, T>,
    ) -> impl Future<Output = Result<T, StoreError>> + Send;
}

/// The store on `B`: every port of `recruit-ports`, each method written once here or handed
/// to `B`'s own (see the module's documentation). Its `Deref` reaches `B`'s own methods
/// (opening, migrating, the pool's numbers).
#[derive(Clone, Debug)]
pub struct Diesel<B>(pub(crate) B);

impl<B> Diesel<B> {
    /// The store on `backend`.
    pub fn new(backend: B) -> Self {
        Self(backend)
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.0
    }
}

impl<B> Deref for Diesel<B> {
    type Target = B;

    fn deref(&self) -> &B {
        &self.0
    }
}
