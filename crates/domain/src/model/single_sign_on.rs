//! An organization's single sign-on to the review console through its OpenID provider, as the
//! API shows it ([`SingleSignOn`]) and as an owner sets it ([`SingleSignOnSettings`]). The
//! client secret is write-only: it is never part of what is shown.

use std::fmt;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// The path of the console's redirect URI, under the server's public base URL: what to
/// register with the provider.
pub const SSO_REDIRECT_PATH: &str = "/console/sso/callback";

/// The claim that names the user when the settings name none.
pub const DEFAULT_USER_CLAIM: &str = "email";

/// An organization's single sign-on, as shown.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SingleSignOn {
    /// The provider's issuer URL.
    pub issuer: String,
    /// recruitd's client id at the provider.
    pub client_id: String,
    /// The ID token's claim that names the user: their e-mail address in recruitd.
    pub user_claim: String,
    /// The provider's groups whose members may sign in; empty: every owner the provider names.
    pub owner_groups: Vec<String>,
    /// Whether API tokens and one-time links still open the console (break glass).
    pub tokens_and_links: bool,
    /// The path of the redirect URI to register with the provider ([`SSO_REDIRECT_PATH`]).
    pub redirect_path: String,
}

/// An organization's single sign-on, as an owner sets it.
#[derive(Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SingleSignOnSettings {
    /// The provider's issuer URL, exactly as its discovery document names it.
    pub issuer: String,
    /// recruitd's client id at the provider.
    pub client_id: String,
    /// recruitd's client secret at the provider. Left out, the secret stored is kept, which
    /// only a change that keeps the issuer and the client id may do.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub client_secret: Option<String>,
    /// The ID token's claim that names the user ([`DEFAULT_USER_CLAIM`] when left out).
    #[cfg_attr(feature = "serde", serde(default = "default_user_claim"))]
    pub user_claim: String,
    /// The provider's groups whose members may sign in; empty: every owner the provider names.
    #[cfg_attr(feature = "serde", serde(default))]
    pub owner_groups: Vec<String>,
    /// Whether API tokens and one-time links still open the console (on when left out).
    #[cfg_attr(feature = "serde", serde(default = "on"))]
    pub tokens_and_links: bool,
}

#[cfg(feature = "serde")]
fn default_user_claim() -> String {
    DEFAULT_USER_CLAIM.to_owned()
}

#[cfg(feature = "serde")]
fn on() -> bool {
    true
}

impl fmt::Debug for SingleSignOnSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SingleSignOnSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<write-only>"))
            .field("user_claim", &self.user_claim)
            .field("owner_groups", &self.owner_groups)
            .field("tokens_and_links", &self.tokens_and_links)
            .finish()
    }
}
