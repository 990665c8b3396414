//! The rows of the PostgreSQL tables: `recruit-ports`' row declarations expanded with
//! PostgreSQL's column types. Identifiers are `uuid`, times `timestamptz`, lists arrays, JSON
//! `jsonb`; the translation to and from domain types is the neutral rows' (`recruit_ports::rows`).
//! Anything that does not decode is a corrupt row, reported as [`StoreError::Other`].

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use recruit_adapters_diesel::Column;
pub(crate) use recruit_adapters_diesel::Row;
use recruit_domain::{Timestamp, Uuid};
use recruit_ports::StoreError;
use recruit_ports::rows::{column::Json, corrupt};
use tokio_postgres::types::{ToSql, Type};

use crate::schema::*;

/// The backend, for [`Column`]: PostgreSQL.
#[derive(Debug)]
pub enum Postgres {}

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

/// A neutral column type's PostgreSQL type: for binary `COPY`, and by name for a record set
/// read from JSON.
pub(crate) trait PgType {
    const TYPE: Type;
    const SQL: &'static str;
}

macro_rules! pg_types {
    ($($ty:ty => $pg:expr, $sql:literal),* $(,)?) => {$(
        impl PgType for $ty {
            const TYPE: Type = $pg;
            const SQL: &'static str = $sql;
        }
    )*};
}

pg_types! {
    String => Type::TEXT, "text",
    bool => Type::BOOL, "boolean",
    i32 => Type::INT4, "integer",
    i64 => Type::INT8, "bigint",
    Uuid => Type::UUID, "uuid",
    Timestamp => Type::TIMESTAMPTZ, "timestamptz",
    Vec<String> => Type::TEXT_ARRAY, "text[]",
    Vec<Uuid> => Type::UUID_ARRAY, "uuid[]",
    Vec<u8> => Type::BYTEA, "bytea",
    Json => Type::JSONB, "jsonb",
}

impl<T: PgType> PgType for Option<T> {
    const TYPE: Type = T::TYPE;
    const SQL: &'static str = T::SQL;
}

/// A stored value as JSON that `jsonb_to_recordset` reads back into its column type.
pub(crate) trait JsonValue {
    fn json(&self) -> Json;
}

macro_rules! json_as_serde {
    ($($ty:ty),*) => {$(
        impl JsonValue for $ty {
            fn json(&self) -> Json {
                Json::from(self.clone())
            }
        }
    )*};
}

json_as_serde!(String, bool, i32, i64, Vec<String>);

impl JsonValue for Uuid {
    fn json(&self) -> Json {
        Json::from(self.hyphenated().to_string())
    }
}

impl JsonValue for Vec<Uuid> {
    fn json(&self) -> Json {
        Json::from(self.iter().map(|u| u.hyphenated().to_string()).collect::<Vec<_>>())
    }
}

impl JsonValue for DateTime<Utc> {
    fn json(&self) -> Json {
        Json::from(self.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
    }
}

impl JsonValue for Vec<u8> {
    fn json(&self) -> Json {
        Json::from(format!("\\x{}", hex::encode(self)))
    }
}

impl JsonValue for Json {
    fn json(&self) -> Json {
        self.clone()
    }
}

impl<T: JsonValue> JsonValue for Option<T> {
    fn json(&self) -> Json {
        self.as_ref().map_or(Json::Null, T::json)
    }
}

/// A row written by binary `COPY`, or many at once as a JSON record set.
pub(crate) trait Copied {
    /// The table.
    const TABLE: &'static str;
    /// The table's columns, in order.
    const COLUMNS: &'static str;
    /// The columns with their types, as `jsonb_to_recordset` takes them.
    fn recordset() -> String;
    /// The row as a JSON object, one member per column.
    fn json_object(&self) -> Json;
    /// The columns' PostgreSQL types, in order.
    const TYPES: &'static [Type];
    /// The row's values, in the order of [`Copied::TYPES`].
    fn copy_values(&self) -> Vec<&(dyn ToSql + Sync)>;
}

macro_rules! pg_rows {
    ($($(#[$doc:meta])* $row:ident in $table:ident { $($field:ident: $ty:ty),* $(,)? })*) => {
        $(
        recruit_adapters_diesel::stored_row!(Pg, Postgres; $(#[$doc])* $row in $table { $($field: $ty),* });

        impl crate::insert::Stored for ::recruit_ports::rows::$row {
            type Row = $row;
            fn insert_values<'a>(
                c: &'a mut diesel_async::AsyncPgConnection,
                rows: &'a [$row],
            ) -> impl Future<Output = diesel::QueryResult<usize>> + Send + 'a {
                use diesel_async::RunQueryDsl;
                diesel::insert_into($table::table).values(rows).execute(c)
            }
        }

        impl Copied for $row {
            const TABLE: &'static str = stringify!($table);
            const COLUMNS: &'static str = stringify!($($field),*);
            fn recordset() -> String {
                [$(concat!(stringify!($field), " ").to_owned() + <$ty as PgType>::SQL),*].join(", ")
            }
            fn json_object(&self) -> Json {
                let mut object = serde_json::Map::new();
                $(object.insert(stringify!($field).to_owned(), JsonValue::json(&self.$field));)*
                Json::Object(object)
            }
            const TYPES: &'static [Type] = &[$(<$ty as PgType>::TYPE),*];
            fn copy_values(&self) -> Vec<&(dyn ToSql + Sync)> {
                vec![$(&self.$field),*]
            }
        }
        )*

        impl recruit_adapters_diesel::db::Rows for crate::chain::PgDb<'_> {
            type Backend = diesel::pg::Pg;
            $(type $row = $row;)*
        }
    };
}

recruit_ports::stored_rows!(pg_rows);
