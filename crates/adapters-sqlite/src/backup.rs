//! Copies of an SQLite store, for `recruitd backup` and `recruitd restore`.
//!
//! A backup is taken while the server runs: `VACUUM INTO` reads the database in one read
//! transaction, so the copy holds every write committed before it began and none after, and
//! the server's writers go on meanwhile (WAL mode). The copy is written to `PATH.partial`,
//! checked (`PRAGMA integrity_check`), synced and renamed, so that `PATH` is either a whole,
//! sound copy or absent, whatever stops the command.
//!
//! A restore puts a copy in the database's place while nothing uses the database: it takes
//! the database out of WAL mode first, which SQLite allows only when no other connection has
//! it open (a running server always has), so a server still running refuses the restore
//! instead of writing on into a file that was replaced. The copy is checked before anything is
//! touched, and written next to the database and renamed over it.

use std::path::{Path, PathBuf};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel::sqlite::SqliteConnection;
use recruit_ports::StoreError;

use crate::SqliteBackend;

/// Why a backup or a restore did not happen. Nothing was changed but a `.partial` file,
/// removed when it could be.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// What the command was asked is refused, and why.
    #[error("{0}")]
    Refused(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file could not be written, synced or renamed.
    #[error("{0}")]
    Io(String),
}

/// What one ledger's chains hold in a database file, read from their heads.
#[derive(Debug, QueryableByName)]
pub struct Held {
    /// The ledger: `privacy`, `api` or `tool`.
    #[diesel(sql_type = Text)]
    pub ledger: String,
    /// How many organizations have a chain in it.
    #[diesel(sql_type = BigInt)]
    pub organizations: i64,
    /// How many entries their chains hold from their first position to their heads (entries
    /// removed by retention included).
    #[diesel(sql_type = BigInt)]
    pub entries: i64,
}

/// What the chains of the database file at `path` hold, by ledger; the file is only read.
pub fn holds(path: &Path) -> Result<Vec<Held>, CopyError> {
    let mut c = connect(path)?;
    diesel::sql_query(
        "SELECT ledger, count(*) AS organizations, coalesce(sum(position), 0) AS entries \
         FROM ledger_heads GROUP BY ledger ORDER BY ledger",
    )
    .load(&mut c)
    .map_err(|e| CopyError::Store(StoreError::other(e.to_string())))
}

#[derive(QueryableByName)]
struct Checked {
    #[diesel(sql_type = Text)]
    integrity_check: String,
}

#[derive(QueryableByName)]
struct Mode {
    #[diesel(sql_type = Text)]
    journal_mode: String,
}

impl SqliteBackend {
    /// Writes a consistent copy of the database to `to` while it is in use; refuses a `to`
    /// that exists.
    pub async fn backup(&self, to: &Path) -> Result<(), CopyError> {
        if to.exists() {
            let shown = to.display();
            return Err(CopyError::Refused(format!("{shown} exists: a backup never overwrites")));
        }
        let partial = partial(to);
        remove(&partial)?;
        let into = partial.to_string_lossy().into_owned();
        let copied = self
            .run(move |c| diesel::sql_query("VACUUM INTO ?").bind::<Text, _>(into).execute(c))
            .await;
        let settled = copied.map_err(CopyError::from).and_then(|_| check(&partial));
        let settled = settled.and_then(|()| put(&partial, to));
        if settled.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        settled
    }
}

/// Puts the copy `backup` in the place of the database file `database`, which must not be in
/// use; an existing database is replaced only when `replace` says so. Blocking: file and
/// database work on the calling thread.
pub fn restore(backup: &Path, database: &Path, replace: bool) -> Result<(), CopyError> {
    if !backup.is_file() {
        return Err(CopyError::Refused(format!("{}: no such file", backup.display())));
    }
    let partial = partial(database);
    remove(&partial)?;
    std::fs::copy(backup, &partial).map_err(|e| io("copy the backup", &partial, &e))?;
    let restored = check(&partial).and_then(|()| {
        if database.exists() {
            if !replace {
                return Err(CopyError::Refused(format!(
                    "{} exists: give --replace to put the backup in its place",
                    database.display()
                )));
            }
            out_of_use(database)?;
        }
        put(&partial, database)
    });
    if restored.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    restored
}

