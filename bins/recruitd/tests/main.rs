//! The binary end to end, one test binary: the CLI, the server, the client, on both stores.

mod backup;
mod chain;
mod client;
mod clock;
mod common;
mod deprovision;
mod e2e;
mod full_disk;
mod hec;
mod log_streams;
mod mail;
mod replica;
mod restore;
mod sso;
mod stalled;
mod syslog;
