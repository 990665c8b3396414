//! The console's pages: one template each (`templates/`), and what each shows, taken from the
//! service's review as it is.

use std::collections::HashMap;
use std::fmt;

use askama::Template;
use recruit_domain::review::{Flag, FlagDetail, Person};
use recruit_service::ServiceError;
use recruit_service::console::ConsoleCaller;
use recruit_service::review::{AccountReview, Review};
use recruit_service::sign_off::DownloadStatus;

use crate::Failure;
use crate::chart::{Daily, Strip};
use crate::lang::{Lang, Locale};
use crate::route::Route;

pub(crate) use crate::downloads::*;
pub(crate) use crate::report::*;

/// The month a page shows: `month` in the query, else the last month that has ended in the
/// organization's time zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PageMonth(pub(crate) recruit_domain::Month);

impl PageMonth {
    /// `month` of `query`, or the month before `running` without one.
    pub(crate) fn from_query(
        query: &HashMap<String, String>,
        running: recruit_domain::Month,
    ) -> Result<Self, Failure> {
        let Some(value) = query.get("month") else {
            return Ok(Self(running.previous().unwrap_or(running)));
        };
        value.parse().map(Self).map_err(|e| {
            Failure::Service(ServiceError::validation(vec![recruit_domain::ErrorDetail::field(
                "month", e,
            )]))
        })
    }

    /// The month before, `YYYY-MM`.
    pub(crate) fn previous(&self) -> String {
        self.0.previous().unwrap_or(self.0).to_string()
    }

    /// The month after, `YYYY-MM`.
    pub(crate) fn next(&self) -> String {
        self.0.next().unwrap_or(self.0).to_string()
    }
}

impl fmt::Display for PageMonth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// What every page of a session shows: the month, whether it has ended, the reviewer, the
/// form's CSRF token.
pub(crate) struct Page {
    pub(crate) month: PageMonth,
    /// The signed-in reviewer.
    pub(crate) user_id: recruit_domain::UserId,
    /// Whether the month has ended in the organization's time zone: only then can it be
    /// signed off; a running (or future) month is shown as in progress.
    pub(crate) ended: bool,
    pub(crate) csrf: String,
    pub(crate) user: String,
    /// The page's language.
    pub(crate) l: Locale,
}

impl Page {
    /// The page of `month` for `session` in `l`, `running` being the organization's month
    /// now.
    pub(crate) fn new(
        session: &ConsoleCaller,
        month: PageMonth,
        running: recruit_domain::Month,
        l: Locale,
    ) -> Self {
        Self {
            l,
            month,
            user_id: session.caller.user.id,
            ended: month.0 < running,
            csrf: session.csrf.clone(),
            user: session.caller.user.name.clone(),
        }
    }
}

/// What went wrong, in the page's language: shown above a form, or as an error page.
#[derive(Debug, Default)]
pub(crate) struct Problem {
    pub(crate) message: String,
    /// The API's own words (English) when `message` is in another language: what the error
    /// says of this request, and what a reviewer quotes to an operator.
    pub(crate) api: Option<String>,
    /// The download the form was about.
    pub(crate) entry: Option<String>,
    /// Each field the API named, with its reason (English).
    pub(crate) details: Vec<String>,
}

impl Problem {
    /// The service's error `e` for a page in `lang`: in English its message; in another
    /// language what its code means there, then the message.
    pub(crate) fn of(lang: Lang, e: &ServiceError, entry: Option<String>) -> Self {
        let details = e
            .details
            .iter()
            .map(|d| {
                format!("{}: {}", d.get("field").unwrap_or("-"), d.get("reason").unwrap_or(""))
            })
            .collect();
        let (message, api) = match lang {
            Lang::En => (e.message.clone(), None),
            _ => {
                let code = if e.code.is_known() { e.code.as_str() } else { "other" };
                (lang.t(&format!("code-{code}")), Some(e.message.clone()))
            }
        };
        Self { message, api, entry, details }
    }
}