/// The database at `path` taken out of WAL mode, its log written back into it: what only a
/// connection alone with the database may do. Refused when another one has it open.
fn out_of_use(path: &Path) -> Result<(), CopyError> {
    let mut c = connect(path)?;
    let in_use = || {
        CopyError::Refused(format!(
            "{} is in use (a server or another command has it open): stop it first",
            path.display()
        ))
    };
    let mode = diesel::sql_query("PRAGMA journal_mode = DELETE").get_result::<Mode>(&mut c);
    match mode {
        Ok(m) if m.journal_mode.eq_ignore_ascii_case("delete") => Ok(()),
        Ok(_) => Err(in_use()),
        Err(diesel::result::Error::DatabaseError(_, info))
            if info.message().contains("locked") || info.message().contains("busy") =>
        {
            Err(in_use())
        }
        Err(e) => Err(CopyError::Store(StoreError::other(e.to_string()))),
    }
}

/// Syncs the database file at `partial` and renames it to `to` (whose stale log files go
/// first), syncing the directory so that the rename survives a crash.
fn put(partial: &Path, to: &Path) -> Result<(), CopyError> {
    let file = std::fs::File::open(partial).map_err(|e| io("open", partial, &e))?;
    file.sync_all().map_err(|e| io("sync", partial, &e))?;
    drop(file);
    for stale in [suffixed(to, "-wal"), suffixed(to, "-shm"), suffixed(to, "-journal")] {
        remove(&stale)?;
    }
    std::fs::rename(partial, to).map_err(|e| io("rename", partial, &e))?;
    let directory = match to.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let directory = std::fs::File::open(directory).map_err(|e| io("open", directory, &e))?;
    directory.sync_all().map_err(|e| io("sync", to, &e))
}

/// Whether the database file at `path` is sound, by SQLite's own check of every page and index.
fn check(path: &Path) -> Result<(), CopyError> {
    let mut c = connect(path)?;
    let found = diesel::sql_query("PRAGMA integrity_check").load::<Checked>(&mut c);
    let found = found.map_err(|e| CopyError::Store(StoreError::other(e.to_string())))?;
    match found.as_slice() {
        [one] if one.integrity_check == "ok" => Ok(()),
        _ => Err(CopyError::Refused(format!(
            "{} is not a sound SQLite database: {}",
            path.display(),
            found.iter().map(|f| f.integrity_check.as_str()).collect::<Vec<_>>().join("; ")
        ))),
    }
}

/// A connection of its own to the database file at `path`, which must exist, waiting a little
/// for locks.
fn connect(path: &Path) -> Result<SqliteConnection, CopyError> {
    if !path.is_file() {
        return Err(CopyError::Refused(format!("{}: no such file", path.display())));
    }
    let mut c = SqliteConnection::establish(&path.to_string_lossy())
        .map_err(|e| CopyError::Refused(format!("{}: {e}", path.display())))?;
    c.batch_execute("PRAGMA busy_timeout = 2000;")
        .map_err(|e| CopyError::Store(StoreError::other(e.to_string())))?;
    Ok(c)
}

fn partial(path: &Path) -> PathBuf {
    suffixed(path, ".partial")
}

fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Removes the file at `path` if there is one.
fn remove(path: &Path) -> Result<(), CopyError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", path, &e)),
        _ => Ok(()),
    }
}

fn io(what: &str, path: &Path, e: &std::io::Error) -> CopyError {
    CopyError::Io(format!("cannot {what} {}: {e}", path.display()))
}
