//! Scopes of API tokens and the permissions of roles (design.md §3): pure rules, no I/O.

use std::fmt;
use std::str::FromStr;

use crate::model::Role;

/// What an API token may be used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Scope {
    /// `audit_logs:read`: list the privacy audit ledger (the specification's scope).
    AuditLogsRead,
    /// `jobs:read`: read jobs.
    JobsRead,
    /// `organization:read`: read the caller's organization.
    OrganizationRead,
    /// `audit_logs:write`: record accesses to personal data in the privacy audit ledger.
    AuditLogsWrite,
    /// `users:read`: read users' profiles.
    UsersRead,
    /// `users:write`: change users' profiles.
    UsersWrite,
    /// `audit_logs:review`: confirm the privacy ledger's downloads and sign off a month's
    /// review.
    AuditLogsReview,
    /// `scim`: provision users over SCIM 2.0 (`/scim/v2`); held by SCIM tokens alone.
    Scim,
    /// `organization:admin`: configure the organization's single sign-on.
    OrganizationAdmin,
    /// `log_streams:admin`: configure the streams that deliver the organization's privacy
    /// ledger to its own systems.
    LogStreamsAdmin,
}

impl Scope {
    /// Every scope.
    pub const ALL: [Self; 10] = [
        Self::AuditLogsRead,
        Self::JobsRead,
        Self::OrganizationRead,
        Self::AuditLogsWrite,
        Self::UsersRead,
        Self::UsersWrite,
        Self::AuditLogsReview,
        Self::Scim,
        Self::OrganizationAdmin,
        Self::LogStreamsAdmin,
    ];

    /// Whether the scope is one of the API and its tools; `scim` is held by SCIM tokens,
    /// which open `/scim/v2` alone.
    pub fn opens_api(self) -> bool {
        self != Self::Scim
    }

    /// The scope's name, as tokens and `WWW-Authenticate` carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AuditLogsRead => "audit_logs:read",
            Self::JobsRead => "jobs:read",
            Self::OrganizationRead => "organization:read",
            Self::AuditLogsWrite => "audit_logs:write",
            Self::UsersRead => "users:read",
            Self::UsersWrite => "users:write",
            Self::AuditLogsReview => "audit_logs:review",
            Self::Scim => "scim",
            Self::OrganizationAdmin => "organization:admin",
            Self::LogStreamsAdmin => "log_streams:admin",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Scope {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A scope name that does not exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseScopeError(());

impl fmt::Display for ParseScopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
        write!(f, "is not a scope; the scopes are {}", names.join(", "))
    }
}

impl std::error::Error for ParseScopeError {}

impl FromStr for Scope {
    type Err = ParseScopeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|scope| scope.as_str() == s).ok_or(ParseScopeError(()))
    }
}

/// A permission a user holds through their role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Permission {
    /// READ_AUDIT_LOGS: read the privacy audit ledger. Owners only.
    ReadAuditLogs,
    /// Read every confidential job, not only those whose hiring team one is on.
    ReadConfidentialJobs,
    /// Record accesses to personal data in the privacy audit ledger. Owners and admins (the
    /// users service tokens are made for).
    RecordAccesses,
    /// Change the profile of any user of the organization; without it, a user changes only
    /// their own. Owners and admins.
    UpdateAnyProfile,
    /// Configure how the organization's people sign in (single sign-on). Owners only.
    ManageSignOn,
}

impl Permission {
    /// The permission's name, as the OpenAPI document's `x-permission` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadAuditLogs => "READ_AUDIT_LOGS",
            Self::ReadConfidentialJobs => "READ_CONFIDENTIAL_JOBS",
            Self::RecordAccesses => "RECORD_ACCESSES",
            Self::UpdateAnyProfile => "UPDATE_ANY_PROFILE",
            Self::ManageSignOn => "MANAGE_SIGN_ON",
        }
    }
}

impl Role {
    /// Whether a user with this role holds `permission`.
    pub fn holds(self, permission: Permission) -> bool {
        match permission {
            Permission::ReadAuditLogs | Permission::ManageSignOn => self == Role::Owner,
            Permission::ReadConfidentialJobs
            | Permission::RecordAccesses
            | Permission::UpdateAnyProfile => {
                matches!(self, Role::Owner | Role::Admin)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_owners_read_audit_logs_and_owners_and_admins_read_confidential_jobs() {
        let holders = |p| Role::ALL.into_iter().filter(|r| r.holds(p)).collect::<Vec<_>>();
        assert_eq!(holders(Permission::ReadAuditLogs), [Role::Owner]);
        assert_eq!(holders(Permission::ManageSignOn), [Role::Owner]);
        assert_eq!(holders(Permission::ReadConfidentialJobs), [Role::Owner, Role::Admin]);
        assert_eq!(holders(Permission::RecordAccesses), [Role::Owner, Role::Admin]);
        assert_eq!(holders(Permission::UpdateAnyProfile), [Role::Owner, Role::Admin]);
    }

    #[test]
    fn scopes_parse_from_their_names_only() {
        for scope in Scope::ALL {
            assert_eq!(scope.as_str().parse(), Ok(scope));
        }
        assert!("audit_logs:delete".parse::<Scope>().is_err());
        let message = "x".parse::<Scope>().unwrap_err().to_string();
        assert!(Scope::ALL.iter().all(|s| message.contains(s.as_str())), "{message}");
        assert!("AUDIT_LOGS:READ".parse::<Scope>().is_err());
    }
}
