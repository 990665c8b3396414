//! The ports on [`Diesel`](crate::Diesel), one module a port: each method written once over
//! the backend's connection, or handed to the backend's own (`crate::native`).

mod directory;
mod ledgers;
mod maintenance;
mod streams;
mod tokens;

use crate::Backend;
use crate::db::Db;
use crate::review::Dialect;

/// How `B` spells what each store spells its own way.
fn dialect<B: Backend>() -> Dialect {
    <B::Db<'static> as Db>::DIALECT
}
