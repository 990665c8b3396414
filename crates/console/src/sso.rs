//! Single sign-on through the organization's identity provider: the form that starts it
//! (`POST /console/sign-in/sso`, by e-mail address) and the callback the provider sends the
//! browser back to (`GET /console/sso/callback`). The rules are the service's
//! (`Service::start_sso`, `Service::finish_sso`); this module carries cookies and words
//! refusals.

use std::collections::HashMap;
use std::time::Duration;

use http::{HeaderValue, StatusCode, header};
use recruit_domain::Timestamp;
use recruit_service::sso::{COOKIE, SIGN_IN_TTL};
use recruit_service::{SsoCallback, SsoFailure, SsoRefusal};

use crate::route::SSO_CALLBACK;
use crate::{Answer, Console, ConsoleRequest, Failure, html, locale, query_pairs, redirect};

impl Console {
    /// The provider's redirect URI: the callback on the public URL.
    fn sso_redirect_uri(&self) -> String {
        format!("{}{SSO_CALLBACK}", self.config.public_base_url.trim_end_matches('/'))
    }

    /// `POST /console/sign-in/sso`: off to the provider of the address's organization, the
    /// sign-in in flight in a cookie of this browser.
    pub(crate) async fn sso_start(&self, r: &ConsoleRequest<'_>) -> Answer {
        if !self.same_origin(r.headers) {
            return Err(Failure::FORGED);
        }
        let form = query_pairs(std::str::from_utf8(&r.body).ok());
        let email = form.get("email").map(String::as_str).unwrap_or("");
        let start = self.service.start_sso(email, &self.sso_redirect_uri()).await;
        let start = start.map_err(|e| self.sso_failure(&e))?;
        let mut response = redirect(&start.location);
        // Lax: the cookie must come back with the provider's top-level redirect.
        let cookie = format!(
            "{COOKIE}={}; Path={SSO_CALLBACK}; HttpOnly; SameSite=Lax{}; Max-Age={}",
            start.cookie,
            if self.secure { "; Secure" } else { "" },
            SIGN_IN_TTL.as_secs()
        );
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
        Ok(response.into())
    }

    /// `GET /console/sso/callback`: the provider's answer, verified; a session opened for an
    /// active owner, or a page that says why not.
    pub(crate) async fn sso_callback(
        &self,
        r: &ConsoleRequest<'_>,
        query: &HashMap<String, String>,
    ) -> Answer {
        let cookie = crate::cookie_named(r.headers, COOKIE);
        let callback = SsoCallback {
            code: query.get("code").map(String::as_str),
            state: query.get("state").map(String::as_str),
            error: query.get("error").map(String::as_str),
        };
        let redirect_uri = self.sso_redirect_uri();
        let opened = self
            .service
            .finish_sso(cookie.as_deref(), callback, &redirect_uri, r.client_ip)
            .await
            .map_err(|e| self.sso_failure(&e))?;
        let mut response = html(StatusCode::OK, &crate::pages::SignedIn { l: locale(r) });
        let left = opened.expires_at.unix_micros() - Timestamp::now().unix_micros();
        let max_age = Duration::from_micros(u64::try_from(left).unwrap_or(0));
        let headers = response.headers_mut();
        headers.append(header::SET_COOKIE, self.cookie(Some((&opened.secret, max_age))));
        let spent = format!("{COOKIE}=; Path={SSO_CALLBACK}; HttpOnly; SameSite=Lax; Max-Age=0");
        if let Ok(value) = HeaderValue::from_str(&spent) {
            headers.append(header::SET_COOKIE, value);
        }
        Ok(response.into())
    }

    /// The page of a refused single sign-on (the service logged its detail).
    fn sso_failure(&self, e: &SsoRefusal) -> Failure {
        let (status, key) = match e.failure {
            SsoFailure::Unavailable => (StatusCode::NOT_FOUND, "sso-unavailable"),
            SsoFailure::NotConfigured => (StatusCode::NOT_FOUND, "sso-not-configured"),
            SsoFailure::Unreachable => (StatusCode::BAD_GATEWAY, "sso-unreachable"),
            SsoFailure::Expired => (StatusCode::BAD_REQUEST, "sso-expired"),
            SsoFailure::Refused => (StatusCode::UNAUTHORIZED, "sso-refused"),
            SsoFailure::NotAUser => (StatusCode::FORBIDDEN, "sso-not-a-user"),
            SsoFailure::NotAnOwner => (StatusCode::FORBIDDEN, "sso-not-an-owner"),
        };
        Failure::Said(status, key)
    }
}
