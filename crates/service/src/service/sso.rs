//! Single sign-on to the console ([`crate::sso`]): an owner configures the organization's
//! provider (checked by discovering it), a sign-in leaves for the provider and comes back
//! with a code, and a verified ID token naming an active owner opens the same console session
//! as a token or a link does.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata};
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken, Nonce,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope as OidcScope,
    SignatureVerificationError, TokenResponse,
};
use recruit_domain::model::{Role, SingleSignOn};
use recruit_domain::{ErrorCode, ErrorDetail, OrganizationId, Timestamp, User};
use recruit_ports::{SsoSettings, StoreError};

use super::Service;
use super::ledger::audit_record;
use crate::console::{CONSOLE_SCOPES, OpenedSession};
use crate::error::ServiceError;
use crate::input::{BodyParams, NoParams};
use crate::operation::{Caller, OperationKind, RequestContext};
use crate::outbound::FetchError;
use crate::sso::{ALGORITHMS, Groups, IdToken, InFlight, SCOPES, Seal, claim, in_owner_groups};

/// How long a provider's discovery document and keys are kept before they are fetched again
/// (sooner when an ID token names a key they do not hold).
const METADATA_TTL: Duration = Duration::from_secs(300);

/// Providers' discovery documents (with their keys) by issuer, each with when it was fetched.
pub(super) type Discovered = std::sync::Mutex<HashMap<String, (Instant, CoreProviderMetadata)>>;

/// Where a sign-in goes: the provider's authorization URL, and the cookie that carries the
/// sign-in in flight until it comes back.
#[derive(Clone, Debug)]
pub struct SsoStart {
    /// The provider's authorization endpoint with the request's parameters.
    pub location: String,
    /// The value of the [`crate::sso::COOKIE`] cookie.
    pub cookie: String,
}

/// What the provider sent back to the callback.
#[derive(Clone, Copy, Debug, Default)]
pub struct SsoCallback<'a> {
    /// `code`.
    pub code: Option<&'a str>,
    /// `state`.
    pub state: Option<&'a str>,
    /// `error`, when the provider refused.
    pub error: Option<&'a str>,
}

/// Why a single sign-on did not open a session: what the console's page says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsoFailure {
    /// This server has no HTTP client for providers.
    Unavailable,
    /// The address belongs to no organization with single sign-on.
    NotConfigured,
    /// The provider could not be reached or discovered.
    Unreachable,
    /// The sign-in was not started in this browser, expired, or came back altered.
    Expired,
    /// The provider refused the sign-in, or what it sent does not verify.
    Refused,
    /// The provider names someone who is not a user of the organization.
    NotAUser,
    /// The user is not an active owner, or not in the groups that may sign in.
    NotAnOwner,
    /// This server's clock is off its database's: a sign-in's age and an ID token's times
    /// cannot be checked until they agree (as every request is refused meanwhile).
    ClockSkewed,
}

/// A single sign-on refused: why, and a detail for the log.
#[derive(Clone, Debug)]
pub struct SsoRefusal {
    /// Why, as the page says it.
    pub failure: SsoFailure,
    /// What happened, for the server's log; never shown.
    pub detail: String,
}

fn refused(failure: SsoFailure, detail: impl Into<String>) -> SsoRefusal {
    SsoRefusal { failure, detail: detail.into() }
}

impl From<StoreError> for SsoRefusal {
    fn from(e: StoreError) -> Self {
        refused(SsoFailure::Unreachable, format!("the store: {e}"))
    }
}

impl Service {
    /// Whether this server can reach identity providers, so that single sign-on is offered.
    pub fn offers_sso(&self) -> bool {
        self.config.outbound.is_some()
    }

    /// Sets (or, with none, removes) `organization`'s single sign-on, with the request's
    /// `record`: [`crate::sso::configure`] with this server's HTTP client.
    async fn configure_sso(
        &self,
        organization: OrganizationId,
        settings: Option<SsoSettings>,
        record: &recruit_ports::ReadRecord,
    ) -> Result<(), ServiceError> {
        let fetch = self.config.outbound.as_ref().map(|f| std::sync::Arc::clone(&f.0));
        let store = self.store.as_ref();
        crate::sso::configure(store, fetch, organization, settings, Some(record)).await
    }

