//! The sign-off page and the printable report: the chain's verification, the month's
//! figures as signed, and everything an inspector asks for.

use askama::Template;
use recruit_domain::chain::Checkpoint;
use recruit_domain::review::MonthVerification;
use recruit_service::review::Review;
use recruit_service::sign_off::DownloadStatus;

use crate::lang::{Lang, Locale};
use crate::pages::*;
use crate::route::Route;

/// A verification of the month's part of the chain and the latest checkpoint, in text.
pub(crate) struct ChainView {
    pub(crate) intact: bool,
    pub(crate) verified: String,
    pub(crate) findings: Vec<String>,
    pub(crate) checkpoint: Option<String>,
}

impl ChainView {
    /// The view of the verification `v` and the latest checkpoint `c`, times in `zone`.
    pub(crate) fn of(
        lang: Lang,
        v: &MonthVerification,
        c: Option<&Checkpoint>,
        zone: &str,
    ) -> Self {
        let verified = lang.ta(
            "chain-verified",
            &[
                ("entries", v.entries.into()),
                ("from", (v.anchored_at + 1).to_string().into()),
                ("head", v.head_position.to_string().into()),
                ("hash", v.head_hash.as_str().into()),
            ],
        );
        let findings = v
            .findings
            .iter()
            .map(|f| {
                let position = f.position.map_or_else(|| "–".to_owned(), |p| p.to_string());
                let kind = f.kind.as_str();
                let text = lang
                    .ta("chain-finding", &[("kind", kind.into()), ("position", position.into())]);
                let id = f.id.as_deref().map(|id| format!(" ({id})")).unwrap_or_default();
                format!("{text}{id}")
            })
            .collect();
        let checkpoint = c.map(|c| {
            lang.ta(
                "checkpoint-text",
                &[
                    ("position", c.position.to_string().into()),
                    ("hash", c.head_hash.as_str().into()),
                    ("at", lang.time(zone, c.signed_at).into()),
                    ("key", c.key_id.as_str().into()),
                ],
            )
        });
        Self { intact: v.intact, verified, findings, checkpoint }
    }
}

/// A month's sign-off as recorded, in text.
pub(crate) struct SignOffView {
    /// The reviewer's name (the id, for a sign-off recorded without it).
    pub(crate) signed_by: String,
    /// The reviewer's role and e-mail then, when recorded.
    pub(crate) reviewer: Option<String>,
    pub(crate) signed_at: String,
    pub(crate) note: String,
    pub(crate) figures: Vec<(String, u64)>,
    pub(crate) chain: ChainView,
}

impl SignOffView {
    /// The sign-off of `review`, if it was signed off and reads as one.
    pub(crate) fn of(lang: Lang, review: &Review) -> Option<Self> {
        let s = review.signed_off()?.ok()?;
        let f = &s.figures;
        let figures = [
            ("fig-accesses", f.accesses),
            ("fig-accounts", f.accounts),
            ("fig-flagged", f.flagged_accounts),
            ("fig-downloads", f.downloads),
            ("fig-confirmed", f.confirmed),
            ("fig-requested", f.explanation_requested),
            ("fig-explained", f.explained),
            ("fig-rejected", f.rejected),
            ("fig-pending", f.pending),
            ("fig-exports", f.ledger_exports),
        ];
        let figures = figures.into_iter().map(|(key, n)| (lang.t(key), n)).collect();
        let who = Who::of(lang, s.reviewer.as_ref(), &s.signed_by.to_string());
        let zone = review.time_zone.as_str();
        Some(Self {
            signed_by: who.name,
            reviewer: who.about,
            signed_at: lang.time(zone, s.signed_at),
            note: s.note.clone().unwrap_or_default(),
            figures,
            chain: ChainView::of(lang, &s.verification, s.checkpoint.as_ref(), zone),
        })
    }
}

/// The sign-off's form, or the month's sign-off once recorded.
#[derive(Template)]
#[template(path = "sign_off.html")]
pub(crate) struct SignOffForm {
    pub(crate) page: Page,
    pub(crate) downloads: usize,
    pub(crate) unconfirmed: usize,
    pub(crate) accesses: u64,
    pub(crate) signed: Option<SignOffView>,
    pub(crate) problem: Option<Problem>,
    /// The month's part of the chain, verified now.
    pub(crate) chain: ChainView,
    pub(crate) l: Locale,
}

