//! What a call can end in: the server's error envelope with its code, a transport failure,
//! retries given up, or a download that does not prove itself, named by the position where
//! it breaks.

use std::time::Duration;

use recruit_domain::chain::ChainBreak;
use recruit_domain::{ErrorCode, ErrorDetail};

/// The error of a call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server refused the request with its error envelope.
    #[error("{status} {}: {message}{}", .code.as_str(), listed(.details))]
    Api {
        /// The HTTP status.
        status: u16,
        /// The envelope's stable code.
        code: ErrorCode,
        /// The envelope's message, for people.
        message: String,
        /// The envelope's details, such as one per invalid field.
        details: Vec<ErrorDetail>,
        /// How long the server asked to wait before trying again, if it did.
        retry_after: Option<Duration>,
    },
    /// The server could not be reached, or the connection broke.
    #[error("the server could not be reached: {0}")]
    Transport(#[source] reqwest::Error),
    /// The server's answer is not what the API documents.
    #[error("the server's answer could not be read: {0}")]
    Decode(String),
    /// Every attempt the retry policy allowed failed; `last` is the last failure.
    #[error("gave up after {attempts} attempts in {elapsed:?}: {last}")]
    GaveUp {
        /// The attempts made.
        attempts: u32,
        /// The time from the first attempt to the last failure.
        elapsed: Duration,
        /// The last failure.
        last: Box<Error>,
    },
    /// A line of a download does not continue the chain: altered, inserted, removed or
    /// relinked, at the position named.
    #[error("the download does not prove itself: {0}")]
    Chain(#[from] ChainBreak),
    /// The download ended before the lines it announced: cut after `after`.
    #[error("the download was cut after position {after}: {received} of {expected} lines")]
    Cut {
        /// The position of the last line received.
        after: u64,
        /// The lines the server announced.
        expected: u64,
        /// The lines received.
        received: u64,
    },
    /// The download does not reach the signed checkpoint, or its hash at the checkpoint's
    /// position is not the one signed.
    #[error("the download does not match the signed checkpoint at position {position}: {why}")]
    Checkpoint {
        /// The checkpoint's position.
        position: u64,
        /// What does not match.
        why: String,
    },
    /// No checkpoint could be trusted: none signed, or signed by no key the client trusts.
    #[error("no checkpoint can be trusted: {0}")]
    Untrusted(String),
    /// The client was configured with something it cannot use.
    #[error("the client cannot be built: {0}")]
    Config(String),
    /// A call was given something it cannot send.
    #[error("the request cannot be made: {0}")]
    Request(String),
    /// Reading or writing a local file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// The envelope's code, for an answer of the server (after retries, the last one's).
    ///
    /// ```
    /// use recruit_client::Error;
    /// use recruit_domain::ErrorCode;
    ///
    /// let e = Error::Api {
    ///     status: 409,
    ///     code: ErrorCode::Conflict,
    ///     message: "The user changed since it was read.".into(),
    ///     details: vec![],
    ///     retry_after: None,
    /// };
    /// assert_eq!(e.code(), Some(&ErrorCode::Conflict));
    /// ```
    pub fn code(&self) -> Option<&ErrorCode> {
        match self {
            Self::Api { code, .. } => Some(code),
            Self::GaveUp { last, .. } => last.code(),
            _ => None,
        }
    }

    /// The position of the chain where a download stopped proving itself, if it did.
    pub fn position(&self) -> Option<u64> {
        match self {
            Self::Chain(b) => Some(match b {
                ChainBreak::Altered { position }
                | ChainBreak::Unlinked { position }
                | ChainBreak::Foreign { position } => *position,
                ChainBreak::Gap { expected, .. } => *expected,
                ChainBreak::Unchained { after } => after + 1,
            }),
            Self::Cut { after, .. } => Some(after + 1),
            Self::Checkpoint { position, .. } => Some(*position),
            _ => None,
        }
    }
}

/// The envelope's details after its message: ` (field: reason; …)`, or nothing.
fn listed(details: &[ErrorDetail]) -> String {
    if details.is_empty() {
        return String::new();
    }
    let each: Vec<String> = details
        .iter()
        .map(|d| {
            let pairs: Vec<String> = d.iter().map(|(k, v)| format!("{k}={v}")).collect();
            match (d.get("field"), d.get("reason")) {
                (Some(field), Some(reason)) => format!("{field}: {reason}"),
                _ => pairs.join(", "),
            }
        })
        .collect();
    format!(" ({})", each.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_what_each_field_was_refused_for() {
        let e = Error::Api {
            status: 400,
            code: ErrorCode::ValidationFailed,
            message: "The request is not valid.".into(),
            details: vec![
                ErrorDetail::field("limit", "must be 1 to 100"),
                ErrorDetail::field("cursor", "is not a cursor"),
            ],
            retry_after: None,
        };
        assert_eq!(
            e.to_string(),
            "400 VALIDATION_FAILED: The request is not valid. (limit: must be 1 to 100; cursor: \
             is not a cursor)"
        );
    }
}
