//! The error codes of the API and the envelope every failure is reported in (spec §7).

use std::fmt;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;

open_enum! {
    /// A stable, machine-readable error code. Clients branch on it, never on the message.
    ///
    /// ```
    /// use recruit_domain::ErrorCode;
    ///
    /// assert_eq!(ErrorCode::InvalidCursor.http_status(), 400);
    /// assert_eq!(ErrorCode::from("INVALID_CURSOR"), ErrorCode::InvalidCursor);
    /// // A code added by a later server version is kept, not refused.
    /// let newer = ErrorCode::from("QUOTA_EXCEEDED");
    /// assert_eq!(newer.as_str(), "QUOTA_EXCEEDED");
    /// assert!(!newer.is_known());
    /// ```
    pub enum ErrorCode {
        /// Authentication missing or invalid.
        Unauthenticated = "UNAUTHENTICATED",
        /// The token lacks the scope the operation needs.
        InsufficientScope = "INSUFFICIENT_SCOPE",
        /// The input did not match the request schema.
        ValidationFailed = "VALIDATION_FAILED",
        /// The cursor does not belong to these filters.
        InvalidCursor = "INVALID_CURSOR",
        /// The request body exceeds the size limit.
        PayloadTooLarge = "PAYLOAD_TOO_LARGE",
        /// The resource is absent or outside this organization.
        NotFound = "NOT_FOUND",
        /// The caller lacks the permission required.
        PermissionDenied = "PERMISSION_DENIED",
        /// A create request needs an idempotency key.
        IdempotencyKeyRequired = "IDEMPOTENCY_KEY_REQUIRED",
        /// The idempotency key was used with a different payload.
        IdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED",
        /// Too many requests.
        RateLimited = "RATE_LIMITED",
        /// The requested state transition conflicts with current data.
        Conflict = "CONFLICT",
        /// A profile field is managed by directory or SCIM sync.
        CannotUpdateSyncManagedFields = "CANNOT_UPDATE_SYNC_MANAGED_FIELDS",
        /// The operation is not available.
        NotImplemented = "NOT_IMPLEMENTED",
        /// An unexpected error in the service.
        Internal = "INTERNAL",
        /// An upstream dependency of the service timed out.
        UpstreamTimeout = "UPSTREAM_TIMEOUT",
        /// The service cannot serve the request now.
        Unavailable = "UNAVAILABLE",
    }
}

impl ErrorCode {
    /// The HTTP status a response with this code carries. A code this version does not know
    /// maps to 500.
    pub fn http_status(&self) -> u16 {
        match self {
            Self::ValidationFailed | Self::InvalidCursor | Self::IdempotencyKeyRequired => 400,
            Self::Unauthenticated => 401,
            Self::InsufficientScope | Self::PermissionDenied => 403,
            Self::NotFound => 404,
            Self::Conflict | Self::CannotUpdateSyncManagedFields => 409,
            Self::PayloadTooLarge => 413,
            Self::IdempotencyKeyReused => 422,
            Self::RateLimited => 429,
            Self::Internal | Self::Other(_) => 500,
            Self::NotImplemented => 501,
            Self::Unavailable => 503,
            Self::UpstreamTimeout => 504,
        }
    }

