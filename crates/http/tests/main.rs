//! The HTTP suites, one binary: requests to the API over a real SQLite store (`common`).

mod api;
mod common;
mod export;
mod filters;
mod mcp;
mod openapi;
mod record;
mod review;
mod scim;
mod server;
