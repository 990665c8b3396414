//! Single sign-on to the console through an organization's OpenID Connect provider: the
//! authorization code flow with PKCE (S256), `state` and `nonce` (RFC 9700), the ID token's
//! signature checked against the provider's keys with an allow-list of algorithms, and its
//! `iss`, `aud`, `exp`, `iat` and `nonce` checked by `openidconnect`.
//!
//! What a sign-in in flight must remember (its organization, `state`, `nonce` and PKCE
//! verifier) travels in a cookie of the browser that started it, sealed with a key of the
//! server's ([`Seal`]): the `state` is bound to that browser, any replica can finish the
//! sign-in, and nothing is stored for sign-ins never finished. The provider redeems a code
//! once, so a replayed callback finds nothing to finish.
//!
//! Requests to the provider go through [`Fetch`], which the server implements with its HTTP
//! client (no redirects followed); this crate does no I/O of its own.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{KeyInit, Mac};
use openidconnect::core::CoreJwsSigningAlgorithm;
use recruit_domain::model::SingleSignOnSettings;
use recruit_domain::{OrganizationId, Timestamp, Uuid};

use crate::outbound::{Fetch, FetchError, Fetched};
use recruit_ports::SsoSettings;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

pub use openidconnect::http;

/// How long a sign-in may take between leaving for the provider and coming back.
pub const SIGN_IN_TTL: Duration = Duration::from_secs(600);

/// The name of the cookie that carries a sign-in in flight.
pub const COOKIE: &str = "recruitd_sso";

/// The signing algorithms an ID token may use: asymmetric ones only. `none` and the HMAC
/// algorithms (whose key would be the client secret) are never accepted.
pub const ALGORITHMS: [CoreJwsSigningAlgorithm; 6] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EdDsa,
];

/// The scopes a sign-in asks for: the user's e-mail address and their groups.
pub const SCOPES: [&str; 3] = ["email", "profile", "groups"];

/// A [`Fetch`] as `openidconnect` calls it: a type of its own (not a closure), whose future
/// borrows nothing, so that every step of a sign-in is `Send` for any caller.
pub(crate) struct Client(pub(crate) Arc<dyn Fetch>);

impl<'c> openidconnect::AsyncHttpClient<'c> for Client {
    type Error = FetchError;
    type Future = Fetched;

    fn call(&'c self, request: openidconnect::HttpRequest) -> Fetched {
        self.0.fetch(request)
    }
}

/// Sets (or, with none, removes) `organization`'s single sign-on in `store`, with the audit
/// `record` of the request that asks, if any. The settings are checked field by field
/// ([`problems`]), and the provider must answer its discovery at the issuer through `fetch`:
/// VALIDATION_FAILED with the reason otherwise, nothing stored.
pub async fn configure(
    store: &dyn recruit_ports::Directory,
    fetch: Option<Arc<dyn Fetch>>,
    organization: OrganizationId,
    settings: Option<SsoSettings>,
    record: Option<&recruit_ports::ReadRecord>,
) -> Result<(), crate::ServiceError> {
    use recruit_domain::ErrorDetail;
    if let Some(settings) = &settings {
        let found = problems(settings);
        if !found.is_empty() {
            let details = found.into_iter().map(|(f, why)| ErrorDetail::field(f, why)).collect();
            return Err(crate::ServiceError::validation(details));
        }
        let Some(fetch) = fetch else {
            return Err(crate::ServiceError::new(
                recruit_domain::ErrorCode::NotImplemented,
                "This server reaches no identity provider.",
            ));
        };
        discover(fetch, &settings.issuer).await.map_err(|why| {
            crate::ServiceError::validation(vec![ErrorDetail::field(
                "issuer",
                format!("The provider could not be discovered at this issuer: {why}."),
            )])
        })?;
    }
    match store.set_sso(organization, settings.as_ref(), record).await {
        Ok(()) => Ok(()),
        Err(recruit_ports::StoreError::NotFound) => {
            Err(crate::ServiceError::not_found("organization"))
        }
        Err(e) => Err(e.into()),
    }
}

