//! API token secrets: how they are made, recognised and hashed. A secret is `rtk_` followed by
//! 43 base64url characters (32 random bytes); stores keep only its SHA-256.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngExt;
use recruit_domain::{ApiTokenId, OrganizationId, Scope, Timestamp, UserId};
use recruit_ports::{ApiToken, NewApiToken, SecretHash, StoreError, Tokens};
use sha2::{Digest, Sha256};

/// The prefix every secret starts with, so that a leaked one is easy to recognise and scan for.
pub const SECRET_PREFIX: &str = "rtk_";

/// A new secret and its hash. The secret is shown once and never stored.
pub fn generate_secret() -> (String, SecretHash) {
    generate_with(SECRET_PREFIX)
}

/// The SHA-256 of a secret, as stores keep it.
pub fn hash_secret(secret: &str) -> SecretHash {
    SecretHash(Sha256::digest(secret.as_bytes()).into())
}

/// The prefix of a one-time console sign-in link's secret. Its token is stored like an API
/// token's, but the prefix is part of what is hashed and each door checks its own: the API
/// refuses a link's secret, and the console's link sign-in refuses an API token's.
pub const LINK_PREFIX: &str = "rcl_";

/// The prefix of a one-time link e-mailed to the person who made a download, to explain it.
pub const EXPLANATION_PREFIX: &str = "rce_";

/// The prefix of a SCIM token's secret: an identity provider's credential for `/scim/v2`.
pub const SCIM_PREFIX: &str = "rsc_";

/// What a stored token's secret opens, told by its prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretKind {
    /// An API token (`rtk_`): the API, the tools, and a console sign-in by pasting it.
    ApiToken,
    /// A one-time console sign-in link (`rcl_`): that sign-in alone, once.
    SignInLink,
    /// A one-time explanation link (`rce_`): the console's explanation page of the person who
    /// downloaded, once; its token holds no scope.
    ExplanationLink,
    /// A SCIM token (`rsc_`): SCIM provisioning at `/scim/v2` alone; it holds the scope
    /// `scim` and acts as an owner.
    ScimToken,
}

impl SecretKind {
    /// The prefix every secret of this kind starts with.
    pub const fn prefix(self) -> &'static str {
        match self {
            Self::ApiToken => SECRET_PREFIX,
            Self::SignInLink => LINK_PREFIX,
            Self::ExplanationLink => EXPLANATION_PREFIX,
            Self::ScimToken => SCIM_PREFIX,
        }
    }
}

/// Whether `candidate` has the shape of an API token's secret. Checked before any lookup, so
/// malformed credentials cost no database round trip.
pub fn looks_like_secret(candidate: &str) -> bool {
    has_shape(candidate, SECRET_PREFIX)
}

/// Whether `candidate` is `prefix` followed by 43 base64url characters (32 bytes): the shape
/// of every secret recruitd makes.
pub(crate) fn has_shape(candidate: &str, prefix: &str) -> bool {
    candidate.len() == prefix.len() + 43
        && candidate.starts_with(prefix)
        && candidate[prefix.len()..].bytes().all(|b| BASE64URL[usize::from(b)])
}

/// Which bytes are base64url characters: one look-up a byte of every credential presented.
static BASE64URL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
        b += 1;
    }
    table
};

/// A new secret starting with `prefix` and its hash.
pub(crate) fn generate_with(prefix: &str) -> (String, SecretHash) {
    let bytes: [u8; 32] = rand::rng().random();
    let secret = format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes));
    let hash = hash_secret(&secret);
    (secret, hash)
}

/// Creates a token acting as `user` of `organization` in `store` (operators' tooling, not the
/// API). Returns the stored token and its secret, which is shown once and never stored.
pub async fn create_token(
    store: &dyn Tokens,
    organization: OrganizationId,
    user: UserId,
    name: String,
    scopes: Vec<Scope>,
    expires_at: Option<Timestamp>,
) -> Result<(ApiToken, String), StoreError> {
    let made = (organization, user, name, scopes, expires_at);
    create_credential(store, SecretKind::ApiToken, made).await
}

