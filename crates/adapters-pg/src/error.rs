//! Errors at the seam: diesel, pool and `COPY` errors translated into `StoreError`, and the
//! error type of transactions, which carries an import problem through a rollback.

use deadpool::managed::PoolError;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use recruit_ports::{ImportError, StoreError};

pub(crate) fn pool_error(e: PoolError<diesel_async::pooled_connection::PoolError>) -> StoreError {
    match recruit_adapters_diesel::pool_timeout(e, "connecting to the database") {
        Ok(timeout) => timeout,
        Err(PoolError::Backend(e)) => {
            StoreError::Unavailable(format!("cannot connect to the database: {e}"))
        }
        Err(other) => StoreError::Unavailable(other.to_string()),
    }
}

/// Translates an error of a `tokio-postgres` connection at the seam.
pub(crate) fn copy_error(e: tokio_postgres::Error) -> StoreError {
    use tokio_postgres::error::SqlState;
    match e.code() {
        Some(c) if *c == SqlState::QUERY_CANCELED => StoreError::Timeout,
        Some(c) if *c == SqlState::ADMIN_SHUTDOWN || *c == SqlState::CANNOT_CONNECT_NOW => {
            StoreError::Unavailable(e.to_string())
        }
        // Class 53, insufficient resources: a full disk, no memory, no connection slot.
        Some(c) if c.code().starts_with("53") => StoreError::Unavailable(db_message(&e)),
        // A connection to a primary that was demoted meanwhile: the primary moved.
        Some(c) if *c == SqlState::READ_ONLY_SQL_TRANSACTION => {
            StoreError::Unavailable(format!("the database is a standby now: {}", db_message(&e)))
        }
        Some(_) => StoreError::other(db_message(&e)),
        // Not the database's answer: the connection could not be made or broke.
        None => StoreError::Unavailable(format!("the database cannot be reached: {e}")),
    }
}

/// The database's own words for an error it answered with (`tokio-postgres` says only "db
/// error" and keeps them in the error's source).
fn db_message(e: &tokio_postgres::Error) -> String {
    e.as_db_error().map_or_else(|| e.to_string(), ToString::to_string)
}

/// Translates an error of a write on a `COPY` connection: as [`copy_error`], and a unique
/// violation is a conflict, a foreign-key violation a missing reference.
pub(crate) fn write_error(e: tokio_postgres::Error) -> StoreError {
    use tokio_postgres::error::SqlState;
    match e.code() {
        Some(c) if *c == SqlState::UNIQUE_VIOLATION => StoreError::Conflict(db_message(&e)),
        Some(c) if *c == SqlState::FOREIGN_KEY_VIOLATION => StoreError::NotFound,
        _ => copy_error(e),
    }
}

/// Translates a failure to get a connection of the `COPY` pool, as [`pool_error`] does.
pub(crate) fn writer_pool_error(e: PoolError<tokio_postgres::Error>) -> StoreError {
    match recruit_adapters_diesel::pool_timeout(e, "connecting to the database") {
        Ok(timeout) => timeout,
        Err(PoolError::Backend(e)) => copy_error(e),
        Err(other) => StoreError::Unavailable(other.to_string()),
    }
}

/// Translates a diesel error at the seam.
pub(crate) fn store_error(e: DieselError) -> StoreError {
    let e = match recruit_adapters_diesel::common_error(e) {
        Ok(translated) => return translated,
        Err(e) => e,
    };
    match e {
        DieselError::DatabaseError(
            DatabaseErrorKind::UnableToSendCommand | DatabaseErrorKind::ClosedConnection,
            info,
        ) => StoreError::Unavailable(info.message().to_owned()),
        // A connection to a primary that was demoted meanwhile: the primary moved.
        DieselError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, info) => {
            StoreError::Unavailable(format!("the database is a standby now: {}", info.message()))
        }
        DieselError::DatabaseError(_, info)
            if info.message().starts_with("canceling statement due to statement timeout") =>
        {
            StoreError::Timeout
        }
        DieselError::DatabaseError(_, info)
            if info.message().starts_with("terminating connection")
                || info.message().contains("the database system is")
                || info.message().contains("No space left on device") =>
        {
            StoreError::Unavailable(info.message().to_owned())
        }
        DieselError::BrokenTransactionManager => {
            StoreError::Unavailable("the database connection broke".into())
        }
        other => StoreError::Other(Box::new(other)),
    }
}

/// The error type of transactions: a store error, an invalid import, or a diesel error
/// translated on the way in.
#[derive(Debug)]
pub(crate) enum TxError {
    Store(StoreError),
    Invalid(recruit_ports::ImportProblem),
}

impl From<DieselError> for TxError {
    fn from(e: DieselError) -> Self {
        Self::Store(store_error(e))
    }
}

impl From<StoreError> for TxError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<TxError> for StoreError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Store(e) => e,
            TxError::Invalid(p) => StoreError::other(p.to_string()),
        }
    }
}

impl From<TxError> for ImportError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Store(e) => ImportError::Store(e),
            TxError::Invalid(p) => ImportError::Invalid(p),
        }
    }
}
