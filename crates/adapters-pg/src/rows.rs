//! The rows of the PostgreSQL tables: `recruit-ports`' row declarations expanded with
//! PostgreSQL's column types. Identifiers are `uuid`, times `timestamptz`, lists arrays, JSON
//! `jsonb`; the translation to and from domain types is the neutral rows' (`recruit_ports::rows`).
//! Anything that does not decode is a corrupt row, reported as [`StoreError::Other`].

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use recruit_adapters_diesel::Column;
pub(crate) use recruit_adapters_diesel::Row;
use recruit_domain::{Timestamp, Uuid};
use recruit_ports::StoreError;
use recruit_ports::rows::{column::Json, corrupt};
use tokio_postgres::types::{ToSql, Type};

use crate::schema::*;

/// The backend, for [`Column`]: PostgreSQL.
#[derive(Debug)]
pub(crate) enum Postgres {}

// Types PostgreSQL stores as they are, beyond those every backend does.
recruit_adapters_diesel::stored_as_is!(Postgres; Uuid, Vec<String>, Vec<Uuid>, Json);

impl Column<Postgres> for Timestamp {
    type Stored = DateTime<Utc>;
    fn store(self) -> DateTime<Utc> {
        self.as_datetime()
    }
    fn load(stored: DateTime<Utc>) -> Result<Self, StoreError> {
        Timestamp::from_datetime(stored).map_err(|_| corrupt("a time is out of range"))
    }
}

/// A neutral column type's PostgreSQL type, for binary `COPY`.
pub(crate) trait PgType {
    const TYPE: Type;
}

macro_rules! pg_types {
    ($($ty:ty => $pg:expr),* $(,)?) => {$(
        impl PgType for $ty {
            const TYPE: Type = $pg;
        }
    )*};
}

pg_types! {
    String => Type::TEXT,
    bool => Type::BOOL,
    i32 => Type::INT4,
    i64 => Type::INT8,
    Uuid => Type::UUID,
    Timestamp => Type::TIMESTAMPTZ,
    Vec<String> => Type::TEXT_ARRAY,
    Vec<Uuid> => Type::UUID_ARRAY,
    Vec<u8> => Type::BYTEA,
    Json => Type::JSONB,
}

impl<T: PgType> PgType for Option<T> {
    const TYPE: Type = T::TYPE;
}

/// A row written by binary `COPY`.
pub(crate) trait Copied {
    /// The table's columns, in order.
    const COLUMNS: &'static str;
    /// The columns' PostgreSQL types, in order.
    const TYPES: &'static [Type];
    /// The row's values, in the order of [`Copied::TYPES`].
    fn copy_values(&self) -> Vec<&(dyn ToSql + Sync)>;
}

macro_rules! pg_rows {
    ($($(#[$doc:meta])* $row:ident in $table:ident { $($field:ident: $ty:ty),* $(,)? })*) => {$(
        $(#[$doc])*
        #[derive(Queryable, QueryableByName, Selectable, Insertable)]
        #[diesel(table_name = $table, check_for_backend(Pg))]
        #[diesel(treat_none_as_default_value = false)]
        pub(crate) struct $row {
            $(pub(crate) $field: <$ty as Column<Postgres>>::Stored,)*
        }

        recruit_adapters_diesel::row_conversions!(Postgres; $row { $($field: $ty),* });

        impl Copied for $row {
            const COLUMNS: &'static str = stringify!($($field),*);
            const TYPES: &'static [Type] = &[$(<$ty as PgType>::TYPE),*];
            fn copy_values(&self) -> Vec<&(dyn ToSql + Sync)> {
                vec![$(&self.$field),*]
            }
        }
    )*};
}

recruit_ports::stored_rows!(pg_rows);
