//! SCIM 2.0 provisioning (`/scim/v2`): a request authenticated by a SCIM token of an owner,
//! routed to the `User` resource or the discovery endpoints, with the rules of
//! [`crate::scim`]. Errors are SCIM's own messages (RFC 7644 §3.12), never the API envelope.
//!
//! Every write is a privacy ledger entry of the token's user, written with the change in one
//! transaction; a deactivation or a delete ends every credential of the user in it too.
//! Reads are not recorded: the identity provider reads back what it provisioned.

use std::net::IpAddr;
use std::time::Duration;

use recruit_domain::model::{ActivityCategory, ProfileField, Role};
use recruit_domain::{ErrorCode, OrganizationId, Scope, Timestamp, User, UserId, UserStatus};
use recruit_ports::{LedgerEntry, Provisioning, StoreError, UserLookup};
use serde_json::Value;

use super::Service;
use crate::auth::SecretKind;
use crate::error::ServiceError;
use crate::limits::OperationClass;
use crate::operation::Caller;
use crate::scim::document::{self, Fields};
use crate::scim::{ListParams, ScimError, discovery, filter, list_response, patch};

/// A SCIM request as a transport received it.
#[derive(Clone, Copy, Debug)]
pub struct ScimRequest<'a> {
    /// The method, upper case.
    pub method: &'a str,
    /// The path below `/scim/v2` (`/Users/usr_…`), percent-decoded.
    pub path: &'a str,
    /// The query string, as sent.
    pub query: &'a str,
    /// The `Content-Type`, if any.
    pub content_type: Option<&'a str>,
    /// The body.
    pub body: &'a [u8],
    /// The bearer secret, if any.
    pub secret: Option<&'a str>,
    /// The client's address.
    pub client_ip: Option<IpAddr>,
    /// The public URL of `/scim/v2`, for `meta.location`.
    pub base_url: &'a str,
}

/// What a SCIM request is answered with.
#[derive(Clone, Debug, PartialEq)]
pub struct ScimResponse {
    /// The HTTP status.
    pub status: u16,
    /// The body, if any: a resource, a list or an error.
    pub body: Option<Value>,
    /// `Location`, for a created resource.
    pub location: Option<String>,
    /// `Allow`, for a method the path does not serve.
    pub allow: Option<&'static str>,
    /// `Retry-After`, for a refusal by a rate limit or an unavailable store.
    pub retry_after: Option<Duration>,
    /// Whether the credential was missing or not valid (`WWW-Authenticate` is due).
    pub unauthenticated: bool,
}

impl ScimResponse {
    fn json(status: u16, body: Value) -> Self {
        Self {
            status,
            body: Some(body),
            location: None,
            allow: None,
            retry_after: None,
            unauthenticated: false,
        }
    }

    fn error(e: &ScimError) -> Self {
        Self::json(e.status, e.body())
    }
}

impl ScimResponse {
    /// The SCIM error message of a request refused before it reached SCIM's rules (a body
    /// too large, the deadline passed).
    pub fn refused(e: ServiceError) -> Self {
        let refusal = Refusal::from(e);
        Self {
            allow: refusal.allow,
            retry_after: refusal.retry_after,
            unauthenticated: refusal.unauthenticated,
            ..Self::error(&refusal.error)
        }
    }
}

/// What the handlers return: a response, or a SCIM error.
type Answer = Result<ScimResponse, Refusal>;

/// A request refused: a SCIM error, with what the transport must add to it.
#[derive(Debug)]
struct Refusal {
    error: ScimError,
    allow: Option<&'static str>,
    retry_after: Option<Duration>,
    unauthenticated: bool,
}

impl From<ScimError> for Refusal {
    fn from(error: ScimError) -> Self {
        Self { error, allow: None, retry_after: None, unauthenticated: false }
    }
}

impl From<ServiceError> for Refusal {
    fn from(e: ServiceError) -> Self {
        let status = match e.code {
            ErrorCode::Unauthenticated => 401,
            ErrorCode::InsufficientScope | ErrorCode::PermissionDenied => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::Conflict => 409,
            ErrorCode::RateLimited => 429,
            ErrorCode::Unavailable => 503,
            ErrorCode::UpstreamTimeout => 504,
            ErrorCode::ValidationFailed => 400,
            _ => 500,
        };
        Self {
            error: ScimError::status(status, e.message),
            allow: None,
            retry_after: e.retry_after,
            unauthenticated: e.code == ErrorCode::Unauthenticated,
        }
    }
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Self {
        ServiceError::from(e).into()
    }
}