/// The discovery document of the provider at `issuer`, with its keys, fetched through
/// `fetch`; or why not, in a few words an operator can act on.
pub async fn discover(
    fetch: Arc<dyn Fetch>,
    issuer: &str,
) -> Result<openidconnect::core::CoreProviderMetadata, String> {
    use openidconnect::DiscoveryError as D;
    let http = Client(fetch);
    let url = openidconnect::IssuerUrl::new(issuer.to_owned()).map_err(|e| e.to_string())?;
    openidconnect::core::CoreProviderMetadata::discover_async(url, &http).await.map_err(|e| match e
    {
        D::Request(e) => format!("it could not be reached ({e})"),
        D::Response(status, _, _) => format!("its discovery document answered {status}"),
        D::Parse(e) => format!("its discovery document does not read ({e})"),
        D::Validation(e) => format!("its discovery document does not hold ({e})"),
        other => other.to_string(),
    })
}

/// The members of a body of settings ([`SingleSignOnSettings`]), as the operation declares
/// them.
pub const MEMBERS: [&str; 6] =
    ["issuer", "client_id", "client_secret", "user_claim", "owner_groups", "tokens_and_links"];

/// The settings of `body`, a JSON object of [`MEMBERS`] only, each of its type: every problem
/// is noted (the values themselves are checked by [`problems`], once the secret is known).
pub fn settings_body(
    body: &[u8],
    problems: &mut Vec<recruit_domain::ErrorDetail>,
) -> Option<SingleSignOnSettings> {
    use recruit_domain::ErrorDetail;
    let before = problems.len();
    let members = crate::sign_off::object(body, &MEMBERS, problems)?;
    for name in ["issuer", "client_id"].into_iter().filter(|n| !members.contains_key(*n)) {
        problems.push(ErrorDetail::field(name, "is required"));
    }
    if problems.len() > before {
        return None;
    }
    serde_path_to_error::deserialize(serde_json::Value::Object(members))
        .map_err(|e| {
            let field = e.path().to_string();
            problems.push(ErrorDetail::field(field, e.into_inner().to_string()));
        })
        .ok()
}

/// The settings to store for `given`, with `stored` the organization's current ones: a secret
/// left out keeps the stored one, which only a change of neither the issuer nor the client id
/// may do (another provider or client has a secret of its own).
pub fn with_secret(
    given: SingleSignOnSettings,
    stored: Option<&SsoSettings>,
) -> Result<SsoSettings, (&'static str, String)> {
    let kept = stored.filter(|s| s.issuer == given.issuer && s.client_id == given.client_id);
    let client_secret = match (given.client_secret, kept) {
        (Some(secret), _) => secret,
        (None, Some(stored)) => stored.client_secret.clone(),
        (None, None) => {
            let why =
                "client_secret is required unless the issuer and the client id stay as stored";
            return Err(("client_secret", why.into()));
        }
    };
    Ok(SsoSettings {
        issuer: given.issuer,
        client_id: given.client_id,
        client_secret,
        user_claim: given.user_claim,
        owner_groups: given.owner_groups,
        tokens_and_links: given.tokens_and_links,
    })
}

/// Why a configuration of single sign-on is refused: the field and what is wrong with it.
pub fn problems(settings: &SsoSettings) -> Vec<(&'static str, String)> {
    let mut problems = vec![];
    match url::Url::parse(&settings.issuer) {
        Ok(url) if url.scheme() == "https" || (url.scheme() == "http" && is_loopback(&url)) => {
            if url.query().is_some() || url.fragment().is_some() {
                problems.push(("issuer", "An issuer has no query or fragment.".into()));
            }
        }
        Ok(_) => problems.push((
            "issuer",
            "The issuer must be an https URL (http only on this machine's loopback).".into(),
        )),
        Err(_) => problems.push(("issuer", "The issuer is not a URL.".into())),
    }
    for (name, value) in
        [("client_id", &settings.client_id), ("client_secret", &settings.client_secret)]
    {
        if value.trim().is_empty() || value.len() > 1024 || value.chars().any(char::is_control) {
            problems.push((name, format!("{name} must be 1 to 1024 characters, none a control.")));
        }
    }
    let claim_ok = !settings.user_claim.is_empty()
        && settings.user_claim.len() <= 64
        && settings.user_claim.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c));
    if !claim_ok {
        problems.push(("user_claim", "A claim's name is 1 to 64 letters, digits, _ - . :".into()));
    }
    if settings.owner_groups.len() > 100
        || settings.owner_groups.iter().any(|g| g.is_empty() || g.len() > 256)
    {
        problems.push(("owner_groups", "At most 100 groups, each 1 to 256 characters.".into()));
    }
    problems
}

