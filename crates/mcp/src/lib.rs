//! The tool interface of recruitd for agents: a Model Context Protocol server with one tool
//! for each operation the service marks as a tool ([`tool_arguments`] lists them), built on
//! the official SDK (`rmcp`).
//!
//! Each tool is its REST twin in another syntax: its arguments are the REST parameters (the
//! input schemas are derived from `docs/openapi.yaml` when the crate builds), its result carries
//! the REST body as `structuredContent` (and as text for older clients), and a failure is a
//! result with `isError: true` whose structured content is exactly the REST error envelope.
//! Every rule (authentication, scopes, permissions, validation, cursors, recording reads of the
//! privacy ledger in the API and tool-interface audit ledgers) is `recruit-service`'s; this crate
//! only translates. Unknown tools and malformed requests are JSON-RPC errors.
//!
//! Two protocol revisions are served: 2026-07-28 (stateless, `server/discover`) and 2025-11-25
//! (`initialize` handshake). [`Tools::http`] is the streamable HTTP endpoint, without sessions,
//! answering with JSON; the HTTP layer authenticates each request and hands the caller over in
//! the request's extensions ([`HttpCaller`]). [`Tools::serve_stdio`] serves local agent hosts
//! over standard input and output with one token, checked again on every call. [`transport`]
//! words the transport's refusals as JSON-RPC errors, in front of `rmcp`.
//!
//! It depends on `recruit-domain` and `recruit-service` only: never on a storage adapter, and on
//! no HTTP server (the `http` crate's types are what `rmcp` hands over).

mod tools;
pub mod transport;

pub use tools::{HttpCaller, McpService, Tools, ToolsConfig, tool_arguments};
