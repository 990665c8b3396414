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

#[cfg(test)]
mod tests {
    use diesel::{Connection, RunQueryDsl, SqliteConnection};

    use super::LedgerHeadRow;

    fn load(sql: &str) -> diesel::QueryResult<Vec<LedgerHeadRow>> {
        let mut c = SqliteConnection::establish(":memory:").expect("an in-memory database");
        diesel::sql_query(sql).load(&mut c)
    }

    fn read(row: &LedgerHeadRow) -> (&[u8], &str, i64, &[u8]) {
        (&row.organization_id, &row.ledger, row.position, &row.hash)
    }

    #[test]
    fn a_row_is_read_by_its_columns_names_in_any_order() {
        let expected: (&[u8], &str, i64, &[u8]) = (&[1; 16], "privacy", 7, &[9, 9]);
        for sql in [
            "SELECT zeroblob(0) AS other, x'01010101010101010101010101010101' AS organization_id, \
             'privacy' AS ledger, 7 AS position, x'0909' AS hash",
            "SELECT x'0909' AS hash, 7 AS position, 'privacy' AS ledger, \
             x'01010101010101010101010101010101' AS organization_id",
            "SELECT 'privacy' AS ledger, x'0909' AS hash, \
             x'01010101010101010101010101010101' AS organization_id, 7 AS position",
        ] {
            let rows = load(sql).expect("the row reads");
            assert_eq!(rows.iter().map(read).collect::<Vec<_>>(), [expected], "{sql}");
        }
        let missing = load("SELECT 'privacy' AS ledger, 7 AS position, x'0909' AS hash").err();
        let missing = missing.expect("a column is missing").to_string();
        assert!(missing.contains("organization_id"), "{missing}");
    }
}
