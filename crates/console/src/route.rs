//! The console's routes: every page and form, with its method and path, declared once. The
//! router dispatches by them, and links and redirects are written from them.

use http::Method;

/// Where an identity provider sends the browser back after a single sign-on: the redirect
/// URI to register with the provider, below the server's public URL.
pub const SSO_CALLBACK: &str = recruit_domain::model::SSO_REDIRECT_PATH;

/// A page or a form of the console.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// The stylesheet.
    Stylesheet,
    /// `/console`: the overview when signed in, the sign-in page otherwise.
    Home,
    /// The sign-in page.
    SignIn,
    /// The sign-in form's target.
    SignInForm,
    /// A sign-in link asked for by e-mail address.
    MailLink,
    /// A single sign-on started, by e-mail address: to the organization's provider.
    SsoStart,
    /// Where the provider sends the browser back.
    SsoCallback,
    /// The page where the person who downloaded explains it, opened by an e-mailed link.
    Explain,
    /// The explanation's form's target.
    ExplainForm,
    /// Signing out.
    SignOut,
    /// A month at a glance.
    Overview,
    /// A month's entries, filtered and paged.
    Entries,
    /// Those entries as a download.
    EntriesExport,
    /// A month's downloads, each with its decision's form.
    Downloads,
    /// A decision on a download.
    Decide,
    /// A month's part of the chain, verified now.
    Integrity,
    /// A month's sign-off, or its form.
    SignOff,
    /// The sign-off form's target.
    SignOffForm,
    /// The printable report.
    Report,
    /// The organization's log streams.
    Streams,
    /// A stream paused or resumed.
    StreamForm,
}

impl Route {
    /// Every route.
    pub(crate) const ALL: [Self; 21] = [
        Self::Stylesheet,
        Self::Home,
        Self::SignIn,
        Self::SignInForm,
        Self::MailLink,
        Self::SsoStart,
        Self::SsoCallback,
        Self::Explain,
        Self::ExplainForm,
        Self::SignOut,
        Self::Overview,
        Self::Entries,
        Self::EntriesExport,
        Self::Downloads,
        Self::Decide,
        Self::Integrity,
        Self::SignOff,
        Self::SignOffForm,
        Self::Report,
        Self::Streams,
        Self::StreamForm,
    ];

    /// Its method and path.
    pub(crate) fn endpoint(self) -> (Method, &'static str) {
        let (post, path) = match self {
            Self::Stylesheet => (false, "/console/assets/console.css"),
            Self::Home => (false, "/console"),
            Self::SignIn => (false, recruit_service::mail::SIGN_IN_PAGE),
            Self::SignInForm => (true, recruit_service::mail::SIGN_IN_PAGE),
            Self::MailLink => (true, "/console/sign-in/email"),
            Self::SsoStart => (true, "/console/sign-in/sso"),
            Self::SsoCallback => (false, SSO_CALLBACK),
            Self::Explain => (false, recruit_service::mail::EXPLANATION_PAGE),
            Self::ExplainForm => (true, recruit_service::mail::EXPLANATION_PAGE),
            Self::SignOut => (true, "/console/sign-out"),
            Self::Overview => (false, "/console/overview"),
            Self::Entries => (false, "/console/entries"),
            Self::EntriesExport => (false, "/console/entries/export"),
            Self::Downloads => (false, "/console/downloads"),
            Self::Decide => (true, "/console/downloads"),
            Self::Integrity => (false, "/console/integrity"),
            Self::SignOff => (false, "/console/sign-off"),
            Self::SignOffForm => (true, "/console/sign-off"),
            Self::Report => (false, "/console/report"),
            Self::Streams => (false, "/console/log-streams"),
            Self::StreamForm => (true, "/console/log-streams"),
        };
        (if post { Method::POST } else { Method::GET }, path)
    }

    /// Its path.
    pub(crate) fn path(self) -> &'static str {
        self.endpoint().1
    }

    /// The route of `method` on `path` (a trailing `/` ignored), if any.
    pub(crate) fn of(method: &Method, path: &str) -> Option<Self> {
        let path = path.trim_end_matches('/');
        Self::ALL.into_iter().find(|r| {
            let (m, p) = r.endpoint();
            m == method && p == path
        })
    }

    /// A link to this page for `month`.
    pub(crate) fn month(self, month: impl std::fmt::Display) -> String {
        format!("{}?month={month}", self.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_found_by_its_method_and_path_and_no_two_share_them() {
        for route in Route::ALL {
            let (method, path) = route.endpoint();
            assert_eq!(Route::of(&method, path), Some(route));
            assert_eq!(Route::of(&method, &format!("{path}/")), Some(route));
        }
        let mut endpoints: Vec<_> = Route::ALL.iter().map(|r| r.endpoint()).collect();
        endpoints.sort_by_key(|(m, p)| (m.to_string(), *p));
        endpoints.dedup();
        assert_eq!(endpoints.len(), Route::ALL.len());
        assert_eq!(Route::of(&Method::DELETE, "/console/overview"), None);
        assert_eq!(Route::Report.month("2026-10"), "/console/report?month=2026-10");
    }
}
