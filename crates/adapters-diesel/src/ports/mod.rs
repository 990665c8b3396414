//! The ports on [`Diesel`](crate::Diesel), one module a port: each method written once over
//! the backend's connection, or handed to the backend's own (`crate::native`).

mod directory;
mod ledgers;
mod maintenance;
mod streams;
mod tokens;

use crate::Backend;
use crate::db::{Db, StoredIn};
use crate::review::Dialect;
use crate::statement::Statement;
use recruit_ports::StoreError;

/// How `B` spells what each store spells its own way.
fn dialect<B: Backend>() -> Dialect {
    <B::Db<'static> as Db>::DIALECT
}

/// The rows of `statement`, each read as its neutral row `N` and made a `T` by `into`.
async fn read<D: Db, N: StoredIn<D> + Send + 'static, T>(
    c: &mut D,
    statement: Statement<'_>,
    into: fn(N) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    c.neutral::<N>(statement).await?.into_iter().map(into).collect()
}