/// The sign-in page: a token to paste, or a link to confirm.
#[derive(Template)]
#[template(path = "sign_in.html")]
pub(crate) struct SignIn {
    /// The one-time link's secret, when the page was opened from one.
    pub(crate) link: Option<String>,
    /// Whether the page follows a session that ended.
    pub(crate) ended: bool,
    pub(crate) error: Option<String>,
    /// Whether the server sends e-mail: then an owner may ask for a link by address.
    pub(crate) mail: bool,
    /// Whether a link was just asked for by address.
    pub(crate) mailed: bool,
    /// Whether the server offers single sign-on through organizations' providers.
    pub(crate) sso: bool,
    pub(crate) l: Locale,
}

/// The page a single sign-on lands on: the session's cookie is set, and the browser goes on
/// to the overview from a page of this site (a `SameSite=Strict` cookie does not travel with
/// the provider's redirect).
#[derive(Template)]
#[template(path = "signed_in.html")]
pub(crate) struct SignedIn {
    pub(crate) l: Locale,
}

/// The page a single sign-on leaves from for the provider. A form's submission may not be
/// redirected off the site (`form-action 'self'`), so the browser goes on from a page of this
/// site instead.
#[derive(Template)]
#[template(path = "sso_leaving.html")]
pub(crate) struct SsoLeaving {
    pub(crate) l: Locale,
    /// The provider's authorization URL.
    pub(crate) location: String,
}

/// The page where the person who made a download explains it.
#[derive(Template)]
#[template(path = "explain.html")]
pub(crate) struct Explain {
    /// The link's secret, which the form sends back.
    pub(crate) link: String,
    pub(crate) month: String,
    pub(crate) entry: String,
    pub(crate) organization: String,
    pub(crate) name: String,
    pub(crate) time_zone: String,
    pub(crate) at: String,
    pub(crate) menu: String,
    pub(crate) data: String,
    pub(crate) purpose: Option<String>,
    pub(crate) asked_by: String,
    pub(crate) question: String,
    pub(crate) due: Option<String>,
    /// Whether an explanation is awaited; otherwise what became of it.
    pub(crate) open: bool,
    pub(crate) status: String,
    /// Whether the explanation was just recorded.
    pub(crate) done: bool,
    pub(crate) problem: Option<Problem>,
    pub(crate) l: Locale,
}

impl Explain {
    pub(crate) fn new(
        link: String,
        view: recruit_service::console::ExplanationPage,
        problem: Option<Problem>,
        l: Locale,
    ) -> Self {
        let lang = l.lang;
        let zone = view.time_zone.name();
        let d = &view.download;
        let question = d.question();
        Self {
            link,
            month: view.month.to_string(),
            entry: d.id.clone(),
            organization: view.organization_name.clone(),
            name: view.person.name.clone(),
            time_zone: zone.to_owned(),
            at: lang.time(zone, d.access_time),
            menu: d.access_menu_path.clone(),
            data: d.access_data.join(", "),
            purpose: d.purpose.clone(),
            asked_by: view.asked_by.as_ref().map_or_else(
                || question.map(|q| q.reviewed_by.to_string()).unwrap_or_default(),
                |p| p.name.clone(),
            ),
            question: question.map(|q| q.reason.clone()).unwrap_or_default(),
            due: d.review.as_ref().and_then(|r| r.due_at).map(|due| lang.time(zone, due)),
            open: view.open(),
            status: status_words(lang, d.status),
            done: false,
            problem,
            l,
        }
    }
}

/// A page saying what went wrong.
#[derive(Template)]
#[template(path = "error.html")]
pub(crate) struct ErrorPage {
    pub(crate) status: u16,
    pub(crate) problem: Problem,
    pub(crate) l: Locale,
}

/// The order of the overview's table of accounts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sort {
    pub(crate) column: &'static str,
    pub(crate) descending: bool,
}

/// The columns the table sorts by, as the query names them, with their headings' messages.
pub(crate) const COLUMNS: [(&str, &str); 8] = [
    ("account", "col-account"),
    ("accesses", "col-accesses"),
    ("bulk", "col-bulk-accesses"),
    ("outside", "col-outside"),
    ("downloads", "col-downloads"),
    ("subjects", "col-subjects"),
    ("new_ips", "col-new-ips"),
    ("flags", "col-flags"),
];

