//! The operations on the organization and its people: a job, the organization, a user's
//! profile read and changed, and the caller.

use recruit_domain::model::{
    AccessData, ActivityCategory, DataSubject, Me, MeToken, MeUser, UserProfile,
};
use recruit_domain::{
    AccountId, ErrorCode, ErrorDetail, Job, JobId, Organization, Permission, PrivacyAuditLog,
    PrivacyAuditLogId, Timestamp, User, UserId,
};
use recruit_ports::{LedgerEntry, ProfileUpdate, StoreError};

use super::{Service, parse_id};
use crate::error::ServiceError;
use crate::input::{GetJobParams, GetUserParams, NoParams, UpdateUserParams};
use crate::operation::{Caller, Effect, OperationKind, RequestContext, Via};
use crate::profiles;

impl Service {
    /// A job of the caller's organization. Needs `jobs:read`; a confidential job is readable
    /// only by owners, admins and members of its hiring team. A job of another organization is
    /// not found, exactly like a missing one.
    pub(crate) async fn get_job(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: GetJobParams,
    ) -> Result<Job, ServiceError> {
        let mut problems = params.problems;
        let name = context.via.name(OperationKind::GetJob, "job_id");
        let id = match parse_id::<JobId>(&params.job_id, name, &mut problems) {
            Some(id) if problems.is_empty() => id,
            _ => return Err(ServiceError::validation(problems)),
        };
        let job = match self.store.job(caller.token.organization_id, id).await {
            Ok(job) => job,
            Err(StoreError::NotFound) => return Err(ServiceError::not_found("job")),
            Err(e) => return Err(e.into()),
        };
        let on_team = job.hiring_team.iter().any(|m| m.user.id == caller.user.id);
        if job.confidential && !on_team && !caller.user.role.holds(Permission::ReadConfidentialJobs)
        {
            return Err(ServiceError::permission_denied(
                "This job is confidential: only owners, admins and its hiring team may read it.",
            ));
        }
        let app_url = format!("{}/jobs/{}", self.config.app_base_url.trim_end_matches('/'), job.id);
        Ok(job.into_job(app_url))
    }

    /// A user of the caller's organization. Needs `users:read`. The read is recorded in the
    /// privacy ledger (READ of an employee's name and email address) in the same transaction;
    /// if it cannot be, nothing is returned. A user of another organization is not found,
    /// exactly like a missing one.
    pub(crate) async fn get_user(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: GetUserParams,
    ) -> Result<UserProfile, ServiceError> {
        let mut problems = params.problems;
        let name = context.via.name(OperationKind::GetUser, "user_id");
        let id = parse_id::<UserId>(&params.user_id, name, &mut problems);
        let id = match id {
            Some(id) if problems.is_empty() => id,
            _ => return Err(ServiceError::validation(problems)),
        };
        let entry = profile_entry(caller, context, OperationKind::GetUser, id);
        match self.store.read_user(id, &entry).await {
            Ok(user) => Ok(self.profile(user)),
            Err(StoreError::NotFound) => Err(ServiceError::not_found("user")),
            Err(e) => Err(e.into()),
        }
    }

