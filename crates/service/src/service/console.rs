//! Opening, using and ending the review console's sessions ([`crate::console`]).

use std::net::IpAddr;
use std::time::Duration;

use recruit_domain::{ErrorCode, Permission, Scope, Timestamp, Uuid};
use recruit_ports::{ConsoleSession, StoreError};

use super::Service;
use super::ledger::record_of;
use crate::auth::SecretKind;
use crate::console::{ConsoleCaller, OpenedSession, SignIn};
use crate::error::ServiceError;
use crate::operation::{Caller, RequestContext};

/// How often a session's last use is written.
const TOUCH_INTERVAL: Duration = Duration::from_secs(60);

/// The scopes a session made for a sign-in by link may hold, of those its link holds.
use crate::console::CONSOLE_SCOPES;

impl Service {
    /// Opens a console session. The credential must be a live API token with the
    /// `audit_logs:read` scope acting for a user holding READ_AUDIT_LOGS (an owner); failures
    /// are charged to the client's address as failed authentications are. A pasted token is
    /// the session's token, and the session ends no later than it; a link's token is spent
    /// (revoked) and the session gets a token of its own, holding the link's console scopes.
    /// The sign-in is recorded in the API audit ledger with the session.
    pub async fn open_console_session(
        &self,
        sign_in: SignIn<'_>,
        context: &RequestContext,
    ) -> Result<OpenedSession, ServiceError> {
        let (secret, kind, method) = match sign_in {
            SignIn::Token(s) => (s, SecretKind::ApiToken, "TOKEN"),
            SignIn::Link(s) => (s, SecretKind::SignInLink, "LINK"),
        };
        let charged = self.verify(Some(secret), kind);
        let caller = self.charged(context.client_ip, charged).await?;
        console_rights(&caller)?;
        let organization = self.store.organization(caller.token.organization_id).await?;
        if organization.sso.is_some_and(|sso| !sso.tokens_and_links) {
            return Err(ServiceError::permission_denied(
                "The organization signs in to the console with its identity provider only.",
            ));
        }
        let now = Timestamp::now();
        let limits = self.config.console_sessions;
        let longest = now.checked_add_duration(limits.longest).unwrap_or(Timestamp::MAX);
        let (token, expires_at) = match sign_in {
            SignIn::Token(_) => {
                let ends = caller.token.expires_at.map_or(longest, |at| at.min(longest));
                (caller.token.id, ends)
            }
            SignIn::Link(_) => {
                let spent = self.store.revoke_token(caller.token.id, now).await?;
                if spent.revoked_at != Some(now) {
                    // Another sign-in spent the link first.
                    return Err(ServiceError::unauthenticated());
                }
                let scopes: Vec<Scope> = CONSOLE_SCOPES
                    .into_iter()
                    .filter(|s| caller.token.scopes.contains(s))
                    .collect();
                let (token, _) = self
                    .create_token(
                        caller.token.organization_id,
                        caller.user.id,
                        "console session".into(),
                        scopes,
                        Some(longest),
                    )
                    .await?;
                (token.id, longest)
            }
        };
        self.session_of(&caller.user, token, expires_at, (method, context)).await
    }

    /// Opens a session of `user` through `token`, ending at `expires_at` at the latest, with
    /// the record of its sign-in by `method` (`TOKEN`, `LINK`, `SINGLE_SIGN_ON`) in `context`.
    pub(super) async fn session_of(
        &self,
        user: &recruit_domain::User,
        token: recruit_domain::ApiTokenId,
        expires_at: Timestamp,
        (method, context): (&str, &RequestContext),
    ) -> Result<OpenedSession, ServiceError> {
        let now = Timestamp::now();
        let (secret, secret_hash) = crate::console::generate_session_secret();
        let session = ConsoleSession {
            id: Uuid::now_v7(),
            organization_id: user.organization_id,
            user_id: user.id,
            token_id: token,
            secret_hash,
            created_at: now,
            last_seen_at: now,
            expires_at,
            ended_at: None,
        };
        let filters = serde_json::json!({"method": method, "session_id": session.id.to_string()});
        let actor = (user.organization_id, token, user.id);
        let record = record_of(actor, context, "consoleSignIn", filters, None);
        self.store.open_session(&session, &record).await?;
        Ok(OpenedSession { secret, expires_at })
    }

    /// The caller a session's cookie stands for. A secret of no session, or of one that ended
    /// (signed out, idle, past its longest, its token revoked or expired, its user no longer
    /// an owner), is UNAUTHENTICATED and charged to the client's address; a session found idle
    /// or without its rights is ended then. Its use is recorded at most once a minute.
    pub async fn console_caller(
        &self,
        secret: &str,
        client_ip: Option<IpAddr>,
    ) -> Result<ConsoleCaller, ServiceError> {
        self.charged(client_ip, self.session_caller(secret)).await
    }

