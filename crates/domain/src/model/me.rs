//! The caller of the API, as `GET /v1/me` shows it: who the token acts as, in which
//! organization, and what the token may do until when.

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::{ApiTokenId, OrganizationId, Role, Scope, Timestamp, UserId};

/// The caller: the user the token acts as, their organization, and the token.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Me {
    /// The user the token acts as.
    pub user: MeUser,
    /// The organization the token acts in.
    pub organization_id: OrganizationId,
    /// The token the request came with.
    pub token: MeToken,
}

/// The user behind a token: who they are and their role.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct MeUser {
    /// The user's identifier.
    pub id: UserId,
    /// The user's name.
    pub name: String,
    /// The user's email address.
    pub email: String,
    /// What the user may do in the organization.
    pub role: Role,
}

/// The token of a request: its identifier, what it may be used for and until when.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct MeToken {
    /// The token's identifier.
    pub id: ApiTokenId,
    /// What the token may be used for, sorted.
    pub scopes: Vec<Scope>,
    /// When the token stops working; `null` when it does not expire.
    pub expires_at: Option<Timestamp>,
}