/// A method the path does not serve: 405 with the methods it does.
fn not_allowed(allow: &'static str) -> Refusal {
    Refusal {
        allow: Some(allow),
        ..ScimError::status(405, format!("This endpoint answers {allow} only.")).into()
    }
}

impl Service {
    /// Answers a SCIM request. Never fails: every refusal is a SCIM error message.
    pub async fn scim(&self, request: ScimRequest<'_>) -> ScimResponse {
        match self.scim_answer(request).await {
            Ok(response) => response,
            Err(refusal) => ScimResponse {
                allow: refusal.allow,
                retry_after: refusal.retry_after,
                unauthenticated: refusal.unauthenticated,
                ..ScimResponse::error(&refusal.error)
            },
        }
    }

    async fn scim_answer(&self, r: ScimRequest<'_>) -> Answer {
        let caller =
            self.charged(r.client_ip, self.verify(r.secret, SecretKind::ScimToken)).await?;
        if !caller.token.scopes.contains(&Scope::Scim) || caller.user.role != Role::Owner {
            return Err(ScimError::status(
                403,
                "A SCIM token must hold the scope scim and act as an owner of the organization.",
            )
            .into());
        }
        let writes = !matches!(r.method, "GET" | "HEAD");
        let class = if writes { OperationClass::Write } else { OperationClass::Read };
        self.limits.admit(caller.token.id, class)?;
        let base = r.base_url;
        let segments: Vec<&str> = r.path.trim_matches('/').split('/').collect();
        match (segments.as_slice(), r.method) {
            (["ServiceProviderConfig"], "GET") => {
                let doc = format!("{}/docs/operations", self.config.app_base_url);
                Ok(ScimResponse::json(200, discovery::service_provider_config(base, &doc)))
            }
            (["ResourceTypes"], "GET") => Ok(ScimResponse::json(
                200,
                list_response(vec![discovery::user_resource_type(base)], 1, 1),
            )),
            (["ResourceTypes", "User"], "GET") => {
                Ok(ScimResponse::json(200, discovery::user_resource_type(base)))
            }
            (["Schemas"], "GET") => {
                let schemas = discovery::schemas(base);
                let n = schemas.len() as u64;
                Ok(ScimResponse::json(200, list_response(schemas, n, 1)))
            }
            (["Schemas", id], "GET") => discovery::schemas(base)
                .into_iter()
                .find(|s| s["id"].as_str().is_some_and(|s| s.eq_ignore_ascii_case(id)))
                .map(|s| ScimResponse::json(200, s))
                .ok_or_else(|| ScimError::not_found(format!("No schema {id}.")).into()),
            (["ResourceTypes", _], "GET") => {
                Err(ScimError::not_found("The only resource type is User.").into())
            }
            (["ServiceProviderConfig" | "ResourceTypes" | "Schemas"], _)
            | (["ResourceTypes" | "Schemas", _], _) => Err(not_allowed("GET")),
            (["Users"], "GET") => {
                self.list_users(&caller, base, &ListParams::from_query(r.query)?).await
            }
            (["Users"], "POST") => self.create_user(&caller, &r, &body(&r)?).await,
            (["Users"], _) => Err(not_allowed("GET, POST")),
            ([".search"] | ["Users", ".search"], "POST") => {
                self.list_users(&caller, base, &ListParams::from_search(&body(&r)?)?).await
            }
            ([".search"] | ["Users", ".search"], _) => Err(not_allowed("POST")),
            (["Users", id], method) => {
                let user = self.provisioned(&caller, id).await?;
                match method {
                    "GET" => {
                        let params = ListParams::from_query(r.query)?;
                        let doc = document::to_document(&user, base);
                        let doc = document::project(doc, &params.attributes, &params.excluded);
                        Ok(ScimResponse::json(200, doc))
                    }
                    "PUT" => {
                        let fields = document::fields(&body(&r)?)?;
                        self.write_user(&caller, &r, user, fields).await
                    }
                    "PATCH" => {
                        let doc = document::to_document(&user, base);
                        let fields = document::fields(&patch::apply(&doc, &body(&r)?)?)?;
                        self.write_user(&caller, &r, user, fields).await
                    }
                    "DELETE" => self.remove_user(&caller, &r, user).await,
                    _ => Err(not_allowed("GET, PUT, PATCH, DELETE")),
                }
            }
            _ => Err(ScimError::not_found(format!("No SCIM endpoint at {}.", r.path)).into()),
        }
    }

