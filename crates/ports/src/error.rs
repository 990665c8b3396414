//! The errors a store returns: typed cases callers act on, and one opaque case.

/// What went wrong in a store. Adapters map their driver's errors to these at the seam.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The thing asked for does not exist (for the organization asked about).
    #[error("not found")]
    NotFound,
    /// A write collides with what is stored: a duplicate identifier or secret.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The database cannot be reached, or no connection could be had in time.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// A statement ran past its deadline.
    #[error("the database did not answer in time")]
    Timeout,
    /// Anything else: a bug, corrupt data, an unexpected driver error.
    #[error("unexpected store error: {0}")]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl StoreError {
    /// An unexpected error with a message.
    pub fn other(message: impl Into<String>) -> Self {
        Self::Other(message.into().into())
    }

    /// The same error again, for each of several callers that share one failure (an
    /// unexpected error keeps its message).
    pub fn for_each_caller(&self) -> Self {
        match self {
            Self::NotFound => Self::NotFound,
            Self::Conflict(m) => Self::Conflict(m.clone()),
            Self::Unavailable(m) => Self::Unavailable(m.clone()),
            Self::Timeout => Self::Timeout,
            Self::Other(e) => Self::other(e.to_string()),
        }
    }
}

/// One problem with an import document: where, and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct ImportProblem {
    /// Where in the document, such as `jobs[3].hiring_team[0].user_id`.
    pub path: String,
    /// What is wrong there.
    pub reason: String,
}

/// Why an import wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The document is not valid: a duplicate identifier, a missing reference, a bad field.
    #[error("invalid import document: {0}")]
    Invalid(ImportProblem),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
