//! `recruitd backup` and `recruitd restore`: copies of the embedded SQLite store
//! (`recruit_adapters_sqlite::backup`), with what each copy holds. PostgreSQL's are
//! pgBackRest's.

use std::path::Path;
use std::time::Instant;

use recruit_adapters_sqlite::backup::{self, Held};
use recruit_adapters_sqlite::{SqliteBackend, SqliteConfig};

use crate::Failure;
use crate::output::print;

/// The SQLite file `database_url` names, or why these commands do not apply.
fn sqlite_file(database_url: &str) -> Result<&Path, Failure> {
    crate::wiring::sqlite_file(database_url).map(Path::new).ok_or_else(|| {
        Failure(
            "backup and restore are for the SQLite store; back PostgreSQL up with pgBackRest \
             (docs/operations.md)"
                .into(),
        )
    })
}

/// `recruitd backup PATH`.
pub(crate) async fn backup(database_url: &str, to: &Path) -> Result<(), Failure> {
    let file = sqlite_file(database_url)?;
    if !file.is_file() {
        return Err(Failure(format!("{}: no such database", file.display())));
    }
    let mut config = SqliteConfig::new(file);
    config.pool_size = 1;
    let store = SqliteBackend::open(&config).await?;
    let started = Instant::now();
    store.backup(to).await?;
    let took = started.elapsed();
    let held = backup::holds(to)?;
    print(&format!(
        "backed up {} to {} in {:.1} s",
        file.display(),
        to.display(),
        took.as_secs_f64()
    ));
    show(&held);
    Ok(())
}

/// `recruitd restore BACKUP [--replace]`.
pub(crate) async fn restore(database_url: &str, from: &Path, replace: bool) -> Result<(), Failure> {
    let file = sqlite_file(database_url)?.to_owned();
    let source = from.to_owned();
    let restored = tokio::task::spawn_blocking(move || {
        backup::restore(&source, &file, replace).map(|()| file)
    });
    let file = restored.await??;
    let held = backup::holds(&file)?;
    print(&format!("restored {} from {}", file.display(), from.display()));
    show(&held);
    Ok(())
}

/// Prints what the chains of a copy hold, a line per ledger.
fn show(held: &[Held]) {
    for h in held {
        let (ledger, entries, organizations) = (&h.ledger, h.entries, h.organizations);
        print(&format!("  {ledger}: {entries} entries chained in {organizations} organizations"));
    }
}
