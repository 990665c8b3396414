//! The operations of recruitd over the ports, free of any transport: what the REST API and
//! the tool interface both call, so that neither re-implements a rule.
//!
//! Today it holds importing ([`import`]: JSON documents and NDJSON ledgers, errors naming
//! their path or line) and the deterministic demo data ([`demo`]).
//!
//! It depends on `recruit-domain` and `recruit-ports` only: never on a storage adapter, an
//! HTTP stack or a protocol library.

pub mod demo;
pub mod import;
