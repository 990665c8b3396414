//! The error every operation returns: an API error code, a message fit for clients, details,
//! and what a transport needs to render it (the scope to name, when to retry).

use std::fmt;
use std::time::Duration;

use recruit_domain::{ErrorBody, ErrorCode, ErrorDetail, ErrorResponse, Scope};
use recruit_ports::StoreError;

use crate::limits::RateLimitStatus;

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
    /// For failures charged to or refused by a rate limit: where the client stands with it.
    /// Boxed: few errors carry one, and every `Result` of the service carries the size.
    pub rate_limit: Option<Box<RateLimitStatus>>,
    /// What went wrong inside, for the server's log. Never rendered to a client.
    pub cause: Option<Box<str>>,
    /// For `UNAUTHENTICATED`: the request carried no credential at all, so its challenge
    /// names no error code (RFC 6750 §3.1); a credential that is not valid is `invalid_token`.
    pub no_credential: bool,
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
            rate_limit: None,
            cause: None,
            no_credential: false,
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

    /// [`ServiceError::internal`], with what went wrong inside for the server's log.
    pub fn internal_because(cause: impl Into<Box<str>>) -> Self {
        Self { cause: Some(cause.into()), ..Self::internal() }
    }

    /// The operation ran past its deadline.
    pub fn deadline_passed() -> Self {
        Self {
            cause: Some("the request deadline passed".into()),
            ..Self::new(
                ErrorCode::UpstreamTimeout,
                "The request took longer than the server allows. Retry later.",
            )
        }
    }

    /// The error envelope every interface renders: the code, the message, the details, and a
    /// link to the code's entry in the error reference served under `docs_base` (the server's
    /// public base URL; no link when it is empty).
    pub fn envelope(&self, docs_base: &str) -> ErrorResponse {
        ErrorResponse {
            error: ErrorBody {
                code: self.code.clone(),
                message: self.message.clone(),
                docs_url: (!docs_base.is_empty()).then(|| {
                    format!(
                        "{}/docs/errors#{}",
                        docs_base.trim_end_matches('/'),
                        self.code.as_str()
                    )
                }),
                details: self.details.clone(),
            },
        }
    }
}

/// Runs an operation under `deadline`, in the caller's task: a panic in it becomes INTERNAL,
/// and the deadline passing becomes UPSTREAM_TIMEOUT and cancels it. Every interface runs its
/// operations through this (writes as tasks of their own), so a bug or a slow database fails
/// one request the same way everywhere. A caller that goes away cancels it at its next wait:
/// for reads, whose record (if any) is written by the recorder's own task once submitted.
pub async fn guarded<T, F>(deadline: Duration, operation: F) -> Result<T, ServiceError>
where
    F: Future<Output = Result<T, ServiceError>>,
{
    use futures_util::FutureExt as _;
    match tokio::time::timeout(deadline, std::panic::AssertUnwindSafe(operation).catch_unwind())
        .await
    {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(ServiceError::internal_because("the operation panicked")),
        Err(_) => Err(ServiceError::deadline_passed()),
    }
}

/// [`guarded`], as a task of its own: a caller that goes away does not cancel it, so a write
/// the caller stops waiting for still finishes (or fails) whole. The deadline passing still
/// cancels it.
pub(crate) async fn detached<T, F>(deadline: Duration, operation: F) -> Result<T, ServiceError>
where
    F: Future<Output = Result<T, ServiceError>> + Send + 'static,
    T: Send + 'static,
{
    let task = tokio::spawn(operation);
    let abort = task.abort_handle();
    match tokio::time::timeout(deadline, task).await {
        Ok(Ok(result)) => result,
        Ok(Err(join)) if join.is_panic() => {
            Err(ServiceError::internal_because("the operation panicked"))
        }
        Ok(Err(join)) => Err(ServiceError::internal_because(join.to_string())),
        Err(_) => {
            abort.abort();
            Err(ServiceError::deadline_passed())
        }
    }
}

/// Logs a failure of the server's side (a 5xx) once, at error level, with its request id and
/// its cause; a client's mistake is not an error of the server and is not logged here.
pub fn log_failure(request_id: &str, e: &ServiceError) {
    if e.code.http_status() >= 500 {
        tracing::error!(
            request.id = %request_id,
            error.code = %e.code,
            error.cause = e.cause.as_deref().unwrap_or("none"),
            "request failed"
        );
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
        let cause = Some(e.to_string().into());
        let error = match e {
            StoreError::Unavailable(_) => Self {
                retry_after: Some(Duration::from_secs(1)),
                ..Self::new(
                    ErrorCode::Unavailable,
                    "The service's database cannot take the request right now (unreachable, \
                     failing over or out of disk space). Retry after the delay in `Retry-After`.",
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
