//! The downloads page: each download of the month with its history, the decisions to take,
//! and the explanations asked and given.

use std::collections::HashMap;

use askama::Template;
use recruit_service::review::Review;
use recruit_service::sign_off::DownloadStatus;

use crate::lang::{Lang, Locale};
use crate::pages::*;
use crate::route::Route;

/// A download as the downloads page lists it.
pub(crate) struct DownloadRow {
    pub(crate) id: String,
    pub(crate) who: Who,
    pub(crate) account_id: String,
    pub(crate) at: String,
    pub(crate) subject: String,
    pub(crate) data: String,
    pub(crate) menu: String,
    pub(crate) ips: String,
    pub(crate) status: String,
    /// The status as the API names it.
    pub(crate) code: &'static str,
    /// The purpose the download was stated for when it was recorded.
    pub(crate) purpose: Option<String>,
    /// When the latest decision was made.
    pub(crate) reviewed_at: Option<recruit_domain::Timestamp>,
    /// Whether the latest decision came after the month's sign-off (the report marks it).
    pub(crate) later: bool,
    /// Whether the signed-in reviewer made the download: another owner decides on it.
    pub(crate) own: bool,
    /// Every step so far: decisions, questions and explanations, in order.
    pub(crate) history: Vec<Step>,
    /// When the explanation asked for is due, while it is awaited.
    pub(crate) due: Option<String>,
    /// Whether the explanation asked for is past due.
    pub(crate) overdue: bool,
}

/// A step of the exchange about a download.
pub(crate) struct Step {
    /// What it was, in words.
    pub(crate) what: String,
    pub(crate) text: String,
    /// Who, by name, and when.
    pub(crate) by: String,
    /// Whether it came after the month's sign-off.
    pub(crate) later: bool,
    pub(crate) at: recruit_domain::Timestamp,
}

/// A download's status in words.
pub(crate) fn status_words(lang: Lang, status: DownloadStatus) -> String {
    lang.t(match status {
        DownloadStatus::Pending => "status-pending",
        DownloadStatus::Confirmed => "status-confirmed",
        DownloadStatus::ExplanationRequested => "status-requested",
        DownloadStatus::Explained => "status-explained",
        DownloadStatus::Rejected => "status-rejected",
    })
}

/// What a step of a download's history was, in words.
pub(crate) fn step_words(lang: Lang, status: DownloadStatus) -> String {
    lang.t(match status {
        DownloadStatus::Pending => "status-pending",
        DownloadStatus::Confirmed => "step-confirmed",
        DownloadStatus::ExplanationRequested => "step-requested",
        DownloadStatus::Explained => "step-explained",
        DownloadStatus::Rejected => "step-rejected",
    })
}

/// The month's downloads, pending first, each with its form.
#[derive(Template)]
#[template(path = "downloads.html")]
pub(crate) struct Downloads {
    pub(crate) page: Page,
    pub(crate) time_zone: String,
    pub(crate) rows: Vec<DownloadRow>,
    pub(crate) exports: usize,
    pub(crate) problem: Option<Problem>,
    /// What the server did after the last decision (an e-mail sent, or why not).
    pub(crate) notice: Option<String>,
    /// How many await the reviewer (undecided or explained), are asked and awaited, and of
    /// those are overdue.
    pub(crate) to_decide: usize,
    pub(crate) awaited: usize,
    pub(crate) overdue: usize,
    pub(crate) l: Locale,
}

impl Downloads {
    pub(crate) fn new(page: Page, review: Review, problem: Option<Problem>) -> Self {
        let now = recruit_domain::Timestamp::now();
        let lang = page.l.lang;
        let zone = review.time_zone.as_str();
        let mut rows: Vec<DownloadRow> = review
            .downloads
            .iter()
            .map(|d| DownloadRow {
                id: d.id.clone(),
                who: Who::of(lang, review.account_person(&d.account_id), &d.account_id),
                account_id: d.account_id.clone(),
                at: lang.time(zone, d.access_time),
                subject: subject_text(lang, &d.data_subject),
                data: d.access_data.join(", "),
                menu: d.access_menu_path.clone(),
                ips: d.ip_addresses.join(", "),
                status: status_words(lang, d.status),
                code: d.status.as_str(),
                history: d
                    .history
                    .iter()
                    .map(|r| Step {
                        what: step_words(lang, r.status),
                        text: r.reason.clone(),
                        by: lang.ta(
                            "step-by",
                            &[
                                (
                                    "name",
                                    review
                                        .person(r.reviewed_by.uuid())
                                        .map_or_else(
                                            || r.reviewed_by.to_string(),
                                            |p| p.name.clone(),
                                        )
                                        .into(),
                                ),
                                ("at", lang.time(zone, r.reviewed_at).into()),
                            ],
                        ),
                        later: false,
                        at: r.reviewed_at,
                    })
                    .collect(),
                due: d
                    .review
                    .as_ref()
                    .filter(|_| d.status == DownloadStatus::ExplanationRequested)
                    .and_then(|r| r.due_at)
                    .map(|due| lang.time(zone, due)),
                overdue: d.overdue(now),
                reviewed_at: d.review.as_ref().map(|r| r.reviewed_at),
                purpose: d.purpose.clone(),
                own: d.downloaded_by(page.user_id),
                later: false,
            })
            .collect();
        // What awaits the reviewer first (explained, then undecided), then the overdue and
        // the awaited requests, then the decided; each by time.
        let order = [
            DownloadStatus::Explained,
            DownloadStatus::Pending,
            DownloadStatus::ExplanationRequested,
            DownloadStatus::Rejected,
            DownloadStatus::Confirmed,
        ];
        let rank = |status: DownloadStatus| order.iter().position(|o| *o == status);
        let statuses: HashMap<&str, DownloadStatus> =
            review.downloads.iter().map(|d| (d.id.as_str(), d.status)).collect();
        rows.sort_by_key(|r| (rank(statuses[r.id.as_str()]), !r.overdue));
        let count = |f: &dyn Fn(&recruit_domain::review::DownloadSeen) -> bool| {
            review.downloads.iter().filter(|d| f(d)).count()
        };
        let to_decide =
            count(&|d| matches!(d.status, DownloadStatus::Pending | DownloadStatus::Explained));
        let awaited = count(&|d| d.status == DownloadStatus::ExplanationRequested);
        let overdue = count(&|d| d.overdue(now));
        Self {
            l: page.l.clone(),
            page,
            time_zone: review.time_zone.clone(),
            rows,
            exports: review.ledger_exports.len(),
            problem,
            notice: None,
            to_decide,
            awaited,
            overdue,
        }
    }
}

/// The data subject as a line of text.
pub(crate) fn subject_text(lang: Lang, subject: &recruit_domain::model::DataSubject) -> String {
    use recruit_domain::model::DataSubject;
    match subject {
        DataSubject::Employee { user } => {
            lang.ta("subject-employee", &[("id", user.to_string().into())])
        }
        DataSubject::Candidate { candidate } => {
            lang.ta("subject-candidate", &[("id", candidate.to_string().into())])
        }
        DataSubject::Bulk { bulk_count, .. } => match bulk_count {
            Some(n) => lang.ta("subject-bulk", &[("count", (*n).into())]),
            None => lang.t("subject-bulk-unknown"),
        },
    }
}
