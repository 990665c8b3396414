//! The rows of the SQLite tables: `recruit-ports`' row declarations expanded with SQLite's
//! column types. Identifiers are 16-byte BLOBs, times integer microseconds since the Unix
//! epoch, lists and JSON documents JSON text; the translation to and from domain types is the
//! neutral rows' (`recruit_ports::rows`). Anything that does not decode is a corrupt row,
//! reported as [`StoreError::Other`].

use diesel::sqlite::Sqlite;
use recruit_adapters_diesel::Column;
pub(crate) use recruit_adapters_diesel::Row;
use recruit_domain::{Id, Resource, Timestamp, Uuid};
use recruit_ports::StoreError;
use recruit_ports::rows::{column::Json, corrupt};

use crate::schema::*;

/// The backend, for [`Column`]: SQLite.
#[derive(Debug)]
pub enum Sqlite3 {}

/// An identifier as a 16-byte blob.
pub(crate) fn blob(uuid: Uuid) -> Vec<u8> {
    uuid.as_bytes().to_vec()
}

/// The identifier of a 16-byte blob.
pub(crate) fn uuid(bytes: &[u8]) -> Result<Uuid, StoreError> {
    Uuid::from_slice(bytes).map_err(|_| corrupt("an identifier is not 16 bytes"))
}

/// The typed identifier of a 16-byte blob.
pub(crate) fn id<R: Resource>(bytes: &[u8]) -> Result<Id<R>, StoreError> {
    uuid(bytes).map(Id::from_uuid)
}

fn json<T: serde::Serialize>(value: &T) -> String {
    // Serializing strings and JSON values into a String cannot fail.
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

fn unjson<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(format!("a JSON column: {e}")))
}

impl Column<Sqlite3> for Uuid {
    type Stored = Vec<u8>;
    fn store(self) -> Vec<u8> {
        blob(self)
    }
    fn load(stored: Vec<u8>) -> Result<Self, StoreError> {
        uuid(&stored)
    }
}

impl Column<Sqlite3> for Timestamp {
    type Stored = i64;
    fn store(self) -> i64 {
        self.unix_micros()
    }
    fn load(stored: i64) -> Result<Self, StoreError> {
        Timestamp::from_unix_micros(stored).map_err(|_| corrupt("a time is out of range"))
    }
}

impl Column<Sqlite3> for Vec<String> {
    type Stored = String;
    fn store(self) -> String {
        json(&self)
    }
    fn load(stored: String) -> Result<Self, StoreError> {
        unjson(&stored)
    }
}

/// A list of identifiers as a JSON list of their 32-digit hexadecimal forms.
impl Column<Sqlite3> for Vec<Uuid> {
    type Stored = String;
    fn store(self) -> String {
        json(&self.iter().map(|u| u.simple().to_string()).collect::<Vec<_>>())
    }
    fn load(stored: String) -> Result<Self, StoreError> {
        unjson::<Vec<String>>(&stored)?
            .iter()
            .map(|s| Uuid::try_parse(s).map_err(|_| corrupt("an identifier in a list")))
            .collect()
    }
}

impl Column<Sqlite3> for Json {
    type Stored = String;
    fn store(self) -> String {
        self.to_string()
    }
    fn load(stored: String) -> Result<Self, StoreError> {
        unjson(&stored)
    }
}

macro_rules! sqlite_rows {
    ($($(#[$doc:meta])* $row:ident in $table:ident { $($field:ident: $ty:ty),* $(,)? })*) => {
        $(
        recruit_adapters_diesel::stored_row!(Sqlite, Sqlite3; $(#[$doc])* $row in $table { $($field: $ty),* });

        impl crate::insert::Stored for ::recruit_ports::rows::$row {
            type Row = $row;
            fn insert_values(
                c: &mut diesel::SqliteConnection,
                rows: &[$row],
            ) -> diesel::QueryResult<usize> {
                use diesel::RunQueryDsl;
                diesel::insert_into($table::table).values(rows).execute(c)
            }
            fn insert_new_values(
                c: &mut diesel::SqliteConnection,
                rows: &[$row],
            ) -> diesel::QueryResult<usize> {
                use diesel::RunQueryDsl;
                diesel::insert_or_ignore_into($table::table).values(rows).execute(c)
            }
        }
        )*

        impl recruit_adapters_diesel::db::Rows for crate::db::SqliteDb<'_> {
            type Backend = diesel::sqlite::Sqlite;
            $(type $row = $row;)*
        }
    };
}

recruit_ports::stored_rows!(sqlite_rows);
