//! The operations of recruitd over the ports, free of any transport: what the REST API and
//! the tool interface both call, so that neither re-implements a rule.
//!
//! [`Service::run`] is the one entry point of every interface: a transport turns a request into
//! an [`Operation`] and hands it over with the client's [`Identity`]; everything known of an
//! operation before its input is read (its names, scope, permission, rate-limit class, whether
//! it is recorded) is its [`OperationKind`]'s. The service
//! authenticates the secret (hashed, compared in constant time, expired and revoked tokens
//! refused), applies the rate limits ([`limits`]: per token and class of operation, and per
//! client address for failed authentications), and runs the operation with the order of checks
//! of design.md §3, the signed cursor of the privacy ledger ([`cursor`]), and the recording of
//! every read of that ledger, committed before the read returns anything. Errors are [`ServiceError`]s
//! carrying their API error code and rate-limit status; a failure on the server's side is
//! logged once, here, whichever interface it came through; transports only render them.
//!
//! Besides the API: importing ([`import`]: JSON documents and NDJSON ledgers, errors naming
//! their path or line), the deterministic demo data ([`demo`]) and the verification of the
//! ledgers' chains ([`verify`]) against the signed checkpoints of their heads ([`checkpoint`]),
//! their exports as NDJSON that carries the chain ([`export`]), their retention ([`retention`]:
//! export, signed cut, removal), and the monthly review of the privacy ledger ([`review`]),
//! with its decisions on downloads and its sign-off ([`sign_off`]).
//!
//! It depends on `recruit-domain` and `recruit-ports` only: never on a storage adapter, an
//! HTTP stack or a protocol library.

pub mod accesses;
pub mod auth;
pub mod checkpoint;
pub mod clock;
pub mod console;
pub mod cursor;
pub mod demo;
mod error;
pub mod export;
pub mod filter;
pub mod import;
pub mod input;
pub mod limits;
pub mod log_stream;
pub mod mail;
mod operation;
pub mod outbound;
pub mod problems;
pub mod profiles;
pub mod replica;
pub mod retention;
pub mod review;
pub mod review_rules;
pub mod scim;
mod service;
pub mod sign_off;
pub mod sso;
pub mod verify;
pub mod work_hours;

pub use error::{ServiceError, guarded, log_failure};
pub use input::{
    Arguments, BodyParams, DecideParams, ExplainParams, ExportParams, GetJobParams, GetUserParams,
    ListParams, NoParams, Param, Place, RecordParams, ReviewParams, Shape, SignOffParams,
    UpdateUserParams,
};
pub use operation::{
    BATCH_BODY_LIMIT, BODY_LIMIT, Caller, Done, Effect, Identity, Method, Operation, OperationKind,
    Outcome, Recorded, RequestBody, RequestContext, Spec, Via,
};
pub use service::{
    BatchWrites, COUNTED_AT_MOST, IdempotencyConfig, Matching, ScimRequest, ScimResponse, Service,
    ServiceConfig, SsoCallback, SsoFailure, SsoRefusal, SsoStart,
};
