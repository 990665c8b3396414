//! Errors at the seam: pool and diesel errors translated into `StoreError`, and the error
//! type of transactions, which carries an import problem through a rollback.

use deadpool::managed::PoolError;
use diesel::result::Error as DieselError;
use recruit_ports::{ImportError, StoreError};

pub(crate) fn pool_error(e: PoolError<diesel_async::pooled_connection::PoolError>) -> StoreError {
    match recruit_adapters_diesel::pool_timeout(e, "opening the database") {
        Ok(timeout) => timeout,
        Err(other) => StoreError::Unavailable(format!("cannot open the database: {other}")),
    }
}

/// Translates a diesel error at the seam.
pub(crate) fn store_error(e: DieselError) -> StoreError {
    match recruit_adapters_diesel::common_error(e) {
        Ok(translated) => translated,
        Err(DieselError::DatabaseError(_, info))
            if info.message().contains("database is locked") || info.message().contains("busy") =>
        {
            StoreError::Timeout
        }
        // SQLITE_FULL: the volume is full (or the file at its size limit). Nothing was
        // written; writing goes on once there is room again.
        Err(DieselError::DatabaseError(_, info)) if info.message().contains("disk is full") => {
            StoreError::Unavailable(format!("the database's disk is full: {}", info.message()))
        }
        Err(other) => StoreError::Other(Box::new(other)),
    }
}

/// The error type of transactions: a store error, or a diesel error still to translate.
#[derive(Debug)]
pub(crate) enum TxError {
    Store(StoreError),
    Import(ImportError),
}

impl From<StoreError> for TxError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<DieselError> for TxError {
    fn from(e: DieselError) -> Self {
        Self::Store(store_error(e))
    }
}

impl From<TxError> for StoreError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Store(e) => e,
            TxError::Import(ImportError::Store(e)) => e,
            TxError::Import(ImportError::Invalid(p)) => StoreError::other(p.to_string()),
        }
    }
}

impl From<TxError> for ImportError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Store(e) => ImportError::Store(e),
            TxError::Import(e) => e,
        }
    }
}