    async fn session_caller(&self, secret: &str) -> Result<ConsoleCaller, ServiceError> {
        if !crate::console::looks_like_session_secret(secret) {
            return Err(session_over("The console session is not known: sign in again."));
        }
        let found = match self.store.console_session(&crate::auth::hash_secret(secret)).await {
            Ok(found) => found,
            Err(StoreError::NotFound) => {
                return Err(session_over("The console session is not known: sign in again."));
            }
            Err(e) => return Err(e.into()),
        };
        let (session, holder) = (found.session, found.holder);
        let now = Timestamp::now();
        let idle = self.config.console_sessions.idle;
        let idle_since = now.unix_micros() - session.last_seen_at.unix_micros();
        let why = if session.ended_at.is_some() {
            Some("The console session ended: sign in again.")
        } else if session.expires_at <= now {
            Some("The console session reached its longest time: sign in again.")
        } else if idle_since >= i64::try_from(idle.as_micros()).unwrap_or(i64::MAX) {
            Some("The console session ended after a time without use: sign in again.")
        } else if !holder.user.status.is_active() {
            Some("The console session's user was deactivated by the identity provider.")
        } else if holder.token.revoked_at.is_some()
            || holder.token.expires_at.is_some_and(|at| at <= now)
        {
            Some("The console session's token was revoked or expired: sign in again.")
        } else {
            None
        };
        let caller = Caller { token: holder.token, user: holder.user };
        let why = why.or_else(|| {
            console_rights(&caller).err().map(|_| {
                "The console session's user no longer reads the privacy ledger: sign in as an \
                 owner."
            })
        });
        if let Some(why) = why {
            if session.ended_at.is_none() {
                self.store.end_session(session.id, now, None).await?;
            }
            return Err(session_over(why));
        }
        // Written at most once a minute, and often enough for a short idle time.
        let touch = TOUCH_INTERVAL.min(idle / 2);
        if idle_since >= i64::try_from(touch.as_micros()).unwrap_or(i64::MAX) {
            // Best effort: a session whose use is not written ends sooner, never later.
            let _ = self.store.touch_session(session.id, now).await;
        }
        Ok(ConsoleCaller { caller, csrf: crate::console::csrf_token(secret) })
    }

    /// Ends the session whose cookie holds `secret` (signing out), recorded in the API audit
    /// ledger; an unknown or ended one is left as it is.
    pub async fn end_console_session(
        &self,
        secret: &str,
        context: &RequestContext,
    ) -> Result<(), ServiceError> {
        if !crate::console::looks_like_session_secret(secret) {
            return Ok(());
        }
        let found = match self.store.console_session(&crate::auth::hash_secret(secret)).await {
            Ok(found) if found.session.ended_at.is_none() => found,
            Ok(_) | Err(StoreError::NotFound) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let session = &found.session;
        let filters = serde_json::json!({"session_id": session.id.to_string()});
        let actor = (session.organization_id, session.token_id, session.user_id);
        let record = record_of(actor, context, "consoleSignOut", filters, None);
        Ok(self.store.end_session(session.id, Timestamp::now(), Some(&record)).await?)
    }
}

/// Whether `caller` may use the console: the `audit_logs:read` scope and READ_AUDIT_LOGS.
pub(crate) fn console_rights(caller: &Caller) -> Result<(), ServiceError> {
    caller.require(Some(Scope::AuditLogsRead))?;
    if caller.user.role.holds(Permission::ReadAuditLogs) {
        Ok(())
    } else {
        Err(ServiceError::permission_denied(
            "The console reviews the privacy ledger, which only owners read: sign in with an \
             owner's token.",
        ))
    }
}

/// A session that is over, or never was.
fn session_over(why: &str) -> ServiceError {
    ServiceError::new(ErrorCode::Unauthenticated, why)
}

impl Service {
    /// Whether the server sends e-mail (`--smtp-url`): sign-in links by e-mail and requests
    /// for explanations need it.
    pub fn sends_mail(&self) -> bool {
        self.config.mail.is_some()
    }

    /// E-mails a one-time sign-in link, valid [`crate::console::MAILED_LINK_TTL`], to each owner whose address
    /// is `email` (one per organization they own a seat in). The answer is the same whether the
    /// address is known or not: the look-up and the sending happen after it, and an address
    /// past its quota ([`crate::limits::MAILED_LINKS_PER_HOUR`]) is silently not sent to. Each
    /// request is charged to the client's address like a failed sign-in, so the form can be
    /// used neither to flood nor to probe. NOT_IMPLEMENTED when the server sends no e-mail.
    pub fn email_sign_in_link(
        self: &std::sync::Arc<Self>,
        email: &str,
        client_ip: Option<IpAddr>,
    ) -> Result<(), ServiceError> {
        let Some(mail) = self.config.mail.clone() else {
            return Err(ServiceError::new(
                ErrorCode::NotImplemented,
                "This server sends no e-mail (--smtp-url): ask an operator for a sign-in link.",
            ));
        };
        self.limits.before_authentication(client_ip)?;
        self.limits.failed_authentication(client_ip)?;
        let email = email.trim().to_owned();
        if email.is_empty() || email.len() > 320 || !email.contains('@') {
            return Ok(());
        }
        let service = std::sync::Arc::clone(self);
        tokio::spawn(async move {
            if let Err(why) = service.mail_sign_in_links(&mail, &email).await {
                tracing::warn!("a sign-in link was not e-mailed: {why}");
            }
        });
        Ok(())
    }

    async fn mail_sign_in_links(
        &self,
        mail: &crate::mail::MailConfig,
        email: &str,
    ) -> Result<(), String> {
        let owners: Vec<_> = (self.store.users_by_email(email).await)
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|u| u.role.holds(Permission::ReadAuditLogs))
            .collect();
        if owners.is_empty() || !self.limits.mail_link_to(email) {
            return Ok(());
        }
        for owner in owners {
            let store = self.store.as_ref();
            let secret =
                crate::console::sign_in_link(store, owner.id, crate::console::MAILED_LINK_TTL)
                    .await
                    .map_err(|e| e.message)?;
            let organization =
                store.organization(owner.organization_id).await.map_err(|e| e.to_string())?;
            let link = mail.link(crate::mail::SIGN_IN_PAGE, &[("link", &secret)]);
            let minutes = crate::console::MAILED_LINK_TTL.as_secs() / 60;
            let to = (owner.name.as_str(), owner.email.as_str());
            let message = crate::mail::sign_in_link(to, &organization.name, &link, minutes);
            mail.mailer.send(message).await?;
        }
        Ok(())
    }
}