    /// The user `id` of the caller's organization, unless removed: NOT_FOUND otherwise, and
    /// for an id that does not parse.
    async fn provisioned(&self, caller: &Caller, id: &str) -> Result<User, Refusal> {
        let gone = || Refusal::from(ScimError::not_found(format!("No user {id}.")));
        let id: UserId = id.parse().map_err(|_| gone())?;
        match self.store.user(caller.token.organization_id, id).await {
            Ok(user) if user.status != UserStatus::Removed => Ok(user),
            Ok(_) | Err(StoreError::NotFound) => Err(gone()),
            Err(e) => Err(e.into()),
        }
    }

    async fn list_users(&self, caller: &Caller, base: &str, params: &ListParams) -> Answer {
        let lookup = match &params.filter {
            None => UserLookup::All,
            Some(text) => lookup(text)?,
        };
        let org = caller.token.organization_id;
        let (users, total) = self
            .store
            .provisioned_users(org, &lookup, params.start_index - 1, params.count)
            .await?;
        let resources = users
            .iter()
            .map(|u| {
                document::project(
                    document::to_document(u, base),
                    &params.attributes,
                    &params.excluded,
                )
            })
            .collect();
        Ok(ScimResponse::json(200, list_response(resources, total, params.start_index)))
    }

    async fn create_user(&self, caller: &Caller, r: &ScimRequest<'_>, body: &Value) -> Answer {
        let fields = document::fields(body)?;
        let now = Timestamp::now();
        let blank = User {
            id: UserId::new_v7(),
            organization_id: caller.token.organization_id,
            name: String::new(),
            email: String::new(),
            role: Role::Member,
            title: None,
            manager: None,
            linkedin_url: None,
            created_at: now,
            updated_at: now,
            status: UserStatus::Active,
            user_name: None,
            external_id: None,
        };
        let manager = self.manager(caller, &blank, fields.manager.as_ref()).await?;
        let user = User { updated_at: now, ..document::apply(&blank, &fields, manager, now) };
        let entry = entry(caller, r, user.id, ActivityCategory::Create, false);
        let provisioning = Provisioning {
            user,
            create: true,
            managed: managed(&fields),
            ends_credentials: false,
            entry,
        };
        let stored = self.provision(provisioning).await?;
        let doc = document::to_document(&stored, r.base_url);
        let location = doc["meta"]["location"].as_str().map(str::to_owned);
        Ok(ScimResponse { location, ..ScimResponse::json(201, doc) })
    }

    async fn write_user(
        &self,
        caller: &Caller,
        r: &ScimRequest<'_>,
        user: User,
        fields: Fields,
    ) -> Answer {
        let manager = self.manager(caller, &user, fields.manager.as_ref()).await?;
        let changed = document::apply(&user, &fields, manager, Timestamp::now());
        let ends = user.status.is_active() && !changed.status.is_active();
        let entry = entry(caller, r, user.id, ActivityCategory::Update, ends);
        let provisioning = Provisioning {
            user: changed,
            create: false,
            managed: managed(&fields),
            ends_credentials: ends,
            entry,
        };
        let stored = self.provision(provisioning).await?;
        Ok(ScimResponse::json(200, document::to_document(&stored, r.base_url)))
    }

    async fn remove_user(&self, caller: &Caller, r: &ScimRequest<'_>, user: User) -> Answer {
        let now = Timestamp::now();
        let after = Timestamp::from_unix_micros(user.updated_at.unix_micros() + 1).unwrap_or(now);
        let removed = User { status: UserStatus::Removed, updated_at: now.max(after), ..user };
        let entry = entry(caller, r, removed.id, ActivityCategory::Delete, true);
        let provisioning = Provisioning {
            user: removed,
            create: false,
            managed: vec![],
            ends_credentials: true,
            entry,
        };
        self.provision(provisioning).await?;
        Ok(ScimResponse { body: None, ..ScimResponse::json(204, Value::Null) })
    }

