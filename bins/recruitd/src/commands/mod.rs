//! The commands of `recruitd`, one module each: what `main` dispatches to once the command line
//! is parsed and the store is open (`audit keygen` needs no store).

pub(crate) mod audit;
pub(crate) mod backup;
pub(crate) mod import;
pub(crate) mod ledger;
pub(crate) mod log_stream;
pub(crate) mod mcp;
pub(crate) mod serve;
pub(crate) mod token;