    /// Starts a sign-in for the person with `email`: the provider of their organization, asked
    /// for a code with PKCE, `state`, `nonce` and the address as `login_hint`; the provider
    /// sends the browser back to `redirect_uri`.
    pub async fn start_sso(&self, email: &str, redirect_uri: &str) -> Result<SsoStart, SsoRefusal> {
        self.sso_started(email, redirect_uri).await.inspect_err(log_refusal)
    }

    /// Nothing while this server's clock agrees with its database's; else the refusal of a
    /// sign-in, whose times it could not check.
    fn clock_agrees(&self) -> Result<(), SsoRefusal> {
        self.clock.admit().map_err(|e| refused(SsoFailure::ClockSkewed, e.message))
    }

    async fn sso_started(&self, email: &str, redirect_uri: &str) -> Result<SsoStart, SsoRefusal> {
        self.clock_agrees()?;
        let (organization, settings) = self.sso_of(email).await?;
        let client = self.sso_client(&settings, redirect_uri, false).await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scopes(SCOPES.map(|s| OidcScope::new(s.into())))
            .set_pkce_challenge(challenge)
            .add_extra_param("login_hint", email)
            .url();
        let flight = InFlight {
            organization: organization.uuid(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
            started: Timestamp::now().unix_micros() / 1_000_000,
        };
        let cookie = self.sso_seal().await?.seal(&flight);
        Ok(SsoStart { location: url.to_string(), cookie })
    }

    /// Finishes a sign-in that came back to `redirect_uri` with `callback`, its cookie's value
    /// `cookie`: the code exchanged with the PKCE verifier, the ID token verified (signature
    /// by the provider's keys, fetched again once for a key they did not hold; `iss`, `aud`,
    /// `exp`, `iat`, `nonce`), and the user it names opened a console session, if they are an
    /// active owner of the organization in its owner groups. A callback that does not verify is
    /// charged to `client_ip`'s quota of failed authentications.
    pub async fn finish_sso(
        &self,
        cookie: Option<&str>,
        callback: SsoCallback<'_>,
        redirect_uri: &str,
        context: &RequestContext,
    ) -> Result<OpenedSession, SsoRefusal> {
        // An address over its quota of failed sign-ins is refused before anything is checked;
        // a callback that does not verify is charged to it, as a wrong token is.
        let client_ip = context.client_ip;
        if self.limits.before_authentication(client_ip).is_err() {
            return Err(refused(SsoFailure::Refused, "the address is over its quota of failures"));
        }
        let finished = self.sso_finished(cookie, callback, redirect_uri, context).await;
        if let Err(e) = &finished
            && matches!(e.failure, SsoFailure::Expired | SsoFailure::Refused)
        {
            let _ = self.limits.failed_authentication(client_ip);
        }
        finished.inspect_err(log_refusal)
    }

    async fn sso_finished(
        &self,
        cookie: Option<&str>,
        callback: SsoCallback<'_>,
        redirect_uri: &str,
        context: &RequestContext,
    ) -> Result<OpenedSession, SsoRefusal> {
        self.clock_agrees()?;
        let seal = self.sso_seal().await?;
        let flight = cookie
            .and_then(|c| seal.open(c))
            .filter(|f| f.is_current(Timestamp::now()))
            .ok_or_else(|| {
            refused(SsoFailure::Expired, "no current sign-in in this browser")
        })?;
        if !callback.state.is_some_and(|s| flight.is_state(s)) {
            return Err(refused(SsoFailure::Expired, "the state is not this browser's"));
        }
        if let Some(error) = callback.error {
            return Err(refused(SsoFailure::Refused, format!("the provider answered {error}")));
        }
        let code = callback.code.ok_or_else(|| refused(SsoFailure::Refused, "no code"))?;
        let record = self.store.organization(flight.organization()).await?;
        let settings =
            record.sso.ok_or_else(|| refused(SsoFailure::NotConfigured, "no longer configured"))?;
        let client = self.sso_client(&settings, redirect_uri, false).await?;
        let http = crate::sso::Client(self.fetcher()?);
        let exchange = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| refused(SsoFailure::Unreachable, format!("no token endpoint: {e}")))?
            .set_pkce_verifier(PkceCodeVerifier::new(flight.verifier.clone()));
        let tokens = exchange
            .request_async(&http)
            .await
            .map_err(|e| refused(SsoFailure::Refused, format!("the code's exchange: {e}")))?;
        let raw = tokens.id_token().ok_or_else(|| refused(SsoFailure::Refused, "no ID token"))?;
        let token: IdToken = raw
            .to_string()
            .parse()
            .map_err(|e| refused(SsoFailure::Refused, format!("the ID token: {e}")))?;
        let nonce = Nonce::new(flight.nonce.clone());
        let claims = match self.verified(&client, &token, &nonce) {
            Err(ClaimsVerificationError::SignatureVerification(
                SignatureVerificationError::NoMatchingKey,
            )) => {
                // The provider may have rotated its keys: fetch them again, once.
                let fresh = self.sso_client(&settings, redirect_uri, true).await?;
                self.verified(&fresh, &token, &nonce)
            }
            other => other,
        }
        .map_err(|e| refused(SsoFailure::Refused, format!("the ID token: {e}")))?;
        let named = claim(claims, &settings.user_claim).ok_or_else(|| {
            refused(SsoFailure::NotAUser, format!("no {} claim", settings.user_claim))
        })?;
        let groups = &claims.additional_claims().groups;
        let user = self
            .store
            .users_by_email(&named)
            .await?
            .into_iter()
            .find(|u| u.organization_id == flight.organization())
            .ok_or_else(|| refused(SsoFailure::NotAUser, format!("{named} is no user")))?;
        if !sso_owner(&user) || !in_owner_groups(&settings.owner_groups, groups) {
            return Err(refused(SsoFailure::NotAnOwner, format!("{named} may not sign in")));
        }
        self.open_sso_session(&user, context)
            .await
            .map_err(|e| refused(SsoFailure::Unreachable, format!("the session: {}", e.message)))
    }

