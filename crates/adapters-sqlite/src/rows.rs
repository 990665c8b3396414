//! The rows of the SQLite tables: `recruit-ports`' row declarations expanded with SQLite's
//! column types. Identifiers are 16-byte BLOBs, times integer microseconds since the Unix
//! epoch, lists and JSON documents JSON text; the translation to and from domain types is the
//! neutral rows' (`recruit_ports::rows`). Anything that does not decode is a corrupt row,
//! reported as [`StoreError::Other`].

use diesel::prelude::*;
use diesel::sqlite::Sqlite;
use recruit_domain::{Id, Resource, Timestamp, Uuid};
use recruit_ports::StoreError;
use recruit_ports::rows::{self as neutral, column::Json, corrupt};

use crate::schema::*;

/// A neutral column type as SQLite stores it.
pub(crate) trait Column: Sized {
    /// The Rust type diesel reads and writes for the column.
    type Stored;
    fn store(self) -> Self::Stored;
    fn load(stored: Self::Stored) -> Result<Self, StoreError>;
}

/// Types SQLite stores as they are.
macro_rules! as_is {
    ($($ty:ty),* $(,)?) => {$(
        impl Column for $ty {
            type Stored = Self;
            fn store(self) -> Self {
                self
            }
            fn load(stored: Self) -> Result<Self, StoreError> {
                Ok(stored)
            }
        }
    )*};
}

as_is!(String, bool, i32, i64, Vec<u8>);

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

impl Column for Uuid {
    type Stored = Vec<u8>;
    fn store(self) -> Vec<u8> {
        blob(self)
    }
    fn load(stored: Vec<u8>) -> Result<Self, StoreError> {
        uuid(&stored)
    }
}

impl Column for Timestamp {
    type Stored = i64;
    fn store(self) -> i64 {
        self.unix_micros()
    }
    fn load(stored: i64) -> Result<Self, StoreError> {
        Timestamp::from_unix_micros(stored).map_err(|_| corrupt("a time is out of range"))
    }
}

impl Column for Vec<String> {
    type Stored = String;
    fn store(self) -> String {
        json(&self)
    }
    fn load(stored: String) -> Result<Self, StoreError> {
        unjson(&stored)
    }
}

/// A list of identifiers as a JSON list of their 32-digit hexadecimal forms.
impl Column for Vec<Uuid> {
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

impl Column for Json {
    type Stored = String;
    fn store(self) -> String {
        self.to_string()
    }
    fn load(stored: String) -> Result<Self, StoreError> {
        unjson(&stored)
    }
}

impl<T: Column> Column for Option<T> {
    type Stored = Option<T::Stored>;
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
    /// The number of columns.
    const WIDTH: usize;
    fn into_neutral(self) -> Result<Self::Neutral, StoreError>;
}

macro_rules! sqlite_rows {
    ($($(#[$doc:meta])* $row:ident in $table:ident { $($field:ident: $ty:ty),* $(,)? })*) => {$(
        $(#[$doc])*
        #[derive(Queryable, Selectable, Insertable)]
        #[diesel(table_name = $table, check_for_backend(Sqlite))]
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
            const WIDTH: usize = [$(stringify!($field)),*].len();
            fn into_neutral(self) -> Result<neutral::$row, StoreError> {
                Ok(neutral::$row { $($field: Column::load(self.$field)?,)* })
            }
        }
    )*};
}

recruit_ports::stored_rows!(sqlite_rows);