/// Creates a SCIM token for an identity provider (operators' tooling, not the API): it
/// provisions the users of `user`'s organization at `/scim/v2` and nothing else, and holds
/// the scope `scim` alone. Its user must be an active owner, whose entries record what the
/// provider changes; a token of anyone else is refused, as is one whose user is later
/// demoted or deactivated.
pub async fn create_scim_token(
    store: &dyn recruit_ports::Store,
    user: UserId,
    name: String,
    expires_at: Option<Timestamp>,
) -> Result<(ApiToken, String), crate::ServiceError> {
    let found = match store.find_user(user).await {
        Ok(found) => found,
        Err(StoreError::NotFound) => return Err(crate::ServiceError::not_found("user")),
        Err(e) => return Err(e.into()),
    };
    if found.role != recruit_domain::model::Role::Owner || !found.status.is_active() {
        return Err(crate::ServiceError::permission_denied(
            "A SCIM token acts as an active owner of the organization.",
        ));
    }
    let made = (found.organization_id, user, name, vec![Scope::Scim], expires_at);
    Ok(create_credential(store, SecretKind::ScimToken, made).await?)
}

/// The operator acting as `user` from the command line, with `scopes` and no token: what it
/// records names the nil token id, and the user's role decides what it may do, as it would
/// for any token of theirs. A user who is not active is refused.
pub async fn operator(
    store: &dyn recruit_ports::Store,
    user: UserId,
    scopes: Vec<Scope>,
) -> Result<crate::Caller, crate::ServiceError> {
    let found = match store.find_user(user).await {
        Ok(found) => found,
        Err(StoreError::NotFound) => return Err(crate::ServiceError::not_found("user")),
        Err(e) => return Err(e.into()),
    };
    if !found.status.is_active() {
        return Err(crate::ServiceError::permission_denied("The user is not active."));
    }
    let token = ApiToken {
        id: ApiTokenId::nil(),
        organization_id: found.organization_id,
        user_id: user,
        name: "command line".into(),
        scopes,
        secret_hash: SecretHash([0; 32]),
        created_at: Timestamp::now(),
        expires_at: None,
        revoked_at: None,
        last_used_at: None,
    };
    Ok(crate::Caller { token, user: found })
}

/// Creates a token whose secret is of `kind`, for `(organization, user, name, scopes,
/// expires_at)`.
pub(crate) async fn create_credential(
    store: &dyn Tokens,
    kind: SecretKind,
    (organization, user, name, scopes, expires_at): (
        OrganizationId,
        UserId,
        String,
        Vec<Scope>,
        Option<Timestamp>,
    ),
) -> Result<(ApiToken, String), StoreError> {
    let (secret, secret_hash) = generate_with(kind.prefix());
    let token = NewApiToken {
        id: ApiTokenId::new_v7(),
        organization_id: organization,
        user_id: user,
        name,
        scopes,
        secret_hash,
        created_at: Timestamp::now(),
        expires_at,
    };
    let stored = store.create_token(&token).await?;
    Ok((stored, secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_secrets_have_the_shape_and_differ() {
        let (a, ha) = generate_secret();
        let (b, hb) = generate_secret();
        assert!(looks_like_secret(&a) && looks_like_secret(&b), "{a} {b}");
        assert_ne!(a, b);
        assert_ne!(ha, hb);
        assert_eq!(hash_secret(&a), ha);
    }

    #[test]
    fn only_secret_shaped_strings_are_looked_up() {
        let (good, _) = generate_secret();
        assert!(!looks_like_secret(&good[..good.len() - 1]));
        assert!(!looks_like_secret(&format!("{good}x")));
        assert!(!looks_like_secret(&good.replacen("rtk_", "xyz_", 1)));
        assert!(!looks_like_secret(&format!("rtk_{}", "+".repeat(43))));
        assert!(!looks_like_secret(""));
    }

    #[test]
    fn every_base64url_character_and_nothing_else_is_of_a_secrets_shape() {
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let all = alphabet.chars().cycle().take(43 * 2).collect::<String>();
        for at in 0..=(all.len() - 43) {
            assert!(looks_like_secret(&format!("rtk_{}", &all[at..at + 43])), "{at}");
        }
        for other in ["=", "/", ".", "~", " ", "\u{7f}", "\0"] {
            let candidate = format!("rtk_{}{other}", &alphabet[..42]);
            assert!(!looks_like_secret(&candidate), "{candidate:?}");
        }
        assert!(!looks_like_secret(&format!("rtk_{}é", &alphabet[..41])));
    }
}
