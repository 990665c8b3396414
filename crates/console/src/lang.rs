//! The console's languages, Korean and English: every text of a page is a Fluent message of
//! `locales/{ko,en}/console.ftl`, compiled in; times and figures are written as each language
//! writes them. A page's language is the `lang` of its URL (the switch on every page, kept in
//! a cookie from then on), else the cookie, else the best of `Accept-Language`, else English.

use std::borrow::Cow;
use std::collections::HashMap;

use fluent_templates::fluent_bundle::FluentValue;
use fluent_templates::{LanguageIdentifier, Loader, langid};
use http::HeaderMap;
use http::header::ACCEPT_LANGUAGE;

fluent_templates::static_loader! {
    static LOCALES = {
        locales: "./locales",
        fallback_language: "en",
        // Pages are HTML: no Unicode isolation marks around placeables.
        customise: |bundle| bundle.set_use_isolating(false),
    };
}

/// The cookie that keeps the language chosen with the switch.
pub(crate) const COOKIE_NAME: &str = "recruitd_lang";

/// A language of the console.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lang {
    /// English.
    En,
    /// 한국어.
    Ko,
}

static EN: LanguageIdentifier = langid!("en");
static KO: LanguageIdentifier = langid!("ko");

impl Lang {
    /// Every language, in the switch's order.
    pub(crate) const ALL: [Self; 2] = [Self::Ko, Self::En];