    /// What the code means, in one sentence.
    pub fn meaning(&self) -> &'static str {
        match self {
            Self::Unauthenticated => "Authentication is missing or invalid.",
            Self::InsufficientScope => "The token lacks the scope the operation needs.",
            Self::ValidationFailed => "The input did not match the request schema.",
            Self::InvalidCursor => "The cursor does not belong to these filters.",
            Self::PayloadTooLarge => "The request body exceeds the size limit.",
            Self::NotFound => "The resource is absent or outside this organization.",
            Self::PermissionDenied => {
                "The caller lacks the permission required, such as the acting user's permission \
                 to read the audit ledger, or access to a confidential job."
            }
            Self::IdempotencyKeyRequired => "A create request needs an idempotency key.",
            Self::IdempotencyKeyReused => {
                "The idempotency key was used before with a different payload."
            }
            Self::RateLimited => "Too many requests.",
            Self::Conflict => "The requested state transition conflicts with current data.",
            Self::CannotUpdateSyncManagedFields => {
                "A profile field is managed by directory or SCIM sync and cannot be updated \
                 through the API."
            }
            Self::NotImplemented => "The operation is not available.",
            Self::Internal => "An unexpected error happened in the service.",
            Self::UpstreamTimeout => "An upstream dependency of the service timed out.",
            Self::Unavailable => {
                "The service cannot serve the request right now, for example because its \
                 database is unreachable or saturated."
            }
            Self::Other(_) => "A code this version does not know.",
        }
    }

    /// What a client does about it.
    pub fn recovery(&self) -> &'static str {
        match self {
            Self::Unauthenticated => "Reconnect and complete OAuth, or send a valid API token.",
            Self::InsufficientScope => {
                "Reconnect with the required scope or use a permitted operation."
            }
            Self::ValidationFailed => "Correct the fields listed in `details` and retry.",
            Self::InvalidCursor => {
                "Restart the list request; reuse a cursor only with unchanged filters."
            }
            Self::PayloadTooLarge => "Reduce the payload.",
            Self::NotFound => "Discover a valid ID first.",
            Self::PermissionDenied => {
                "Act as a user who holds the permission, or ask an owner for access."
            }
            Self::IdempotencyKeyRequired => "Generate a fresh key for this logical create.",
            Self::IdempotencyKeyReused => "Use a fresh key for the changed request.",
            Self::RateLimited => "Wait as long as `Retry-After` says and retry with backoff.",
            Self::Conflict => "Read the object and resolve the conflict before retrying.",
            Self::CannotUpdateSyncManagedFields => {
                "Drop the fields listed in `details`, or change the field's sync source in the \
                 service settings and update the value in the source system."
            }
            Self::NotImplemented => "Use a supported operation.",
            Self::Internal => "Retry later or contact support.",
            Self::UpstreamTimeout => "Retry the idempotent operation later.",
            Self::Unavailable => "Wait as long as `Retry-After` says and retry with backoff.",
            Self::Other(_) => "Treat it by its HTTP status.",
        }
    }
}

/// The body of every failed response: `{"error": {...}}` (spec §7).
///
/// ```
/// use recruit_domain::{ErrorCode, ErrorDetail, ErrorResponse};
///
/// let body = ErrorResponse::new(ErrorCode::ValidationFailed, "The request is not valid.")
///     .with_detail(ErrorDetail::field("limit", "must be an integer from 1 to 100"));
/// assert_eq!(body.error.code.http_status(), 400);
/// # #[cfg(feature = "serde")]
/// assert_eq!(
///     serde_json::to_string(&body).unwrap(),
///     r#"{"error":{"code":"VALIDATION_FAILED","message":"The request is not valid.","details":[{"field":"limit","reason":"must be an integer from 1 to 100"}]}}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct ErrorResponse {
    /// The error.
    pub error: ErrorBody,
}

/// What went wrong: the code, a message for people, and structured context.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct ErrorBody {
    /// The stable code clients branch on.
    pub code: ErrorCode,
    /// Text for people; its wording may change.
    pub message: String,
    /// A link to the documentation of the code.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub docs_url: Option<String>,
    /// Structured context, such as one entry per rejected field. Absent when empty.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub details: Vec<ErrorDetail>,
}

impl ErrorResponse {
    /// An error with a code and a message, without documentation link or details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { error: ErrorBody { code, message: message.into(), docs_url: None, details: vec![] } }
    }

    /// Adds a link to the documentation.
    #[must_use]
    pub fn with_docs_url(mut self, url: impl Into<String>) -> Self {
        self.error.docs_url = Some(url.into());
        self
    }

    /// Adds one entry of structured context.
    #[must_use]
    pub fn with_detail(mut self, detail: ErrorDetail) -> Self {
        self.error.details.push(detail);
        self
    }
}

/// One entry of an error's `details`: an object whose values are strings, keys in the order
/// they were added.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ErrorDetail(Vec<(String, String)>);

impl ErrorDetail {
    /// An entry about one request field: `{"field": …, "reason": …}`.
    pub fn field(field: impl Into<String>, reason: impl fmt::Display) -> Self {
        Self::default().with("field", field).with("reason", reason.to_string())
    }

    /// Sets `key` to `value`, replacing an earlier value of the same key.
    #[must_use]
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let (key, value) = (key.into(), value.into());
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.0.push((key, value)),
        }
        self
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

impl fmt::Debug for ErrorDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(feature = "serde")]
mod serde_impls {
    use std::fmt;

    use serde::de::{MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::ErrorDetail;

    impl Serialize for ErrorDetail {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(self.0.len()))?;
            for (k, v) in &self.0 {
                map.serialize_entry(k, v)?;
            }
            map.end()
        }
    }

    impl<'de> Deserialize<'de> for ErrorDetail {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = ErrorDetail;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object whose values are strings")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ErrorDetail, A::Error> {
                    let mut detail = ErrorDetail::default();
                    while let Some((k, v)) = map.next_entry::<String, String>()? {
                        detail = detail.with(k, v);
                    }
                    Ok(detail)
                }
            }
            deserializer.deserialize_map(V)
        }
    }
}
