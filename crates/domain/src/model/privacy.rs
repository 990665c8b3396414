//! An entry of the privacy audit ledger: who accessed whose personal data (spec §2.2–2.4).

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{AccountId, CandidateId, PrivacyAuditLogId, Timestamp, UserId};

/// An entry of the privacy audit ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct PrivacyAuditLog {
    /// The entry's identifier.
    pub id: PrivacyAuditLogId,
    /// When the access happened.
    pub access_time: Timestamp,
    /// The login account that performed the access.
    pub account_id: AccountId,
    /// The client IP addresses recorded for the access, as recorded.
    pub ip_addresses: Vec<String>,
    /// Whose data was accessed.
    pub data_subject: DataSubject,
    /// Which kinds of personal data the access covered.
    pub access_data: Vec<AccessData>,
    /// The product area where the access happened.
    pub access_menu: String,
    /// The product navigation path where the access happened.
    pub access_menu_path: String,
    /// What kind of access it was.
    pub activity_category: ActivityCategory,
    /// Why, in the words of whoever accessed: the purpose a download was stated for, which
    /// the monthly review confirms. Left out of the JSON (and of the entry's hash) when none.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub purpose: Option<String>,
}

impl PrivacyAuditLog {
    /// How far after the moment it is recorded an entry's `access_time` may be: clocks of the
    /// reporting services drift, but an access is recorded when it happens. Every entry is
    /// therefore recorded no earlier than this before its `access_time`.
    pub const FUTURE_TOLERANCE: std::time::Duration = std::time::Duration::from_secs(5 * 60);
}

/// Whose data an access covered; `type` in JSON selects the variant.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE"))]
pub enum DataSubject {
    /// One employee, a user of the organization.
    Employee {
        /// The employee.
        user: UserId,
    },
    /// One candidate.
    Candidate {
        /// The candidate.
        candidate: CandidateId,
    },
    /// Many records selected by a query.
    Bulk {
        /// How many records the access covered, or `None` (`null`) when unknown.
        bulk_count: Option<u64>,
        /// The query that selected the records.
        query: BulkQuery,
    },
}

/// The query that selected the records of a bulk access; `type` in JSON selects the variant.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE"))]
pub enum BulkQuery {
    /// Candidates listed by identifier.
    CandidateIds {
        /// The candidates.
        ids: Vec<CandidateId>,
    },
    /// Employees listed by identifier.
    EmployeeIds {
        /// The employees.
        ids: Vec<UserId>,
    },
    /// Candidates found by a search.
    CandidateSearch {
        /// The search terms.
        values: Vec<String>,
    },
    /// Employees found by a search.
    EmployeeSearch {
        /// The search terms.
        values: Vec<String>,
    },
    /// Everyone of a kind in the organization.
    Scope {
        /// Which everyone.
        scope: BulkScope,
    },
}

/// Everyone of a kind in the organization: a closed set of values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "SCREAMING_SNAKE_CASE"))]
pub enum BulkScope {
    /// All candidates of the organization.
    AllOrgCandidates,
    /// All employees of the organization.
    AllOrgEmployees,
}

impl BulkScope {
    /// The value as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AllOrgCandidates => "ALL_ORG_CANDIDATES",
            Self::AllOrgEmployees => "ALL_ORG_EMPLOYEES",
        }
    }

    /// Parses the wire value, exactly.
    pub fn from_wire(s: &str) -> Option<Self> {
        [Self::AllOrgCandidates, Self::AllOrgEmployees].into_iter().find(|v| v.as_str() == s)
    }
}

/// A kind of personal data: a closed set of values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "SCREAMING_SNAKE_CASE"))]
pub enum AccessData {
    /// A person's name.
    Name,
    /// A person's email address.
    EmailAddress,
    /// A person's phone number.
    PhoneNumber,
}

impl AccessData {
    /// The value as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Name => "NAME",
            Self::EmailAddress => "EMAIL_ADDRESS",
            Self::PhoneNumber => "PHONE_NUMBER",
        }
    }

    /// Parses the wire value, exactly.
    pub fn from_wire(s: &str) -> Option<Self> {
        [Self::Name, Self::EmailAddress, Self::PhoneNumber].into_iter().find(|v| v.as_str() == s)
    }
}

open_enum! {
    /// What kind of access an entry records.
    pub enum ActivityCategory {
        /// A record was created.
        Create = "CREATE",
        /// A record was read.
        Read = "READ",
        /// A record was changed.
        Update = "UPDATE",
        /// A record was deleted.
        Delete = "DELETE",
        /// Many records were created.
        BulkCreate = "BULK_CREATE",
        /// Many records were read.
        BulkRead = "BULK_READ",
        /// Many records were changed.
        BulkUpdate = "BULK_UPDATE",
        /// Many records were deleted.
        BulkDelete = "BULK_DELETE",
        /// Records were downloaded.
        Download = "DOWNLOAD",
    }
}
