//! One page of a list and its pagination (spec §2.5).

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// One page of a list: the entries and where the next page starts.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Page<T> {
    /// The entries of this page, in the list's order.
    pub data: Vec<T>,
    /// Where the next page starts.
    pub pagination: Pagination,
}

/// Where the next page of a list starts.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Pagination {
    /// The opaque cursor of the next page, or `None` (`null`) when no entry follows.
    pub next_cursor: Option<String>,
}