    /// The verified claims of `token`.
    fn verified<'t>(
        &self,
        client: &SsoClient,
        token: &'t IdToken,
        nonce: &Nonce,
    ) -> Result<
        &'t openidconnect::IdTokenClaims<Groups, openidconnect::core::CoreGenderClaim>,
        ClaimsVerificationError,
    > {
        let now = chrono::Utc::now();
        let verifier = client
            .id_token_verifier()
            .set_allowed_algs(ALGORITHMS)
            .set_issue_time_verifier_fn(move |iat| {
                // Issued at most five minutes ahead of this server's clock.
                if iat > now + chrono::TimeDelta::minutes(5) {
                    Err("issued in the future".into())
                } else {
                    Ok(())
                }
            });
        token.claims(&verifier, nonce)
    }

    /// Opens a console session for `user`, with a token of its own holding the console's
    /// scopes for the session's longest time.
    async fn open_sso_session(
        &self,
        user: &User,
        context: &RequestContext,
    ) -> Result<OpenedSession, ServiceError> {
        let now = Timestamp::now();
        let longest = now
            .checked_add_duration(self.config.console_sessions.longest)
            .unwrap_or(Timestamp::MAX);
        let (token, _) = self
            .create_token(
                user.organization_id,
                user.id,
                "console session (single sign-on)".into(),
                CONSOLE_SCOPES.to_vec(),
                Some(longest),
            )
            .await?;
        self.session_of(user, token.id, longest, ("SINGLE_SIGN_ON", context)).await
    }

    /// The organization and single sign-on of the person with `email`.
    async fn sso_of(&self, email: &str) -> Result<(OrganizationId, SsoSettings), SsoRefusal> {
        for user in self.store.users_by_email(email.trim()).await? {
            let record = self.store.organization(user.organization_id).await?;
            if let Some(settings) = record.sso {
                return Ok((user.organization_id, settings));
            }
        }
        Err(refused(SsoFailure::NotConfigured, "no organization with single sign-on"))
    }

    fn fetcher(&self) -> Result<std::sync::Arc<dyn crate::outbound::Fetch>, SsoRefusal> {
        self.config
            .outbound
            .as_ref()
            .map(|f| std::sync::Arc::clone(&f.0))
            .ok_or_else(|| refused(SsoFailure::Unavailable, "no HTTP client for providers"))
    }

    /// The provider's discovery document and keys: from memory while fresh, unless `again`.
    async fn discover(
        &self,
        issuer: &str,
        again: bool,
    ) -> Result<CoreProviderMetadata, SsoRefusal> {
        if !again {
            let known =
                self.sso_discovered.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((at, metadata)) = known.get(issuer)
                && at.elapsed() < METADATA_TTL
            {
                return Ok(metadata.clone());
            }
        }
        let metadata = crate::sso::discover(self.fetcher()?, issuer)
            .await
            .map_err(|e| refused(SsoFailure::Unreachable, e))?;
        let mut known =
            self.sso_discovered.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        known.insert(issuer.to_owned(), (Instant::now(), metadata.clone()));
        Ok(metadata)
    }

    async fn sso_client(
        &self,
        settings: &SsoSettings,
        redirect_uri: &str,
        again: bool,
    ) -> Result<SsoClient, SsoRefusal> {
        let metadata = self.discover(&settings.issuer, again).await?;
        let redirect = RedirectUrl::new(redirect_uri.to_owned())
            .map_err(|e| refused(SsoFailure::Unavailable, format!("the redirect URI: {e}")))?;
        Ok(CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(settings.client_id.clone()),
            Some(ClientSecret::new(settings.client_secret.clone())),
        )
        .set_redirect_uri(redirect))
    }

    /// The key that seals sign-ins in flight, the same on every replica.
    async fn sso_seal(&self) -> Result<Seal, SsoRefusal> {
        let key = self
            .sso_seal_key
            .get_or_try_init(|| async {
                let proposed: [u8; 32] = rand::RngExt::random(&mut rand::rng());
                self.store.server_secret("console-sso-seal", &proposed).await
            })
            .await?;
        Seal::new(key)
            .ok_or_else(|| refused(SsoFailure::Unavailable, "the seal's key is not 32 bytes"))
    }
}

