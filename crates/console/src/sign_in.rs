//! The doors into the console: a pasted token or a one-time link (`POST /console/sign-in`), a
//! link asked for by e-mail (`POST /console/sign-in/email`), and single sign-on through the
//! organization's identity provider: the form that starts it (`POST /console/sign-in/sso`, by
//! e-mail address) and the callback the provider sends the browser back to
//! (`GET /console/sso/callback`). The rules are the service's; this module carries cookies and
//! words refusals.

use std::collections::HashMap;
use std::time::Duration;

use http::{HeaderValue, StatusCode, header};
use recruit_domain::Timestamp;
use recruit_service::sso::{COOKIE, SIGN_IN_TTL};
use recruit_service::{SsoCallback, SsoFailure, SsoRefusal};

use recruit_domain::ErrorCode;
use recruit_service::console::SignIn;

use crate::route::{Route, SSO_CALLBACK};
use crate::{
    Answer, Console, ConsoleRequest, Failure, html, locale, pages, query_pairs, redirect,
    server_side, status_of,
};

impl Console {
    /// `POST /console/sign-in`: a token pasted, or a one-time link's secret.
    pub(crate) async fn sign_in(&self, r: &ConsoleRequest<'_>) -> Answer {
        if !self.same_origin(r.headers) {
            return Err(Failure::FORGED);
        }
        let form = query_pairs(std::str::from_utf8(&r.body).ok());
        let (sign_in, link) = match (form.get("token"), form.get("link")) {
            (_, Some(link)) => (SignIn::Link(link.trim()), Some(link.clone())),
            (Some(token), None) => (SignIn::Token(token.trim()), None),
            (None, None) => (SignIn::Token(""), None),
        };
        match self.service.open_console_session(sign_in, &r.context()).await {
            Ok(opened) => {
                let mut response = redirect(Route::Overview.path());
                let left = opened.expires_at.unix_micros() - Timestamp::now().unix_micros();
                let max_age = Duration::from_micros(u64::try_from(left).unwrap_or(0));
                let cookie = self.cookie(Some((&opened.secret, max_age)));
                response.headers_mut().append(header::SET_COOKIE, cookie);
                Ok(response.into())
            }
            Err(e) if server_side(&e) => Err(e.into()),
            Err(e) => {
                let l = locale(r);
                let error = match e.code {
                    ErrorCode::Unauthenticated => l.t("error-sign-in"),
                    _ => e.message,
                };
                let mail = self.service.sends_mail();
                let page = pages::SignIn {
                    link,
                    ended: false,
                    error: Some(error),
                    mail,
                    mailed: false,
                    sso: self.service.offers_sso(),
                    l,
                };
                Ok(html(status_of(e.code), &page).into())
            }
        }
    }

    /// `POST /console/sign-in/email`: a sign-in link e-mailed to an owner's address. The
    /// answer is the same whether the address is known or not.
    pub(crate) fn mail_link(&self, r: &ConsoleRequest<'_>) -> Answer {
        if !self.same_origin(r.headers) {
            return Err(Failure::FORGED);
        }
        let form = query_pairs(std::str::from_utf8(&r.body).ok());
        let email = form.get("email").map(String::as_str).unwrap_or("");
        self.service.email_sign_in_link(email, r.client_ip)?;
        let page = pages::SignIn {
            link: None,
            ended: false,
            error: None,
            mail: true,
            mailed: true,
            sso: self.service.offers_sso(),
            l: locale(r),
        };
        Ok(html(StatusCode::OK, &page).into())
    }

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
        // A page, not a redirect: the sign-in page's form may not be sent off the site.
        let leaving = crate::pages::SsoLeaving { l: locale(r), location: start.location };
        let mut response = html(StatusCode::OK, &leaving);
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
            .finish_sso(cookie.as_deref(), callback, &redirect_uri, &r.context())
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
            SsoFailure::ClockSkewed => (StatusCode::SERVICE_UNAVAILABLE, "sso-clock"),
        };
        Failure::Said(status, key)
    }
}