    /// Changes a user's profile with a JSON Merge Patch. Needs `users:write`; an owner or admin
    /// changes anyone of the organization, anyone else only themselves. In order: the input
    /// (every problem at once), the user, the caller's access, fields kept by a sync
    /// (CANNOT_UPDATE_SYNC_MANAGED_FIELDS, every one listed), `If-Match` (CONFLICT when stale),
    /// the new manager (of the organization, VALIDATION_FAILED; not the user nor below them,
    /// CONFLICT). The change and its privacy ledger entry (UPDATE) are written together, and
    /// only while everything the decision read is unchanged; a change that meets a concurrent
    /// one is decided again on what is stored then.
    pub(crate) async fn update_user(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: UpdateUserParams,
    ) -> Result<UserProfile, ServiceError> {
        let mut problems = params.problems;
        let kind = OperationKind::UpdateUser;
        let if_match_name = context.via.name(kind, "if_match");
        let id =
            parse_id::<UserId>(&params.user_id, context.via.name(kind, "user_id"), &mut problems);
        let if_match = match &params.if_match {
            Some(value) => {
                profiles::IfMatch::parse(value, if_match_name).map_err(|p| problems.push(p)).ok()
            }
            None => None,
        };
        let patch = params
            .body
            .and_then(|body| {
                serde_json::from_slice(&body)
                    .map_err(|e| problems.push(crate::problems::not_json(&e)))
                    .ok()
            })
            .and_then(|body: serde_json::Value| profiles::patch(&body, &mut problems));
        let (Some(id), Some(patch)) = (id, patch) else {
            return Err(ServiceError::validation(problems));
        };
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        let organization = caller.token.organization_id;
        for attempt in 1..=PROFILE_ATTEMPTS {
            let user = match self.store.user(organization, id).await {
                Ok(user) => user,
                Err(StoreError::NotFound) => return Err(ServiceError::not_found("user")),
                Err(e) => return Err(e.into()),
            };
            if user.id != caller.user.id && !caller.user.role.holds(Permission::UpdateAnyProfile) {
                return Err(ServiceError::permission_denied(
                    "Members may change their own profile only; changing another user's needs an \
                     owner or an admin.",
                ));
            }
            let sources = match self.store.organization(organization).await {
                Ok(record) => record.profile_field_sources,
                Err(StoreError::NotFound) => return Err(ServiceError::unauthenticated()),
                Err(e) => return Err(e.into()),
            };
            let managed = patch.sync_managed(&sources);
            if !managed.is_empty() {
                let names: Vec<&str> = managed.iter().map(|(f, _)| f.as_str()).collect();
                return Err(ServiceError {
                    details: managed
                        .iter()
                        .map(|(field, source)| {
                            ErrorDetail::default()
                                .with("field", field.as_str())
                                .with("source", source.as_str())
                        })
                        .collect(),
                    ..ServiceError::new(
                        ErrorCode::CannotUpdateSyncManagedFields,
                        format!(
                            "The organization keeps {} in a directory or SCIM sync: drop the \
                             fields listed in `details` (even unchanged ones), or change them in \
                             the source system. Nothing was written.",
                            names.join(", ")
                        ),
                    )
                });
            }
            let current = profiles::etag(&user);
            if if_match.as_ref().is_some_and(|m| !m.matches(&current)) {
                return Err(ServiceError::new(
                    ErrorCode::Conflict,
                    format!(
                        "The profile changed since it was read ({} does not match its current \
                         entity tag {current}). Read it again, reapply the change, and send it \
                         with the new tag. Nothing was written.",
                        if_match_name
                    ),
                ));
            }
            let mut read = vec![(user.id, user.updated_at)];
            if let Some(Some(manager)) = patch.manager {
                match self.managers_above(&user, manager).await? {
                    Chain::Managers(chain) => read.extend(chain),
                    Chain::Changed => continue,
                }
            }
            let changed = patch.apply(&user, Timestamp::now());
            let update = ProfileUpdate {
                entry: profile_entry(caller, context, OperationKind::UpdateUser, id),
                user: changed,
                read,
            };
            match self.store.update_user(&update).await {
                Ok(user) => return Ok(self.profile(user)),
                Err(StoreError::Conflict(_)) if attempt < PROFILE_ATTEMPTS => {}
                Err(StoreError::Conflict(_)) => break,
                Err(e) => return Err(e.into()),
            }
        }
        Err(ServiceError::new(
            ErrorCode::Conflict,
            "The profile kept changing while this change was being made. Read it again and retry. \
             Nothing was written.",
        ))
    }