pub(crate) fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    }
}

/// A sign-in in flight, as its cookie carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    /// The organization whose provider the sign-in went to.
    pub organization: Uuid,
    /// The `state` sent to the provider.
    pub state: String,
    /// The `nonce` sent to the provider.
    pub nonce: String,
    /// The PKCE verifier of the challenge sent to the provider.
    pub verifier: String,
    /// When the sign-in started, in Unix seconds.
    pub started: i64,
}

impl InFlight {
    /// The organization.
    pub fn organization(&self) -> OrganizationId {
        OrganizationId::from_uuid(self.organization)
    }

    /// Whether the sign-in is still within [`SIGN_IN_TTL`] at `now`.
    pub fn is_current(&self, now: Timestamp) -> bool {
        let age = now.unix_micros() / 1_000_000 - self.started;
        (0..=SIGN_IN_TTL.as_secs() as i64).contains(&age)
    }

    /// Whether `state`, as the provider sent it back, is this sign-in's (compared in constant
    /// time).
    pub fn is_state(&self, state: &str) -> bool {
        self.state.as_bytes().ct_eq(state.as_bytes()).into()
    }
}

/// The key that seals sign-ins in flight: HMAC-SHA256, the key kept by the store for every
/// replica.
#[derive(Clone)]
pub struct Seal([u8; 32]);

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seal(..)")
    }
}

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

impl Seal {
    /// The seal of `key`, which must be 32 bytes.
    pub fn new(key: &[u8]) -> Option<Self> {
        Some(Self(key.try_into().ok()?))
    }

    fn mac(&self) -> HmacSha256 {
        // An HMAC takes a key of any length.
        <HmacSha256 as KeyInit>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!())
    }

    /// The cookie's value for `flight`.
    pub fn seal(&self, flight: &InFlight) -> String {
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(flight).unwrap_or_default());
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        format!("{body}.{}", URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
    }

    /// The sign-in a cookie's value carries, if this server sealed it.
    pub fn open(&self, cookie: &str) -> Option<InFlight> {
        let (body, tag) = cookie.split_once('.')?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        mac.verify_slice(&tag).ok()?;
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(body).ok()?).ok()
    }
}

/// The claims recruitd reads of an ID token besides the standard ones: the user's groups.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Groups {
    /// The `groups` claim; none when the provider sends none.
    #[serde(default)]
    pub groups: Vec<String>,
}

impl openidconnect::AdditionalClaims for Groups {}

/// An ID token with its groups.
pub type IdToken = openidconnect::IdToken<
    Groups,
    openidconnect::core::CoreGenderClaim,
    openidconnect::core::CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;

/// The value of the claim `name` of verified `claims`: the standard claims recruitd knows by
/// name (`email`, `preferred_username`, `sub`), as text.
pub fn claim(
    claims: &openidconnect::IdTokenClaims<Groups, openidconnect::core::CoreGenderClaim>,
    name: &str,
) -> Option<String> {
    match name {
        "email" => claims.email().map(|e| e.to_string()),
        "preferred_username" => claims.preferred_username().map(|u| u.to_string()),
        "sub" => Some(claims.subject().to_string()),
        _ => None,
    }
}