    /// Its BCP 47 code.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Ko => "ko",
        }
    }

    /// Its name in itself, for the switch.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::En => "English",
            Self::Ko => "한국어",
        }
    }

    fn id(self) -> &'static LanguageIdentifier {
        match self {
            Self::En => &EN,
            Self::Ko => &KO,
        }
    }

    /// The language of the code `code`, if it is one of the console's.
    pub(crate) fn of_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.code() == code)
    }

    /// The language of a request: see the module's documentation.
    pub(crate) fn of(query: &HashMap<String, String>, headers: &HeaderMap) -> Self {
        if let Some(lang) = query.get("lang").and_then(|c| Self::of_code(c)) {
            return lang;
        }
        if let Some(lang) = cookie(headers).and_then(|c| Self::of_code(&c)) {
            return lang;
        }
        let accepted = headers.get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()).unwrap_or("");
        let requested = fluent_langneg::accepted_languages::parse(accepted);
        let available: Vec<fluent_langneg::LanguageIdentifier> =
            Self::ALL.iter().filter_map(|l| l.code().parse().ok()).collect();
        let chosen = fluent_langneg::negotiate_languages(
            &requested,
            &available,
            None,
            fluent_langneg::NegotiationStrategy::Lookup,
        );
        chosen.first().and_then(|id| Self::of_code(&id.to_string())).unwrap_or(Self::En)
    }

    /// The message `key`.
    pub(crate) fn t(self, key: &str) -> String {
        LOCALES.lookup(self.id(), key)
    }

    /// The message `key` with `args`.
    pub(crate) fn ta<const N: usize>(self, key: &str, args: &[(&'static str, Arg); N]) -> String {
        let args: HashMap<Cow<'static, str>, FluentValue<'_>> = args
            .iter()
            .map(|(name, value)| {
                let value = match value {
                    Arg::Text(s) => FluentValue::from(s.clone()),
                    Arg::Number(n) => FluentValue::from(self.number(*n)),
                };
                (Cow::Borrowed(*name), value)
            })
            .collect();
        LOCALES.lookup_with_args(self.id(), key, &args)
    }

    /// `n` as the language writes a count: digits grouped by three with commas (both).
    pub(crate) fn number(self, n: u64) -> String {
        let digits = n.to_string();
        let mut out = String::with_capacity(digits.len() + digits.len() / 3);
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    /// The instant `t` in the time zone named `zone` as the language writes a date and time
    /// (`2026-10-14 13:10`, `2026. 10. 14. 13:10`); in UTC, said so, when the zone is not
    /// known.
    pub(crate) fn time(self, zone: &str, t: recruit_domain::Timestamp) -> String {
        let format = match self {
            Self::En => "%Y-%m-%d %H:%M",
            Self::Ko => "%Y. %-m. %-d. %H:%M",
        };
        let utc = t.as_datetime();
        match zone.parse::<chrono_tz::Tz>() {
            Ok(zone) => utc.with_timezone(&zone).format(format).to_string(),
            Err(_) => format!("{} UTC", utc.format(format)),
        }
    }

    /// The day of `t` in `zone` as the language writes a date (`2026-10-14`,
    /// `2026. 10. 14.`).
    pub(crate) fn date(self, zone: &str, t: recruit_domain::Timestamp) -> String {
        let format = match self {
            Self::En => "%Y-%m-%d",
            Self::Ko => "%Y. %-m. %-d.",
        };
        let zone = zone.parse::<chrono_tz::Tz>().unwrap_or(chrono_tz::UTC);
        t.as_datetime().with_timezone(&zone).format(format).to_string()
    }

    /// `month` as the language names it (`October 2026`, `2026년 10월`).
    pub(crate) fn month(self, month: recruit_domain::Month) -> String {
        let first = month.first_day();
        match self {
            Self::En => first.format("%B %Y").to_string(),
            Self::Ko => first.format("%Y년 %-m월").to_string(),
        }
    }
}

/// An argument of a message.
#[derive(Clone, Debug)]
pub(crate) enum Arg {
    /// Text, as it is.
    Text(String),
    /// A count, written as the language writes numbers.
    Number(u64),
}

impl From<&str> for Arg {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<u64> for Arg {
    fn from(n: u64) -> Self {
        Self::Number(n)
    }
}

impl From<usize> for Arg {
    fn from(n: usize) -> Self {
        Self::Number(n as u64)
    }
}

impl From<&usize> for Arg {
    fn from(n: &usize) -> Self {
        Self::Number(*n as u64)
    }
}

impl From<&u64> for Arg {
    fn from(n: &u64) -> Self {
        Self::Number(*n)
    }
}

impl From<&String> for Arg {
    fn from(s: &String) -> Self {
        Self::Text(s.clone())
    }
}

impl From<&&str> for Arg {
    fn from(s: &&str) -> Self {
        Self::Text((*s).to_owned())
    }
}

impl From<&&String> for Arg {
    fn from(s: &&String) -> Self {
        Self::Text((*s).clone())
    }
}

/// A count a page writes, by value or by reference.
pub(crate) trait Count {
    /// The count.
    fn count(&self) -> u64;
}

impl Count for u64 {
    fn count(&self) -> u64 {
        *self
    }
}

impl Count for usize {
    fn count(&self) -> u64 {
        *self as u64
    }
}

impl<T: Count> Count for &T {
    fn count(&self) -> u64 {
        (**self).count()
    }
}

/// The language cookie's value, if the request carries one.
fn cookie(headers: &HeaderMap) -> Option<String> {
    crate::cookie_named(headers, COOKIE_NAME)
}

/// What every page needs of its language: the language, and the page's own URL for the
/// switch.
#[derive(Clone, Debug)]
pub(crate) struct Locale {
    pub(crate) lang: Lang,
    /// The page's path and query, without `lang`.
    here: String,
}

impl Locale {
    /// The locale of a request to `path` with `query`.
    pub(crate) fn new(lang: Lang, path: &str, query: &HashMap<String, String>) -> Self {
        let mut pairs: Vec<(&String, &String)> =
            query.iter().filter(|(k, _)| k.as_str() != "lang").collect();
        pairs.sort();
        let mut serializer = form_urlencoded::Serializer::new(String::new());
        for (k, v) in pairs {
            serializer.append_pair(k, v);
        }
        let query = serializer.finish();
        let here = if query.is_empty() { path.to_owned() } else { format!("{path}?{query}") };
        Self { lang, here }
    }

    /// The message `key`.
    pub(crate) fn t(&self, key: &str) -> String {
        self.lang.t(key)
    }

    /// The message `key` with `args` (a template's array of pairs).
    pub(crate) fn ta<const N: usize>(&self, key: &str, args: &[(&'static str, Arg); N]) -> String {
        self.lang.ta(key, args)
    }

    /// `n`, as the language writes a count.
    pub(crate) fn n(&self, n: impl Count) -> String {
        self.lang.number(n.count())
    }

    /// The language's code.
    pub(crate) fn code(&self) -> &'static str {
        self.lang.code()
    }

    /// The other languages, each with the link to this page in it.
    pub(crate) fn switch(&self) -> Vec<(Lang, String)> {
        let join = if self.here.contains('?') { '&' } else { '?' };
        Lang::ALL
            .into_iter()
            .filter(|l| *l != self.lang)
            .map(|l| (l, format!("{}{join}lang={}", self.here, l.code())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn the_language_is_the_links_then_the_cookies_then_the_browsers() {
        let mut headers = HeaderMap::new();
        let none = HashMap::new();
        assert_eq!(Lang::of(&none, &headers), Lang::En, "English by default");
        headers.insert(ACCEPT_LANGUAGE, HeaderValue::from_static("ko-KR,ko;q=0.9,en;q=0.8"));
        assert_eq!(Lang::of(&none, &headers), Lang::Ko);
        headers.insert(ACCEPT_LANGUAGE, HeaderValue::from_static("fr-FR, en;q=0.5"));
        assert_eq!(Lang::of(&none, &headers), Lang::En);
        headers.insert(http::header::COOKIE, HeaderValue::from_static("a=b; recruitd_lang=ko"));
        assert_eq!(Lang::of(&none, &headers), Lang::Ko, "the cookie over the browser");
        let query = HashMap::from([("lang".to_owned(), "en".to_owned())]);
        assert_eq!(Lang::of(&query, &headers), Lang::En, "the link over the cookie");
    }

    #[test]
    fn every_message_of_one_language_is_in_the_other() {
        let keys = |text: &str| -> Vec<String> {
            let mut keys: Vec<String> = text
                .lines()
                .filter(|l| !l.starts_with([' ', '#', '\t']) && l.contains(" ="))
                .map(|l| l.split(" =").next().unwrap().to_owned())
                .collect();
            keys.sort();
            keys
        };
        let en = keys(include_str!("../locales/en/console.ftl"));
        let ko = keys(include_str!("../locales/ko/console.ftl"));
        assert!(en.len() > 50, "{en:?}");
        assert_eq!(en, ko, "the same messages in both languages");
    }

    #[test]
    fn times_and_counts_are_written_as_each_language_writes_them() {
        let t: recruit_domain::Timestamp = "2026-10-14T04:10:00Z".parse().unwrap();
        assert_eq!(Lang::En.time("Asia/Seoul", t), "2026-10-14 13:10");
        assert_eq!(Lang::Ko.time("Asia/Seoul", t), "2026. 10. 14. 13:10");
        assert_eq!(Lang::Ko.date("Asia/Seoul", t), "2026. 10. 14.");
        assert_eq!(Lang::En.number(1_234_567), "1,234,567");
        assert_eq!(Lang::Ko.number(999), "999");
        let month = "2026-10".parse().unwrap();
        assert_eq!(
            (Lang::En.month(month), Lang::Ko.month(month)),
            ("October 2026".to_owned(), "2026년 10월".to_owned())
        );
        let here = Locale::new(
            Lang::Ko,
            "/console/overview",
            &HashMap::from([("month".into(), "2026-10".into()), ("lang".into(), "ko".into())]),
        );
        assert_eq!(
            here.switch(),
            [(Lang::En, "/console/overview?month=2026-10&lang=en".to_owned())]
        );
    }
}