    async fn provision(&self, provisioning: Provisioning) -> Result<User, Refusal> {
        match self.store.provision_user(&provisioning).await {
            Ok(user) => Ok(user),
            Err(StoreError::Conflict(_)) => Err(ScimError {
                status: 409,
                scim_type: Some("uniqueness"),
                detail: "Another user of the organization has this userName.".into(),
            }
            .into()),
            Err(StoreError::NotFound) => Err(ScimError::not_found("The user is gone.").into()),
            Err(e) => Err(e.into()),
        }
    }

    /// The manager `given` names for `user`, if the representation names one: a user of the
    /// organization, not removed, not the user, and not managed by the user however far up.
    /// Without a manager attribute, the user keeps theirs.
    async fn manager(
        &self,
        caller: &Caller,
        user: &User,
        given: Option<&Option<String>>,
    ) -> Result<Option<UserId>, Refusal> {
        let Some(given) = given else { return Ok(user.manager) };
        let Some(text) = given else { return Ok(None) };
        let invalid = || {
            ScimError::bad(
                "invalidValue",
                format!("The manager {text} is not a user of the organization."),
            )
        };
        let id: UserId = text.parse().map_err(|_| invalid())?;
        let org: OrganizationId = caller.token.organization_id;
        let mut at = Some(id);
        for _ in 0..MAX_MANAGER_DEPTH {
            let Some(next) = at else { return Ok(Some(id)) };
            if next == user.id {
                return Err(ScimError::bad(
                    "invalidValue",
                    "A user cannot manage themselves, however far up.",
                )
                .into());
            }
            at = match self.store.user(org, next).await {
                Ok(m) if next == id && m.status == UserStatus::Removed => {
                    return Err(invalid().into());
                }
                Ok(m) => m.manager,
                Err(StoreError::NotFound) if next == id => return Err(invalid().into()),
                Err(StoreError::NotFound) => None,
                Err(e) => return Err(e.into()),
            };
        }
        Err(ScimError::bad("invalidValue", "The chain of managers is too long.").into())
    }
}

/// How far up a chain of managers is followed.
const MAX_MANAGER_DEPTH: usize = 64;

/// The body as JSON, or `invalidSyntax`.
fn body(r: &ScimRequest<'_>) -> Result<Value, Refusal> {
    let json = r.content_type.is_none_or(|t| {
        let t = t.split(';').next().unwrap_or("").trim();
        t.eq_ignore_ascii_case(crate::scim::MEDIA_TYPE)
            || t.eq_ignore_ascii_case("application/json")
    });
    if !json {
        return Err(
            ScimError::bad("invalidSyntax", "The body must be application/scim+json.").into()
        );
    }
    serde_json::from_slice(r.body)
        .map_err(|e| ScimError::bad("invalidSyntax", format!("The body is not JSON: {e}.")).into())
}

/// The users a list filter asks for: `userName eq …`, `externalId eq …`, `id eq …`.
fn lookup(text: &str) -> Result<UserLookup, ScimError> {
    let invalid = |why: String| ScimError::bad("invalidFilter", why);
    let f = filter::parse(text).map_err(invalid)?;
    let (top, sub) = document::attribute(&f.attribute);
    let Some(value) = f.value.as_str().filter(|_| sub.is_none()) else {
        return Err(invalid(format!("{} eq takes a string.", f.attribute)));
    };
    if top.eq_ignore_ascii_case("userName") {
        Ok(UserLookup::UserName(value.to_owned()))
    } else if top.eq_ignore_ascii_case("externalId") {
        Ok(UserLookup::ExternalId(value.to_owned()))
    } else {
        Err(invalid(format!("Users are found by userName or externalId, not by {}.", f.attribute)))
    }
}

/// The profile fields a representation writes: their source becomes SCIM.
fn managed(fields: &Fields) -> Vec<ProfileField> {
    let mut managed = vec![ProfileField::Name];
    if fields.has_title {
        managed.push(ProfileField::Title);
    }
    if fields.manager.is_some() {
        managed.push(ProfileField::Manager);
    }
    managed
}

/// The privacy ledger entry of a SCIM write of `subject`'s profile.
fn entry(
    caller: &Caller,
    r: &ScimRequest<'_>,
    subject: UserId,
    category: ActivityCategory,
    ends: bool,
) -> LedgerEntry {
    let path = format!("{} /scim/v2/Users", r.method);
    let mut entry =
        super::people::employee_entry(caller, r.client_ip, subject, ("SCIM", path), category);
    entry.entry.purpose = ends.then(|| {
        "Deactivated by the identity provider: every API token, link and console session of the \
         user ended."
            .to_owned()
    });
    entry
}