impl SignOffForm {
    pub(crate) fn new(
        page: Page,
        review: Review,
        problem: Option<Problem>,
        chain: ChainView,
    ) -> Self {
        let unconfirmed =
            review.downloads.iter().filter(|d| d.status != DownloadStatus::Confirmed).count();
        Self {
            l: page.l.clone(),
            signed: SignOffView::of(page.l.lang, &review),
            page,
            downloads: review.downloads.len(),
            unconfirmed,
            accesses: review.accesses,
            problem,
            chain,
        }
    }
}

/// The printable report of a month: the review's figures, its downloads and the sign-off.
#[derive(Template)]
#[template(path = "report.html")]
pub(crate) struct Report {
    pub(crate) page: Page,
    /// The organization's name, and its id.
    pub(crate) organization: String,
    pub(crate) organization_id: String,
    pub(crate) time_zone: String,
    pub(crate) accesses: u64,
    pub(crate) accounts: Vec<AccountRow>,
    pub(crate) downloads: Vec<DownloadRow>,
    pub(crate) signed: Option<SignOffView>,
    pub(crate) rules: Vec<String>,
    /// The month's first and last local days.
    pub(crate) period: (String, String),
    /// Every export of the ledger in the month.
    pub(crate) exports: Vec<ExportRow>,
    /// The month as the language names it.
    pub(crate) month_name: String,
    pub(crate) l: Locale,
}

/// An export of the ledger as the report lists it: who, when, with which filters.
pub(crate) struct ExportRow {
    pub(crate) who: Who,
    pub(crate) account_id: String,
    pub(crate) at: String,
    pub(crate) filters: String,
    pub(crate) entries: u64,
    pub(crate) client_ip: String,
}

impl Report {
    pub(crate) fn new(page: Page, review: Review) -> Self {
        let zone = review.time_zone.clone();
        let last_day = review.to.unix_micros().saturating_sub(1);
        let last_day = recruit_domain::Timestamp::from_unix_micros(last_day).unwrap_or(review.to);
        let lang = page.l.lang;
        let day = |t| lang.date(&zone, t);
        let period = (day(review.from), day(last_day));
        let exports = review
            .ledger_exports
            .iter()
            .map(|e| ExportRow {
                who: Who::of(lang, review.account_person(&e.account_id), &e.account_id),
                account_id: e.account_id.clone(),
                at: lang.time(&zone, e.at),
                filters: filters_text(lang, &e.filters),
                entries: u64::from(e.entries),
                client_ip: e.client_ip.clone().unwrap_or_default(),
            })
            .collect();
        let mut accounts: Vec<AccountRow> =
            review.accounts.iter().map(|a| AccountRow::of(lang, a, &review)).collect();
        Sort { column: "account", descending: false }.apply(&mut accounts);
        let signed = SignOffView::of(lang, &review);
        let rules = rules(lang, &review);
        let month_name = lang.month(page.month.0);
        let organization = review.organization_name.clone();
        let organization_id = review.organization_id.to_string();
        let (time_zone, accesses) = (review.time_zone.clone(), review.accesses);
        let signed_at = review.signed_off().and_then(Result::ok).map(|s| s.signed_at);
        let mut downloads =
            Downloads::new(Page { csrf: String::new(), ..page_copy(&page) }, review, None).rows;
        let after = |at| signed_at.is_some_and(|signed| at > signed);
        for d in &mut downloads {
            d.later = d.reviewed_at.is_some_and(after);
            for step in &mut d.history {
                step.later = after(step.at);
            }
        }
        Self {
            l: page.l.clone(),
            month_name,
            period,
            exports,
            page,
            organization,
            organization_id,
            time_zone,
            accesses,
            accounts,
            downloads,
            signed,
            rules,
        }
    }
}

pub(crate) fn page_copy(page: &Page) -> Page {
    Page {
        month: page.month,
        user_id: page.user_id,
        ended: page.ended,
        csrf: page.csrf.clone(),
        user: page.user.clone(),
        l: page.l.clone(),
    }
}
