//! The REST API of recruitd on plain hyper 1.x: no web framework.
//!
//! A request is routed by the operations' declarations (`route`), its input collected into
//! the operation's typed input, dispatched to `recruit-service`, and the
//! result rendered in one place (`render`): the JSON of a success or the error envelope with its
//! status and headers. Around that, [`Api::handle`] adds what every request gets: a request id,
//! a body size limit, a deadline, a panic barrier, and one log line. [`serve`] runs it on a
//! listener with HTTP/1.1 and HTTP/2, header limits, and graceful shutdown.
//!
//! This crate knows hyper and HTTP status codes and nothing of storage: it must never depend
//! on an adapter or name diesel. Every rule of the API lives in `recruit-service`; handlers
//! only translate.

mod api;
mod client;
mod metrics;
mod render;
mod route;
mod server;
mod write;

pub use api::{Api, HttpConfig};

/// Routes `method` and a request target (`/path?query`) as the server does and drops the
/// result. For fuzzing the parsing of paths and query strings, which must never panic.
#[doc(hidden)]
pub fn route_target(method: &[u8], target: &str) {
    let Ok(method) = hyper::Method::from_bytes(method) else { return };
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    if let route::Routing::Api(kind, values) = route::route(&method, path) {
        let _ = recruit_service::Operation::parse(kind, api::rest_arguments(kind, values, query));
    }
}
pub use render::Body;
pub use server::serve;
