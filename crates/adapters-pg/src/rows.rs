//! The rows of the PostgreSQL tables: `recruit-ports`' row declarations expanded with
//! PostgreSQL's column types. Identifiers are `uuid`, times `timestamptz`, lists arrays, JSON
//! `jsonb`; the translation to and from domain types is the neutral rows' (`recruit_ports::rows`).
//! Anything that does not decode is a corrupt row, reported as [`StoreError::Other`].

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use recruit_domain::{Timestamp, Uuid};
use recruit_ports::StoreError;
use recruit_ports::rows::{self as neutral, column::Json, corrupt};
use tokio_postgres::types::{ToSql, Type};

use crate::schema::*;

/// A neutral column type as PostgreSQL stores it.
pub(crate) trait Column: Sized {
    /// The Rust type diesel reads and writes for the column.
    type Stored;
    /// The column's PostgreSQL type, for binary `COPY`.
    const TYPE: Type;
    fn store(self) -> Self::Stored;
    fn load(stored: Self::Stored) -> Result<Self, StoreError>;
}

/// Types PostgreSQL stores as they are.
macro_rules! as_is {
    ($($ty:ty => $pg:expr),* $(,)?) => {$(
        impl Column for $ty {
            type Stored = Self;
            const TYPE: Type = $pg;
            fn store(self) -> Self {
                self
            }
            fn load(stored: Self) -> Result<Self, StoreError> {
                Ok(stored)
            }
        }
    )*};
}

as_is! {
    String => Type::TEXT,
    bool => Type::BOOL,
    i32 => Type::INT4,
    i64 => Type::INT8,
    Uuid => Type::UUID,
    Vec<String> => Type::TEXT_ARRAY,
    Vec<Uuid> => Type::UUID_ARRAY,
    Vec<u8> => Type::BYTEA,
    Json => Type::JSONB,
}

impl Column for Timestamp {
    type Stored = DateTime<Utc>;
    const TYPE: Type = Type::TIMESTAMPTZ;
    fn store(self) -> DateTime<Utc> {
        self.as_datetime()
    }
    fn load(stored: DateTime<Utc>) -> Result<Self, StoreError> {
        Timestamp::from_datetime(stored).map_err(|_| corrupt("a time is out of range"))
    }
}

impl<T: Column> Column for Option<T> {
    type Stored = Option<T::Stored>;
    const TYPE: Type = T::TYPE;
    fn store(self) -> Self::Stored {
        self.map(T::store)
    }
    fn load(stored: Self::Stored) -> Result<Self, StoreError> {
        stored.map(T::load).transpose()
    }
}

/// A row of a table as diesel reads and writes it, made `From` its neutral form.
pub(crate) trait Row: Sized {
    /// The neutral row.
    type Neutral;
    /// The table's columns, in order, for `COPY`.
    const COLUMNS: &'static str;
    /// The columns' PostgreSQL types, in order, for binary `COPY`.
    const TYPES: &'static [Type];
    fn into_neutral(self) -> Result<Self::Neutral, StoreError>;
    /// The row's values, in the order of [`Row::TYPES`], for binary `COPY`.
    fn copy_values(&self) -> Vec<&(dyn ToSql + Sync)>;
}

macro_rules! pg_rows {
    ($($(#[$doc:meta])* $row:ident in $table:ident { $($field:ident: $ty:ty),* $(,)? })*) => {$(
        $(#[$doc])*
        #[derive(Queryable, QueryableByName, Selectable, Insertable)]
        #[diesel(table_name = $table, check_for_backend(Pg))]
        #[diesel(treat_none_as_default_value = false)]
        pub(crate) struct $row {
            $(pub(crate) $field: <$ty as Column>::Stored,)*
        }

        impl From<neutral::$row> for $row {
            fn from(row: neutral::$row) -> Self {
                Self { $($field: Column::store(row.$field),)* }
            }
        }

        impl Row for $row {
            type Neutral = neutral::$row;
            const COLUMNS: &'static str = stringify!($($field),*);
            const TYPES: &'static [Type] = &[$(<$ty as Column>::TYPE),*];
            fn into_neutral(self) -> Result<neutral::$row, StoreError> {
                Ok(neutral::$row { $($field: Column::load(self.$field)?,)* })
            }
            fn copy_values(&self) -> Vec<&(dyn ToSql + Sync)> {
                vec![$(&self.$field),*]
            }
        }
    )*};
}

recruit_ports::stored_rows!(pg_rows);