    /// The users from `manager` up its chain of managers, each with its `updated_at`, when
    /// making `manager` the manager of `user` is allowed: VALIDATION_FAILED for a manager that
    /// is no user of the organization, CONFLICT for the user or someone below them.
    async fn managers_above(&self, user: &User, manager: UserId) -> Result<Chain, ServiceError> {
        if manager == user.id {
            return Err(ServiceError::new(
                ErrorCode::Conflict,
                "A user cannot be their own manager. Nothing was written.",
            ));
        }
        let mut chain = vec![];
        let mut next = Some(manager);
        while let Some(id) = next {
            if id == user.id {
                return Err(ServiceError::new(
                    ErrorCode::Conflict,
                    format!(
                        "{manager} reports to {} (directly or through others), so making them the \
                         manager would form a cycle. Nothing was written.",
                        user.id
                    ),
                ));
            }
            if chain.len() >= MAX_CHAIN {
                // The stored chain is acyclic by construction; one this long is not a chain.
                return Err(ServiceError::new(
                    ErrorCode::Conflict,
                    "The chain of managers above the new manager is too long to check.",
                ));
            }
            match self.store.user(user.organization_id, id).await {
                Ok(above) => {
                    chain.push((above.id, above.updated_at));
                    next = above.manager;
                }
                Err(StoreError::NotFound) if id == manager => {
                    return Err(ServiceError::validation(vec![ErrorDetail::field(
                        "manager",
                        "is not a user of this organization",
                    )]));
                }
                // Someone of the chain went away while it was read: decide again.
                Err(StoreError::NotFound) => return Ok(Chain::Changed),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Chain::Managers(chain))
    }

    /// The API's profile of a stored user, with its link and entity tag.
    fn profile(&self, user: User) -> UserProfile {
        let app_url =
            format!("{}/users/{}", self.config.app_base_url.trim_end_matches('/'), user.id);
        let etag = profiles::etag(&user);
        user.into_profile(app_url, etag)
    }

    /// The caller's organization. Needs `organization:read`. `problems` are those the
    /// transport found (such as a query parameter this operation does not take).
    pub(crate) async fn get_organization(
        &self,
        caller: &Caller,
        _: &RequestContext,
        NoParams { problems }: NoParams,
    ) -> Result<Organization, ServiceError> {
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        let record = match self.store.organization(caller.token.organization_id).await {
            Ok(record) => record,
            // The token's organization is gone: the token no longer names anything.
            Err(StoreError::NotFound) => return Err(ServiceError::unauthenticated()),
            Err(e) => return Err(e.into()),
        };
        let app_url = format!("{}/organization", self.config.app_base_url.trim_end_matches('/'));
        Ok(record.into_organization(app_url))
    }
}

impl Service {
    /// The caller: the user the token acts as, their organization, and the token. Any valid
    /// token may ask; it needs no scope, reads nothing more than authentication did, and is not
    /// recorded (it shows callers only what they presented and who they are).
    pub(crate) async fn get_me(
        &self,
        caller: &Caller,
        _: &RequestContext,
        NoParams { problems }: NoParams,
    ) -> Result<Me, ServiceError> {
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        let (user, token) = (&caller.user, &caller.token);
        Ok(Me {
            user: MeUser {
                id: user.id,
                name: user.name.clone(),
                email: user.email.clone(),
                role: user.role,
            },
            organization_id: token.organization_id,
            token: MeToken {
                id: token.id,
                scopes: token.scopes.clone(),
                expires_at: token.expires_at,
            },
        })
    }
}

/// How many times a change of a profile is decided again after meeting a concurrent one.
const PROFILE_ATTEMPTS: usize = 3;

/// The longest chain of managers checked for a cycle.
const MAX_CHAIN: usize = 10_000;

/// The chain of managers above a new manager, as read.
enum Chain {
    /// Each with the `updated_at` read.
    Managers(Vec<(UserId, Timestamp)>),
    /// It changed while it was read.
    Changed,
}

/// The privacy ledger entry that records `caller` reading or changing the profile of
/// `subject` through the operation `kind`: an employee's name and email address (every
/// profile shown holds both), at the caller's account (their user id) and address, in the
/// product area `API` at the operation's name in the interface used.
fn profile_entry(
    caller: &Caller,
    context: &RequestContext,
    kind: OperationKind,
    subject: UserId,
) -> LedgerEntry {
    let path = match &context.via {
        Via::Rest => kind.operation_id(),
        Via::Tool { name, .. } => kind.tool_name().unwrap_or(name),
    };
    let category = match kind.spec().effect {
        Effect::Read => ActivityCategory::Read,
        Effect::Append => ActivityCategory::Create,
        Effect::Change => ActivityCategory::Update,
    };
    employee_entry(caller, context.client_ip, subject, ("API", path.into()), category)
}

/// The privacy ledger entry that records `caller`, at `client_ip`, reading or changing (as
/// `category` says) the profile of the employee `subject` in the product area and at the path
/// `(menu, path)`: their name and email address, at the caller's account (their user id).
pub(super) fn employee_entry(
    caller: &Caller,
    client_ip: Option<std::net::IpAddr>,
    subject: UserId,
    (menu, path): (&str, String),
    category: ActivityCategory,
) -> LedgerEntry {
    LedgerEntry {
        organization_id: caller.token.organization_id,
        entry: PrivacyAuditLog {
            id: PrivacyAuditLogId::new_v7(),
            access_time: Timestamp::now(),
            account_id: AccountId::from_uuid(caller.user.id.uuid()),
            ip_addresses: client_ip.map(|ip| vec![ip.to_string()]).unwrap_or_default(),
            data_subject: DataSubject::Employee { user: subject },
            access_data: vec![AccessData::Name, AccessData::EmailAddress],
            access_menu: menu.into(),
            access_menu_path: path,
            activity_category: category,
            purpose: None,
        },
    }
}
