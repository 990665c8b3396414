//! The error every operation returns: an API error code, a message fit for clients, details,
//! and what a transport needs to render it (the scope to name, when to retry).

use std::fmt;
use std::time::Duration;

use recruit_domain::{ErrorCode, ErrorDetail, Scope};
use recruit_ports::StoreError;

/// A failed operation, ready to be rendered by any interface in the error envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceError {
    /// The stable code.
    pub code: ErrorCode,
    /// Text for people; never holds internal details.
    pub message: String,
    /// Structured context, such as one `{field, reason}` per invalid field.
    pub details: Vec<ErrorDetail>,
    /// For `INSUFFICIENT_SCOPE`: the scope the operation needs.
    pub required_scope: Option<Scope>,
    /// For `UNAVAILABLE` and `RATE_LIMITED`: when to try again.
    pub retry_after: Option<Duration>,
    /// What went wrong inside, for the server's log. Never rendered to a client.
    pub cause: Option<String>,
}

impl ServiceError {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: vec![],
            required_scope: None,
            retry_after: None,
            cause: None,
        }
    }

    /// The credential is missing, malformed, unknown, expired or revoked.
    pub fn unauthenticated() -> Self {
        Self::new(
            ErrorCode::Unauthenticated,
            "The request needs a valid access token: send `Authorization: Bearer <token>` with a \
             token that exists, has not expired and has not been revoked.",
        )
    }

    /// The token lacks `scope`.
    pub fn insufficient_scope(scope: Scope) -> Self {
        Self {
            required_scope: Some(scope),
            ..Self::new(
                ErrorCode::InsufficientScope,
                format!("The access token lacks the `{scope}` scope this operation needs."),
            )
        }
    }

    /// The caller lacks a permission.
    pub fn permission_denied(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::PermissionDenied, message)
    }

    /// The input has problems: one detail per problem, all of them at once.
    pub fn validation(details: Vec<ErrorDetail>) -> Self {
        Self {
            details,
            ..Self::new(
                ErrorCode::ValidationFailed,
                "The request has invalid parameters; see `details`.",
            )
        }
    }

    /// A resource of this organization with that identifier does not exist.
    pub fn not_found(what: &str) -> Self {
        Self::new(
            ErrorCode::NotFound,
            format!("No {what} with this ID exists in your organization."),
        )
    }

    /// An unexpected failure. The cause is for the log, never for the client.
    pub fn internal() -> Self {
        Self::new(
            ErrorCode::Internal,
            "An unexpected error occurred. Retry later or contact support.",
        )
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ServiceError {}

/// How a store failure reaches a client. `NotFound` is translated by each operation, which
/// knows what was not found; here it can only be a row that vanished mid-request.
impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        let cause = Some(e.to_string());
        let error = match e {
            StoreError::Unavailable(_) => Self {
                retry_after: Some(Duration::from_secs(1)),
                ..Self::new(
                    ErrorCode::Unavailable,
                    "The service cannot reach its database right now. Retry after the delay in \
                     `Retry-After`.",
                )
            },
            StoreError::Timeout => Self::new(
                ErrorCode::UpstreamTimeout,
                "The database did not answer in time. Retry the request later.",
            ),
            _ => Self::internal(),
        };
        Self { cause, ..error }
    }
}
