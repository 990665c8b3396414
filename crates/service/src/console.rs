//! The review console's sessions: what a sign-in opens, what a session's cookie stands for,
//! and when it ends. A session is kept server-side (its secret only as a hash) and acts
//! through a token: the token an owner pasted, or one made for a sign-in by a one-time link.
//! It ends after [`SessionLimits::idle`] without use, after [`SessionLimits::longest`] at the
//! latest, at sign-out, and at once when its token is revoked or expires or its user no longer
//! holds READ_AUDIT_LOGS: each use reads the session, the token and the user as stored.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use recruit_domain::{Permission, Scope, Timestamp, UserId};
use recruit_ports::SecretHash;
use recruit_ports::{Store, StoreError};
use sha2::{Digest, Sha256};

/// The scopes a session made for a sign-in by link may hold, of those its link holds: the
/// review, and the log streams' page (whose operations are an owner's).
pub const CONSOLE_SCOPES: [Scope; 3] =
    [Scope::AuditLogsRead, Scope::AuditLogsReview, Scope::LogStreamsAdmin];

/// A one-time sign-in link's secret for `user` (operators' tooling, not the API): a token with
/// the console's scopes that lasts `ttl`, spent by the first sign-in. The user must hold
/// READ_AUDIT_LOGS (an owner). The secret starts with [`crate::auth::LINK_PREFIX`]: it opens
/// the console's link sign-in and nothing else, neither the API nor the tools.
pub async fn sign_in_link(
    store: &dyn Store,
    user: UserId,
    ttl: Duration,
) -> Result<String, crate::ServiceError> {
    let found = match store.find_user(user).await {
        Ok(found) => found,
        Err(StoreError::NotFound) => return Err(crate::ServiceError::not_found("user")),
        Err(e) => return Err(e.into()),
    };
    if !found.role.holds(Permission::ReadAuditLogs) {
        return Err(crate::ServiceError::permission_denied(
            "Only owners review the privacy ledger: a sign-in link is for an owner.",
        ));
    }
    let expires = Timestamp::now().checked_add_duration(ttl).unwrap_or(Timestamp::MAX);
    let name = "console sign-in link".to_owned();
    let tokens: &dyn recruit_ports::Tokens = store;
    let scopes = CONSOLE_SCOPES.to_vec();
    let made = (found.organization_id, found.id, name, scopes, Some(expires));
    let kind = crate::auth::SecretKind::SignInLink;
    let (_, secret) = crate::auth::create_credential(tokens, kind, made).await?;
    Ok(secret)
}

/// How long sessions last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// How long a session lasts without use.
    pub idle: Duration,
    /// How long a session lasts at most.
    pub longest: Duration,
}

impl SessionLimits {
    /// 30 minutes idle, 8 hours at most.
    pub const DEFAULT: Self =
        Self { idle: Duration::from_secs(30 * 60), longest: Duration::from_secs(8 * 3600) };
}

/// The prefix of a session's secret: not an API token's, so that neither is taken for the
/// other.
pub const SESSION_PREFIX: &str = "rcs_";

/// A new session secret and its hash.
pub fn generate_session_secret() -> (String, SecretHash) {
    crate::auth::generate_with(SESSION_PREFIX)
}

/// Whether `candidate` has the shape of a session secret.
pub fn looks_like_session_secret(candidate: &str) -> bool {
    crate::auth::has_shape(candidate, SESSION_PREFIX)
}

/// The CSRF token of the session whose secret is `secret`: derived from the secret, which only
/// the session's HttpOnly cookie carries, so a page of another site can neither read nor
/// compute it.
pub fn csrf_token(secret: &str) -> String {
    let digest = Sha256::digest(format!("recruitd console csrf\n{secret}").as_bytes());
    URL_SAFE_NO_PAD.encode(digest)
}

/// How a reviewer signs in.
#[derive(Clone, Copy, Debug)]
pub enum SignIn<'a> {
    /// With an API token of theirs, pasted: the session acts through it.
    Token(&'a str),
    /// With a one-time link: its token is spent, and the session gets a token of its own.
    Link(&'a str),
}

/// A session just opened.
#[derive(Clone, Debug)]
pub struct OpenedSession {
    /// The secret for the session's cookie; shown once, never stored.
    pub secret: String,
    /// When it ends at the latest.
    pub expires_at: recruit_domain::Timestamp,
}

/// The caller behind a session's cookie.
#[derive(Clone, Debug)]
pub struct ConsoleCaller {
    /// The token and the user the session acts as.
    pub caller: crate::Caller,
    /// The session's CSRF token, which its forms carry.
    pub csrf: String,
}

/// How long an e-mailed sign-in link works.
pub const MAILED_LINK_TTL: Duration = Duration::from_secs(15 * 60);

/// What the explanation page shows the person who downloaded.
#[derive(Clone, Debug)]
pub struct ExplanationPage {
    /// The organization's name.
    pub organization_name: String,
    /// Its time zone, in which times are shown.
    pub time_zone: chrono_tz::Tz,
    /// The month the download belongs to.
    pub month: crate::review::Month,
    /// The person who downloaded (the link's holder).
    pub person: recruit_domain::review::Person,
    /// The download, with every decision and explanation so far.
    pub download: recruit_domain::review::DownloadSeen,
    /// The reviewer who asked, if the review names them.
    pub asked_by: Option<recruit_domain::review::Person>,
}

impl ExplanationPage {
    /// Whether an explanation is awaited: the latest decision is a request for one.
    pub fn open(&self) -> bool {
        self.download.status == recruit_domain::review::DownloadStatus::ExplanationRequested
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_secrets_are_their_own_shape_and_their_csrf_tokens_differ() {
        let (a, hash) = generate_session_secret();
        let (b, _) = generate_session_secret();
        assert!(looks_like_session_secret(&a) && looks_like_session_secret(&b));
        assert!(!crate::auth::looks_like_secret(&a), "a session secret is no API token");
        assert!(!looks_like_session_secret(&crate::auth::generate_secret().0));
        assert_eq!(crate::auth::hash_secret(&a), hash);
        assert_ne!(csrf_token(&a), csrf_token(&b));
        assert_eq!(csrf_token(&a), csrf_token(&a));
    }
}
