//! The people and queues of an organization: users with their role and profile, candidates,
//! task queues. The API shows users as [`UserProfile`](crate::model::UserProfile)s; jobs,
//! tokens and the import format refer to all of them.

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::{CandidateId, OrganizationId, TaskQueueId, Timestamp, UserId};

/// A user of an organization. In a document, `title`, `manager` and `linkedin_url` may be left
/// out (none), and `created_at` and `updated_at` too (the time the document is read).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct User {
    /// The user's identifier.
    pub id: UserId,
    /// The organization the user belongs to.
    pub organization_id: OrganizationId,
    /// The user's name.
    pub name: String,
    /// The user's email address.
    pub email: String,
    /// What the user may do in the organization.
    pub role: Role,
    /// The user's job title, if any.
    #[cfg_attr(feature = "serde", serde(default))]
    pub title: Option<String>,
    /// The user's manager, a user of the same organization, if any.
    #[cfg_attr(feature = "serde", serde(default))]
    pub manager: Option<UserId>,
    /// The user's LinkedIn profile, an `https` URL, if any.
    #[cfg_attr(feature = "serde", serde(default))]
    pub linkedin_url: Option<String>,
    /// When the user was created.
    #[cfg_attr(feature = "serde", serde(default = "Timestamp::now"))]
    pub created_at: Timestamp,
    /// When the profile last changed.
    #[cfg_attr(feature = "serde", serde(default = "Timestamp::now"))]
    pub updated_at: Timestamp,
    /// Whether the user may sign in, deactivated, or removed by the identity provider.
    #[cfg_attr(feature = "serde", serde(default))]
    pub status: UserStatus,
    /// The name the identity provider knows the user by (SCIM `userName`), if it named one;
    /// otherwise the e-mail address stands for it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub user_name: Option<String>,
    /// The identity provider's own identifier of the user (SCIM `externalId`), if any.
    #[cfg_attr(feature = "serde", serde(default))]
    pub external_id: Option<String>,
}

/// Whether a user may use recruitd. A user is never deleted: the ledgers name them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "SCREAMING_SNAKE_CASE"))]
pub enum UserStatus {
    /// Signs in and acts as usual.
    #[default]
    Active,
    /// Deactivated (SCIM `active: false`): every credential ended, none accepted.
    Deactivated,
    /// Deleted by the identity provider: deactivated, and no longer provisioned.
    Removed,
}

impl UserStatus {
    /// Every status.
    pub const ALL: [Self; 3] = [Self::Active, Self::Deactivated, Self::Removed];

    /// The value as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "ACTIVE",
            Self::Deactivated => "DEACTIVATED",
            Self::Removed => "REMOVED",
        }
    }

    /// Parses the stored value, exactly.
    pub fn from_wire(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether a user of this status may use recruitd.
    pub fn is_active(self) -> bool {
        self == Self::Active
    }
}

impl User {
    /// The profile as the API shows it, with the link and the entity tag the service made.
    pub fn into_profile(self, app_url: String, etag: String) -> crate::model::UserProfile {
        crate::model::UserProfile {
            id: self.id,
            name: self.name,
            email: self.email,
            role: self.role,
            title: self.title,
            manager: self.manager,
            linkedin_url: self.linkedin_url,
            created_at: self.created_at,
            updated_at: self.updated_at,
            app_url,
            etag,
        }
    }
}

/// What a user may do in their organization: a closed set of values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "SCREAMING_SNAKE_CASE"))]
pub enum Role {
    /// Holds every permission, including reading the audit ledgers.
    Owner,
    /// Administers the organization; reads confidential jobs.
    Admin,
    /// An ordinary member.
    Member,
}

impl Role {
    /// Every role, from the most to the least privileged.
    pub const ALL: [Self; 3] = [Self::Owner, Self::Admin, Self::Member];

    /// The value as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "OWNER",
            Self::Admin => "ADMIN",
            Self::Member => "MEMBER",
        }
    }

    /// Parses the wire value, exactly.
    pub fn from_wire(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// A candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Candidate {
    /// The candidate's identifier.
    pub id: CandidateId,
    /// The organization the candidate applied to.
    pub organization_id: OrganizationId,
    /// The candidate's name.
    pub name: String,
    /// The candidate's email address.
    pub email: String,
    /// The candidate's phone number, as given.
    pub phone: String,
}

/// A queue that scheduling tasks go to.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct TaskQueue {
    /// The queue's identifier.
    pub id: TaskQueueId,
    /// The organization the queue belongs to.
    pub organization_id: OrganizationId,
    /// The queue's name.
    pub name: String,
}