impl Sort {
    /// `sort` and `dir` of the query; by default the flagged first, then by accesses.
    pub(crate) fn from_query(query: &HashMap<String, String>) -> Self {
        let column = query
            .get("sort")
            .and_then(|s| COLUMNS.iter().find(|(name, _)| name == s))
            .map_or("flags", |(name, _)| name);
        let descending = query.get("dir").is_none_or(|d| d != "asc");
        Self { column, descending }
    }

    /// Sorts `accounts`; ties keep the account's order.
    pub(crate) fn apply(self, accounts: &mut [AccountRow]) {
        accounts.sort_by(|a, b| {
            let order = match self.column {
                "account" => (&a.who.name, &a.account_id).cmp(&(&b.who.name, &b.account_id)),
                "accesses" => a.accesses.cmp(&b.accesses),
                "bulk" => a.bulk_accesses.cmp(&b.bulk_accesses),
                "outside" => a.outside.cmp(&b.outside),
                "downloads" => a.downloads.cmp(&b.downloads),
                "subjects" => a.subjects.cmp(&b.subjects),
                "new_ips" => a.new_ips.len().cmp(&b.new_ips.len()),
                _ => (a.flags.len(), a.accesses).cmp(&(b.flags.len(), b.accesses)),
            };
            if self.descending { order.reverse() } else { order }
        });
    }

    /// The link that sorts by `column`: the other way round when it is the current one.
    pub(crate) fn link(&self, month: &PageMonth, column: &str) -> String {
        let dir = if self.column == column && self.descending { "asc" } else { "desc" };
        format!("{}&sort={column}&dir={dir}", Route::Overview.month(month))
    }

    /// The `aria-sort` of a column's heading.
    pub(crate) fn aria(&self, column: &str) -> &'static str {
        match (self.column == column, self.descending) {
            (false, _) => "none",
            (true, true) => "descending",
            (true, false) => "ascending",
        }
    }
}

/// Who a person is, for a page: the name (the id when the account is no user of the
/// organization) and the role and e-mail as secondary text.
pub(crate) struct Who {
    pub(crate) name: String,
    /// Role and e-mail, when the account is a user of the organization.
    pub(crate) about: Option<String>,
}

impl Who {
    pub(crate) fn of(lang: Lang, person: Option<&Person>, id: &str) -> Self {
        match person {
            Some(p) => Self {
                name: p.name.clone(),
                about: Some(format!("{}, {}", role(lang, p.role), p.email)),
            },
            None => Self { name: id.to_owned(), about: None },
        }
    }
}

/// A role as a person reads it.
pub(crate) fn role(lang: Lang, role: recruit_domain::Role) -> String {
    use recruit_domain::Role;
    lang.t(match role {
        Role::Owner => "role-owner",
        Role::Admin => "role-admin",
        Role::Member => "role-member",
    })
}

/// A row of the overview's table.
pub(crate) struct AccountRow {
    pub(crate) who: Who,
    pub(crate) account_id: String,
    pub(crate) accesses: u64,
    pub(crate) bulk_accesses: u64,
    pub(crate) bulk_records: u64,
    /// `None` when the work hours could not be read.
    pub(crate) outside: Option<u64>,
    pub(crate) downloads: u64,
    pub(crate) subjects: u64,
    pub(crate) new_ips: Vec<String>,
    pub(crate) flags: Vec<String>,
    /// Each flag with the figure and the rule that raised it.
    pub(crate) flag_notes: Vec<String>,
}

impl AccountRow {
    pub(crate) fn of(lang: Lang, a: &AccountReview, review: &Review) -> Self {
        Self {
            who: Who::of(lang, review.account_person(&a.account_id), &a.account_id),
            account_id: a.account_id.clone(),
            accesses: a.accesses,
            bulk_accesses: a.bulk_accesses,
            bulk_records: a.bulk_records,
            outside: a.outside_work_hours,
            downloads: a.downloads + a.ledger_exports,
            subjects: a.distinct_data_subjects,
            new_ips: a.new_ip_addresses.clone(),
            flags: a.flags.iter().map(|f| f.as_str().to_owned()).collect(),
            flag_notes: a.flag_details.iter().map(|d| flag_note(lang, d)).collect(),
        }
    }

    pub(crate) fn outside_text(&self, l: &Locale) -> String {
        self.outside.map_or_else(|| "–".to_owned(), |n| l.n(n))
    }
}