/// A client of a discovered provider.
type SsoClient = openidconnect::core::CoreClient<
    openidconnect::EndpointSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointMaybeSet,
    openidconnect::EndpointMaybeSet,
>;

/// Logs why a single sign-on was refused: the page says why in general words, the log what
/// happened.
fn log_refusal(e: &SsoRefusal) {
    tracing::info!(failure = ?e.failure, detail = %e.detail, "single sign-on refused");
}

/// Whether `user` may open the console by single sign-on: an active owner.
fn sso_owner(user: &User) -> bool {
    user.role == Role::Owner && user.status.is_active()
}

impl From<FetchError> for SsoRefusal {
    fn from(e: FetchError) -> Self {
        refused(SsoFailure::Unreachable, e.0)
    }
}

/// The organization's single sign-on through the API: shown without its secret, set (the
/// provider discovered first), removed; each change on the record with what it set.
impl Service {
    /// The caller's organization's single sign-on; NOT_FOUND when it has none.
    pub(crate) async fn single_sign_on(
        &self,
        caller: &Caller,
        _: &RequestContext,
        NoParams { problems }: NoParams,
    ) -> Result<SingleSignOn, ServiceError> {
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        let organization = self.store.organization(caller.token.organization_id).await?;
        let shown = organization.sso.as_ref().map(SsoSettings::shown);
        shown.ok_or_else(|| {
            ServiceError::new(ErrorCode::NotFound, "Your organization has no single sign-on.")
        })
    }

    /// Sets the caller's organization's single sign-on from the body's settings: checked field
    /// by field, the secret kept when left out of a change of the same provider and client,
    /// and the provider discovered at the issuer before anything is written.
    pub(crate) async fn set_single_sign_on(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: BodyParams,
    ) -> Result<SingleSignOn, ServiceError> {
        let mut problems = params.problems;
        let given = params.body.and_then(|body| crate::sso::settings_body(&body, &mut problems));
        let (Some(given), true) = (given, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        let organization = caller.token.organization_id;
        let stored = self.store.organization(organization).await?.sso;
        let secret = if given.client_secret.is_some() { "replaced" } else { "kept" };
        let settings = crate::sso::with_secret(given, stored.as_ref())
            .map_err(|(f, why)| ServiceError::validation(vec![ErrorDetail::field(f, why)]))?;
        let shown = settings.shown();
        let mut filters = serde_json::to_value(&shown).map_err(crate::operation::not_serialized)?;
        filters["client_secret"] = secret.into();
        let kind = OperationKind::SetSingleSignOn;
        let record = audit_record(caller, context, kind, filters, None);
        self.configure_sso(organization, Some(settings), &record).await?;
        Ok(shown)
    }

    /// Removes the caller's organization's single sign-on (none to remove is no error): the
    /// console opens with tokens and links again.
    pub(crate) async fn remove_single_sign_on(
        &self,
        caller: &Caller,
        context: &RequestContext,
        NoParams { problems }: NoParams,
    ) -> Result<(), ServiceError> {
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        let kind = OperationKind::RemoveSingleSignOn;
        let record = audit_record(caller, context, kind, serde_json::json!({}), None);
        self.configure_sso(caller.token.organization_id, None, &record).await
    }
}