/// Whether the groups of an ID token let its user in, under `owner_groups` (none: any).
pub fn in_owner_groups(owner_groups: &[String], groups: &[String]) -> bool {
    owner_groups.is_empty() || groups.iter().any(|g| owner_groups.contains(g))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> SsoSettings {
        SsoSettings {
            issuer: "https://idp.example.com/realms/acme".into(),
            client_id: "recruitd".into(),
            client_secret: "s3cr3t".into(),
            user_claim: "email".into(),
            owner_groups: vec![],
            tokens_and_links: true,
        }
    }

    #[test]
    fn a_body_of_settings_takes_its_defaults_and_names_each_problem() {
        let mut problems = vec![];
        let body = br#"{"issuer": "https://idp.example.com", "client_id": "recruitd"}"#;
        let given = settings_body(body, &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((given.user_claim.as_str(), given.tokens_and_links), ("email", true));
        assert_eq!(given.client_secret, None);
        for (body, field) in [
            (&br#"{"client_id": "recruitd"}"#[..], "issuer"),
            (br#"{"issuer": "x", "client_id": "r", "colour": 1}"#, "colour"),
            (br#"{"issuer": "x", "client_id": "r", "tokens_and_links": "no"}"#, "tokens_and_links"),
            (br#"[]"#, "body"),
        ] {
            let mut problems = vec![];
            assert_eq!(settings_body(body, &mut problems), None);
            assert!(problems.iter().any(|p| p.get("field") == Some(field)), "{problems:?}");
        }
    }

    #[test]
    fn a_secret_left_out_is_kept_only_for_the_same_provider_and_client() {
        let stored = settings();
        let given = |issuer: &str, client_id: &str| SingleSignOnSettings {
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret: None,
            user_claim: "email".into(),
            owner_groups: vec!["g".into()],
            tokens_and_links: false,
        };
        let same = with_secret(given(&stored.issuer, "recruitd"), Some(&stored)).unwrap();
        assert_eq!(same.client_secret, "s3cr3t");
        assert_eq!((same.owner_groups.len(), same.tokens_and_links), (1, false));
        for (issuer, client) in [("https://other.example.com", "recruitd"), (&*stored.issuer, "x")]
        {
            let refused = with_secret(given(issuer, client), Some(&stored)).unwrap_err();
            assert_eq!(refused.0, "client_secret");
        }
        assert!(with_secret(given(&stored.issuer, "recruitd"), None).is_err(), "none stored");
        let new = SingleSignOnSettings { client_secret: Some("new".into()), ..given("x", "y") };
        assert_eq!(with_secret(new, Some(&stored)).unwrap().client_secret, "new");
    }

    #[test]
    fn settings_are_checked_field_by_field() {
        assert!(problems(&settings()).is_empty());
        let loopback = SsoSettings { issuer: "http://127.0.0.1:4455".into(), ..settings() };
        assert!(problems(&loopback).is_empty());
        for (bad, field) in [
            (SsoSettings { issuer: "http://idp.example.com".into(), ..settings() }, "issuer"),
            (SsoSettings { issuer: "not a url".into(), ..settings() }, "issuer"),
            (SsoSettings { issuer: "https://idp.example.com/?a=b".into(), ..settings() }, "issuer"),
            (SsoSettings { client_id: " ".into(), ..settings() }, "client_id"),
            (SsoSettings { client_secret: "a\nb".into(), ..settings() }, "client_secret"),
            (SsoSettings { user_claim: "e mail".into(), ..settings() }, "user_claim"),
            (SsoSettings { owner_groups: vec![String::new()], ..settings() }, "owner_groups"),
        ] {
            let found = problems(&bad);
            assert_eq!(found.iter().map(|(f, _)| *f).collect::<Vec<_>>(), [field], "{bad:?}");
        }
    }

    #[test]
    fn a_sealed_sign_in_opens_only_unchanged_and_with_its_key() {
        let seal = Seal::new(&[7; 32]).unwrap();
        let flight = InFlight {
            organization: Uuid::from_u128(1),
            state: "s".into(),
            nonce: "n".into(),
            verifier: "v".into(),
            started: 1_800_000_000,
        };
        let cookie = seal.seal(&flight);
        assert_eq!(seal.open(&cookie), Some(flight.clone()));
        assert_eq!(Seal::new(&[8; 32]).unwrap().open(&cookie), None, "another key");
        let (body, tag) = cookie.split_once('.').unwrap();
        let forged = InFlight { organization: Uuid::from_u128(2), ..flight.clone() };
        let forged_body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&forged).unwrap());
        assert_eq!(seal.open(&format!("{forged_body}.{tag}")), None, "another body");
        assert_eq!(seal.open(body), None);
        assert!(flight.is_state("s") && !flight.is_state("t"));
        let at = |s: i64| Timestamp::from_unix_micros(s * 1_000_000).unwrap();
        assert!(flight.is_current(at(1_800_000_599)) && !flight.is_current(at(1_800_000_601)));
        assert!(!flight.is_current(at(1_799_999_000)), "from the future");
    }

    #[test]
    fn owner_groups_narrow_who_signs_in() {
        let groups = vec!["recruiters".to_owned(), "privacy".to_owned()];
        assert!(in_owner_groups(&[], &groups));
        assert!(in_owner_groups(&["privacy".into()], &groups));
        assert!(!in_owner_groups(&["admins".into()], &groups));
        assert!(!in_owner_groups(&["admins".into()], &[]));
    }
}