/// A flag with the account's figure and the rule's threshold, in words.
pub(crate) fn flag_note(lang: Lang, d: &FlagDetail) -> String {
    let key = match d.flag {
        Flag::OutsideWorkHours => "flag-outside",
        Flag::Bulk => "flag-bulk",
        Flag::Downloads => "flag-downloads",
        Flag::NewIpAddresses => "flag-new-ips",
        Flag::DailyVolume => "flag-daily",
        _ => "flag-other",
    };
    lang.ta(
        key,
        &[
            ("flag", d.flag.as_str().into()),
            ("value", d.value.into()),
            ("threshold", d.threshold.into()),
            ("percent", d.percent.unwrap_or(0).into()),
        ],
    )
}

/// An export's filters as `name=value` pairs, in the order the export recorded them.
pub(crate) fn filters_text(lang: Lang, filters: &serde_json::Value) -> String {
    match filters.as_object() {
        Some(map) if !map.is_empty() => map
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => lang.t("filters-none"),
    }
}

/// The rules a review applied, a line each: work hours, days off, each flag's threshold, and
/// the time to explain a download.
pub(crate) fn rules(lang: Lang, review: &Review) -> Vec<String> {
    let r = &review.rules;
    let hours: Vec<String> = review
        .work_hours
        .iter()
        .map(|h| {
            let day = recruit_service::work_hours::weekday(&h.day).map_or_else(
                || h.day.as_str().to_lowercase(),
                |n| lang.t(&format!("weekday-{}", n + 1)),
            );
            format!("{day} {}–{}", h.start, h.end)
        })
        .collect();
    let holidays: Vec<String> = r.holidays.iter().map(ToString::to_string).collect();
    let or = |list: Vec<String>, none: &str| {
        if list.is_empty() { lang.t(none) } else { list.join(", ") }
    };
    vec![
        lang.ta(
            "rules-hours",
            &[
                ("zone", review.time_zone.as_str().into()),
                ("hours", or(hours, "rules-hours-none").into()),
            ],
        ),
        lang.ta("rules-holidays", &[("days", or(holidays, "rules-holidays-none").into())]),
        lang.ta(
            "rules-outside",
            &[
                ("accesses", r.outside_hours_accesses.into()),
                ("percent", u64::from(r.outside_hours_percent).into()),
            ],
        ),
        lang.ta("rules-bulk", &[("records", r.bulk_records.into())]),
        lang.ta("rules-downloads", &[("count", r.downloads.into())]),
        lang.ta("rules-new-ips", &[("count", r.new_ip_addresses.into())]),
        lang.ta(
            "rules-daily",
            &[
                ("factor", u64::from(r.daily_volume_factor).into()),
                ("min", r.daily_volume_min.into()),
            ],
        ),
        lang.ta("rules-explanation", &[("days", u64::from(r.explanation_days).into())]),
    ]
}

/// The month at a glance.
#[derive(Template)]
#[template(path = "overview.html")]
pub(crate) struct Overview {
    pub(crate) page: Page,
    pub(crate) review: Review,
    pub(crate) accounts: Vec<AccountRow>,
    pub(crate) sort: Sort,
    pub(crate) daily: Daily,
    pub(crate) strip: Strip,
    pub(crate) pending: usize,
    pub(crate) signed: Option<SignOffView>,
    pub(crate) rules: Vec<String>,
    /// The month's part of the chain, verified now.
    pub(crate) chain: ChainView,
    pub(crate) l: Locale,
}

impl Overview {
    pub(crate) fn new(page: Page, review: Review, sort: Sort, chain: ChainView) -> Self {
        let lang = page.l.lang;
        let mut accounts: Vec<AccountRow> =
            review.accounts.iter().map(|a| AccountRow::of(lang, a, &review)).collect();
        sort.apply(&mut accounts);
        let pending =
            review.downloads.iter().filter(|d| d.status == DownloadStatus::Pending).count();
        Self {
            daily: Daily::of(lang, &review),
            strip: Strip::of(lang, &review),
            signed: SignOffView::of(lang, &review),
            rules: rules(lang, &review),
            chain,
            l: page.l.clone(),
            page,
            review,
            accounts,
            sort,
            pending,
        }
    }

    pub(crate) fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &COLUMNS
    }
}
